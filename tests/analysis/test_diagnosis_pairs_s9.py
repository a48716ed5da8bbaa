"""compare names the cause when an engine's RoPE cache file (its cos and sin tensors, compared side by side)
differs from a model's config or a spec: the regenerated mistakes (scaling left out, another base, negated
positions) had needed --key to pick one part (issue 30; session 9). The engine tables come from transformers'
own rotary module with one mistake made by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}  # fmt: skip
LENGTH = 2048


def _config(tmp_path: Path, **fields: object) -> tuple[Path, object]:
    config = {"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
              "max_position_embeddings": 131072, "rope_theta": 500000.0, **fields}  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    return path, LlamaRotaryEmbedding(LlamaConfig(**config))


def _cache(path: Path, inv_freq: np.ndarray, *, negate_sin: bool = False) -> Path:
    """An engine's cos and sin cache in HF's rotate_half layout, at positions 0..LENGTH−1, from ``inv_freq``."""
    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=1)
    sin = -np.sin(angles) if negate_sin else np.sin(angles)
    save_file({"cos": np.cos(angles).astype(np.float32), "sin": sin.astype(np.float32)}, str(path))
    return path


def _codes(*args: str) -> list[str]:
    result = run_in_process("compare", *args, "--json")
    assert result.code == 1, result.stderr
    return [found["code"] for found in json.loads(result.out)["diagnosis"]]


def _default_inv_freq(base: float, dim: int) -> np.ndarray:
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


@pytest.mark.parametrize("order", ["engine first", "config first"])
def test_llama3_scaling_left_out_of_a_cos_sin_cache_named(tmp_path: Path, order: str) -> None:
    config, rotary = _config(tmp_path, rope_scaling=LLAMA3)
    scaled = rotary.inv_freq.double().numpy()
    unscaled = _default_inv_freq(500000.0, 128)
    assert not np.allclose(scaled, unscaled)  # the config's scaling does change the frequencies
    engine = _cache(tmp_path / "engine.safetensors", unscaled)
    args = (str(engine), str(config)) if order == "engine first" else (str(config), str(engine))
    assert _codes(*args) == ["unscaled"]


def test_llama3_scaling_left_out_against_a_spec_of_both_parts(tmp_path: Path) -> None:
    engine = _cache(tmp_path / "engine.safetensors", _default_inv_freq(500000.0, 128))
    spec = "rope:base=500000,scaling=llama3,factor=8,original_max_position=8192,low_freq_factor=1,high_freq_factor=4"
    assert _codes(str(engine), spec) == ["unscaled"]


def test_the_same_cache_with_the_scaling_agrees(tmp_path: Path) -> None:
    # the control: transformers' own frequencies, with no mistake, are the config's table
    config, rotary = _config(tmp_path, rope_scaling=LLAMA3)
    engine = _cache(tmp_path / "engine.safetensors", rotary.inv_freq.double().numpy())
    assert run_in_process("compare", str(engine), str(config)).code == 0


def test_negated_positions_in_a_cos_sin_cache_named_with_the_sin_columns(tmp_path: Path) -> None:
    config, rotary = _config(tmp_path)
    engine = _cache(tmp_path / "engine.safetensors", rotary.inv_freq.double().numpy(), negate_sin=True)
    result = run_in_process("compare", str(engine), str(config), "--json")
    found = json.loads(result.out)["diagnosis"]
    assert [item["code"] for item in found] == ["positions_negated"]
    assert found[0]["figures"]["first_column"] == 128  # the sin tensor's columns, after cos's 128
    assert found[0]["figures"]["negated_columns"] == 128


def _transformers_angles(tmp_path: Path, **fields: object) -> tuple[Path, np.ndarray]:
    config, rotary = _config(tmp_path, **fields)
    return config, np.outer(np.arange(LENGTH, dtype=np.float64), rotary.inv_freq.double().numpy())


def test_a_vllm_cos_sin_cache_is_read_against_a_config_and_a_spec(tmp_path: Path) -> None:
    # vLLM keeps [cos | sin] of the rotary_dim/2 frequencies in one tensor: it was "shape mismatch" (64 vs 128)
    config, angles = _transformers_angles(tmp_path)
    cache = tmp_path / "cache.npy"
    np.save(cache, np.hstack([np.cos(angles), np.sin(angles)]).astype(np.float32))
    for args in ((str(cache), str(config)), (str(config), str(cache)), (str(cache), "rope:base=500000")):
        result = run_in_process("compare", *args)
        assert result.code == 0, (args, result.stderr)
        assert "read as vLLM's cos_sin_cache ([cos | sin] of 64 frequencies)" in result.stderr
    wrong = run_in_process("compare", str(cache), "rope:base=10000", "--json")
    assert wrong.code == 1
    assert [found["code"] for found in json.loads(wrong.out)["diagnosis"]] == ["base_differs"]


def test_llamas_complex_freqs_cis_is_read_as_cos_and_sin(tmp_path: Path) -> None:
    config, angles = _transformers_angles(tmp_path, rope_scaling=LLAMA3)
    freqs_cis = tmp_path / "freqs_cis.pt"
    magnitude = torch.ones(angles.shape, dtype=torch.float64)
    torch.save({"freqs_cis": torch.polar(magnitude, torch.from_numpy(angles))}, freqs_cis)
    same = run_in_process("compare", str(freqs_cis), str(config))
    assert same.code == 0, same.stderr
    assert "complex e^(i·p·θ) of 64 frequencies (Llama's freqs_cis)" in same.stderr
    unscaled = tmp_path / "unscaled.npy"  # the llama3 scaling left out, as a complex64 table
    np.save(unscaled, np.exp(1j * np.outer(np.arange(LENGTH), _default_inv_freq(500000.0, 128))).astype(np.complex64))
    assert _codes(str(unscaled), str(config)) == ["unscaled"]


def test_cos_and_sin_tensors_swapped_are_named_as_such(tmp_path: Path) -> None:
    # was "flip_sin_to_cos differs (diffusers' get_timestep_embedding)" for a RoPE pair
    config, angles = _transformers_angles(tmp_path)
    halves = np.concatenate([angles, angles], axis=1)
    engine = tmp_path / "engine.safetensors"
    save_file({"cos": np.sin(halves).astype(np.float32), "sin": np.cos(halves).astype(np.float32)}, str(engine))
    assert _codes(str(engine), str(config)) == ["parts_swapped"]


@pytest.mark.parametrize("other", ["sinusoidal", "rope:part=cos"])
def test_a_complex_table_with_no_rope_pair_to_read_it_against_is_refused_in_one_line(
    tmp_path: Path, other: str
) -> None:
    table = tmp_path / "c.npy"
    np.save(table, np.exp(1j * np.outer(np.arange(16), [1.0, 0.1])).astype(np.complex64))
    result = run_in_process("compare", str(table), other)
    assert result.code == 2
    assert result.stderr.count("\n") == 1 and "holds a complex table (complex64, shape (16, 2))" in result.stderr
    assert "Traceback" not in result.stderr
