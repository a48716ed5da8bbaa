"""compare names partial rotary ignored (or assumed) when an engine's RoPE table is as wide as the head and a
model's config rotates fewer columns (GPT-NeoX's rotary_pct): it stopped with exit 2, 'shape mismatch: A is
L × 64, B is L × 16' (session 9). The engine tables come from transformers' own GPTNeoXRotaryEmbedding: its
inv_freq with the config's rotary_pct (the reference) or with rotary_pct 1 (the whole head: the mistake)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LENGTH, HEAD = 64, 32  # hidden 128 over 4 heads


def _config(tmp_path: Path, rotary_pct: float) -> Path:
    config = {"model_type": "gpt_neox", "hidden_size": 128, "num_attention_heads": 4, "intermediate_size": 256,
              "num_hidden_layers": 1, "vocab_size": 100, "max_position_embeddings": LENGTH,
              "rotary_emb_base": 10000, "rotary_pct": rotary_pct}  # fmt: skip
    path = tmp_path / f"config_{rotary_pct:g}.json"
    path.write_text(json.dumps(config))
    return path


def _inv_freq(rotary_pct: float) -> np.ndarray:
    """transformers' own frequencies of the tiny GPT-NeoX at ``rotary_pct`` (1: over the whole head)."""
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    config = GPTNeoXConfig(hidden_size=128, num_attention_heads=4, intermediate_size=256, num_hidden_layers=1,
                           vocab_size=100, max_position_embeddings=LENGTH, rotary_pct=rotary_pct)  # fmt: skip
    return GPTNeoXRotaryEmbedding(config).inv_freq.double().numpy()


def _engine(path: Path, inv_freq: np.ndarray, layout: str) -> Path:
    """An engine's table at positions 0..LENGTH−1: a (cos, sin) pair in rotate_half's layout, vLLM's
    cos_sin_cache ([cos | sin] of each frequency once) or a complex freqs_cis (saved as .npy)."""
    angles = np.outer(np.arange(LENGTH, dtype=np.float64), inv_freq)
    if layout == "freqs_cis":
        np.save(path.with_suffix(".npy"), np.exp(1j * angles).astype(np.complex64))
        return path.with_suffix(".npy")
    if layout == "cos_sin_cache":
        tensors = {"cos_sin_cache": np.concatenate([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)}
    else:
        both = np.concatenate([angles, angles], axis=1)
        tensors = {"cos": np.cos(both).astype(np.float32), "sin": np.sin(both).astype(np.float32)}
    save_file(tensors, str(path))
    return path


def _compare(*args: Path) -> tuple[int, dict, str]:
    result = run_in_process("compare", *map(str, args), "--json")
    return result.code, json.loads(result.out) if result.out else {}, result.stderr


@pytest.mark.parametrize("layout", ["pair", "cos_sin_cache", "freqs_cis"])
def test_partial_rotary_ignored_named_against_the_config(tmp_path: Path, layout: str) -> None:
    whole_head = _inv_freq(1.0)
    assert len(whole_head) == HEAD // 2 and len(_inv_freq(0.25)) == HEAD // 8  # 8 rotary columns of 32
    engine = _engine(tmp_path / "engine.safetensors", whole_head, layout)
    code, report, stderr = _compare(engine, _config(tmp_path, 0.25))
    assert code == 1, stderr
    assert [found["code"] for found in report["diagnosis"]][:1] == ["partial_rotary_ignored"]
    assert report["diagnosis"][0]["figures"] == {"rotary_columns": 8, "turned_columns": HEAD, "head_dim": HEAD}
    assert "A is 32 columns a part, B 8" in stderr  # the widths in words
    assert report["max_abs"] > 0.5  # compared at the head width: the columns past the rotary ones differ


def test_config_first_names_the_engine_as_b(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "engine.safetensors", _inv_freq(1.0), "pair")
    code, report, stderr = _compare(_config(tmp_path, 0.25), engine)
    assert code == 1, stderr
    assert report["diagnosis"][0]["code"] == "partial_rotary_ignored"
    assert report["diagnosis"][0]["message"].startswith("B turns all 32 columns")


@pytest.mark.parametrize("layout", ["pair", "cos_sin_cache"])
def test_the_mistake_free_table_still_agrees(tmp_path: Path, layout: str) -> None:
    engine = _engine(tmp_path / "engine.safetensors", _inv_freq(0.25), layout)
    code, report, stderr = _compare(engine, _config(tmp_path, 0.25))
    assert code == 0, stderr
    assert report["agree"] is True


def test_partial_rotary_assumed_named_against_a_full_rotary_config(tmp_path: Path) -> None:
    # the engine takes rotary_pct 0.25 where the config rotates the whole head: its table is the 8 columns
    engine = _engine(tmp_path / "engine.safetensors", _inv_freq(0.25), "pair")
    code, report, stderr = _compare(_config(tmp_path, 1.0), engine)
    assert code == 1, stderr
    assert report["diagnosis"][0]["code"] == "partial_rotary_assumed"
    assert report["diagnosis"][0]["figures"] == {"rotary_columns": HEAD, "turned_columns": 8, "head_dim": HEAD}


def test_another_difference_keeps_the_shape_error_with_the_widths(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "engine.safetensors", 1.01 * _inv_freq(1.0), "pair")  # not the head's table
    code, _, stderr = _compare(engine, _config(tmp_path, 0.25))
    assert code == 2
    assert "shape mismatch: A is 64 × 64, B is 64 × 16 (A is 32 columns a part, B 8" in stderr
    assert "partial rotary does not explain the difference" in stderr
    assert "Traceback" not in stderr


def test_one_part_of_each_named_too(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "engine.safetensors", _inv_freq(1.0), "pair")
    result = run_in_process("compare", str(engine), str(_config(tmp_path, 0.25)), "--key-a", "sin", "--key-b", "sin",
                            "--json")  # fmt: skip
    assert result.code == 1, result.stderr
    report = json.loads(result.out)
    assert report["diagnosis"][0]["code"] == "partial_rotary_ignored"
    assert report["diagnosis"][0]["message"].startswith("A turns all 32 columns, with frequencies")
    assert "A is 32 columns, B 8" in result.stderr
