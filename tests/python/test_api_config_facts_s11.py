"""``pecli.compare`` from Python with a model's config (issue 30): the config's table is computed at the other
side's rows, as documented and as the CLI does (it was read at max_position_embeddings rows: "shape mismatch:
A is 256 × 128, B is 40960 × 128"), and its reference carries the config's facts for the diagnosis."""

from __future__ import annotations

import json

import numpy as np

import pecli

QWEN3 = {"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
         "head_dim": 128, "max_position_embeddings": 40960, "rope_theta": 1e6}  # fmt: skip


def _engine_cos(width: int, length: int = 256, base: float = 1e6) -> np.ndarray:
    """Qwen3's rotate_half cos at ``width`` columns, from the formula (float64, rounded once to float32)."""
    inv_freq = base ** (-np.arange(0, width, 2, dtype=np.float64) / width)
    return np.cos(np.hstack([np.outer(np.arange(length), inv_freq)] * 2)).astype(np.float32)


def test_a_wrong_base_is_named_from_python(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(QWEN3))
    report = pecli.compare(_engine_cos(128, base=1e4), str(path), key_b="cos")
    assert not report.agree
    assert report.result.diagnosis[0].code == "base_differs"
    assert tuple(report.b.shape) == (256, 128)


def test_the_right_width_agrees_from_python(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(QWEN3))
    assert pecli.compare(_engine_cos(128), str(path), key_b="cos").agree
