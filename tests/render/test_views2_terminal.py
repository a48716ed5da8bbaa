"""The terminal view says what it drew (issue 30, "a picture that hides the data is a bug"): the
averaging at any width, a table of one value as that value, and an ASCII-only stdout as ASCII."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

import pecli
from pecli.render.terminal import color_mode, heatmap, heatmap_stack
from tests.conftest import run_in_process, run_pecli

_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


def _visible(text: str) -> list[str]:
    return [_ESCAPES.sub("", line) for line in text.splitlines()]


@pytest.mark.parametrize("mode", ["truecolor", "256", "none"])
@pytest.mark.parametrize("width", [30, 40, 50, 56, 60])
@pytest.mark.parametrize("height", [8, 12, 30])
def test_an_averaged_view_says_so_at_any_width(mode, width, height):
    # the "64 × 32 → 8 × 32 block means" note was printed only when it fitted beside the legend: at
    # 56 columns or less (colour) a view of block means looked like the table itself
    table = pecli.encode("sinusoidal", 32, 64)
    text = heatmap(table, width=width, height=height, color=mode, x_label="x", y_label="y", title="t")
    lines = _visible(text)
    assert len(lines) <= height and max(len(line) for line in lines) <= width, lines
    assert re.search(r"\b(block|area) means\b", "\n".join(lines[-3:])), lines
    # the value range is still there, whole
    assert any(re.search(r"(values|range) -1 … 1", line) for line in lines), lines


def test_the_averaging_note_names_the_shapes_where_there_is_room():
    table = pecli.encode("sinusoidal", 32, 64)
    lines = _visible(heatmap(table, width=50, height=12, color="256", x_label="x", y_label="y", title="t"))
    assert lines[-2].strip().startswith("-1 ") and lines[-2].strip().endswith(" 1")
    assert lines[-1].strip() == "8 × 46 area means of 32 × 64; values -1 … 1"


@pytest.mark.parametrize("mode", ["256", "none"])
@pytest.mark.parametrize("width", [40, 60])
def test_stacked_panels_with_their_own_legends_say_they_average(mode, width):
    # each panel of --scale per-panel has a legend and no value line: the note goes beside the legend,
    # in fewer words or beside a shorter colour bar, and the limits stay whole
    heads = [np.outer(np.arange(256.0), np.ones(256)) * -slope for slope in (0.5, 0.25)]
    text, shown = heatmap_stack(
        heads, ["head 0", "head 1"], width=width, height=16, color=mode,
        scales=[(-127.5, 0.0, "viridis"), (-63.75, 0.0, "viridis")], x_label="j", y_label="i",
    )  # fmt: skip
    lines = _visible(text)
    assert shown == 2 and max(len(line) for line in lines) <= width
    legends = [line for line in lines if "means" in line]
    assert len(legends) == 2, lines
    assert re.search(r"-127\.5\b.* 0 ", legends[0]) and re.search(r"-63\.75\b.* 0 ", legends[1]), legends


@pytest.mark.parametrize("value", [3.0, -2.5, 0.0])
@pytest.mark.parametrize("color", [[], ["--no-color"]])
def test_a_table_of_one_value_says_the_value(tmp_path, value, color):
    # the legend said "3 … 4": a span that only gives the map a width, not a value in the table
    path = tmp_path / "flat.npy"
    np.save(path, np.full((8, 4), value, dtype=np.float32))
    result = run_in_process("plot", str(path), "--terminal", "--width", "60", "--height", "14", *color)
    assert result.code == 0, result.stderr
    legend = _visible(result.stdout.decode())[-2]
    assert f"every one {value:g}" in legend and "…" not in legend, legend


def test_color_mode_is_ascii_for_a_stdout_that_cannot_encode_the_view():
    def screen(encoding):
        return SimpleNamespace(stdout_is_terminal=True, stdout=SimpleNamespace(encoding=encoding))

    assert color_mode(screen("ascii"), environ={"COLORTERM": "truecolor"}) == "ascii"
    assert color_mode(screen("utf-8"), environ={"COLORTERM": "truecolor"}) == "truecolor"
    assert color_mode(screen("ascii"), no_color=True, environ={}) == "ascii"
    from pecli.render.terminal import ascii_text

    assert ascii_text("0 ┤ 8 × 16 …") == "0 + 8 x 16 ~"


def test_an_ascii_heatmap_is_ascii_and_keeps_its_size():
    table = pecli.encode("sinusoidal", 32, 64)
    text = heatmap(table, width=50, height=14, color="ascii", x_label="x", y_label="y", title="t 32 × 64")
    text.encode("ascii")
    lines = text.splitlines()
    assert len(lines) <= 14 and max(len(line) for line in lines) <= 50
    assert lines[1] == "y v  x >" and lines[3].startswith("   ++--")
    assert "values -1 ~ 1" in text


@pytest.mark.parametrize(
    "args",
    [
        ["plot", "sinusoidal", "--d", "64", "--len", "32"],
        ["plot", "alibi", "--heads", "4", "--len", "16"],
        ["distance", "sinusoidal", "--d", "16", "--len", "64"],
    ],
)
def test_an_ascii_stdout_gets_a_readable_picture_not_escapes(args):
    # PYTHONIOENCODING=ascii: every arrow and box character came out as "\u2193", "\u2500"…
    result = run_pecli(*args, "--terminal", "--width", "50", "--height", "20", env={"PYTHONIOENCODING": "ascii"})
    assert result.code == 0, result.stderr
    text = result.stdout.decode("ascii")
    assert "\\u" not in text and "\\x" not in text, text
    assert " v " in text and "+--" in text and "\x1b[" not in text
    assert re.search(r"\n +\d* *\+[ .:=+*#%@-]+\n", text), text  # a row of ramp characters


def test_the_precision_view_in_ascii_is_ascii():
    from pecli.analysis.precision import precision_errors
    from pecli.render.precision import precision_chart
    from pecli.schemes.spec import TableSpec

    errors = precision_errors(TableSpec.resolve("rope", None, {}, length=512, dim=8), "bfloat16")
    chart = precision_chart(errors, width=60, height=20, color="ascii")
    chart.encode("ascii")  # the caption's "−" and the view's frame as well
    assert "positions alias from 257" in chart


@pytest.mark.parametrize("width", [40, 60, 100])
def test_the_precision_view_says_its_colours_are_logarithms_at_any_width(width):
    # "colour: log10 |…|" was the end of the axis caption, cut at widths under ~90: the legend's
    # "-9.527 … -0.01829" then read as errors
    from pecli.analysis.precision import precision_errors
    from pecli.render.precision import precision_chart
    from pecli.schemes.spec import TableSpec

    errors = precision_errors(TableSpec.resolve("rope", None, {}, length=512, dim=8), "bfloat16")
    chart = precision_chart(errors, width=width, height=24, color="none")
    joined = " ".join(line.strip() for line in chart.splitlines())
    assert "colour: log10 |bfloat16 − float64|" in joined, chart
    assert max(len(line) for line in chart.splitlines()) <= width


def test_the_value_line_under_panels_in_one_scale_covers_every_panel():
    # it stated the last panel's range ("values -0.2461 … 0" under ALiBi heads reaching -15.75)
    # 16 query rows: 64 × 64 heads keep their aspect (session 11), so three no longer fit in 30 lines
    heads = [np.outer(np.ones(16), np.arange(64.0)) * -slope for slope in (0.25, 0.0625, 0.0039)]
    text, shown = heatmap_stack(
        heads, ["head 0", "head 1", "head 2"], width=60, height=30, color="none",
        scales=[(-15.75, 0.0, "viridis")], x_label="j", y_label="i",
    )  # fmt: skip
    assert shown == 3
    footer = [line.strip() for line in text.splitlines() if line.startswith("    ") and "values" in line]
    assert footer == ["values -15.75 … 0"], text


def test_rope_panels_keep_their_halves_apart():
    # the cos/sin panels were resampled without the layout the metadata names (a cos panel's halves
    # are alike, so its values could not tell): a cell mixed column 31 (cos ≈ 1) with column 32 and
    # drew a stripe between the halves that is not in the table
    result = run_in_process("plot", "rope", "--d", "64", "--len", "256", "--terminal", "--no-color",
                            "--width", "60", "--height", "24")  # fmt: skip
    assert result.code == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    cos = [line.split("┤" if "┤" in line else "│", 1)[1] for line in lines[4:8]]
    for row in cos:
        half = len(row) // 2
        assert len(row) % 2 == 0 and row[:half] == row[half:], cos
