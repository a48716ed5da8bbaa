"""Causes the injected-mistake sweep of ``compare ENGINE config.json`` left unexplained (session 9, diag3): an
engine's RoPE cache, in the layouts engines keep it (a cos and sin pair, vLLM's cos_sin_cache, a complex
freqs_cis), built from transformers' own rotary module with one mistake an engine makes, compared with the
model's config through the CLI. Each case was "differs" with no cause before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LENGTH = 1024
LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 8,
         "max_position_embeddings": 131072, "rope_theta": 500000.0}  # fmt: skip
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "beta_fast": 32.0,
        "beta_slow": 1.0}  # fmt: skip
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}  # fmt: skip


def _rotary(config: dict[str, object]) -> tuple[np.ndarray, float]:
    """transformers' inv_freq and attention scaling for a Llama ``config``."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rotary = LlamaRotaryEmbedding(LlamaConfig(**config))
    return rotary.inv_freq.double().numpy(), float(rotary.attention_scaling)


def _engine(path: Path, layout: str, inv_freq: np.ndarray, scale: float) -> Path:
    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    cos, sin = scale * np.cos(angles), scale * np.sin(angles)
    if layout == "pair":  # transformers' rotate_half tables
        path = path.with_suffix(".safetensors")
        save_file({"cos": np.hstack([cos, cos]).astype(np.float32), "sin": np.hstack([sin, sin]).astype(np.float32)},
                  str(path))  # fmt: skip
    elif layout == "cos_sin_cache":  # vLLM's
        path = path.with_suffix(".npy")
        np.save(path, np.hstack([cos, sin]).astype(np.float32))
    else:  # Llama's complex freqs_cis
        path = path.with_suffix(".npy")
        np.save(path, (cos + 1j * sin).astype(np.complex64))
    return path


def _diagnosis(tmp_path: Path, config: dict[str, object], engine: Path) -> list[dict[str, object]]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = run_in_process("compare", str(engine), str(path), "--json")
    assert result.code == 1, result.stderr
    found: list[dict[str, object]] = json.loads(result.out)["diagnosis"]
    return found


LAYOUTS = ("pair", "cos_sin_cache", "freqs_cis")


@pytest.mark.parametrize("seed", [0, 1])
def test_the_square_root_of_the_base_is_named_with_its_relation(tmp_path: Path, seed: int) -> None:
    layout = LAYOUTS[np.random.default_rng(seed).integers(3)]
    wrong = {**LLAMA, "rope_theta": float(np.sqrt(500000.0))}  # the engine took √θ
    inv_freq, _ = _rotary(wrong)
    found = _diagnosis(tmp_path, LLAMA, _engine(tmp_path / "engine", layout, inv_freq, 1.0))
    assert [item["code"] for item in found] == ["base_differs"]
    assert found[0]["figures"]["a_base"] == pytest.approx(np.sqrt(500000.0), rel=1e-9)  # type: ignore[index]
    assert "(the square root of B's)" in str(found[0]["message"])


def test_dynamic_ntk_applied_below_the_max_length_is_a_fitted_base(tmp_path: Path) -> None:
    # the engine rescales the base as at the max length, though the sequence (1024) is below it (4096)
    config = {**LLAMA, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "dynamic", "factor": 4.0}}
    dim = 64
    base = 500000.0 * 4.0 ** (dim / (dim - 2))
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    reference, _ = _rotary(config)
    assert not np.allclose(inv_freq, reference)  # transformers' own at 1024 positions is the plain base's
    found = _diagnosis(tmp_path, config, _engine(tmp_path / "engine", "cos_sin_cache", inv_freq, 1.0))
    assert [item["code"] for item in found] == ["base_differs"]
    assert found[0]["figures"]["a_base"] == pytest.approx(base, rel=1e-3)  # type: ignore[index]


@pytest.mark.parametrize(
    ("scaling", "original", "layout"),
    [(YARN, 131072, "freqs_cis"), (LLAMA3, 16384, "pair"), (YARN, 16384, "cos_sin_cache")],
    ids=["yarn-max-length", "llama3-twice", "yarn-half"],
)
def test_another_original_max_position_is_named(
    tmp_path: Path, scaling: dict[str, object], original: int, layout: str
) -> None:
    config = {**LLAMA, "rope_scaling": scaling}
    wrong = {**LLAMA, "rope_scaling": {**scaling, "original_max_position_embeddings": original}}
    inv_freq, scale = _rotary(wrong)
    assert not np.allclose(inv_freq, _rotary(config)[0])
    found = _diagnosis(tmp_path, config, _engine(tmp_path / "engine", layout, inv_freq, scale))
    assert [item["code"] for item in found][:1] == ["original_max_position"]
    assert f"original_max_position {original} (" in str(found[0]["message"])
