"""compare's diagnosis: each known mistake, made with the real library (transformers, diffusers, torch),
is named with its figures; a difference nobody modelled gets none."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import Reference, compare_tables
from pecli.analysis.diagnosis import diagnose_difference
from tests.conftest import require_module

torch = require_module("torch")
LENGTH, DIM = 2048, 128


def _hf_cos(rope_parameters: dict, *, positions=None, max_positions: int = 16384) -> np.ndarray:
    """cos of transformers' LlamaRotaryEmbedding (its rope init function and attention scaling)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=DIM * 8, num_attention_heads=8, max_position_embeddings=max_positions,
        rope_parameters=rope_parameters,
    )  # fmt: skip
    embedding = LlamaRotaryEmbedding(config)
    if positions is None:
        positions = torch.arange(LENGTH)
    cos, _ = embedding(torch.zeros(1, 1, dtype=torch.float32), positions[None])
    return cos[0].double().numpy()


def _first_scaled_frequency() -> int:
    """The first frequency transformers' llama3 rope init function changes."""
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    config = LlamaConfig(hidden_size=DIM * 8, num_attention_heads=8, max_position_embeddings=16384,
                         rope_parameters=LLAMA3)  # fmt: skip
    scaled, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    plain = 1.0 / 500000.0 ** (torch.arange(0, DIM, 2, dtype=torch.float64) / DIM)
    return int(np.flatnonzero(~np.isclose(scaled.double().numpy(), plain.numpy(), rtol=1e-6))[0])


def _reference(spec: str) -> tuple[np.ndarray, Reference]:
    from pecli.schemes.specs import parse_spec

    table = parse_spec(spec).table(length=LENGTH, dim=DIM, dtype="float64")
    return table.array(), Reference(table.scheme, dict(table.params))


def _codes(result) -> list[str]:
    return [found.code for found in result.diagnosis]


LLAMA3 = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}  # fmt: skip
LLAMA3_SPEC = (
    "rope:part=cos,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192"
)


def test_llama3_scaling_left_out_is_named_with_the_first_parting_frequency():
    a, reference = _reference(LLAMA3_SPEC)
    np.testing.assert_allclose(a, _hf_cos(LLAMA3), atol=3e-4)  # the reference is HF's table
    b = _hf_cos({"rope_type": "default", "rope_theta": 500000.0})  # unsloth#6197: scaling not applied
    result = compare_tables(a, b, reference=reference)
    assert not result.agree and _codes(result) == ["unscaled"]
    figures = result.diagnosis[0].figures
    # llama3 keeps wavelengths below 8192/4 = 2048: 2π·500000^(2k/128) < 2048 for k ≤ 28; HF's inv_freq parts at 29
    assert figures["first_column"] == 29 and figures["frequency_index"] == 29 == _first_scaled_frequency()


def test_yarn_attention_factor_left_out_or_applied_twice_is_named():
    yarn = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048}
    a, reference = _reference(
        "rope:part=cos,scaling=yarn,factor=4,original_max_position=2048,apply_attention_factor=true"
    )
    hf = _hf_cos(yarn)
    np.testing.assert_allclose(a, hf, atol=3e-4)
    attention = 0.1 * np.log(4.0) + 1.0
    for b, factor, name in (
        (hf / attention, 1 / attention, "not applied"),
        (hf * attention, attention, "applied twice"),
    ):
        result = compare_tables(a, b, reference=reference)
        assert _codes(result) == ["constant_factor"], result.diagnosis
        figures = result.diagnosis[0].figures
        assert figures["factor"] == pytest.approx(factor, rel=1e-5) and name in figures["matches"]


def test_another_base_is_named_with_both_bases():
    a, reference = _reference("rope:part=cos,base=500000")
    b = _hf_cos({"rope_type": "default", "rope_theta": 10000.0})  # airllm#369: rope_theta dropped
    (found,) = compare_tables(a, b, reference=reference).diagnosis
    assert found.code == "base_differs" and (found.figures["a_base"], found.figures["b_base"]) == (500000.0, 10000.0)


@pytest.mark.parametrize("partial", [1.0, 0.5])
def test_pairing_halves_vs_adjacent_pairs_is_named(partial):
    a = pecli.encode("rope", LENGTH, DIM, part="cos", partial_rotary_factor=partial, dtype="float64")
    b = pecli.encode("rope", LENGTH, DIM, part="cos", partial_rotary_factor=partial, layout="interleaved")
    (found,) = compare_tables(a, b).diagnosis
    assert found.code == "pairing" and found.figures["rotary_columns"] == int(DIM * partial)
    assert "halves (NeoX, rotate_half)" in found.message and "adjacent pairs (GPT-J" in found.message


