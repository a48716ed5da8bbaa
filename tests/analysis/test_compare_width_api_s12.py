"""pecli.compare names an engine table of another width than a model's config as the CLI does: partial rotary
ignored (GPT-NeoX's rotary_pct), where it said 'shape mismatch' (session 12). The engine's table is written from
the formula: cos(p · 10000^(−2i/32)) over the whole head of 32 columns, in rotate_half's layout (each frequency
twice); the config turns only 8 of them (rotary_pct 0.25)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.errors import TableFileError
from tests.conftest import run_in_process

LENGTH, HEAD = 16, 32  # hidden 128 over 4 heads


def _config(tmp_path: Path, rotary_pct: float) -> str:
    config = {"model_type": "gpt_neox", "hidden_size": 128, "num_attention_heads": 4, "intermediate_size": 256,
              "num_hidden_layers": 1, "vocab_size": 100, "max_position_embeddings": LENGTH,
              "rotary_emb_base": 10000, "rotary_pct": rotary_pct}  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def _engine_cos(base: float) -> np.ndarray:
    """The whole head's cos: every column turning, frequencies over all 32 (the partial rotary ignored)."""
    inv_freq = base ** -(np.arange(0, HEAD, 2, dtype=np.float64) / HEAD)
    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    return np.cos(np.concatenate([angles, angles], axis=1)).astype(np.float32)


def _cli_report(tmp_path: Path, engine: np.ndarray, config: str) -> tuple[int, dict, str]:
    np.save(tmp_path / "engine_cos.npy", engine)
    result = run_in_process("compare", str(tmp_path / "engine_cos.npy"), config, "--key-b", "cos", "--json")
    return result.code, json.loads(result.out) if result.out else {}, result.stderr


def test_the_api_names_partial_rotary_ignored_as_the_cli_does(tmp_path: Path) -> None:
    config, engine = _config(tmp_path, 0.25), _engine_cos(10000.0)
    code, cli_report, stderr = _cli_report(tmp_path, engine, config)
    assert code == 1, stderr
    report = pecli.compare(engine, config, key_b="cos")
    assert not report.agree
    api, cli = report.result.diagnosis[0], cli_report["diagnosis"][0]
    assert (api.code, api.message, api.figures) == (cli["code"], cli["message"], cli["figures"])
    assert api.code == "partial_rotary_ignored"
    assert api.figures == {"rotary_columns": 8, "turned_columns": HEAD, "head_dim": HEAD}
    # compared at the head's width: both sides 32 columns, the config's columns past 8 passing through (cos 1)
    assert report.a.shape == report.b.shape == (LENGTH, HEAD) == tuple(cli_report["a"]["shape"])
    assert report.result.max_abs == pytest.approx(cli_report["max_abs"], rel=1e-12)
    assert report.result.max_abs > 0.5


def test_the_api_and_the_cli_refuse_a_width_that_partial_rotary_does_not_explain(tmp_path: Path) -> None:
    config, engine = _config(tmp_path, 0.25), _engine_cos(500.0)  # another base: not the config's RoPE at all
    code, _, stderr = _cli_report(tmp_path, engine, config)
    assert code == 2
    with pytest.raises(TableFileError) as raised:
        pecli.compare(engine, config, key_b="cos")
    message = str(raised.value)
    assert message.startswith(f"shape mismatch: A is {LENGTH} × {HEAD}, B is {LENGTH} × 8")
    assert "partial rotary does not explain the difference" in message
    assert message.split(" (")[0] in stderr


def test_the_api_still_agrees_with_the_mistake_free_table(tmp_path: Path) -> None:
    # the config's own 8 rotary columns: frequencies over 8, each twice; compared as they are, no width step
    inv_freq = 10000.0 ** -(np.arange(0, 8, 2, dtype=np.float64) / 8)
    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    engine = np.cos(np.concatenate([angles, angles], axis=1)).astype(np.float32)
    report = pecli.compare(engine, _config(tmp_path, 0.25), key_b="cos")
    assert report.agree, report.result.diagnosis
