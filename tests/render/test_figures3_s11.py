"""Session 11 (third pass): titles, axes and colourbars as drawn (matplotlib objects and terminal text)."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.render import charts


@pytest.fixture
def saved(monkeypatch):
    """The figures plot and compare save, kept instead of written.

    Every render module is imported first and each one's own ``save_figure`` name patched: a module first
    imported while only image's was patched would keep the stand-in after the test (``from … import``).
    """
    import importlib
    import pkgutil

    import pecli.render

    figures = []
    names = [info.name for info in pkgutil.iter_modules(pecli.render.__path__)]
    modules = [importlib.import_module(f"pecli.render.{name}") for name in names]
    for module in modules:  # all imported before any is patched: none binds the stand-in as its original
        if hasattr(module, "save_figure"):
            monkeypatch.setattr(module, "save_figure", lambda figure, path, dpi: figures.append(figure))
    monkeypatch.setattr(charts, "_save_laid_out", lambda figure, path, dpi: figures.append(figure))
    return figures


def _alibi_stack(heads: int = 4, length: int = 6) -> np.ndarray:
    slopes = 2.0 ** -np.arange(1, heads + 1)
    return (-slopes[:, None, None] * np.abs(np.subtract.outer(np.arange(length), np.arange(length)))).astype(np.float32)


def _bar_texts(bar_axes) -> list[str]:
    return [label.get_text() for label in bar_axes.get_yticklabels()]


def test_a_stack_of_square_slices_in_a_file_is_heads_over_query_and_key(cli, tmp_path, saved):
    # was: titled with the full path, panels "slice i", axes Position / Embedding Dimension
    path = tmp_path / "sub" / "alibi_hll.npy"
    path.parent.mkdir()
    np.save(path, _alibi_stack())
    result = cli("plot", str(path), "-o", str(tmp_path / "x.png"))
    assert result.code == 0, result.stderr
    (figure,) = saved
    assert figure.get_suptitle() == "alibi_hll.npy"
    assert [axes.get_title() for axes in figure.axes if axes.get_title()] == [f"head {i}" for i in range(4)]
    assert figure._supxlabel.get_text() == "Key position j"
    assert figure._supylabel.get_text() == "Query position i"


def test_a_stack_of_slices_that_are_not_square_keeps_its_names(cli, tmp_path, saved):
    path = tmp_path / "batch.npy"
    np.save(path, np.ones((3, 5, 4)) * np.arange(3.0)[:, None, None])
    assert cli("plot", str(path), "-o", str(tmp_path / "x.png")).code == 0
    (figure,) = saved
    assert figure._supylabel.get_text() == "Position"
    assert "slice 0" in [axes.get_title() for axes in figure.axes]


def test_a_head_per_row_file_is_drawn_as_heads_over_keys(cli, tmp_path, saved):
    # (heads, 1, k), squeezed to heads × k: its rows were labelled "Position"
    path = tmp_path / "mpt_h1k.npy"
    np.save(path, _alibi_stack(8, 16)[:, :1, :])
    result = cli("plot", str(path), "-o", str(tmp_path / "x.png"))
    assert result.code == 0 and "squeezed shape (8, 1, 16) to 8 × 16" in result.stderr
    (figure,) = saved
    axes = figure.axes[0]
    assert (axes.get_xlabel(), axes.get_ylabel()) == ("Key position j", "Head h (query row 0)")
    assert axes.get_title() == "mpt_h1k.npy"


def test_one_slice_of_a_scheme_names_its_head(cli, tmp_path, saved):
    # was "alibi, len=64: heads=8, part=bias": which head was drawn went unsaid
    result = cli("plot", "alibi", "--heads", "8", "--len", "64", "--slice", "3", "-o", str(tmp_path / "x.png"))
    assert result.code == 0, result.stderr
    assert saved[0].axes[0].get_title() == "alibi, len=64: heads=8, head=3, part=bias"
    text = cli("plot", "alibi", "--heads", "8", "--len", "64", "--slice", "-1", "--width", "80", "--height", "30")
    assert text.out.splitlines()[0].strip() == "alibi, len=64: heads=8, head=7, part=bias"
    # the terminal path drawn from the offset curves (a long table) says it too
    long = cli("plot", "alibi", "--heads", "8", "--len", "3000", "--slice", "2", "--width", "80", "--height", "30")
    assert long.out.splitlines()[0].strip() == "alibi, len=3000: heads=8, head=2, part=bias"


def test_many_heads_in_the_terminal_compute_only_the_heads_drawn(cli, monkeypatch):
    from pecli.cli import relative

    asked = []
    real = relative._offset_curves

    def spy(source, heads=None):
        curves = real(source, heads=heads)
        asked.append(curves.shape)
        return curves

    monkeypatch.setattr(relative, "_offset_curves", spy)
    result = cli("plot", "alibi", "--heads", "64", "--len", "3000", "--width", "100", "--height", "40")
    assert result.code == 0, result.stderr
    assert "drawing the first 16 of 64 slices" in result.stderr
    # the curves at full length (2 · 3000 − 1 offsets): 16 heads; only the 9-position check reads all 64
    assert [shape for shape in asked if shape[1] == 5999] == [(16, 5999)]
    # head 0's slope, 2^(-8/64), as when every head was computed
    assert result.out.splitlines()[0].startswith(f"head 0, slope {2 ** (-8 / 64):.4g}  ")
    asked.clear()
    assert cli("plot", "alibi", "--heads", "64", "--len", "3000", "--slice", "5", "--width", "100",
               "--height", "40").code == 0  # fmt: skip
    assert [shape for shape in asked if shape[1] == 5999] == [(6, 5999)]


def test_precision_view_marks_exact_zeros_and_keeps_the_bar_beside_the_heatmap(cli, tmp_path, saved):
    result = cli("plot", "rope", "--d", "16", "--len", "512", "--view", "precision", "-o", str(tmp_path / "p.png"))
    assert result.code == 0, result.stderr
    (figure,) = saved
    top, bottom = (axes for axes in figure.axes if axes.get_ylabel() in ("Column (dimension)",
                                                                           "Max |error| over columns"))  # fmt: skip
    (bar,) = [axes for axes in top.child_axes if "float64|" in axes.get_ylabel()]
    # the bar sits right beside the heatmap (it was ~2 inches away, the width of the chart under it)
    renderer = figure.canvas.get_renderer()
    gap = bar.get_window_extent(renderer).x0 - top.get_window_extent(renderer).x1
    assert 0 < gap < 0.3 * figure.dpi
    # position 0's error is exactly 0 (cos 0 = 1, sin 0 = 0 in any arithmetic): the "exact 0" colour, not black
    (mesh,) = top.collections
    cells = np.ma.filled(mesh.get_array(), np.nan)
    assert np.all(cells[:, 0] < mesh.norm.vmin)  # below the log scale: drawn in the under colour
    assert mesh.cmap.get_under()[:3] == pytest.approx((0x7F / 255, 0xBF / 255, 0x7F / 255))
    assert "exact 0" in [text.get_text() for text in bar.texts]
    # the chart under it: the curve breaks at 0 and a mark on the axis says so
    labels = [line.get_label() for line in bottom.get_lines()]
    assert "exact 0 (no error) on the axis" in labels
    curve = next(line for line in bottom.get_lines() if line.get_label().startswith("bfloat16"))
    assert np.isnan(curve.get_ydata()[0]) and np.all(np.asarray(curve.get_ydata()[1:]) > 0)


def test_colourbars_of_values_that_span_nothing_say_so(cli, tmp_path, saved):
    nan, zeros = tmp_path / "nan.npy", tmp_path / "zeros.npy"
    np.save(nan, np.full((4, 3), np.nan))
    np.save(zeros, np.zeros((4, 3)))
    for path in (nan, zeros):
        assert cli("plot", str(path), "-o", str(tmp_path / "x.png")).code == 0
    (nan_bar, zero_bar) = (figure.axes[1] for figure in saved)
    assert _bar_texts(nan_bar) == ["all NaN or ±inf"] and nan_bar.get_ylabel() == "value: none finite"
    assert _bar_texts(zero_bar) == ["all 0"]
    # a range the reader gives is a real scale: its ticks stay
    saved.clear()
    assert cli("plot", str(zeros), "-o", str(tmp_path / "x.png"), "--vmin", "-1", "--vmax", "1").code == 0
    assert "all 0" not in _bar_texts(saved[0].axes[1]) and len(saved[0].axes[1].get_yticks()) > 2


def test_heads_whose_difference_is_all_zero_get_no_fake_scale(cli, tmp_path, saved):
    a = _alibi_stack()
    b = a.copy()
    b[0, 3, 5] += 1
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    result = cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "-o", str(tmp_path / "c.png"))
    assert result.code == 1
    (figure,) = saved
    bars = [axes for axes in figure.axes if axes.get_label() == "<colorbar>"]
    texts = [_bar_texts(bar) for bar in bars]
    # per head: A and B's bar (a real range), then A − B's: head 0 differs by 1, heads 1–3 are all 0
    assert len(bars) == 8 and texts[3::2] == [["all 0"]] * 3
    assert "all 0" not in texts[1] and len(bars[1].get_yticks()) > 2
    assert all(len(bars[i].get_yticks()) > 2 for i in (0, 2, 4, 6))


def test_identical_tables_compared_side_by_side(tmp_path, saved):
    table = np.zeros((5, 4))
    charts.save_heatmaps([table, table, table - table], "c.png", titles=["A", "B", "A − B"], x_label="d",
                         y_label="p", shared=2)  # fmt: skip
    (figure,) = saved
    assert [_bar_texts(axes) for axes in figure.axes if axes.get_label() == "<colorbar>"] == [["all 0"]] * 3
