"""Session 11: what the figures show (matplotlib objects and terminal text, never pixel hashes)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from pecli.render import charts
from pecli.render.image import MASKED_COLOR


def _meshes(figure):
    """The heatmaps' meshes (the colourbars' own meshes left out)."""
    return [collection for axes in figure.axes if axes.get_xlabel() for collection in axes.collections]


def _table_with_nan_rows():
    table = np.sin(np.arange(64.0)[:, None] * np.exp(-np.arange(32.0) / 4))
    table[5] = np.nan
    table[20] = -np.inf
    return table


def test_compare_figure_draws_nan_rows_grey_and_counts_them(drawn):
    a = _table_with_nan_rows()
    b = np.nan_to_num(a, nan=0.0, neginf=0.0)
    charts.save_difference(a, b, "diff.png", labels=("a.npy", "b.npy"))
    (figure,) = drawn
    meshes = _meshes(figure)
    assert len(meshes) == 3
    for mesh in meshes:  # was transparent: white, RdBu's zero, so a NaN row read as "no difference"
        assert mesh.get_cmap().get_bad() == pytest.approx(to_rgba(MASKED_COLOR))
        assert to_rgba(MASKED_COLOR) != pytest.approx(mesh.get_cmap()(0.5))
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    assert titles[0] == "A: a.npy\ngrey: 64 NaN or ±inf values"
    assert titles[1] == "B: b.npy"
    assert titles[2] == "A − B\ngrey: 64 NaN or ±inf values"
    # the NaN rows stay masked in the cells drawn (full resolution: one cell per value)
    masked_rows = np.ma.getmaskarray(meshes[2].get_array()).reshape(64, 32).all(axis=1)
    assert np.flatnonzero(masked_rows).tolist() == [5, 20]


def test_compare_figure_chunked_names_its_grey_cells(drawn):
    a = _table_with_nan_rows()
    b = np.nan_to_num(a, nan=0.0, neginf=0.0) + 1e-3
    charts.save_difference_chunks(lambda: ((a[i : i + 16], b[i : i + 16]) for i in range(0, 64, 16)), a.shape,
                                  "diff.png", labels=("a", "b"))  # fmt: skip
    (figure,) = drawn
    assert all(mesh.get_cmap().get_bad() == pytest.approx(to_rgba(MASKED_COLOR)) for mesh in _meshes(figure))
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    assert titles == ["A: a\ngrey: 64 NaN or ±inf values", "B: b", "A − B\ngrey: 64 NaN or ±inf values"]


def test_compare_figure_of_heads_names_grey_cells_once(drawn):
    heads = -np.abs(np.arange(16.0)[:, None] - np.arange(16.0)[None, :])[None] * np.array([0.5, 0.25])[:, None, None]
    other = heads.copy()
    other[1, 3] = np.nan
    charts.save_difference(heads, other, "diff.png", labels=("a", "b"))
    (figure,) = drawn
    assert all(mesh.get_cmap().get_bad() == pytest.approx(to_rgba(MASKED_COLOR)) for mesh in _meshes(figure))
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    assert titles == ["A: a\ngrey (A and B): 16 NaN or ±inf values", "B: b", "A − B\ngrey: 16 NaN or ±inf values"]


def test_compare_figure_without_nan_has_plain_titles(drawn):
    a = np.sin(np.arange(64.0)).reshape(8, 8)
    charts.save_difference(a, a + 1, "diff.png", labels=("a", "b"))
    titles = [axes.get_title() for axes in drawn[0].axes if axes.get_title()]
    assert titles == ["A: a", "B: b", "A − B"]
