"""Costs in proportion to the input (issue 30, class 4): peak memory of real processes, bounded by a
stated multiple of the table read or written, and refusals before work when a size is too large.

Each case runs pecli in a subprocess under an address-space limit (so a regression fails here
instead of taking the machine down) and reads the child's peak resident memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import run_measured as measured
from tests.paths import ROOT as ROOT_PATH

ROOT = str(ROOT_PATH)
#: the interpreter with numpy and pecli imported: resident memory no table accounts for
_BASELINE_MB = 150
#: the address space a child may map (numpy's and BLAS's reservations are far above what is resident)
_ADDRESS_LIMIT = 8 << 30

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="peak memory read as Linux reports it")


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_LIMIT, _ADDRESS_LIMIT))


def run_measured(*args: str, cwd: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m pecli args`` in a fresh child under :data:`_ADDRESS_LIMIT`; its result and peak RSS in MiB."""
    return measured(*args, cwd=cwd, address_limit=_ADDRESS_LIMIT)


def test_diagnosis_of_a_wide_permuted_table_is_linear_in_its_width(tmp_path):
    """1 × 1,000,000 against its columns reversed: was a d × d matrix (out of memory, exit 3)."""
    a = np.random.default_rng(0).normal(size=(1, 1_000_000)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a[:, ::-1].copy())
    done, peak = run_measured("compare", "a.npy", "b.npy", cwd=str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "columns are permuted" in done.stdout
    assert "[999999, 999998, 999997" in done.stdout
    table_mb = a.nbytes / 2**20  # 3.8 MiB
    assert peak < _BASELINE_MB + 60 * table_mb, f"peak {peak:.0f} MB for two {table_mb:.1f} MiB tables"


def test_diagnosis_of_two_rows_of_ten_thousand_columns_is_small(tmp_path):
    """2 × 10,000: was 1.6 GB (a d × d float64 matrix and its argsorts)."""
    a = np.random.default_rng(0).normal(size=(2, 10_000)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a[:, ::-1].copy())
    done, peak = run_measured("compare", "a.npy", "b.npy", cwd=str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "[9999, 9998, 9997" in done.stdout
    assert peak < _BASELINE_MB + 100, f"peak {peak:.0f} MB"


def test_compare_with_a_spec_too_large_is_refused_before_work(tmp_path):
    """--d 2**63 was a ValueError (exit 3): refused with the size, exit 2, one line, nothing computed."""
    done, peak = run_measured(
        "compare", "sinusoidal", "sinusoidal", "--d", "9223372036854775808", "--len", "2", cwd=str(tmp_path)
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "512.0 EiB" in lines[0] and "2 × 9223372036854775808" in lines[0]
    assert "Traceback" not in done.stderr
    assert peak < _BASELINE_MB + 50


def test_compare_of_a_large_file_with_a_spec_streams_both_sides(tmp_path):
    """65536 × 1024 float32 (256 MiB) against sinusoidal: was 3.7 GiB (both tables loaded in float64, 4 copies);
    now the file is read and the spec computed block by block of rows, and the diagnosis still names the cause."""
    import pecli

    table = pecli.encode("sinusoidal", 65536, 1024, dtype="float32")
    swapped = table.copy()
    swapped[:, ::2], swapped[:, 1::2] = table[:, 1::2], table[:, ::2]
    np.save(tmp_path / "swapped.npy", swapped)
    table_mb = table.nbytes / 2**20
    del table, swapped
    done, peak = run_measured("compare", "swapped.npy", "sinusoidal", cwd=str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "65536 × 1024 float32" in done.stdout
    assert "each adjacent pair of columns swapped (diagnosed on the first 4096 rows)" in done.stdout
    assert peak < _BASELINE_MB + 1.5 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB table"
    done, peak = run_measured("compare", "sinusoidal", "swapped.npy", "--atol", "2", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert peak < _BASELINE_MB + 1.5 * table_mb, f"peak {peak:.0f} MB"


@pytest.mark.parametrize(
    ("args", "size"),
    [
        (("plot", "alibi", "--heads", "8", "--len", "1000000", "-o", "x.png"), "14.6 TiB"),
        (("distance", "alibi", "--heads", "8", "--len", "1000000", "--json"), "58.2 TiB"),
        # one head, computed when drawn: was "out of memory", exit 3
        (("plot", "alibi", "--heads", "8", "--slice", "3", "--len", "1000000", "-o", "x.png"), "14.6 TiB"),
    ],
)  # fmt: skip
def test_a_relative_table_too_large_is_refused_before_work(tmp_path, args, size):
    """ALiBi at a million positions: out of memory, exit 3 (checking the parameters computed a whole
    len × len head in float64); now refused with the size and the fix, exit 2, one line, nothing computed."""
    done, peak = run_measured(*args, cwd=str(tmp_path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"would take {size}" in lines[0] and "(use a smaller --len)" in lines[0], lines
    assert not os.listdir(tmp_path)
    assert peak < _BASELINE_MB + 50


@pytest.mark.parametrize("head", [(), ("--head", "0")])
def test_a_million_positions_of_alibi_draw_in_the_terminal_from_their_offsets(tmp_path, head):
    """The terminal view draws a bias's block means from its per-offset values (O(heads · len)), where it was
    refused (14.6 TiB, 3.6 TiB for one head): a million positions drawn in a few hundred MB, no file written."""
    args = ("plot", "alibi", "--heads", "8", *head, "--len", "1000000", "--width", "80", "--height", "40")
    done, peak = run_measured(*args, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "1000000 × 1000000 →" in done.stdout + done.stderr
    assert not os.listdir(tmp_path)
    assert peak < _BASELINE_MB + 600, f"peak {peak:.0f} MB"


def test_distance_of_alibi_to_a_npy_file_streams(tmp_path):
    """8 × 2000 × 2000 float32 (122 MiB): was ≈ 3× the output (float64 matrices, then a float32 copy);
    now written head by head, a block of rows at a time, as generate writes the same table."""
    import pecli

    done, peak = run_measured("distance", "alibi", "--heads", "8", "--len", "2000", "-o", "f.npy", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    written = np.load(tmp_path / "f.npy", mmap_mode="r")
    assert written.shape == (8, 2000, 2000) and written.dtype == np.float32
    table = pecli.encode("alibi", 2000, None, heads=8, rows=range(5, 6))
    np.testing.assert_array_equal(written[5], table[0])
    output_mb = written.nbytes / 2**20
    assert peak < _BASELINE_MB + 0.25 * output_mb, f"peak {peak:.0f} MB for a {output_mb:.0f} MiB output"


def test_plot_of_a_learned_t5_bias_computes_only_the_heads_drawn(tmp_path):
    """A 32 × 20,000-head T5 bias table (2.4 MiB) at --len 64: every head was computed (312 MiB
    float32, twice that in float64) and the first 16 drawn; now only those 16 are."""
    weight = np.random.default_rng(0).normal(size=(32, 20_000)).astype(np.float32)
    np.save(tmp_path / "w.npy", weight)
    args = ("plot", "t5", "--part", "bias", "--bias-from", "w.npy", "--len", "64")
    done, peak = run_measured(*args, "-o", "heads.png", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "drawing the first 16 of 20000 slices" in done.stderr
    whole_mb = 20_000 * 64 * 64 * 4 / 2**20  # the float32 table of every head
    assert peak < _BASELINE_MB + 0.2 * whole_mb, f"peak {peak:.0f} MB; all heads take {whole_mb:.0f} MiB"
    # the panels are the first heads' values: the terminal view of the first 16 heads alone is the same
    np.save(tmp_path / "w16.npy", weight[:, :16])
    terminal = ("--width", "80", "--height", "60", "--terminal")
    shown, _ = run_measured(*args, *terminal, cwd=str(tmp_path))
    alone, _ = run_measured(*args[:5], "w16.npy", *args[6:], *terminal, cwd=str(tmp_path))
    assert shown.returncode == alone.returncode == 0, shown.stderr + alone.stderr
    assert shown.stdout.replace("w.npy", "w16.npy") == alone.stdout


def test_compare_of_a_per_head_file_streams_head_by_head(tmp_path):
    """12 × 1024 × 1024 float32 ALiBi (48 MiB) against the spec and against a file: was ≈ 12× the table (both
    loaded, widened to float64, diagnosed whole); now read and computed head by head, a block of rows at a time,
    with each head's slope fitted from its first rows: the diagnosis still names the heads' order."""
    import pecli

    table = pecli.encode("alibi", 1024, None, heads=12, dtype="float32")
    np.save(tmp_path / "alibi.npy", table)
    np.save(tmp_path / "reversed.npy", table[::-1])
    table_mb = table.nbytes / 2**20
    del table
    done, peak = run_measured("compare", "alibi.npy", "alibi", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "12 × 1024 × 1024 float32" in done.stdout
    assert peak < _BASELINE_MB + 1.5 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB table"
    for other in ("alibi", "alibi.npy"):
        done, peak = run_measured("compare", other, "reversed.npy", cwd=str(tmp_path))
        assert done.returncode == 1, done.stderr
        assert "max |A − B|        659.433 (head 3, query 0, key 1023)" in done.stdout
        assert "diagnosis: the heads are in reverse order: B's head h is A's head 11 − h" in done.stdout
        assert "(diagnosed on the first 85 rows of each head)" in done.stdout
        assert peak < _BASELINE_MB + 1.5 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB table"


@pytest.mark.parametrize(
    "sizes",
    [("--d", "1000000000000", "--len", "2"), ("--d", "8", "--len", "1000000000000")],
)
@pytest.mark.parametrize("specs", [("rope", "rope"), ("rope:part=cos", "rope:part=cos,base=500000")])
def test_two_rope_specs_too_large_are_refused_before_work(tmp_path, specs, sizes):
    """Two rope specs compare by their frequencies and score profiles: --d 10**12 was "out of memory", exit 3."""
    done, peak = run_measured("compare", *specs, *sizes, cwd=str(tmp_path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "score profile would take" in lines[0] and "TiB" in lines[0], lines
    assert "use a smaller --len or --d" in lines[0]
    assert peak < _BASELINE_MB + 100, f"peak {peak:.0f} MB"


@pytest.mark.parametrize("view", [("-o", "heads.png"), ("--terminal", "--width", "80", "--height", "40")])
def test_plot_of_alibi_heads_holds_one_head_at_a_time(tmp_path, view):
    """8 × 1500 × 1500 ALiBi (69 MiB float32): every head was computed, copied into one float64 array
    for the colour limits and negated whole (all ≤ 0), ≈ 390 MB; now each head is computed when its
    range is taken and again when it is drawn, one head (17 MiB in float64) in memory at a time."""
    done, peak = run_measured("plot", "alibi", "--heads", "8", "--len", "1500", *view, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    head_mb = 1500 * 1500 * 8 / 2**20
    assert peak < _BASELINE_MB + 1.2 * head_mb, f"peak {peak:.0f} MB; one head in float64 takes {head_mb:.0f} MiB"


def test_heads_drawn_one_at_a_time_look_as_the_whole_table_drawn(tmp_path):
    """The per-head path (colour limits from each head's range and its share of the strided sample,
    each head computed when drawn) gives the limits, pixels and text of the whole table in memory."""
    from PIL import Image

    from pecli.cli.drawing import drawing_style
    from pecli.cli.panels import panel_scales
    from pecli.render.panels import save_panels
    from pecli.render.scale import color_scale
    from pecli.render.terminal import heatmap_stack
    from pecli.sources import LazySlice, LazySlices, resolve

    # 4 × 777²: more values than the percentile sample takes, and heads that start between its strides
    stack = resolve("alibi", scheme_params={"heads": 4}, length=777, first_slices=16).array
    assert isinstance(stack, LazySlices)
    whole = np.asarray(stack)
    lazy = [stack[i] for i in range(4)]
    assert isinstance(lazy[0], LazySlice) and lazy[0].shape == (777, 777)
    joined = np.concatenate([head.astype(np.float64).ravel() for head in whole])
    for robust in (None, True, False):
        style = drawing_style(robust=robust)
        scale, own = panel_scales(lazy, style, per_panel=True)
        assert scale == color_scale(joined, robust=robust)
        assert own == [color_scale(head.astype(np.float64), robust=robust) for head in whole]
    scale, _ = panel_scales(lazy, drawing_style(robust=True), per_panel=False)
    assert scale.robust and scale.low > whole.min()  # the percentile path was taken
    titles = [f"head {i}" for i in range(4)]
    pixels = []
    for name, heads in (("lazy.png", lazy), ("whole.png", list(whole))):
        save_panels(heads, str(tmp_path / name), titles=titles, title="alibi", scale=scale)
        pixels.append(np.asarray(Image.open(tmp_path / name)))
    np.testing.assert_array_equal(pixels[0], pixels[1])
    texts = [
        heatmap_stack(heads, titles, width=80, height=40, color="truecolor", scales=[scale[:3]], x_label="key",
                      y_label="query")[0]
        for heads in (lazy, list(whole))
    ]  # fmt: skip
    assert texts[0] == texts[1] and texts[0].count("▀") > 1000
