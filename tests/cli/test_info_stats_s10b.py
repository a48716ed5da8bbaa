"""``pecli info --stats`` of tables holding infinities: the text and the JSON agree, and the JSON counts them
(issue 30)."""

from __future__ import annotations

import json

import numpy as np

from pecli.analysis import stats as stats_module
from pecli.analysis.stats import _blockwise_stats


def _stats(cli, path) -> tuple[str, dict]:
    text = cli("info", str(path), "--stats")
    document = cli("info", str(path), "--stats", "--json")
    assert text.code == 0 and document.code == 0, text.stderr + document.stderr
    (tensor,) = json.loads(document.out)["tensors"]
    return text.out, tensor["stats"]


def test_an_infinity_is_counted_in_the_json_and_named_in_the_text(cli, tmp_path):
    path = tmp_path / "inf.npy"
    np.save(path, np.array([[1, np.inf], [2, 3]]))
    text, found = _stats(cli, path)
    # null is pecli's JSON for every non-finite figure; the count says the null max is +inf, not missing data
    assert found == {"min": 1.0, "max": None, "mean": None, "std": None, "posinf": 1}
    assert "min 1, max inf, mean inf, std nan, 1 +inf" in text


def test_both_infinities_and_nan_are_counted(cli, tmp_path):
    path = tmp_path / "mixed.npy"
    np.save(path, np.array([-np.inf, np.nan, 2.0, -np.inf, np.inf], dtype=np.float32))
    text, found = _stats(cli, path)
    assert found == {"min": None, "max": None, "mean": None, "std": None, "posinf": 1, "neginf": 2, "nan": 1}
    assert "min -inf, max inf, mean nan, std nan, 1 NaN, 1 +inf, 2 -inf" in text


def test_finite_tables_carry_no_infinity_counts(cli, tmp_path):
    path = tmp_path / "finite.npy"
    np.save(path, np.array([[1.0, 2.0], [3.0, 6.0]]))
    text, found = _stats(cli, path)
    assert set(found) == {"min", "max", "mean", "std"} and found["max"] == 6.0
    assert "inf" not in text


def test_tensors_read_a_block_at_a_time_count_infinities_in_every_block(monkeypatch):
    monkeypatch.setattr(stats_module, "_BLOCK_VALUES", 2)
    values = np.array([1.0, np.inf, 3.0, -np.inf, np.nan, np.inf, 5.0])
    found = _blockwise_stats(lambda start, n: values[start : start + n], len(values))
    assert found["posinf"] == 2 and found["neginf"] == 1 and found["nan"] == 1
    assert found["min"] == -np.inf and found["max"] == np.inf and np.isnan(found["mean"]) and np.isnan(found["std"])
