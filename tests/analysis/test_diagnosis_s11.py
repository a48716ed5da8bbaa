"""Causes the injected-mistake sweep of ``compare ENGINE config.json --layer-type …`` (session 11, diag) left
unexplained on Gemma 3's layers (head_dim 256; full attention: base 1e6, linear factor 8; sliding: base 10000,
no scaling): an engine's cos and sin built from transformers' own inv_freq with one mistake."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

GEMMA3 = {"model_type": "gemma3_text", "hidden_size": 1152, "num_attention_heads": 4, "num_key_value_heads": 1,
          "head_dim": 256, "max_position_embeddings": 131072, "rope_theta": 1e6, "rope_local_base_freq": 10000.0,
          "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window": 512,
          "num_hidden_layers": 6}  # fmt: skip


def _inv_freq(layer_type: str) -> np.ndarray:
    """transformers' own inverse frequencies of a Gemma 3 layer type (float32, as a float64 array)."""
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    rotary = Gemma3RotaryEmbedding(Gemma3TextConfig(**{k: v for k, v in GEMMA3.items() if k != "model_type"}))
    return getattr(rotary, f"{layer_type}_inv_freq").double().numpy()


def _compare(tmp_path: Path, inv_freq: np.ndarray, layer_type: str, length: int) -> tuple[int, list[dict]]:
    """``compare`` of a bfloat16 rotate_half cos and sin pair (held as float32) with the config's layer type."""
    angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
    cos, sin = (torch.tensor(np.hstack([f(angles)] * 2)).bfloat16().float().numpy() for f in (np.cos, np.sin))
    engine, config = tmp_path / "engine.safetensors", tmp_path / "config.json"
    save_file({"cos": cos, "sin": sin}, str(engine))
    config.write_text(json.dumps(GEMMA3))
    result = run_in_process("compare", str(engine), str(config), "--json", "--layer-type", layer_type)
    assert result.code in (0, 1), result.stderr
    return result.code, json.loads(result.out)["diagnosis"]


def test_gemma3_full_attention_float16_frequencies_in_a_bfloat16_pair_are_named(tmp_path: Path) -> None:
    # at 512 positions the exact table is within four bfloat16 roundings (at the row's scale) of B: the diagnosis
    # stopped at "no cause stands out"; two roundings plus the angle noise tell it from float16 frequencies
    rounded = torch.tensor(_inv_freq("full_attention"), dtype=torch.float32).half().double().numpy()
    code, found = _compare(tmp_path, rounded, "full_attention", 512)
    assert code == 1 and [item["code"] for item in found] == ["frequencies_rounded"]
    assert found[0]["figures"]["a_dtype"] == "float16" and found[0]["figures"]["b_dtype"] is None
    # evidence: float16 frequencies reproduce the engine to its own bfloat16 rounding (half a unit at 1: 2^-9)
    assert found[0]["figures"]["residual"] == pytest.approx(2.0**-9, rel=1e-3)
    assert 0 < found[0]["figures"]["first_position"] < 512


@pytest.mark.parametrize("layer_type", ["full_attention", "sliding_attention"])
def test_the_right_frequencies_in_a_bfloat16_pair_raise_no_alarm(tmp_path: Path, layer_type: str) -> None:
    assert _compare(tmp_path, _inv_freq(layer_type), layer_type, 512) == (0, [])


def test_a_global_layer_computed_with_the_local_settings_is_unscaled_at_the_local_base(tmp_path: Path) -> None:
    # the full_attention layer's table with the sliding layers' base 10000 and no scaling: two changes at once
    code, found = _compare(tmp_path, _inv_freq("sliding_attention"), "full_attention", 256)
    # the layer type whose settings they are named first (test_diagnosis_headdim_s11), then the two changes
    assert code == 1 and [item["code"] for item in found][:2] == ["layer_type_settings", "unscaled"]
    figures = found[1]["figures"]
    assert (figures["a_base"], figures["b_base"], figures["scaling"]) == (10000.0, 1e6, "scaling=linear, factor=8.0")
    assert "and with base 10000 where B has 1e+06" in found[1]["message"]