def test_positions_off_by_one():
    a = _hf_cos({"rope_type": "default", "rope_theta": 10000.0})
    b = _hf_cos({"rope_type": "default", "rope_theta": 10000.0}, positions=torch.arange(1, LENGTH + 1))
    (found,) = compare_tables(a, b).diagnosis
    assert found.code == "positions_shifted" and found.figures["shift"] == 1
    assert found.message.startswith("positions shifted by 1 (off by one)")


def test_flip_sin_to_cos_is_named():
    from diffusers.models.embeddings import get_timestep_embedding

    timesteps = torch.arange(1000)
    a = get_timestep_embedding(timesteps, 64, flip_sin_to_cos=True, downscale_freq_shift=0).double().numpy()
    b = get_timestep_embedding(timesteps, 64, flip_sin_to_cos=False, downscale_freq_shift=0).double().numpy()
    (found,) = compare_tables(a, b).diagnosis
    assert found.code == "flip_sin_to_cos"


@pytest.mark.parametrize(
    ("dtype", "torch_dtype", "first"), [("bfloat16", torch.bfloat16, 257), ("float16", torch.float16, 2049)]
)
def test_positions_in_reduced_precision_name_the_dtype_and_first_aliased_position(dtype, torch_dtype, first):
    length = 4096
    positions = torch.arange(length, dtype=torch_dtype).float()  # transformers#29285: arange in bfloat16
    a = _hf_cos({"rope_type": "default", "rope_theta": 10000.0}, positions=torch.arange(length))
    b = _hf_cos({"rope_type": "default", "rope_theta": 10000.0}, positions=positions)
    (found,) = compare_tables(a, b).diagnosis
    assert found.code == "positions_rounded"
    assert (found.figures["dtype"], found.figures["first_aliased_position"]) == (dtype, first)


def test_cos_sin_cache_and_transposed():
    a, reference = _reference("rope:part=cos")
    sin = pecli.encode("rope", LENGTH, DIM, part="sin", dtype="float64")
    b = np.hstack([a[:, : DIM // 2], sin[:, : DIM // 2]])  # vLLM's cos_sin_cache
    assert _codes(compare_tables(a, b, reference=reference)) == ["cos_sin_cache"]
    square = pecli.encode("sinusoidal", 64, 64, dtype="float64")
    assert "transposed" in _codes(compare_tables(square, square.T))


def test_the_cli_prints_and_carries_the_diagnosis(cli, tmp_path):
    path = tmp_path / "b.npy"
    np.save(path, _hf_cos({"rope_type": "default", "rope_theta": 500000.0}).astype(np.float32))
    result = cli("compare", LLAMA3_SPEC, str(path), "--json")
    assert result.code == 1
    (found,) = json.loads(result.out)["diagnosis"]
    assert found["code"] == "unscaled" and found["figures"]["frequency_index"] == 29
    text = cli("compare", LLAMA3_SPEC, str(path))
    assert "diagnosis: B is the same RoPE without its frequency scaling" in text.out and "evidence:" in text.out
    noise = tmp_path / "noise.npy"
    np.save(noise, np.random.default_rng(0).normal(size=(LENGTH, DIM)).astype(np.float32))
    unexplained = cli("compare", LLAMA3_SPEC, str(noise))
    assert unexplained.code == 1 and "diagnosis: no known cause explains the difference" in unexplained.out


@pytest.mark.parametrize("seed", range(6))
def test_random_perturbations_get_no_explanation(seed):
    rng = np.random.default_rng(seed)
    a, reference = _reference("rope:part=cos,scaling=yarn,factor=4,original_max_position=2048")
    kind = seed % 3
    b = a.copy()
    if kind == 0:
        b += rng.normal(scale=1e-2, size=a.shape)
    elif kind == 1:
        b = b[:, rng.permutation(DIM)] * (1 + 1e-3 * rng.normal(size=DIM))
    else:
        b = b[rng.permutation(LENGTH)]
    result = compare_tables(a, b, reference=reference)
    assert not result.agree and result.diagnosis == []
    assert diagnose_difference(a, b, tolerance=1e-4, reference=reference) == []
