"""``arithmetic``: tables as libraries compute them in float32, or with positions held in bfloat16/float16.

Checked against the libraries themselves (transformers' LlamaRotaryEmbedding, diffusers'
get_timestep_embedding) when they are installed; the properties hold without them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pecli.schemes.rope import rope_table
from pecli.schemes.sinusoidal import sinusoidal_table
from pecli.schemes.timestep import timestep_embedding, timestep_table
from tests.conftest import require_module

#: one float32 step near 1: float32 cos/sin of libraries (SLEEF, libm) and numpy's correctly rounded ones differ by it
_ONE_STEP = 2.0**-23

_ROPE_CASES = [
    ({"rope_type": "default", "rope_theta": 10000.0}, {}),
    ({"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}, {"scaling": "linear", "factor": 4.0}),
    (
        {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        {"base": 500000.0, "scaling": "llama3", "factor": 8.0, "original_max_position": 8192},
    ),
]


def _hf_rope(rope_parameters: dict, length: int, dim: int, positions_dtype: str) -> tuple[np.ndarray, np.ndarray]:
    torch = require_module("torch")
    require_module("transformers")
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=dim * 4, num_attention_heads=4, max_position_embeddings=length, rope_parameters=rope_parameters
    )
    module = LlamaRotaryEmbedding(config)
    positions = torch.arange(length)[None].to(getattr(torch, positions_dtype))
    cos, sin = module(torch.zeros(1, dtype=torch.float32), positions)
    return cos[0].numpy(), sin[0].numpy()


@pytest.mark.parametrize(("rope_parameters", "params"), _ROPE_CASES, ids=lambda case: str(case.get("rope_type", "")))
@pytest.mark.parametrize("arithmetic", ["float32", "bfloat16"])
def test_rope_equals_transformers(rope_parameters: dict, params: dict, arithmetic: str) -> None:
    length, dim = 20000, 128
    positions_dtype = "int64" if arithmetic == "float32" else "bfloat16"  # bfloat16: position_ids.to(bfloat16)
    hf_cos, hf_sin = _hf_rope(rope_parameters, length, dim, positions_dtype)
    params = dict(params)
    base = params.pop("base", 10000.0)
    for part, expected in (("cos", hf_cos), ("sin", hf_sin)):
        ours = rope_table(length, dim, base=base, part=part, arithmetic=arithmetic, dtype="float32", **params)
        assert np.abs(ours - expected).max() <= _ONE_STEP  # float64 tables differ from these by up to 2e-3
        assert (ours == expected).mean() > 0.9


def test_yarn_within_a_float32_frequency_step_of_transformers() -> None:
    hf_cos, _ = _hf_rope(
        {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 4096},
        16384,
        128,
        "int64",
    )
    ours = rope_table(
        16384, 128, part="cos", scaling="yarn", factor=4.0, original_max_position=4096,
        apply_attention_factor=True, arithmetic="float32",
    )
    assert np.abs(ours - hf_cos).max() < 1e-3  # the float64 frequencies rounded to float32: a step apart at most


def test_timestep_equals_diffusers_with_half_timesteps() -> None:
    torch = require_module("torch")
    embeddings = require_module("diffusers.models.embeddings")
    length, dim = 4000, 320
    expected = embeddings.get_timestep_embedding(
        torch.arange(length).half(), dim, flip_sin_to_cos=True, downscale_freq_shift=0
    ).numpy()
    ours = timestep_table(length, dim, freq_shift=0.0, arithmetic="float16")
    # torch's float32 exp is a step off the correctly rounded one for a few frequencies: t·(one step)
    assert np.abs(ours - expected).max() <= length * _ONE_STEP
    assert np.abs(timestep_table(length, dim, freq_shift=0.0) - expected).max() > 0.5  # 2049 holds as 2048


def test_timesteps_at_any_t_equal_diffusers_with_half_timesteps(cli, tmp_path) -> None:
    """``pecli timestep T… --arithmetic float16``: diffusers' embedding of ``timesteps.half()``, an odd dim padded."""
    torch = require_module("torch")
    embeddings = require_module("diffusers.models.embeddings")
    times = [0.5, 250.25, 999.0, 2049.0, 3001.7]
    expected = embeddings.get_timestep_embedding(
        torch.tensor(times).half(), 9, flip_sin_to_cos=False, downscale_freq_shift=1
    ).numpy()
    args = [str(t) for t in times]
    result = cli("timestep", *args, "--dim", "9", "--preset", "diffusers", "--arithmetic", "float16",
                 "-o", str(tmp_path / "t.npy"))  # fmt: skip
    assert result.code == 0, result.stderr
    ours = np.load(tmp_path / "t.npy")
    assert np.abs(ours - expected).max() <= 4000 * _ONE_STEP
    assert np.all(ours[:, -1] == 0)  # the odd dim's padding column
    exact = timestep_embedding(times, 9, flip_sin_to_cos=False, freq_shift=1.0)
    assert np.abs(exact - expected).max() > 1e-3  # 250.25 and 3001.7 do not survive float16


def test_sinusoidal_equals_the_pytorch_tutorial_in_float32() -> None:
    torch = require_module("torch")
    length, dim = 8192, 64
    position = torch.arange(length).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    expected = torch.zeros(length, dim)
    expected[:, 0::2] = torch.sin(position * div_term)
    expected[:, 1::2] = torch.cos(position * div_term)
    ours = sinusoidal_table(length, dim, arithmetic="float32")
    assert np.abs(ours - expected.numpy()).max() <= length * _ONE_STEP  # torch's float32 exp: a step off, at most
    assert (ours == expected.numpy()).mean() > (sinusoidal_table(length, dim) == expected.numpy()).mean()


@pytest.mark.parametrize(
    "table",
    [
        lambda a: rope_table(4096, 64, part="sin", dtype="float64", arithmetic=a),
        lambda a: rope_table(
            4096,
            64,
            part="cos",
            scaling="llama3",
            factor=8.0,
            original_max_position=1024,
            dtype="float64",
            arithmetic=a,
        ),
        lambda a: sinusoidal_table(4096, 64, freq_shift=1.0, dtype="float64", arithmetic=a),
        lambda a: timestep_table(4096, 64, dtype="float64", arithmetic=a),
    ],
)
def test_float64_is_todays_table_and_errors_grow_with_less_precision(table) -> None:
    exact = table(None)
    assert np.array_equal(table("float64"), exact)
    errors = [float(np.abs(table(a) - exact).max()) for a in ("float32", "float16", "bfloat16")]
    assert 0 < errors[0] < errors[1] < errors[2]


def test_bfloat16_positions_alias_as_the_bug_report_says() -> None:
    table = rope_table(16000, 8, part="angle", dtype="float64", arithmetic="bfloat16")
    assert np.array_equal(table[15962], table[15936])  # huggingface/transformers#29285
    assert not np.array_equal(table[255], table[256])
    assert np.array_equal(table[257], table[256])  # the first position bfloat16 cannot hold


def test_an_unknown_arithmetic_is_refused() -> None:
    from pecli.errors import ParameterError

    with pytest.raises(ParameterError, match="arithmetic"):
        rope_table(4, 4, arithmetic="float8")
