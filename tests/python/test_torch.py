"""pecli.torch: the nn.Modules equal the numpy core's tables, and the torch angle path equals numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.schemes.backend import angles_on
from pecli.schemes.rope import apply_rotary
from tests import references as ref
from tests.conftest import require_module

torch = require_module("torch")
from pecli.torch import RotaryEmbedding, SinusoidalPositionalEncoding, TimestepEmbedding  # noqa: E402
from pecli.torch_backend import TorchPhasors  # noqa: E402

CPU_CASES = [
    ("sinusoidal", 3000, 64, {}),
    ("sinusoidal", 50, 33, {"preset": "guided-diffusion"}),
    ("rope", 3000, 64, {"part": "sin", "scaling": "llama3", "factor": 8.0, "original_max_position": 64}),
    ("sincos2d", None, 32, {"grid": "7,9", "preset": "timm"}),
    ("fourier", 100, None, {"num_freqs": 8}),
    ("gaussian", 100, 16, {"seed": 3}),
]


@pytest.mark.parametrize(("scheme", "length", "dim", "params"), CPU_CASES)
def test_torch_angle_path_on_cpu_equals_numpy(scheme, length, dim, params):
    """``--device cuda`` runs this path on the GPU; here torch computes the float64 phasors on the CPU."""
    numpy_table = pecli.encode(scheme, length, dim, dtype="float64", **params)
    with angles_on(TorchPhasors("cpu")):
        torch_table = pecli.encode(scheme, length, dim, dtype="float64", **params)
    np.testing.assert_allclose(torch_table, numpy_table, rtol=0, atol=1e-12)
    with angles_on(TorchPhasors("cpu")):
        rounded = pecli.encode(scheme, length, dim, dtype="float32", **params)
    # the same float64 values within rounding noise, rounded once: float32 tables agree to 1 ulp
    np.testing.assert_array_max_ulp(rounded, pecli.encode(scheme, length, dim, dtype="float32", **params), maxulp=1)


@pytest.mark.parametrize("preset", ["vaswani", "fairseq", "tensor2tensor", "guided-diffusion", "marian"])
def test_sinusoidal_module_adds_the_cli_table(preset):
    module = SinusoidalPositionalEncoding(12, max_len=20, preset=preset)
    table = pecli.encode("sinusoidal", 20, 12, preset=preset)
    np.testing.assert_array_equal(module.pe.numpy(), table)
    x = torch.randn(3, 7, 12)
    np.testing.assert_array_equal(module(x).numpy(), (x + torch.from_numpy(table[:7])).numpy())
    seq_first = SinusoidalPositionalEncoding(12, max_len=20, preset=preset, batch_first=False)
    np.testing.assert_array_equal(seq_first(x.transpose(0, 1)).transpose(0, 1).numpy(), module(x).numpy())
    assert "pe" in module.state_dict()


def test_sinusoidal_module_bad_inputs():
    with pytest.raises(pecli.ParameterError, match="max_len"):
        SinusoidalPositionalEncoding(8, max_len=4)(torch.zeros(1, 5, 8))
    with pytest.raises(pecli.ParameterError, match="not 'sinusoidal'"):
        SinusoidalPositionalEncoding(8, max_len=4, preset="mae")
    bf16 = SinusoidalPositionalEncoding(8, max_len=4, dtype="bfloat16")
    assert bf16.pe.dtype == torch.bfloat16
    expected = pecli.encode(None, 4, 8, dtype="bfloat16").astype(np.float32)
    np.testing.assert_array_equal(bf16.pe.float().numpy(), expected)


def test_timestep_module_matches_ldm_and_diffusers():
    t = torch.tensor([0.0, 1.0, 10.5, 250.0, 999.0])
    ldm = TimestepEmbedding(9, dtype="float64")(t).numpy()
    np.testing.assert_allclose(ldm, ref.guided_diffusion(t.numpy(), 9), atol=1e-12)
    diffusers = TimestepEmbedding(8, flip_sin_to_cos=False, freq_shift=1.0, dtype="float64")(t).numpy()
    np.testing.assert_allclose(diffusers, ref.diffusers(t.numpy(), 8), atol=1e-12)
    # integer timesteps: the rows of the generate preset, bit for bit
    steps = torch.arange(0, 1000, 37)
    table = pecli.encode("sinusoidal", 1000, 32, preset="guided-diffusion")
    np.testing.assert_array_equal(TimestepEmbedding(32)(steps).numpy(), table[steps.numpy()])


@pytest.mark.parametrize(
    ("scaling", "params"),
    [
        ("none", {}),
        ("linear", {"factor": 2.0}),
        ("dynamic", {"factor": 2.0, "original_max_position": 8}),
        ("yarn", {"factor": 4.0, "original_max_position": 8, "apply_attention_factor": True}),
        ("llama3", {"factor": 8.0, "original_max_position": 8}),
    ],
)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotary_module_equals_the_cli_tables(scaling, params, layout):
    rope = RotaryEmbedding(16, max_len=32, layout=layout, scaling=scaling, **params)
    q, k = torch.randn(2, 4, 20, 16), torch.randn(2, 4, 20, 16)
    tables = pecli.encode("rope", 20, 16, layout=layout, scaling=scaling, **params)
    cos, sin = rope.tables(20)
    np.testing.assert_array_equal(cos.numpy(), tables["cos"])
    np.testing.assert_array_equal(sin.numpy(), tables["sin"])
    q_rot, k_rot = rope(q, k)
    np.testing.assert_allclose(q_rot.numpy(), apply_rotary(q.numpy(), tables["cos"], tables["sin"], layout), atol=1e-6)
    np.testing.assert_allclose(k_rot.numpy(), apply_rotary(k.numpy(), tables["cos"], tables["sin"], layout), atol=1e-6)


def test_rotary_module_offsets_longer_sequences_and_gradients():
    rope = RotaryEmbedding(8, max_len=4, layout="interleaved", dtype="float64")
    q = torch.randn(1, 6, 8, dtype=torch.float64, requires_grad=True)
    rotated, _ = rope(q, q.detach(), offset=3)  # positions 3..8, beyond max_len
    positions = np.arange(3, 9)
    expected = ref.meta_rotate(q.detach().numpy(), positions, ref.hf_rope_default(10000.0, 8))
    np.testing.assert_allclose(rotated.detach().numpy(), expected, atol=1e-12)
    rotated.pow(2).sum().backward()  # a rotation keeps norms: d|Rq|²/dq = 2q
    np.testing.assert_allclose(q.grad.numpy(), 2 * q.detach().numpy(), atol=1e-12)


def test_rotary_module_dynamic_recomputes_per_length():
    rope = RotaryEmbedding(8, max_len=64, scaling="dynamic", factor=2.0, original_max_position=8)
    short, _ = rope.tables(8)
    long, _ = rope.tables(32)
    np.testing.assert_array_equal(short.numpy(), pecli.encode("rope", 8, 8, part="cos"))
    np.testing.assert_array_equal(
        long.numpy(), pecli.encode("rope", 32, 8, part="cos", scaling="dynamic", factor=2.0, original_max_position=8)
    )
    assert not np.array_equal(long[:8].numpy(), short.numpy())  # a longer sequence raises the base


def test_rotary_module_bad_inputs():
    with pytest.raises(pecli.ParameterError, match="even d"):
        RotaryEmbedding(7)
    with pytest.raises(pecli.ParameterError, match="does not take beta_fast"):
        RotaryEmbedding(8, scaling="linear", factor=2.0, beta_fast=32.0)


@pytest.mark.parametrize(
    "params",
    [{}, {"flip_sin_to_cos": False, "freq_shift": 1.0}, {"scale": 1000.0, "max_period": 500.0}, {"repeat_only": True}],
)
def test_timestep_module_equals_the_core_function(params):
    t = torch.tensor([0.0, 0.25, 1.0, 998.39, 999.0])
    expected = pecli.timestep_embedding(t.numpy(), 10, **params)
    np.testing.assert_array_equal(TimestepEmbedding(10, **params)(t).numpy(), expected)


def test_timestep_module_checks_parameters_at_construction():
    with pytest.raises(pecli.ParameterError, match="freq_shift"):
        TimestepEmbedding(2, freq_shift=1.0)
