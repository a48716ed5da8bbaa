"""Costs in proportion to what is shown (issue 30, class 4), round 14. Each case runs pecli in a child
under :func:`tests.conftest.run_capped`'s address-space cap and reads the child's peak resident memory
(``VmHWM``) as it exits.
"""

from __future__ import annotations

import sys

import pytest

from tests.conftest import INTERPRETER_MB, run_peak

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="peak memory read as Linux reports it")


def test_timestep_summary_of_wide_rows_does_not_list_them():
    """2 × 4·10^6 (32 MB): the printed summary built --json's first rows as Python lists whatever the
    output (30 bytes a value, 568 MB peak) to show a few columns; they are built for JSON only."""
    code, stdout, stderr, peak = run_peak("timestep", "--d", "4000000", "--range", "0:2:1")
    assert code == 0, stderr
    assert "2 × 4000000 float32" in stdout
    table_mb = 2 * 4_000_000 * 4 / 2**20
    assert peak < INTERPRETER_MB + 4 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB table"


def _column_roles_by_loop(dim: int, count: int, layout: str) -> tuple[list[int], list[int]]:
    """The sin and cos columns read one column at a time, as identify did before round 14."""
    import numpy as np

    from pecli.schemes._angles import place_sin_cos

    codes = np.arange(1, count + 1, dtype=np.float64)
    placed = np.zeros((1, dim))
    place_sin_cos(placed, (codes - 1j * codes)[None, :], layout=layout, cos_first=False)
    sin_columns, cos_columns = [-1] * count, [-1] * count
    for column, code in enumerate(placed[0]):
        if code < 0:
            sin_columns[int(-code) - 1] = column
        elif code > 0:
            cos_columns[int(code) - 1] = column
    return sin_columns, cos_columns


@pytest.mark.parametrize("layout", ["interleaved", "split"])
@pytest.mark.parametrize(("dim", "count"), [(8, 4), (9, 5), (9, 4), (5, 3), (1, 1), (2, 0)])
def test_column_roles_by_arrays_are_the_columns_read_one_by_one(layout, dim, count):
    from pecli.analysis.identify.sinusoids import column_roles

    sin_columns, cos_columns = column_roles(dim, count, layout, False)
    assert (sin_columns.tolist(), cos_columns.tolist()) == _column_roles_by_loop(dim, count, layout)
    swapped = column_roles(dim, count, layout, True)
    assert (swapped[1].tolist(), swapped[0].tolist()) == (sin_columns.tolist(), cos_columns.tolist())
