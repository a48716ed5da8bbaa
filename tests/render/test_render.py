"""Renderers: block averaging, RdBu colours, colour modes, terminal snapshots, image files."""

from __future__ import annotations

import os
import re
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pecli
from pecli.errors import ParameterError
from pecli.render.downsample import block_average, block_edges
from pecli.render.terminal import RAMP, color_mode, heatmap, rdbu_lut
from tests.paths import SNAPSHOTS

SNAPSHOTS = SNAPSHOTS


def _snapshot_table() -> np.ndarray:
    table = pecli.encode("sinusoidal", 96, 48)
    table[40:52, 10:12] = np.nan  # a block of masked cells
    return table


# -- block averaging ---------------------------------------------------------------------------


def test_checkerboard_columns_average_to_zero_where_a_stride_aliases():
    # the highest-frequency pattern: columns alternate +1 / -1 (like sin at the Nyquist rate)
    checkerboard = np.tile(np.array([1.0, -1.0], dtype=np.float32), (64, 512))  # 64 × 1024
    averaged = block_average(checkerboard, 16, 100).values
    assert averaged.shape == (16, 100)
    # blocks of 10 or 11 columns: an even block sums to 0, an odd one to ±1/11 at most
    assert np.abs(averaged).max() <= 1 / 10 + 1e-12
    # what taking every 10th column (1024 // 100) would show instead: a solid +1, a false picture
    assert np.all(checkerboard[:, ::10] == 1.0)


def test_block_means_match_a_loop_over_blocks():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((37, 23))
    result = block_average(table, 5, 4)
    expected = np.array(
        [
            [table[r0:r1, c0:c1].mean() for c0, c1 in zip(result.col_edges[:-1], result.col_edges[1:], strict=True)]
            for r0, r1 in zip(result.row_edges[:-1], result.row_edges[1:], strict=True)
        ]
    )
    np.testing.assert_allclose(result.values, expected, rtol=1e-13)
    assert result.shrunk


def test_non_finite_values_are_left_out_of_the_means():
    table = np.ones((4, 4))
    table[0, 0], table[1, 1] = np.nan, np.inf
    table[2:, 2:] = np.nan
    result = block_average(table, 2, 2).values
    assert result[0, 0] == 1.0  # two of four values masked, the mean of the rest
    assert np.isnan(result[1, 1])  # a block with no finite value stays masked


def test_small_tables_are_not_stretched():
    table = np.arange(6.0).reshape(2, 3)
    result = block_average(table, 100, 100)
    assert not result.shrunk
    np.testing.assert_array_equal(result.values, table)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 60),
    cols=st.integers(1, 60),
    max_rows=st.integers(1, 70),
    max_cols=st.integers(1, 70),
    seed=st.integers(0, 1000),
)
def test_block_average_properties(rows, cols, max_rows, max_cols, seed):
    table = np.random.default_rng(seed).uniform(-1, 1, (rows, cols))
    result = block_average(table, max_rows, max_cols)
    assert result.values.shape == (min(rows, max_rows), min(cols, max_cols))
    # means stay within the input's range, and the size-weighted mean is the input's mean
    assert table.min() - 1e-12 <= result.values.min() and result.values.max() <= table.max() + 1e-12
    weights = np.outer(np.diff(result.row_edges), np.diff(result.col_edges))
    assert np.isclose((result.values * weights).sum() / weights.sum(), table.mean())
    # edges cover the table in near-equal blocks
    for edges, size in ((result.row_edges, rows), (result.col_edges, cols)):
        assert edges[0] == 0 and edges[-1] == size
        assert np.ptp(np.diff(edges)) <= 1
    assert block_edges(size=rows, blocks=max_rows).tolist() == result.row_edges.tolist()


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 5000), blocks=st.integers(1, 900))
def test_uniform_blocks_have_one_size(size, blocks):
    edges = block_edges(size, blocks, uniform=True)
    sizes = np.diff(edges)
    assert edges[0] == 0 and edges[-1] == size and len(sizes) <= blocks
    assert np.all(sizes[:-1] == sizes[0]) and 0 < sizes[-1] <= sizes[0]


def test_image_averages_axes_longer_than_their_pixels_uniformly_and_by_whole_pairs(tmp_path):
    from pecli.render.image import save_heatmap

    note = save_heatmap(pecli.encode("sinusoidal", 2048, 512), str(tmp_path / "pe.png"), title="t")
    shown_rows, shown_cols = (
        int(re.search(what + r" to (\d+)", note).group(1)) for what in ("filtered", "columns averaged")
    )
    assert shown_cols == 256  # 512 columns in ~500 pixels of axes: whole sin/cos pairs, never a pair split
    assert 400 < shown_rows < 600  # rows filtered to one a pixel of the axes


