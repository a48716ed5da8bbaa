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
