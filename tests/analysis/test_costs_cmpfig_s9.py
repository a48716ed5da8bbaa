"""Memory in proportion to what is shown or written (issue 30): compare -o on large files, resample, distance."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_capped


def _pair(tmp_path, rows: int, cols: int) -> tuple[str, str]:
    """Two float32 .npy tables of rows × cols written a block at a time (B is A with one patch moved by 0.05)."""
    paths = [str(tmp_path / "a.npy"), str(tmp_path / "b.npy")]
    tables = [np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols)) for path in paths]
    columns = np.arange(cols, dtype=np.float64)
    for start in range(0, rows, 4096):
        block = np.sin(np.arange(start, start + 4096, dtype=np.float64)[:, None] / (1.0 + columns))
        tables[0][start : start + 4096] = block
        tables[1][start : start + 4096] = block
    tables[1][100:200, 10:20] += np.float32(0.05)
    for table in tables:
        table.flush()
    del tables
    return paths[0], paths[1]


def test_compare_figure_of_large_files_streams(tmp_path):
    # 65536 × 1024 float32 (256 MiB each): -o loaded both and made float64 A, B and A − B (5.2 GB peak)
    first, second = _pair(tmp_path, 65536, 1024)
    figure = tmp_path / "fig.png"
    result = run_capped("compare", first, second, "-o", str(figure))
    assert result.returncode == 1, result.stderr  # they differ: NO_MATCH, and the figure written
    assert "max |A − B|        0.05 (position 100, dimension 1" in result.stdout
    assert figure.stat().st_size > 10_000


def _spy_cells(monkeypatch):
    from pecli.render import charts

    seen: list = []
    draw, stack = charts._draw_heatmaps, charts._draw_difference_stack

    def heatmaps(figure, axes_row, cells, limits, path, **kwargs):
        seen.append(([c.values for c in cells], [(c.row_edges, c.col_edges) for c in cells], limits))
        return draw(figure, axes_row, cells, limits, path, **kwargs)

    def stacked(panels, path, **kwargs):
        cells = [c for panel in panels for c in panel[2]]
        seen.append(([c.values for c in cells], [(c.row_edges, c.col_edges) for c in cells], [p[:2] for p in panels]))
        return stack(panels, path, **kwargs)

    monkeypatch.setattr(charts, "_draw_heatmaps", heatmaps)
    monkeypatch.setattr(charts, "_draw_difference_stack", stacked)
    return seen


@pytest.mark.parametrize("case", ["interleaved", "alternating rows", "nan", "stack"])
def test_figure_from_chunks_is_the_figure_of_the_whole_tables(tmp_path, monkeypatch, case):
    import pecli
    from pecli.render.charts import save_difference, save_difference_chunks

    rng = np.random.default_rng(0)
    a = {
        "interleaved": pecli.encode("sinusoidal", 3000, 64).astype(np.float32),
        "alternating rows": np.tile([[0.0], [5.0], [0.1], [5.1]], (1000, 16)) + rng.normal(size=(4000, 16)) * 0.01,
        "nan": np.where(rng.random((3001, 40)) < 0.01, np.nan, rng.normal(size=(3001, 40))),
        "stack": rng.normal(size=(3, 400, 300)).astype(np.float32),
    }[case]
    b = a * 1.1 + 0.01
    seen = _spy_cells(monkeypatch)
    save_difference(a, b, str(tmp_path / "whole.png"), labels=("a", "b"))
    flat_a, flat_b = a.reshape(-1, a.shape[-1]), b.reshape(-1, a.shape[-1])
    chunks = lambda: ((flat_a[i : i + 37], flat_b[i : i + 37]) for i in range(0, len(flat_a), 37))  # noqa: E731
    save_difference_chunks(chunks, a.shape, str(tmp_path / "chunks.png"), labels=("a", "b"))
    (whole, whole_edges, whole_limits), (chunked, chunked_edges, chunked_limits) = seen
    assert whole_limits == chunked_limits
    for (rows, cols), (chunk_rows, chunk_cols) in zip(whole_edges, chunked_edges, strict=True):
        assert rows.tolist() == chunk_rows.tolist() and cols.tolist() == chunk_cols.tolist()
    for cells, chunk_cells in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(chunk_cells, cells, rtol=1e-12, atol=1e-12)
    assert (tmp_path / "whole.png").read_bytes() == (tmp_path / "chunks.png").read_bytes()