# -- colours -----------------------------------------------------------------------------------


def test_rdbu_lut_is_matplotlibs_rdbu():
    from matplotlib import colormaps

    expected = colormaps["RdBu"](np.linspace(0, 1, 256), bytes=True)[:, :3]
    np.testing.assert_array_equal(rdbu_lut(), expected)


def test_color_values_follow_matplotlibs_normalisation():
    # the same value must get the same colour in the terminal as in the image
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    values = np.array([[-1.0, -0.3, 0.0, 0.41, 1.0]])
    text = heatmap(values, width=40, height=10, color="truecolor", x_label="x", y_label="y")
    rgb = colormaps["RdBu"](Normalize(-1, 1)(values[0]), bytes=True)[:, :3]
    for r, g, b in rgb.tolist():
        assert f"\x1b[38;2;{r};{g};{b}m" in text


@pytest.mark.parametrize(
    ("environ", "tty", "force", "no_color", "expected"),
    [
        ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, True, False, False, "truecolor"),
        ({"TERM": "xterm-256color", "COLORTERM": "24bit"}, True, False, False, "truecolor"),
        ({"TERM": "xterm-256color"}, True, False, False, "256"),
        ({"TERM": "screen-256color", "COLORTERM": "truecolor", "NO_COLOR": "1"}, True, False, False, "none"),
        ({"TERM": "dumb", "COLORTERM": "truecolor"}, True, False, False, "none"),
        ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, True, False, True, "none"),
        ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, False, False, False, "none"),
        ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, False, True, False, "truecolor"),
        ({"TERM": "xterm-256color"}, False, True, False, "256"),
        ({"TERM": "xterm-256color"}, False, True, True, "none"),
    ],
)
def test_color_mode(environ, tty, force, no_color, expected):
    output = SimpleNamespace(stdout_is_terminal=tty)
    assert color_mode(output, force_terminal=force, no_color=no_color, environ=environ) == expected


# -- terminal snapshots ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["truecolor", "256", "none"])
def test_terminal_snapshot(mode):
    """Snapshots were generated once and reviewed by eye; a change here must be reviewed again."""
    text = heatmap(
        _snapshot_table(),
        width=60,
        height=24,
        color=mode,
        x_label="Embedding Dimension",
        y_label="Position",
        title="sinusoidal: base=10000, 96 × 48",
    )
    assert text + "\n" == (SNAPSHOTS / f"heatmap_{mode}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["truecolor", "256", "none"])
def test_terminal_block_fits_its_size(mode):
    import re

    text = heatmap(
        pecli.encode("sinusoidal", 2048, 512), width=70, height=30, color=mode, x_label="x", y_label="y", title="t"
    )
    visible = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
    assert len(visible) <= 30
    assert max(len(line) for line in visible) <= 70
    assert "2048 × 512 →" in text


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 300),
    cols=st.integers(1, 300),
    width=st.integers(20, 150),
    height=st.integers(8, 60),
    mode=st.sampled_from(["truecolor", "256", "none"]),
    scale=st.floats(1e-6, 1e6),
)
def test_terminal_block_never_exceeds_its_size(rows, cols, width, height, mode, scale):
    import re

    table = np.random.default_rng(rows * cols).uniform(-scale, scale, (rows, cols))
    title = "a title that is rather long for a narrow terminal"
    text = heatmap(table, width=width, height=height, color=mode, x_label="Embedding Dimension",
                   y_label="Position", title=title, y_ticks_from=10**6)  # fmt: skip
    visible = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
    assert len(visible) <= height
    assert max(len(line) for line in visible) <= width


def test_terminal_cells_hold_two_rows_with_upper_half_blocks():
    table = np.array([[1.0, -1.0], [-1.0, 1.0]])  # one line: top (1, -1), bottom (-1, 1)
    text = heatmap(table, width=40, height=10, color="truecolor", x_label="x", y_label="y")
    blue, red = "5;48;97", "103;0;31"  # RdBu's ends
    body = next(line for line in text.splitlines() if "▀" in line)
    assert f"\x1b[38;2;{blue}m\x1b[48;2;{red}m▀" in body
    assert f"\x1b[38;2;{red}m\x1b[48;2;{blue}m▀" in body


def test_ramp_uses_the_whole_character_scale():
    table = np.linspace(-1, 1, 40).reshape(1, 40)
    text = heatmap(table, width=60, height=10, color="none", x_label="x", y_label="y")
    body = next(line for line in text.splitlines() if line.startswith("0 ┤"))
    assert body[3] == RAMP[0] and body[-1] == RAMP[-1]
    assert set(body[3:]) == set(RAMP)


