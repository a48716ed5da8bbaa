"""Causes the injected-mistake sweep of ``compare ENGINE config.json`` (session 10, diag5) named wrong: an
engine's RoPE cos and sin pair held in float16 or bfloat16 with the other pairing (adjacent pairs where the
config's model rotates halves). The rounding holds the slow cos columns at 1, so the column matching found
another permutation ("the columns are permuted") than the pairing's; the reference regenerated with the other
pairing names it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.analysis.test_diagnosis_sweep_s9 import LENGTH, LLAMA, _diagnosis, _rotary

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

QWEN2 = {**LLAMA, "model_type": "qwen2", "rope_theta": 1000000.0, "max_position_embeddings": 32768}


@pytest.mark.parametrize(("config", "dtype"), [(LLAMA, "float16"), (QWEN2, "bfloat16")])
def test_a_rounded_pair_with_the_other_pairing_is_named_pairing(
    tmp_path: Path, config: dict[str, object], dtype: str
) -> None:
    inv_freq, _ = _rotary(LLAMA if config is LLAMA else {**LLAMA, "rope_theta": config["rope_theta"]})
    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    # adjacent pairs (GPT-J's repeat_interleave) where transformers' rotate_half repeats the halves
    cos, sin = (torch.tensor(np.repeat(f(angles), 2, axis=1)).to(getattr(torch, dtype)) for f in (np.cos, np.sin))
    engine = tmp_path / "engine.safetensors"
    save_file({"cos": cos.float().numpy(), "sin": sin.float().numpy()}, str(engine))  # float32 of dtype's values
    found = _diagnosis(tmp_path, config, engine)
    assert [item["code"] for item in found][:1] == ["pairing"]
    figures = found[0]["figures"]
    assert (figures["a_pairing"], figures["b_pairing"], figures["blocks"]) == ("adjacent pairs", "halves", 2)
    assert str(found[0]["message"]).startswith("the pairing differs: B pairs halves (NeoX, rotate_half), A adjacent")


def _bf16_pair(path, inv_freq, repeat):
    import torch

    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    join = (lambda t: np.repeat(t, 2, axis=1)) if repeat else (lambda t: np.hstack([t, t]))
    cos, sin = (torch.tensor(join(f(angles))).bfloat16().float().numpy() for f in (np.cos, np.sin))
    save_file({"cos": cos, "sin": sin}, str(path))
    return path


def test_gemma3_full_attention_bfloat16_pair_with_the_other_pairing_is_named_pairing(tmp_path):
    # the slow cos columns (linear factor 8, base 1e6) round to 1 in bfloat16: the pairing's permutation was
    # looked for over the cos block's turning columns only (a partial rotary), and "columns permuted" came first
    config = {**LLAMA, "rope_theta": 1e6, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    inv_freq, _ = _rotary(config)
    found = _diagnosis(tmp_path, config, _bf16_pair(tmp_path / "e.safetensors", inv_freq, repeat=True))
    assert [item["code"] for item in found][:1] == ["pairing"]
    assert found[0]["figures"]["rotary_columns"] == 64 and found[0]["figures"]["blocks"] == 2


def test_float16_frequencies_in_a_bfloat16_pair_are_named(tmp_path):
    # within the diagnosis's bfloat16 bound (4 roundings at the table's scale) though compare finds them
    # different entry by entry: the diagnosis had stopped at "no cause stands out from the noise"
    config = {**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    inv_freq, _ = _rotary(config)
    rounded = torch.tensor(inv_freq, dtype=torch.float32).half().double().numpy()
    found = _diagnosis(tmp_path, config, _bf16_pair(tmp_path / "e.safetensors", rounded, repeat=False))
    assert [item["code"] for item in found][:1] == ["frequencies_rounded"]
    assert found[0]["figures"]["a_dtype"] == "float16"
