"""Costs in proportion to what is shown (issue 30, class 4), the cases an earlier round left: a small
output from a large input. Each case runs pecli in a child under :func:`tests.conftest.run_capped`'s
address-space cap and reads the child's peak resident memory (``VmHWM``) as it exits.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.conftest import INTERPRETER_MB, run_peak

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="peak memory read as Linux reports it")


def test_pca_of_a_long_table_holds_its_gram_matrix_not_float64_copies(tmp_path):
    """32768 × 256 float32 (32 MiB): the SVD of the whole table took its float64 copy, its centred copy
    and the 32768 × 256 left factor (≈ 400 MB); the Gram matrix built by blocks is 0.5 MiB."""
    table = np.random.default_rng(0).standard_normal((32768, 256)).astype(np.float32)
    table[:, 0] += np.linspace(-50, 50, 32768, dtype=np.float32)  # one direction that holds most variance
    path = tmp_path / "t.npy"
    np.save(path, table)
    code, stdout, stderr, peak = run_peak("plot", str(path), "--view", "pca", "--json")
    assert code == 0, stderr
    import json

    document = json.loads(stdout)
    assert document["positions"] == 32768
    centred = table[:, 0].astype(np.float64) - table[:, 0].astype(np.float64).mean()
    expected = float(centred @ centred) / float(((table - table.mean(axis=0, dtype=np.float64)) ** 2).sum())
    assert document["explained_variance_ratio"][0] == pytest.approx(expected, rel=1e-3)
    assert abs(document["coordinates"][-1][0] - centred[-1]) < 0.5  # the first component is column 0
    table_mb = table.nbytes / 2**20
    assert peak < INTERPRETER_MB + 2 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB table"


def test_compare_of_tables_longer_than_float16_holds_is_a_difference_not_a_usage_error(tmp_path):
    """70000 × 4 against itself + 1e-3: the diagnosis rounded positions 0..69999 to float16, which stops at
    65504, and the comparison ended "float16 cannot hold the table's values" (exit 2, nothing reported)."""
    a = np.random.default_rng(0).standard_normal((70_000, 4)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a + np.float32(1e-3))
    code, stdout, stderr, peak = run_peak("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert code == 1, stderr
    assert "float16" not in stderr
    assert "max |A − B|        0.00100" in stdout
    assert peak < INTERPRETER_MB + 60, f"peak {peak:.0f} MB"
