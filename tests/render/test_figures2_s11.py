"""Session 11 (second pass): what the figures show (matplotlib objects and terminal text, never pixel hashes)."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.render import charts
from pecli.render.downsample import block_average, block_extreme


def _meshes(figure):
    """The heatmaps' meshes (the colourbars' own meshes left out), left to right, top to bottom."""
    return [collection for axes in figure.axes if axes.get_xlabel() for collection in axes.collections]


def _titles(figure):
    return [axes.get_title() for axes in figure.axes if axes.get_title()]


def _one_cell_apart():
    """16 × 4096 tables that differ in one cell: +0.5 at (3, 1000)."""
    a = np.sin(np.arange(16.0)[:, None] * 0.3 + np.arange(4096.0)[None, :] / 50)
    b = a.copy()
    b[3, 1000] -= 0.5
    return a, b


def _difference_cells(figure) -> np.ndarray:
    mesh = _meshes(figure)[2]
    return np.ma.filled(mesh.get_array(), np.nan)


def test_one_differing_cell_keeps_its_full_size_in_the_difference_panel(drawn):
    # the A − B panel averaged ~15 columns a pixel: the +0.5 cell was drawn as ~0.03, a faint line
    a, b = _one_cell_apart()
    charts.save_difference(a, b, "c.png", labels=("A.npy", "B.npy"))
    (figure,) = drawn
    cells = _difference_cells(figure)
    assert cells.size < a.size  # the panel does shrink the table
    assert np.nanmax(np.abs(cells)) == pytest.approx(0.5, abs=1e-12)
    assert np.count_nonzero(np.abs(cells) > 1e-12) == 1  # one pixel, the others exactly 0
    assert _meshes(figure)[2].get_clim() == pytest.approx((-0.5, 0.5))  # the scale reaches the drawn value
    assert _titles(figure)[2] == "A − B\neach pixel: the largest |A − B| of its block"
    assert _titles(figure)[:2] == ["A: A.npy", "B: B.npy"]  # A and B stay block means, untitled so
    # the A panel is the block means of A (not extremes)
    mean_a = np.ma.filled(_meshes(figure)[0].get_array(), np.nan).reshape(cells.shape)
    assert np.nanmax(np.abs(mean_a)) < np.max(np.abs(a))


def test_the_chunked_figure_draws_the_same_largest_differences(drawn):
    a, b = _one_cell_apart()
    charts.save_difference(a, b, "whole.png", labels=("a", "b"))
    charts.save_difference_chunks(lambda: ((a[i : i + 5], b[i : i + 5]) for i in range(0, 16, 5)), a.shape,
                                  "chunks.png", labels=("a", "b"))  # fmt: skip
    whole, chunked = drawn
    np.testing.assert_array_equal(_difference_cells(chunked), _difference_cells(whole))
    assert _titles(chunked) == _titles(whole)


def test_a_negative_difference_keeps_its_sign_and_nan_is_left_out():
    table = np.zeros((4, 8))
    table[0, 1], table[0, 2], table[2, 6], table[3, 7] = 0.2, -0.7, np.nan, np.inf
    table[2:, 4:6] = np.nan
    cells = block_extreme(table, np.array([0, 2, 4]), np.array([0, 4, 8])).values
    assert cells[0, 0] == -0.7 and cells[0, 1] == 0.0 and cells[1, 1] == 0.0
    means = block_average(table, 2, 2).values
    assert means[0, 0] == pytest.approx(-0.5 / 8)  # what the mean made of it
    assert np.isnan(block_extreme(np.full((2, 2), np.nan), np.array([0, 2]), np.array([0, 2])).values).all()


def test_heads_difference_panels_show_the_largest_difference(drawn):
    a = -np.abs(np.arange(600.0)[:, None] - np.arange(600.0)[None, :])[None] * np.array([0.5, 0.25])[:, None, None]
    b = a.copy()
    b[1, 300, 17] += 0.25
    charts.save_difference(a, b, "heads.png", labels=("a", "b"))
    charts.save_difference_chunks(
        lambda: ((a.reshape(-1, 600)[i : i + 64], b.reshape(-1, 600)[i : i + 64]) for i in range(0, 1200, 64)),
        a.shape,
        "chunks.png",
        labels=("a", "b"),
    )
    for figure in drawn:  # the panels come first in figure.axes (head 1's A − B: the sixth), their colourbars after
        second = np.ma.filled(figure.axes[5].collections[0].get_array(), np.nan)
        assert np.nanmin(second) == pytest.approx(-0.25) and np.count_nonzero(second) == 1
        assert _titles(figure)[2] == "A − B\neach pixel: the largest |A − B| of its block"
    np.testing.assert_array_equal(*(np.ma.filled(figure.axes[5].collections[0].get_array(), np.nan)
                                    for figure in drawn))  # fmt: skip


def test_an_unshrunk_difference_panel_has_no_note(drawn):
    a = np.sin(np.arange(64.0)).reshape(8, 8)
    charts.save_difference(a, a + 1, "diff.png", labels=("a", "b"))
    assert _titles(drawn[0]) == ["A: a", "B: b", "A − B"]


def _alibi_heads(count: int = 8, length: int = 64) -> list[np.ndarray]:
    distance = -np.abs(np.arange(length)[:, None] - np.arange(length)[None, :]).astype(np.float64)
    return [distance * 2.0 ** (-(head + 1)) for head in range(count)]


@pytest.mark.parametrize(("width", "shown", "across"), [(80, 2, 1), (200, 4, 2)])
def test_alibi_heads_in_the_terminal_keep_their_diagonal(width, shown, across):
    # 8 heads of 64 × 64 stacked in 40 lines got 3 lines (6 rows of cells) each: the diagonal read as bands
    from pecli.render.terminal import heatmap_stack

    heads = _alibi_heads()
    text, count = heatmap_stack(heads, [f"head {h}" for h in range(8)], width=width, height=38, color="none",
                                scales=[(-31.5, 0.0, "viridis")], x_label="key j", y_label="query i")  # fmt: skip
    assert count == shown
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    titled = [line for line in lines if line.startswith("head ")]
    assert len(titled) == shown // across  # a row of panels shares its title line
    assert all(line.count("head ") == across for line in titled)
    # each panel: 13 lines of cells, 5 queries a line (was 3 lines of 22), the shape note says so
    first = lines[lines.index(titled[0]) + 4 : lines.index(titled[1])]
    cells = [line.split("┤" if "┤" in line else "│", 1)[1][:64] for line in first]
    assert len(cells) == 13 and "64 × 64 → 13 × 64 block means" in text
    # head 0's diagonal (bias near 0: the ramp's top '@' starts 5 keys further on each line): a line, not bands
    starts = [line.index("@") for line in cells]
    assert np.diff(starts[1:]).tolist() == [5] * 11


def test_panels_that_fit_one_under_another_stay_so():
    from pecli.render.terminal import grid_layout

    # RoPE's cos and sin (2 tall panels of 16 dimensions) in a wide terminal: one under the other, as before
    assert grid_layout(2, width=200, height=60, shared=True, rows=256, cols=16).across == 1
    assert grid_layout(8, width=200, height=38, shared=True, rows=64, cols=64).across == 2


def test_averaged_columns_get_limits_from_the_drawn_means_and_the_note_gives_the_values():
    # a 2 × 100000 random table: block means within about ±0.5 in limits of ±4.7 drew a blank picture
    from pecli.render.image import heatmap_figure

    table = np.random.default_rng(0).normal(size=(2, 100_000))
    figure, note = heatmap_figure(table, title="wide.npy")
    (mesh,) = figure.axes[0].collections
    cells = np.ma.filled(mesh.get_array(), np.nan)
    reach = float(np.max(np.abs(cells)))
    assert mesh.get_clim() == pytest.approx((-reach, reach))  # the drawn means reach the colour limits
    assert reach < np.max(np.abs(table)) / 2
    assert note.endswith(f"colours span the drawn means, the values {table.min():.4g} … {table.max():.4g}")
    assert figure.axes[1].get_ylabel() == "block mean, 0 at the centre colour"
    # limits the reader gives are kept, and a table drawn whole keeps its values' limits
    given, _ = heatmap_figure(table, title="wide.npy", vmin=-4.0, vmax=4.0)
    assert given.axes[0].collections[0].get_clim() == (-4.0, 4.0)
    small, small_note = heatmap_figure(table[:, :50], title="small")
    assert small_note is None and small.axes[0].collections[0].get_clim()[1] == pytest.approx(
        np.abs(table[:, :50]).max()
    )
