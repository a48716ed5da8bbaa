"""Every terminal view fits --width × --height (issue 26, items 6 and 10)."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from pecli.cli.app import app

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDTH, HEIGHT = 60, 12

VIEWS = [
    ["plot", "sinusoidal", "--d", "64", "--len", "128"],
    ["plot", "rope", "--d", "64", "--len", "128"],
    ["plot", "alibi", "--heads", "8", "--len", "256"],
    ["plot", "alibi", "--heads", "8", "--len", "256", "--scale", "per-panel"],
    ["plot", "rope", "--d", "64", "--view", "wavelength"],
    pytest.param(
        [
            "plot",
            "rope",
            "--d",
            "64",
            "--scaling",
            "llama3",
            "--factor",
            "8",
            "--original-max-position",
            "8192",
            "--view",
            "wavelength",
        ],
        id="plot rope llama3 --view wavelength",
    ),
    ["distance", "sinusoidal", "--d", "64", "--len", "256"],
    ["distance", "sinusoidal", "--d", "64", "--len", "256", "--profile"],
    ["distance", "rope", "--d", "64", "--len", "256"],
    ["distance", "rope", "--d", "64", "--len", "256", "--profile"],
    ["distance", "t5", "--len", "512", "--profile"],
    ["distance", "t5", "--len", "512"],
    ["distance", "alibi", "--heads", "8", "--len", "256"],
    ["distance", "alibi", "--heads", "8", "--len", "256", "--profile"],
    ["distance", "alibi", "--heads", "8", "--len", "256", "--scale", "per-panel"],
]


def _run(args: list[str], *extra: str) -> str:
    result = CliRunner().invoke(app, [*args, "--terminal", *extra, "--width", str(WIDTH), "--height", str(HEIGHT)])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("color", ["none", "truecolor"])
@pytest.mark.parametrize("args", VIEWS, ids=" ".join)
def test_every_view_fits_width_and_height(args: list[str], color: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = _run(args, *(["--no-color"] if color == "none" else []))
    lines = _ANSI.sub("", text).rstrip("\n").split("\n")
    assert len(lines) <= HEIGHT, "\n".join(lines)
    assert max(cell_len(line) for line in lines) <= WIDTH, "\n".join(lines)
    assert len(lines) >= HEIGHT - 3  # the height is used, not ignored


def test_rope_file_distance_fits(tmp_path) -> None:
    path = tmp_path / "rope.safetensors"
    assert CliRunner().invoke(app, ["generate", "rope", "--d", "64", "--len", "256", "-o", str(path)]).exit_code == 0
    lines = _run(["distance", str(path)], "--no-color").rstrip("\n").split("\n")
    assert len(lines) <= HEIGHT and max(cell_len(line) for line in lines) <= WIDTH


def test_rope_score_colours_follow_the_data() -> None:
    text = _run(["distance", "rope", "--d", "64", "--len", "256"], "--no-color")
    legend = next(line for line in text.splitlines() if "[" in line and "…" in line)
    low, high = (float(x) for x in re.findall(r"(-?\d+\.\d+) … (-?\d+\.\d+)", legend)[0])
    assert 0.25 < low < high < 0.75  # qk=ones: all positive, not a symmetric ±0.7


def test_panels_share_the_height() -> None:
    text = _run(["plot", "rope", "--d", "64", "--len", "128"], "--no-color").replace("--height", "")
    # two panels in 12 lines: each keeps its cell lines; the header and legend are drawn once
    assert text.count("Position ↓") == 1 and text.count("[ .:-=+*#%@]") == 1
    assert "cos" in text and "sin" in text


def test_per_panel_scale_gives_each_head_its_limits() -> None:
    text = _run(["plot", "alibi", "--heads", "8", "--len", "256", "--scale", "per-panel"], "--no-color")
    limits = re.findall(r"\] (-?[\d.]+) … 0", text)
    assert limits[:2] == ["-127.5", "-63.75"]
    assert "own colour scale" in text


def test_width_60_on_64_columns_uses_the_width() -> None:
    text = _run(["plot", "sinusoidal", "--d", "64", "--len", "64"], "--no-color")
    body = [line.split("┤", 1)[1] for line in text.splitlines() if "┤" in line]
    assert len(body[0]) == 56  # all of the 60 − 4 margin columns, not 32 blocks of 2
    assert "64 × 64 → 5 × 56 area means" in text


def test_resampled_columns_are_area_means_that_keep_sin_and_cos_apart() -> None:
    import numpy as np

    import pecli
    from pecli.render.downsample import AxisStructure, resample_columns

    table = pecli.encode("sinusoidal", 8, 64, dtype="float64")  # sin, cos interleaved
    shrunk = resample_columns(table, 56, AxisStructure(period=2))
    assert shrunk.values.shape == (8, 56)
    sines, cosines = table[:, 0::2], table[:, 1::2]  # 32 each into 28 cells of 8/7 columns
    first = sines[:, 0] * 7 / 8 + sines[:, 1] * 1 / 8
    np.testing.assert_allclose(shrunk.values[:, 0], first, rtol=0, atol=1e-12)
    np.testing.assert_allclose(shrunk.values[:, 1], cosines[:, 0] * 7 / 8 + cosines[:, 1] / 8, rtol=0, atol=1e-12)
    last = cosines[:, -2] / 8 + cosines[:, -1] * 7 / 8  # the last cell: an eighth of column 61, all of 63
    np.testing.assert_allclose(shrunk.values[:, -1], last, rtol=0, atol=1e-12)
    assert shrunk.col_edges[0] == 0 and shrunk.col_edges[-1] == 64


@pytest.mark.parametrize("command", ["plot", "distance"])
def test_per_panel_scale_in_the_figure(command: str, tmp_path) -> None:
    import matplotlib.image

    spread = {}
    for scale in ("shared", "per-panel"):
        path = tmp_path / f"{scale}.png"
        args = [command, "alibi", "--heads", "4", "--len", "64", "--scale", scale, "-o", str(path)]
        assert CliRunner().invoke(app, args).exit_code == 0
        # the slowest head, bottom right: one colour on the shared scale, its own full range per panel
        spread[scale] = float(matplotlib.image.imread(path)[330:540, 440:670, :3].std(axis=(0, 1)).sum())
    assert spread["shared"] < 0.1 < 0.4 < spread["per-panel"], spread
