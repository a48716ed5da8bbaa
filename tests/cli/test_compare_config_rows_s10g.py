"""compare of an (H, 1, k) ALiBi file, one query row per head (HF BLOOM's build_alibi_tensor), against a
BLOOM, MPT or Falcon config.json (issue 30): the config was built with H rows and refused ('config.json has
shape (12, 12, 12)', exit 2). It is compared as a spec is: the config's bias at query 0 of each head, in the
key form m·j where the config leaves the form to its default."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_in_process

BLOOM = "tests/data/models/bloom/config.json"


def _bloom_rows(heads: int, keys: int) -> np.ndarray:
    """transformers' BloomModel build_alibi_tensor (all-ones mask), (heads, 1, keys) in float32: its slopes
    from the closest power of two, then every other slope of twice as many heads."""
    closest = 2 ** int(np.floor(np.log2(heads)))
    base = np.float32(2 ** (-(2 ** -(np.log2(closest) - 3))))
    slopes = [base ** np.float32(k) for k in range(1, closest + 1)]
    if closest != heads:
        extra = np.float32(2 ** (-(2 ** -(np.log2(2 * closest) - 3))))
        slopes += [extra ** np.float32(k) for k in range(1, 2 * (heads - closest), 2)]
    positions = np.arange(keys, dtype=np.float32)
    return (np.array(slopes, np.float32)[:, None] * positions)[:, None, :]


def test_bloom_query_rows_agree_with_bloom_config(tmp_path):
    heads = json.loads(Path(BLOOM).read_text())["n_head"]
    path = str(tmp_path / "bloom.npy")
    np.save(path, _bloom_rows(heads, 64))
    for argv in ([path, BLOOM], [BLOOM, path]):
        result = run_in_process("compare", *argv)
        assert result.code == 0, (result.out, result.stderr)
        assert "config.json [alibi, query 0 of each head, form=key] — 12 × 64" in result.out
        assert "same within float32 arithmetic" in result.out
        worst = float(result.out.split("max |A − B|")[1].split()[0])
        assert worst < 1e-5  # float32's rounding of m·j at j ≤ 63


def test_bloom_query_rows_with_a_wrong_slope_are_diagnosed(tmp_path):
    rows = _bloom_rows(12, 64)
    path = str(tmp_path / "rev.npy")
    np.save(path, rows[::-1].copy())
    result = run_in_process("compare", path, BLOOM)
    assert result.code == 1, result.stderr
    assert "heads are in reverse order" in result.out


def test_config_keys_follow_len_and_heads_must_match(tmp_path):
    path = str(tmp_path / "bloom8.npy")
    np.save(path, _bloom_rows(8, 32))  # the config has 12 heads
    result = run_in_process("compare", path, BLOOM)
    assert result.code == 2 and "shape mismatch" in result.stderr and "has shape (12," not in result.stderr


@pytest.mark.parametrize("heads", [12])
def test_json_names_head_and_key_axes(tmp_path, heads):
    path = str(tmp_path / "bloom.npy")
    np.save(path, _bloom_rows(heads, 16))
    report = json.loads(run_in_process("compare", path, BLOOM, "--json").out)
    assert report["agree"] and report["axes"] == ["head", "key"]
