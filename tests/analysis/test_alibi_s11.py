"""ALiBi compare, session 11 (issue 30).

1. MPT's bias, m·(j − (k − 1)) (transformers' ``build_mpt_alibi_tensor``, from MPT's ``build_alibi_bias``), against
   the paper's −m·|i − j| or BLOOM's m·j was "no known cause": it is one constant per query row (over every key
   of a row, or over the keys up to each query), which softmax removes; the finding says so, with the offsets.
2. A passing per-head comparison named its tolerance's place by a row ("at head 0", or "at query 0" of no
   head): a bias's tolerance follows each value, so the verdict gives its size only.
3. A one-head (1, L, L) bias was named "position 0, dimension 0": it is named by its axes, head, query, key.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.analysis.diagnosis import diagnose_difference
from pecli.schemes.alibi import alibi_slopes, alibi_table
from tests.conftest import require_module, run_in_process

pytestmark = pytest.mark.xdist_group("transformers")  # one worker imports transformers (one test here)

MPT = "tests/data/models/mpt/config.json"  # n_heads 8, alibi


def _mpt_rows(heads: int, keys: int) -> np.ndarray:
    """MPT's bias, (heads, 1, keys) float32: m_h·(j − (keys − 1)) (transformers' build_mpt_alibi_tensor: checked
    against it below)."""
    return (alibi_slopes(heads)[:, None, None] * (np.arange(keys) - (keys - 1.0))).astype(np.float32)


@pytest.mark.parametrize("heads", [8, 12])
def test_mpt_rows_are_transformers(heads: int) -> None:
    torch = require_module("torch")
    require_module("transformers")
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    with torch.no_grad():
        theirs = build_mpt_alibi_tensor(heads, 16).numpy()
    assert theirs.shape == (heads, 1, 16)
    # the same values to float32 rounding (torch's float32 slopes 1/2^(k·8/16) for 12 heads, then the product)
    np.testing.assert_allclose(theirs, _mpt_rows(heads, 16), rtol=2.0**-21, atol=0.0)


def _compare(*args: str) -> tuple[int, str, dict]:
    text = run_in_process("compare", *args)
    report = run_in_process("compare", *args, "--json")
    assert text.code == report.code, (text.stderr, report.stderr)
    return text.code, text.out, json.loads(report.out)


def test_mpt_key_rows_are_alibi_less_a_constant_per_row(tmp_path: Path) -> None:
    rows = _mpt_rows(8, 16)
    np.save(tmp_path / "mpt.npy", rows)
    code, out, report = _compare(str(tmp_path / "mpt.npy"), "alibi")  # B: BLOOM's key form m·j at query 0
    assert code == 1  # the tables differ; the finding says the attention does not
    found = report["diagnosis"][0]
    assert found["code"] == "attention_row_offset"
    assert "attention probabilities are identical" in found["message"]
    # A − B = −15·m_h, from head 0 (m 1/2) to head 7 (m 1/256)
    assert found["figures"]["offset_min"] == pytest.approx(-7.5, abs=1e-12)
    assert found["figures"]["offset_max"] == pytest.approx(-15 / 256, abs=1e-12)
    assert "diagnosis: A − B is one constant along each row" in out


def test_mpt_bias_against_the_papers_and_the_config_is_equal_under_a_causal_mask(tmp_path: Path) -> None:
    heads, length = 8, 16
    full = np.ascontiguousarray(np.broadcast_to(_mpt_rows(heads, length), (heads, length, length)))
    np.save(tmp_path / "mpt.npy", full)
    paper = alibi_table(length, heads=heads, dtype="float64")
    slope = alibi_slopes(heads)[:, None, None]
    queries = np.arange(length)[None, :, None]
    for other in ("alibi", MPT):
        code, _, report = _compare(str(tmp_path / "mpt.npy"), other)
        assert code == 1
        found = report["diagnosis"][0]
        assert found["code"] == "attention_row_offset_causal", report["diagnosis"]
        assert "under a causal mask the attention probabilities are identical" in found["message"]
        # over keys j <= i: A − B = m·(i − 15); after the query, 2·m·(j − i) beyond it: 2 · 1/2 · 15 at most
        causal = np.arange(length)[None, None, :] <= queries
        offsets = (full - paper)[causal.repeat(heads, 0)].reshape(-1)
        assert np.allclose(np.unique(offsets), np.unique(slope * (queries - 15.0)))
        assert found["figures"]["offset_min"] == pytest.approx(-7.5) and found["figures"]["offset_max"] == 0.0
        assert found["figures"]["after_query_max_abs"] == pytest.approx(15.0)


def test_a_row_offset_is_named_only_where_softmax_removes_it() -> None:
    rng = np.random.default_rng(0)
    mpt = _mpt_rows(4, 8)[:, 0].astype(np.float64)
    # ALiBi key rows plus noise per entry: no constant per row
    noisy = mpt + rng.normal(scale=1e-3, size=mpt.shape)
    assert "attention_row_offset" not in [f.code for f in diagnose_difference(mpt, noisy, tolerance=1e-9)]
    # a table of positions plus a constant per row is no attention bias: softmax has nothing to do with it
    table = np.sin(np.arange(32.0).reshape(8, 4))
    shifted = table + np.arange(8.0)[:, None]
    assert not [f for f in diagnose_difference(table, shifted, tolerance=1e-9) if f.code.startswith("attention")]


def test_a_passing_bias_states_its_tolerance_without_a_row(tmp_path: Path) -> None:
    heads, keys = 12, 64  # slopes that are no powers of two: float32 values, a tolerance above 0
    np.save(tmp_path / "rows.npy", alibi_table(keys, heads=heads, form="key", dtype="float32")[:, :1])
    np.save(tmp_path / "full.npy", alibi_table(keys, heads=heads, dtype="float32"))
    for name in ("rows.npy", "full.npy"):
        code, out, report = _compare(str(tmp_path / name), "alibi")
        verdict = out.splitlines()[-1]
        assert code == 0 and verdict.startswith("same within float32 arithmetic (tolerance up to "), verdict
        assert " at " not in verdict and " at " not in report["tolerance"]
        # the largest tolerance is that of the largest |value|: head 8 (slope 2^-0.5) at key 63, a few float32 ulps
        largest = float(np.abs(alibi_table(keys, heads=heads, dtype="float64")).max())
        assert largest * 2.0**-23 < report["atol"] < 64 * largest * 2.0**-23


def test_one_head_is_named_by_its_axes(tmp_path: Path) -> None:
    table = alibi_table(16, heads=1, dtype="float32")
    table[0, 3, 5] += 1.0
    np.save(tmp_path / "one.npy", table)
    code, out, report = _compare(str(tmp_path / "one.npy"), "alibi:heads=1")
    assert code == 1 and "max |A − B|        1 (head 0, query 3, key 5)" in out
    assert report["axes"] == ["head", "query", "key"]
    assert report["worst"] == {"position": 3, "dimension": 5, "head": 0}
    assert "cosine per query row" in out and "position" not in out
    # a scheme's (len, len) table without heads (T5's buckets): query and key
    _, out, report = _compare(str(tmp_path / "one.npy"), "t5")
    assert report["axes"] == ["query", "key"] and "dimension" not in out


def test_one_head_mpt_is_diagnosed_as_a_bias(tmp_path: Path) -> None:
    mpt = np.ascontiguousarray(np.broadcast_to(_mpt_rows(1, 16), (1, 16, 16)))
    np.save(tmp_path / "mpt1.npy", mpt)
    code, _, report = _compare(str(tmp_path / "mpt1.npy"), "alibi:heads=1")
    assert code == 1
    assert [found["code"] for found in report["diagnosis"]] == ["attention_row_offset_causal"]
    assert report["diagnosis"][0]["figures"]["offset_min"] == pytest.approx(-15 / 256)