def test_ticks_start_at_the_slice_offsets():
    text = heatmap(np.zeros((30, 30)), width=60, height=40, color="none", x_label="x", y_label="y",
                   x_ticks_from=100, y_ticks_from=500)  # fmt: skip
    lines = text.splitlines()
    assert lines[1].split()[0] == "100"
    assert lines[3].startswith("500 ┤")


def test_terminal_module_imports_no_heavy_library():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from pecli.render.terminal import heatmap\n"
        "heatmap(np.eye(8), width=40, height=12, color='truecolor', x_label='x', y_label='y')\n"
        "print(sorted(m for m in ('matplotlib', 'torch', 'rich') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# -- image files -------------------------------------------------------------------------------


def _png_size(path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        return image.size


@pytest.mark.parametrize(("figsize", "dpi"), [((8, 6), 100), ((5, 3), 80)])
def test_heatmap_png_has_the_requested_pixel_size(tmp_path, figsize, dpi):
    from pecli.render.image import save_heatmap

    path = tmp_path / "pe.png"
    note = save_heatmap(pecli.encode("sinusoidal", 64, 32), str(path), title="t", figsize=figsize, dpi=dpi)
    assert note is None  # 64 × 32 fits the pixels: drawn as is
    assert _png_size(path) == (figsize[0] * dpi, figsize[1] * dpi)


def test_heatmap_colours_match_the_table(tmp_path):
    # a table of three bands (-1, 0, +1) must come out dark red, white and dark blue
    from matplotlib.image import imread

    from pecli.render.image import save_heatmap

    table = np.repeat(np.array([[-1.0, 0.0, 1.0]]), 30, axis=0)
    path = tmp_path / "bands.png"
    save_heatmap(table, str(path), title="bands")
    pixels = (imread(path)[..., :3] * 255).round().astype(int)
    colours = {tuple(p) for p in pixels.reshape(-1, 3).tolist()}
    lut = rdbu_lut().astype(int)
    for colour in (lut[0], lut[128], lut[255]):
        assert tuple(colour.tolist()) in colours


def test_large_table_is_block_averaged_and_says_so(tmp_path):
    from pecli.render.image import save_heatmap

    path = tmp_path / "big.png"
    note = save_heatmap(np.zeros((20000, 3000), dtype=np.float32), str(path), title="big", figsize=(4, 3), dpi=50)
    assert note is not None and note.startswith("rows low-pass filtered to ") and "(20000 rows;" in note
    assert "columns averaged to " in note and note.endswith("(3000)")
    shown = [int(re.search(what + r" to (\d+)", note).group(1)) for what in ("filtered", "columns averaged")]
    assert shown[0] <= 150 and shown[1] <= 200
    assert _png_size(path) == (200, 150)


@pytest.mark.parametrize(("extension", "magic"), [("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_vector_formats(tmp_path, extension, magic):
    from pecli.render.image import save_heatmap

    path = tmp_path / f"pe.{extension}"
    save_heatmap(pecli.encode("sinusoidal", 50, 16), str(path), title="t")
    assert path.read_bytes().startswith(magic)


def test_lines_png(tmp_path):
    from pecli.render.lines import save_lines

    path = tmp_path / "lines.png"
    save_lines(pecli.encode("sinusoidal", 100, 16), str(path), dims=[0, 1, 4, 8], title="t", figsize=(6, 4))
    assert _png_size(path) == (600, 400)
    with pytest.raises(ParameterError, match="outside"):
        save_lines(np.zeros((5, 4)), str(tmp_path / "bad.png"), dims=[4], title="t")


def test_failed_render_leaves_no_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from pecli.render.image import save_heatmap

    target = tmp_path / "pe.png"
    target.write_bytes(b"old")

    def broken(*args, **kwargs):
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(RuntimeError):
        save_heatmap(np.zeros((4, 4)), str(target), title="t")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["pe.png"]


# -- colour scales: limits that show the data --------------------------------------------------


def _trained_like_table() -> np.ndarray:
    """A BERT-like position table (std 0.025) with one outlier, as in all-MiniLM-L6-v2 at [0, 99]."""
    table = np.random.default_rng(7).normal(0.0, 0.025, (512, 384))
    table[0, 99] = 1.87
    return table


def test_one_outlier_gives_robust_symmetric_limits_at_the_percentile():
    from pecli.render.scale import color_scale

    table = _trained_like_table()
    scale = color_scale(table)
    reach = np.percentile(np.abs(table), 99)
    assert scale.robust and scale.diverging and scale.cmap == "RdBu"
    assert scale.low == pytest.approx(-reach) and scale.high == pytest.approx(reach)
    assert scale.full == (-1.87, 1.87)
    assert scale.clipped == pytest.approx(np.mean(np.abs(table) > reach), abs=1e-4)
    assert color_scale(table, robust=False)[:2] == (-1.87, 1.87)
    assert color_scale(table, vmin=-0.1, vmax=0.1)[:2] == (-0.1, 0.1)


@pytest.mark.parametrize("name", ["sinusoidal", "timestep", "binary"])
def test_tables_without_outliers_keep_their_full_range(name):
    from pecli.render.scale import color_scale

    table = pecli.encode(name, 256, 64)
    scale = color_scale(table)
    reach = float(np.abs(table).max())
    assert not scale.robust
    assert (scale.low, scale.high) == ((-reach, reach) if table.min() < 0 else (float(table.min()), reach))


def test_non_negative_data_gets_a_sequential_map_and_says_so():
    from pecli.render.scale import color_scale

    distances = np.abs(np.subtract.outer(np.arange(50.0), np.arange(50.0)))
    scale = color_scale(distances)
    assert (scale.low, scale.high, scale.cmap, scale.diverging) == (0.0, 49.0, "viridis", False)
    assert scale.caption == f"value (0 … {scale.high:.4g})"  # what the colour shows, not the map's kind
    assert color_scale(distances - 10).caption == "value, 0 at the centre colour"


def test_viridis_anchors_follow_matplotlib():
    from matplotlib import colormaps

    from pecli.render.terminal import colormap_lut

    expected = colormaps["viridis"](np.linspace(0, 1, 256), bytes=True)[:, :3].astype(int)
    assert np.abs(colormap_lut("viridis").astype(int) - expected).max() <= 6


@pytest.mark.parametrize("name", ["RdBu", "viridis", "coolwarm"])
def test_256_colour_palette_keeps_the_maps_order(name):
    """Along the map the chosen xterm colours never step back, and their lightness follows the map's."""
    from pecli.render.palette import cielab, colormap_lut, ordered_xterm, xterm_palette

    lut = colormap_lut(name)
    chosen = ordered_xterm(lut) - 16
    palette, lut_lab = cielab(xterm_palette()), cielab(lut)
    distance = np.sqrt(((lut_lab[:, None, :] - palette[None, :, :]) ** 2).sum(axis=2))
    place = distance.argmin(axis=0)[chosen]
    assert np.all(np.diff(place) >= 0)
    peak = int(np.argmax(lut_lab[:, 0])) if name != "viridis" else len(lut) - 1
    lightness = palette[chosen, 0]
    assert np.all(np.diff(lightness[: peak - 4]) >= 0) or np.all(np.diff(lightness[: peak - 4]) <= 0)
    assert np.all(np.diff(lightness[peak + 5 :]) <= 0) or peak == len(lut) - 1
    assert distance[np.arange(len(lut)), chosen].max() < 32  # still close to the map everywhere


# -- downsampling draws no pattern the table does not have -------------------------------------

#: terminal sizes (columns × lines) and image axes (pixels) the tables are drawn at
TERMINAL_SIZES = [(80, 24), (200, 60), (120, 40), (61, 17)]
IMAGE_CELLS = [(462, 496), (300, 311), (700, 600)]


def _terminal_cells(table: np.ndarray, width: int, height: int, metadata=None):
    """The blocks the terminal heatmap averages ``table`` over (what :func:`heatmap` calls)."""
    from pecli.render.downsample import column_structure, row_structure
    from pecli.render.terminal import heatmap_cells

    grid = heatmap_cells(len(table), width=width, height=height, color="truecolor", title="t")
    return block_average(
        table,
        *grid,
        uniform=True,
        structure=column_structure(table, metadata),
        row_structure=row_structure(table),
        even=True,
    )


def _image_cells(table: np.ndarray, rows: int, cols: int, metadata=None):
    from pecli.render.downsample import column_structure, row_structure

    return block_average(
        table, rows, cols, uniform=True, structure=column_structure(table, metadata), row_structure=row_structure(table)
    )


def _all_drawings(table: np.ndarray, metadata=None):
    for width, height in TERMINAL_SIZES:
        yield f"terminal {width}×{height}", _terminal_cells(table, width, height, metadata), True
    for rows, cols in IMAGE_CELLS:
        yield f"image {rows}×{cols}", _image_cells(table, rows, cols, metadata), False


@pytest.mark.parametrize("shape", [(2048, 512), (1000, 300), (333, 130)])
def test_interleaved_sinusoid_blocks_never_split_a_sin_cos_pair(shape):
    """Averaging whole pairs equals averaging the pair means: no cell mixes sin_k with cos_k+1 alone."""
    table = pecli.encode("sinusoidal", *shape)
    pair_means = np.repeat((table[:, 0::2] + table[:, 1::2]) / 2, 2, axis=1)
    for where, cells, _ in _all_drawings(table):
        if np.all(np.diff(cells.col_edges) == 1):
            continue  # every column drawn on its own
        assert np.all(cells.col_edges % 2 == 0), where
        expected = block_average(pair_means, 1 << 30, 1 << 30).values  # the same blocks over pair means
        rows = np.add.reduceat(expected[: cells.row_edges[-1]], cells.row_edges[:-1], axis=0)
        rows /= np.diff(cells.row_edges)[:, None]
        cols = np.add.reduceat(rows[:, : cells.col_edges[-1]], cells.col_edges[:-1], axis=1)
        cols /= np.diff(cells.col_edges)[None, :]
        np.testing.assert_allclose(cells.values, cols, atol=1e-5, err_msg=where)


@pytest.mark.parametrize("with_metadata", [True, False])
def test_split_sinusoid_blocks_never_straddle_the_halves(with_metadata):
    table = pecli.encode("sinusoidal", 2048, 512, layout="split")
    metadata = {"scheme": "sinusoidal", "layout": "split"} if with_metadata else None
    for where, cells, _ in _all_drawings(table, metadata):
        assert 256 in cells.col_edges.tolist(), where


@pytest.mark.parametrize("shape", [(2048, 512), (998, 302), (64, 1030)])
def test_checkerboard_draws_flat_grey_not_stripes(shape):
    """A ±1 checkerboard has no slower pattern: every cell must be its mean, 0."""
    rows, cols = shape
    board = np.where((np.arange(rows)[:, None] + np.arange(cols)[None, :]) % 2 == 0, 1.0, -1.0)
    for where, cells, _ in _all_drawings(board):
        if cells.shrunk:
            assert np.abs(cells.values).max() < 1e-12, where


@pytest.mark.parametrize("axis", [0, 1])
def test_linear_ramp_cells_are_the_ramp_at_their_centres_and_evenly_spaced(axis):
    ramp = np.broadcast_to(np.arange(2047.0)[:, None] if axis == 0 else np.arange(2047.0)[None, :], (2047, 2047))
    ramp = np.ascontiguousarray(ramp)
    for where, cells, whole in _all_drawings(ramp):
        edges = cells.row_edges if axis == 0 else cells.col_edges
        centres = (edges[:-1] + edges[1:] - 1) / 2  # a partial last block's mean is its own centre
        values = cells.values[:, 0] if axis == 0 else cells.values[0]
        np.testing.assert_allclose(values, centres, err_msg=where)
        if whole:  # a terminal cell is one size: every block holds the same number, but for a shorter last one
            sizes = np.diff(edges)
            assert len(set(sizes[:-1].tolist())) <= 1 and sizes[-1] <= sizes[0] and edges[-1] == 2047, where


def test_terminal_draws_a_shorter_last_block_rather_than_leave_it_out():
    table = pecli.encode("sinusoidal", 1999, 512)
    cells = _terminal_cells(table, 80, 24)
    text = heatmap(table, width=80, height=24, color="truecolor", x_label="x", y_label="y", title="t")
    assert cells.row_edges[-1] == 1999 and cells.col_edges[-1] == 512 and "left out" not in text


# -- titles that fit ---------------------------------------------------------------------------


def test_table_title_keeps_only_parameters_that_differ_from_the_defaults():
    from pecli.cli.common import build_table
    from pecli.render.titles import table_title

    params = {"part": "cos", "base": 500000.0}
    spec = build_table("rope", None, params, length=4096, dim=128, dtype="float32", name="pe")
    assert table_title(spec.single().metadata()) == "rope, 4096 × 128: base=500000.0, part=cos"
    assert table_title({"shape": "3,3"}) is None


@pytest.mark.parametrize("width", [3.0, 5.0, 8.0, 12.0])
def test_long_titles_wrap_inside_the_figure(width):
    from pecli.render.image import new_figure, set_title

    title = "rope (llama3), 131072 × 128: " + ", ".join(f"parameter_{i}=value_{i}" for i in range(20)) + " $x_1$"
    figure, axes = new_figure((width, 4.0), 100)
    figure.colorbar(axes.pcolormesh(np.eye(3)), ax=axes)
    set_title(axes, title, width)
    figure.canvas.draw()
    box = axes.title.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= width * 100 and box.y1 <= 400
    text = axes.title.get_text()
    assert text.startswith("rope (llama3), 131072") and text.count("\n") <= 1
    short = "sinusoidal, 2048 × 512 — pe_$1.npy"
    set_title(axes, short, width)
    assert axes.title.get_text().replace("\n", " ") == short  # plain text: no mathtext from a file name's $ or _


# -- vector output at full resolution ----------------------------------------------------------


def _embedded_png_sizes(svg: str) -> list[tuple[int, int]]:
    import base64
    import io
    import re

    from PIL import Image

    return [Image.open(io.BytesIO(base64.b64decode(data))).size for data in re.findall(r"base64,([^\"]+)", svg)]


def test_svg_embeds_every_cell_of_a_small_table_and_averages_a_large_one(tmp_path):
    from pecli.render.image import FULL_RESOLUTION_CELLS, save_heatmap

    table = pecli.encode("sinusoidal", 1024, 512)
    assert table.size <= FULL_RESOLUTION_CELLS
    assert save_heatmap(table, str(tmp_path / "full.svg"), title="t") is None  # nothing averaged
    assert (512, 1024) in _embedded_png_sizes((tmp_path / "full.svg").read_text(encoding="utf-8"))
    large = pecli.encode("sinusoidal", 4096, 512)
    assert "(4096 rows;" in save_heatmap(large, str(tmp_path / "large.svg"), title="t")


# -- small multiples -----------------------------------------------------------------------------


def _drawn_panels(monkeypatch, tmp_path, matrices, titles, figsize, dpi=72):
    """The figure save_panels draws, and its visible panels."""
    import pecli.render.panels as panels
    from pecli.render.scale import color_scale

    drawn = []
    real = panels.save_figure
    monkeypatch.setattr(panels, "save_figure", lambda figure, *a: drawn.append(figure) or real(figure, *a))
    path = tmp_path / "panels.png"
    panels.save_panels(matrices, str(path), titles=titles, title="alibi", scale=color_scale(np.stack(matrices)),
                       x_label="Key position j", y_label="Query position i", figsize=figsize, dpi=dpi)  # fmt: skip
    [figure] = drawn
    return figure, [axes for axes in figure.axes if axes.get_visible() and axes.get_title()]


@pytest.mark.parametrize("heads", [2, 4, 8, 12, 16])
@pytest.mark.parametrize("figsize", [(5, 3.6), (8, 6), (12, 3), (3.5, 5)])
def test_panel_titles_fit_their_panels_and_never_overlap(monkeypatch, tmp_path, heads, figsize):
    """The gallery's alibi-heads had four titles run into each other at 5 × 3.6 in."""
    from pecli.cli.inputs import InputTable
    from pecli.cli.panels import split_slices

    bias = pecli.encode("alibi", 32, None, heads=heads)
    tables = split_slices(InputTable(bias, "alibi", {"scheme": "alibi"}), None)
    figure, panels = _drawn_panels(monkeypatch, tmp_path, [t.array for t in tables], [t.label for t in tables], figsize)
    renderer = figure.canvas.get_renderer()
    boxes = [axes.title.get_window_extent(renderer) for axes in panels]
    assert len(boxes) == heads
    for axes, box in zip(panels, boxes, strict=True):
        panel = axes.get_window_extent(renderer)
        assert panel.x0 - 1 <= box.x0 and box.x1 <= panel.x1 + 1, axes.get_title()
        assert box.y0 >= panel.y1 - 1  # above its own panel, not over the data
    for i, first in enumerate(boxes):
        for second in boxes[i + 1 :]:
            assert not first.overlaps(second), (first, second)
    # the slope, the thing that tells heads apart, is never cut away
    assert all("slope" in axes.get_title() for axes in panels)


def test_panels_of_one_shape_label_their_axes_once(monkeypatch, tmp_path):
    matrices = list(pecli.encode("alibi", 16, None, heads=4))
    figure, panels = _drawn_panels(monkeypatch, tmp_path, matrices, [f"head {h}" for h in range(4)], (8, 6))
    assert [axes.get_xlabel() for axes in panels] == [""] * 4
    texts = [text.get_text() for text in figure.texts]
    assert texts.count("Key position j") == 1 and texts.count("Query position i") == 1
    # a 2 × 2 grid: y tick labels on the left column only, x tick labels on the bottom row only
    left = [any(label.get_visible() and label.get_text() for label in axes.get_yticklabels()) for axes in panels]
    bottom = [any(label.get_visible() and label.get_text() for label in axes.get_xticklabels()) for axes in panels]
    assert left == [True, False, True, False] and bottom == [False, False, True, True]


def test_panels_are_laid_out_once(monkeypatch, tmp_path):
    """Issue 32: constrained layout ran twice (fitting the titles, then again on saving), 1.75× a bare script."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    passes = []
    real = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute", lambda self, fig: passes.append(fig) or real(self, fig))
    matrices = list(pecli.encode("alibi", 64, None, heads=16))
    figure, panels = _drawn_panels(monkeypatch, tmp_path, matrices, [f"head {h}, slope 0.007812" for h in range(16)],
                                   (8, 6), dpi=100)  # fmt: skip
    assert len(passes) == 1
    assert figure.get_layout_engine() is None  # saving keeps the places that one pass gave
    assert [axes.get_title() for axes in panels][12] == "head 12, slope 0.007812"  # one line, as predicted


def test_panels_each_in_its_own_scale_are_laid_out_once(monkeypatch, tmp_path):
    """Issue 32: with a colourbar beside each panel the titles were fitted to the width without it,
    refitted after layout, and laid out again (2 passes of 2.4 s for 12 heads)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    import pecli.render.panels as panels
    from pecli.render.scale import color_scale

    passes = []
    real = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute", lambda self, fig: passes.append(fig) or real(self, fig))
    matrices = list(pecli.encode("alibi", 64, None, heads=12))
    scales = [color_scale(matrix) for matrix in matrices]
    titles = [f"head {h}, slope {2.0 ** (-8 * (h + 1) / 12):.4g}" for h in range(12)]
    panels.save_panels(matrices, str(tmp_path / "own.png"), titles=titles, title="alibi", scale=scales)
    assert len(passes) == 1


# -- low-pass filtering of long tables (issue 26 item 11) --------------------------------------


def _waves(rows: int, periods_px: list[float], pixels: int) -> np.ndarray:
    """One sinusoid column (amplitude 1) per period, given in output pixels of ``pixels`` rows."""
    position = np.arange(rows)[:, None]
    return np.sin(2 * np.pi * position / (np.array(periods_px) * rows / pixels) + 0.3)


def test_lowpass_fades_waves_near_the_pixel_limit_and_keeps_slow_ones():
    from pecli.render.downsample import lowpass_average

    periods = [1.3, 1.5, 2.0, 2.2, 10.0, 40.0, 200.0]
    table = _waves(8192, periods, 456)
    spread = lowpass_average(table, 456, len(periods)).values.std(axis=0)
    # waves of 2.2 pixels or less would alias into arcs: they fade to their mean (the box means of
    # the old drawing kept 0.2-0.5 of them)
    assert np.all(spread[:4] < 0.1), spread
    np.testing.assert_allclose(spread[4:], 1 / np.sqrt(2), rtol=0.03)  # slow waves keep their amplitude
    old = block_average(table, 456, len(periods)).values.std(axis=0)
    assert np.all(old[2:4] > 0.3)  # what the box filter let through


def test_lowpass_agrees_with_a_full_resolution_image_scaled_by_pil_lanczos():
    from PIL import Image

    from pecli.render.downsample import lowpass_average

    periods = [1.3, 1.5, 10.0, 40.0, 200.0]
    table = _waves(8192, periods, 456)
    ours = lowpass_average(table, 456, len(periods)).values
    full = Image.fromarray(table.astype(np.float32), mode="F")
    reference = np.asarray(full.resize((len(periods), 456), Image.Resampling.LANCZOS), dtype=np.float64)
    assert ours.shape == reference.shape
    # what neither can show fades in both; what both show agrees (pecli cuts off a little lower)
    assert np.all(np.abs(ours[5:-5, :2]) < 0.07) and np.all(np.abs(reference[5:-5, :2]) < 0.07)
    np.testing.assert_allclose(ours[5:-5, 2:], reference[5:-5, 2:], atol=0.05)
    np.testing.assert_allclose(ours[:, 3:], reference[:, 3:], atol=0.03)


def test_lowpass_leaves_out_non_finite_values():
    from pecli.render.downsample import lowpass_average

    table = np.ones((4000, 3))
    table[100:200, 0] = np.nan
    table[:, 1] = np.inf
    cells = lowpass_average(table, 100, 3).values
    # 100 missing rows are 2.5 pixels: the two pixels wholly inside are masked, the rest are the mean
    assert np.flatnonzero(np.isnan(cells[:, 0])).tolist() == [3, 4]
    np.testing.assert_allclose(np.delete(cells[:, 0], [3, 4]), 1.0)
    assert np.all(np.isnan(cells[:, 1])) and np.allclose(cells[:, 2], 1.0)


def test_image_of_a_long_table_shows_no_aliased_waves_and_says_it_filtered(tmp_path, monkeypatch):
    from pecli.render import image

    drawn = []
    real = image.draw_cells
    monkeypatch.setattr(
        image, "draw_cells", lambda axes, shrunk, **kw: drawn.append(shrunk) or real(axes, shrunk, **kw)
    )
    position = np.arange(8192)[:, None]
    table = np.hstack([np.sin(2 * np.pi * position / 36), np.sin(2 * np.pi * position / 2048)])  # ~2 and ~114 px
    note = image.save_heatmap(table, str(tmp_path / "waves.png"), title="t")
    (cells,) = drawn
    assert 400 < cells.values.shape[0] < 500
    assert cells.values[:, 0].std() < 0.1  # box means drew it as stripes of ±0.6
    assert abs(cells.values[:, 1].std() - 1 / np.sqrt(2)) < 0.03
    assert note.startswith(f"rows low-pass filtered to {cells.values.shape[0]} pixels (8192 rows;")


@pytest.mark.parametrize("name", ["RdBu", "viridis"])
def test_the_stored_xterm_orders_are_what_ordered_xterm_computes(name):
    """The 256-colour view reads the built-in maps' orders from XTERM_ORDER instead of ~50 ms of search a run."""
    from pecli.render.palette import XTERM_ORDER, colormap_lut, ordered_xterm

    assert XTERM_ORDER[name] == tuple(ordered_xterm(colormap_lut(name)).tolist())
    assert len(XTERM_ORDER[name]) == 256 and all(16 <= n <= 255 for n in XTERM_ORDER[name])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=300),
    st.floats(0.0, 100.0),
    st.sampled_from([np.float16, np.float32, np.float64]),
)
def test_the_partial_sort_percentile_equals_numpys(values, q, dtype):
    from pecli.render.scale import _percentile

    with np.errstate(over="ignore"):
        array = np.array(values, dtype=np.float64).astype(dtype)
    array = array[np.isfinite(array)]  # the scale takes finite values only (float16 overflows past 65504)
    assume(array.size > 0)
    assert _percentile(array, q) == float(np.percentile(array.astype(np.float64), q))


def test_robust_limits_of_a_float32_table_are_its_float64_percentile():
    from pecli.render.scale import color_scale

    table = _trained_like_table().astype(np.float32)
    scale = color_scale(table)
    reach = float(np.percentile(np.abs(table.astype(np.float64)), 99))
    assert scale.robust and (scale.low, scale.high) == (-reach, reach)
    assert scale.clipped == round(float(np.mean(np.abs(table.astype(np.float64)) > reach)), 4)
    mirrored = color_scale(-np.abs(table))
    assert mirrored.robust and mirrored.low == -float(np.percentile(np.abs(table.astype(np.float64)), 99))


@pytest.mark.parametrize("seed", range(6))
def test_rows_alternate_as_the_columns_of_the_transposed_table(seed):
    """row_structure reads rows in the table's own layout (no transposed copy): same verdict as on the transpose."""
    from pecli.render.downsample import _alternates, row_structure

    rng = np.random.default_rng(seed)
    table = rng.normal(size=(600, 40)) + np.where(np.arange(600) % 2, 3.0, -3.0)[:, None] * (seed % 2)
    if seed >= 4:
        table[rng.integers(0, 600, 50), rng.integers(0, 40, 50)] = np.nan
    expected = _alternates(np.ascontiguousarray(table.T))
    assert expected == bool(seed % 2)
    assert (row_structure(table).period == 2) == expected == _alternates(table, axis=0)


@pytest.mark.parametrize("shape", [(1, 48), (48, 1), (1, 1)])
def test_a_single_row_or_column_is_ticked_at_its_index(shape):
    """A 1-D tensor (one row) had its position axis ticked −0.4, −0.2, 0, 0.2, 0.4: matplotlib's integer
    locator wants two whole numbers in view and fell back to fractions."""
    import matplotlib

    matplotlib.use("Agg")
    import pecli

    fig = pecli.figure(np.linspace(1.0, 4.0, shape[0] * shape[1]).reshape(shape))
    axes = fig.get_axes()[0]
    fig.canvas.draw()
    for axis, count in ((axes.yaxis, shape[0]), (axes.xaxis, shape[1])):
        low, high = sorted(axis.get_view_interval())
        shown = [tick for tick in axis.get_majorticklocs() if low <= tick <= high]
        assert all(float(tick).is_integer() for tick in shown), shown
        if count == 1:
            assert shown == [0.0]
