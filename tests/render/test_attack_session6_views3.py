"""Views that hid or garbled what they draw (issue 30, "a picture that hides the data is a bug"):
the wavelength chart on an ASCII-only stdout, and the precision view's last position bins.

The ASCII stdout is the process's own (PYTHONIOENCODING), so that chart runs pecli as a real process; compare's
figure and refusal run in process (the real entry point): their subject is the file written and the exit code."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conftest import run_in_process, run_pecli


@pytest.mark.parametrize(
    "scaling",
    [
        [],
        ["--scaling", "yarn", "--factor", "8", "--original-max-position", "4096"],
        ["--scaling", "llama3", "--factor", "8", "--original-max-position", "8192"],
    ],
)
def test_the_wavelength_chart_on_an_ascii_stdout_is_ascii_not_escapes(scaling):
    # PYTHONIOENCODING=ascii: the points, the axis and the band legend came out as "\u2022", "\u2524",
    # "\u03b2"… while the heatmaps were already drawn in ASCII
    result = run_pecli("plot", "rope", "--d", "64", *scaling, "--view", "wavelength", "--width", "80",
                       "--height", "20", env={"PYTHONIOENCODING": "ascii"})  # fmt: skip
    assert result.code == 0, result.stderr
    text = result.stdout.decode("ascii")
    assert "\\u" not in text and "\\x" not in text, text
    # the points (one per frequency pair, "*"), the y axis ("+") and the x axis ("+---")
    assert text.count("*") >= 32 and re.search(r"\n +\+-{20,}", text), text
    if scaling:
        assert "b_" in text or "/ 8" in text, text  # β_fast / β_slow, or ÷ 8, readable


def _precision(length: int, height: int, width: int = 80, color: str = "none"):
    from pecli.analysis.precision import precision_errors
    from pecli.render.precision import precision_chart
    from pecli.schemes.spec import TableSpec

    errors = precision_errors(TableSpec.resolve("rope", None, {}, length=length, dim=64), "bfloat16")
    return errors, precision_chart(errors, width=width, height=height, color=color, title="t")


@pytest.mark.parametrize("height", [14, 17, 19, 23, 30])
@pytest.mark.parametrize("color", ["none", "truecolor"])
def test_the_precision_view_keeps_the_last_position_bins(height, color):
    # 180 log-spaced bins at --height 19: blocks of 25 bins drew 7 rows and left out the last 5 bins
    # ("last 5 rows left out"), the highest positions, where bfloat16's error is largest
    errors, chart = _precision(4096, height, color=color)
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in chart.splitlines()]
    assert len(lines) <= height and max(len(line) for line in lines) <= 80, chart
    joined = " ".join(line.strip() for line in lines)
    assert "left out" not in joined, chart
    # the last row's range ends at the table's last position
    last = re.search(r"row (\d+) = p (\d+)–(\d+)$", joined)
    assert last is not None and int(last.group(3)) == 4095, joined
    # the largest error the view shows (its value line's top) is the table's largest error
    top = float(re.search(r"values (\S+) … (\S+)", joined).group(2))
    assert top == pytest.approx(np.log10(errors.max_error["bfloat16"]), abs=1e-3), joined


def test_the_precision_view_with_room_for_every_bin_draws_every_bin():
    errors, chart = _precision(256, 150)
    bins = len(errors.heatmap)
    assert f"{bins} × 64" in chart and "block means" not in chart, chart
    assert "row 0 = p 0" in chart and "log-spaced position bins" in chart


def _drawn_figure(monkeypatch, a, b):
    """The figure save_difference draws (captured before it is written)."""
    import pecli.render.charts as charts

    captured = []
    monkeypatch.setattr(charts, "save_figure", lambda figure, path, dpi: captured.append(figure))
    charts.save_difference(a, b, "diff.png", labels=("a", "b"))
    return captured[0]


def test_compare_of_one_row_draws_lines_not_a_one_row_heatmap(monkeypatch):
    # a (500,) tensor was drawn as three 1 × 500 heatmaps: its values only as colours
    x = np.arange(500.0)
    a, b = np.sin(x / 20)[None, :], (np.sin(x / 20) + 0.1 * np.cos(x / 7))[None, :]
    figure = _drawn_figure(monkeypatch, a, b)
    lines = [line for axes in figure.axes for line in axes.get_lines() if len(line.get_xdata()) == 500]
    assert len(lines) == 3 and not any(axes.collections or axes.images for axes in figure.axes)
    np.testing.assert_allclose(lines[2].get_ydata(), (a - b)[0])
    assert "A − B" in [axes.get_title() for axes in figure.axes]


def test_compare_of_alibi_heads_draws_each_head_in_its_own_scale(monkeypatch):
    # a (heads, L, L) ALiBi bias: -o was an internal error (block_average takes a 2-D table); one scale
    # over all heads would draw the last heads (slope 1/256) blank
    a = _alibi(8, 32)
    b = a * 0.5
    figure = _drawn_figure(monkeypatch, a, b)
    meshes = [axes.collections[0] for axes in figure.axes[: 8 * 3]]  # the panels; then the colour bars
    assert len(figure.axes) == 8 * 3 + 8 * 2
    last_head_a = meshes[21].get_clim()
    assert last_head_a[1] == pytest.approx(np.abs(a[7]).max(), rel=1e-6)
    assert meshes[23].get_clim()[1] == pytest.approx(np.abs(a[7] - b[7]).max(), rel=1e-6)


def _alibi(heads: int, length: int) -> np.ndarray:
    slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)
    distance = -np.abs(np.arange(length)[:, None] - np.arange(length)[None, :])
    return slopes[:, None, None] * distance[None]


def test_compare_of_3d_files_writes_the_figure_or_refuses_before_work(tmp_path):
    # a stack of two heads is a stack (was an internal error); the 8-head figure's panels and scales
    # are checked directly by test_compare_of_alibi_heads_draws_each_head_in_its_own_scale
    np.save(tmp_path / "a.npy", _alibi(2, 16).astype(np.float32))
    np.save(tmp_path / "b.npy", (_alibi(2, 16) * 0.5).astype(np.float32))
    result = run_in_process("compare", "a.npy", "b.npy", "-o", "d.png", cwd=str(tmp_path))
    assert result.code == 1 and "internal error" not in result.stderr, result.stderr
    assert (tmp_path / "d.png").stat().st_size > 0
    np.save(tmp_path / "c.npy", np.zeros((40, 4, 4), np.float32))
    result = run_in_process("compare", "c.npy", "c.npy", "-o", "e.png", cwd=str(tmp_path))
    assert result.code == 2 and "at most 32" in result.stderr and not (tmp_path / "e.png").exists()


def _profile_figure(monkeypatch, mean, low, high):
    import pecli.render.charts as charts

    captured = []
    monkeypatch.setattr(charts, "save_figure", lambda figure, path, dpi: captured.append(figure))
    charts.save_profile(np.arange(len(mean), dtype=float), mean, low, high, "p.png", title="t", y_label="m")
    figure = captured[0]
    figure.canvas.draw()
    return figure


def test_the_profile_legend_lies_outside_a_rising_curve(monkeypatch):
    # the legend sat in the upper right, over a rising euclidean profile and its band
    h = np.arange(300.0)
    mean = np.sqrt(h)
    figure = _profile_figure(monkeypatch, mean, mean - 2, mean + 2)
    (axes,) = figure.axes
    assert axes.get_legend() is None and len(figure.legends) == 1
    legend_box = figure.legends[0].get_window_extent()
    assert not legend_box.overlaps(axes.get_window_extent())
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == ["min … max over positions", "mean over positions"]


def test_a_profile_without_spread_does_not_promise_a_band(monkeypatch):
    # sinusoidal's metrics depend on h alone: min = max = mean, yet the legend named a shaded band
    mean = np.cos(np.arange(100.0) / 9)
    figure = _profile_figure(monkeypatch, mean, mean - 1e-9, mean + 1e-9)
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == ["mean = min = max over positions (to 0.1% of the range)"]
    assert not figure.axes[0].collections  # no band drawn


def test_panels_in_one_scale_say_which_look_flat(monkeypatch):
    # plot alibi --heads 12: heads 4-7 (slopes 1/32 … 1/256) drew as flat yellow squares in the
    # shared scale of head 8, with nothing in the figure saying their values vary
    import pecli.render.panels as panels
    from pecli.render.scale import color_scale

    captured = []
    monkeypatch.setattr(panels, "save_figure", lambda figure, path, dpi: captured.append(figure))
    heads = _alibi(12, 64)
    panels.save_panels(list(heads), "h.png", titles=[f"head {i}" for i in range(12)], title="alibi",
                       scale=color_scale(heads))  # fmt: skip
    texts = [text.get_text() for text in captured[0].texts]
    spans = np.ptp(heads.reshape(12, -1), axis=1)
    faint = int(np.sum(spans < 0.05 * np.abs(heads).max()))
    assert 1 < faint < 12 and f"{faint} panels span < 5% of the colour scale" in texts, texts
