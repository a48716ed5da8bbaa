"""Views that hid part of the data (issue 30, "a picture that hides the data is a bug"): the
terminal heatmaps' last partial block, and small multiples whose faint panels stderr did not name."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.render.downsample import block_edges
from pecli.render.terminal import RAMP, heatmap, heatmap_stack
from tests.conftest import run_in_process, run_pecli


@pytest.mark.parametrize("size", [1, 2, 7, 32, 33, 37, 100, 1999, 2048])
@pytest.mark.parametrize("blocks", [1, 2, 3, 5, 8, 17, 36])
def test_a_terminals_blocks_cover_every_value(size, blocks):
    # even=True (was whole=True) ended the edges before size: 32 rows in 3 cell rows drew 2 blocks of
    # 14 and left out the last 4 rows; now the last block is shorter and drawn
    edges = block_edges(size, blocks, uniform=True, even=True)
    sizes = np.diff(edges)
    assert edges[0] == 0 and edges[-1] == size
    assert len(sizes) <= blocks and np.all(sizes > 0)
    assert len(set(sizes[:-1].tolist())) <= 1 and sizes[-1] <= sizes[0]


def _cell_lines(text: str) -> list[str]:
    """The cells of each line of a heatmap's body (after its axis, "┤" or "│")."""
    lines = [line for line in text.splitlines() if "│" in line[:8] or "┤" in line[:8]]
    return [line.split("┤" if "┤" in line else "│", 1)[1] for line in lines]


@pytest.mark.parametrize("rows", [32, 33, 37, 61])
def test_the_single_heatmap_draws_its_last_rows(rows):
    # only the last row has values: the old view left it out with its partial block ("last 4 rows left
    # out (a partial block)") and drew every cell masked; its block's mean is that row's value, 1 ("@")
    table = np.full((rows, 8), np.nan)
    table[-1] = 1.0
    text = heatmap(table, width=40, height=9, color="none", x_label="x", y_label="y", title="t", vmin=0.0,
                   vmax=1.0)  # fmt: skip
    assert "left out" not in text, text
    lines = _cell_lines(text)
    assert lines[-1].strip() == RAMP[-1] * 8 and all(set(line.strip()) == {"?"} for line in lines[:-1]), text


def test_the_heatmap_stack_draws_every_row_of_each_panel():
    # only each panel's last row has values (1 and 0.5): a stack that leaves out a partial last block
    # draws both panels masked
    heads = []
    for value in (1.0, 0.5):
        head = np.full((32, 8), np.nan)
        head[-1] = value
        heads.append(head)
    text, shown = heatmap_stack(heads, ["head 0", "head 1"], width=40, height=14, color="none",
                                scales=[(0.0, 1.0, "viridis")], x_label="n", y_label="m")  # fmt: skip
    assert shown == 2 and "left out" not in text, text
    first, second = (_cell_lines(part) for part in text.split("head 1"))
    assert first[-1].strip() == RAMP[-1] * 8 and second[-1].strip() == RAMP[len(RAMP) // 2] * 8, text


def test_plot_alibi_heads_in_the_terminal_leaves_no_row_out():
    # the gallery's capture: "values -7.75 … 0; last 4 rows left out (a partial block)"
    result = run_pecli("plot", "alibi", "--heads", "4", "--len", "32", "--no-color", "--width", "72",
                       "--height", "22")  # fmt: skip
    assert result.code == 0, result.stderr
    text = result.stdout.decode()
    assert "left out" not in text, text
    # head 0 in 7 cell rows: six of 5 query rows and a last of 2 (queries 30-31, whose bias to key 0 is -7.625
    # on average: " ", the scale's -7.75), none left out. Was 3 rows of 11, 11 and 10 (session 11: a panel
    # keeps about half the lines its square cells need, so 2 of the 4 heads fit in 22 lines, not all squashed)
    lines = _cell_lines(text.split("head 1")[0])
    assert len(lines) == 7 and lines[-1].startswith("   ") and lines[0].startswith("@"), text
    assert "32 × 32 → 7 × 32 block means" in text and "2 of 4 fit in 22 lines" in text, text


@pytest.mark.parametrize("command", ["plot", "distance"])
def test_faint_panels_in_one_scale_are_named_on_stderr_with_the_fix(tmp_path, command):
    # the figure said "4 panels span < 5% of the colour scale"; stderr said nothing of it
    image = tmp_path / "heads.png"
    # the notes on stderr are the subject, not the process: in process (the real entry point)
    result = run_in_process(command, "alibi", "--heads", "12", "--len", "64", "-o", str(image))
    assert result.code == 0 and image.exists(), result.stderr
    assert "4 panels span < 5% of the colour scale" in result.stderr, result.stderr
    assert "--scale per-panel" in result.stderr, result.stderr
    own = run_in_process(command, "alibi", "--heads", "12", "--len", "64", "-o", str(image), "--scale", "per-panel")
    assert own.code == 0 and "span <" not in own.stderr, own.stderr


@pytest.mark.parametrize("qk", ["ones", "random"])
def test_the_rotary_bound_is_drawn_above_the_score_it_bounds(monkeypatch, tmp_path, qk):
    # distance rope --profile -o: B(h) on a twin right axis of its own ran below s(h) (B = 16.5 at
    # h = 0 drawn at the height of s = 0.35), a bound that looked smaller than what it bounds
    import pecli.render.offsets as offsets
    from pecli.analysis.relative import rope_profile

    captured = []
    monkeypatch.setattr(offsets, "save_figure", lambda figure, path, dpi: captured.append(figure))
    profile = rope_profile(512, 64, offsets=range(512), qk=qk)
    offsets.save_offset_curves(profile.offsets, {"s(h)": profile.score}, str(tmp_path / "p.png"), title="t",
                               y_label="s(h)", bound=profile.bound)  # fmt: skip
    [figure] = captured
    dashed = [line for axes in figure.axes for line in axes.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1, [axes.get_ylabel() for axes in figure.axes]
    shared = dashed[0].axes
    [magnitude] = [line for line in shared.get_lines() if line is not dashed[0]]
    # one axis, one unit: the bound above |s(h)| at every offset, as drawn
    assert shared.get_yscale() == "log" and len(figure.axes) == 2
    drawn = np.asarray(magnitude.get_ydata(), dtype=np.float64)
    np.testing.assert_allclose(drawn[np.isfinite(drawn)], np.abs(profile.score)[np.isfinite(drawn)])
    assert np.all(np.asarray(dashed[0].get_ydata()) >= np.nan_to_num(drawn)), qk
