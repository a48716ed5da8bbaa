"""Causes compare's diagnosis left unnamed or slow (session 10, diag4): an engine's RoPE cache with one mistake,
compared with the model's config through the CLI, and the diagnosis's cost on long tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.analysis.test_diagnosis_sweep_s9 import LLAMA, LLAMA3, _diagnosis, _engine, _rotary

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.mark.parametrize("layout", ["pair", "cos_sin_cache"])
def test_llama31_max_position_embeddings_as_the_original_context_is_named(tmp_path: Path, layout: str) -> None:
    # Llama 3.1: factor 8, original 8192, max_position_embeddings 131072 = 16 × 8192 (not the scaled 8 × 8192)
    config = {**LLAMA, "rope_scaling": LLAMA3}
    wrong = {**LLAMA, "rope_scaling": {**LLAMA3, "original_max_position_embeddings": 131072}}
    inv_freq, scale = _rotary(wrong)
    assert not np.allclose(inv_freq, _rotary(config)[0])
    found = _diagnosis(tmp_path, config, _engine(tmp_path / "engine", layout, inv_freq, scale))
    assert [item["code"] for item in found][:1] == ["original_max_position"]
    assert "original_max_position 131072 (16 × 8192" in str(found[0]["message"])
    assert "max_position_embeddings" in str(found[0]["message"])
