"""compare of two very wide tables (few rows of 10^6 columns), with a figure: memory in proportion to what is
read, not the tables × their rows (issue 30, class 4: 64 × 10^6 float32 against it + 0.1 peaked at 4.6 GB)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_capped

ROWS, COLS = 24, 1_000_000


def _wide(path, shift: float) -> str:
    table = np.lib.format.open_memmap(str(path), mode="w+", dtype=np.float32, shape=(ROWS, COLS))
    for row in range(ROWS):
        table[row] = np.sin((row * COLS + np.arange(COLS)) * 1e-3) + shift
    table.flush()
    del table
    return str(path)


def test_two_wide_tables_and_their_figure_fit_in_bounded_memory(tmp_path):
    a, b = _wide(tmp_path / "a.npy", 0.0), _wide(tmp_path / "b.npy", 0.1)
    figure = tmp_path / "fig.png"
    # under an address-space cap of 1.5 GiB: the 24 rows were widened in one chunk and diagnosed whole, and the
    # figure's A, B and A − B held whole in float64 (MemoryError, exit 3)
    done = run_capped("compare", a, b, "-o", str(figure))
    assert done.returncode == 1, done.stderr
    assert "B = A + 0.1: every value shifted by one constant (diagnosed on the first 16 rows)" in done.stdout
    assert figure.stat().st_size > 0


@pytest.mark.parametrize(
    "table",
    [
        np.sin(np.arange(64 * 32.0).reshape(64, 32) * 0.37),
        np.tile([0.0, 1.0], (40, 8)),
        np.tile(np.repeat([0.0, 1.0], 8), (40, 1)),
        np.random.default_rng(0).normal(size=(600, 16)),
        np.tile([[0.0, 5.0, 0.1, 5.1]], (300, 4)) + np.arange(300.0)[:, None],
        np.zeros((10, 6)),
        np.zeros((10, 7)),
    ],
)
def test_the_figure_s_column_check_reads_what_column_structure_reads(table):
    from pecli.render.charts import _column_lines, _columns_structure
    from pecli.render.downsample import column_structure

    rows = np.arange(0, len(table), max(1, len(table) // 256))  # the rows the figure samples
    sampled = table[rows]
    line_rows, columns = _column_lines(len(rows), table.shape[1])
    lines = sampled[line_rows][:, columns] if len(line_rows) else np.zeros((0, 0))
    assert _columns_structure(sampled[0], lines) == column_structure(sampled)
