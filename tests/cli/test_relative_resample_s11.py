"""Session 11 attack on the relative views (distance of alibi, t5, kerple) and resample: what it found.

* a figure of many heads (``distance alibi --heads 4096 -o x.png``) was an internal error, and 200
  heads ran for minutes: the figure and the terminal now draw the first 16 heads (as ``plot``), and
  compute only those;
* ``--profile`` in the terminal held every head's curve (and their JSON lists): 7 GB for 64 heads
  of 2M positions; the chart now reduces the heads a block of offsets at a time;
* ``--seed`` was silently ignored for ALiBi, T5 and KERPLE;
* ``resample --len N --no-antialias`` blamed ``--antialias``.
"""

from __future__ import annotations

import json
import tracemalloc

import numpy as np

from pecli.schemes.alibi import alibi_slopes
from tests.conftest import assert_clean_error


def _peak_bytes(cli, *args: str):
    """The result of ``pecli ARGS`` in process, and the peak of memory traced while it ran."""
    tracemalloc.start()
    try:
        result = cli(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_figure_of_many_heads_draws_the_first_16(cli, tmp_path, monkeypatch):
    import pecli.render.panels

    drawn = []

    def panels(matrices, path, *, titles, **style):  # the panels handed to the figure, not drawn (fast)
        drawn.append(([np.asarray(matrix) for matrix in matrices], list(titles)))
        return []

    monkeypatch.setattr(pecli.render.panels, "save_panels", panels)
    result = cli("distance", "alibi", "--heads", "4096", "--len", "3", "-o", str(tmp_path / "heads.png"))
    assert result.code == 0, result.stderr
    assert "drawing the first 16 of 4096 heads" in result.stderr
    ((matrices, titles),) = drawn
    assert len(matrices) == len(titles) == 16
    distance = np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
    np.testing.assert_allclose(np.stack(matrices), -alibi_slopes(4096)[:16, None, None] * distance, rtol=1e-15)


def test_the_terminal_computes_only_the_heads_it_draws(cli):
    # every head's curve of 1024 heads × 20 000 offsets is 164 MB; 16 heads' are 3 MB
    result, peak = _peak_bytes(cli, "distance", "alibi", "--heads", "1024", "--len", "10000",
                               "--width", "80", "--height", "30")  # fmt: skip
    assert result.code == 0, result.stderr
    assert "drawing the first 16 of 1024 heads" in result.stderr
    assert peak < 40 << 20, peak


def test_json_still_holds_every_head(cli):
    result = cli("distance", "alibi", "--heads", "20", "--len", "3", "--json")
    assert result.code == 0, result.stderr
    matrices = np.array(json.loads(result.out)["matrix"])
    distance = np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
    np.testing.assert_allclose(matrices, -alibi_slopes(20)[:, None, None] * distance, rtol=1e-15)


def test_a_profile_chart_reduces_the_heads_block_by_block(cli):
    # 64 heads × 400 001 offsets: 205 MB as one array (and more as JSON lists); the chart needs three curves
    result, peak = _peak_bytes(cli, "distance", "alibi", "--heads", "64", "--len", "200001", "--profile",
                               "--width", "60", "--height", "12")  # fmt: skip
    assert result.code == 0, result.stderr
    assert peak < 60 << 20, peak
    # the chart's lowest value: the steepest head (slope 2^(-8/64)) at the last offset, 200 000
    lowest = -float(alibi_slopes(64).max()) * 200000
    labels = [line.split("┤")[0].strip() for line in result.out.splitlines() if "┤" in line]
    assert float(labels[-1]) == float(f"{lowest:.4g}"), labels


def test_a_profile_of_t5_keeps_both_sides(cli, tmp_path):
    # T5's buckets differ for keys before and after the query: the profile is not folded to h ≥ 0
    result = cli("distance", "t5", "--len", "4", "--profile", "--json")
    assert result.code == 0, result.stderr
    listed = json.loads(result.out)
    assert listed["offsets"] == [-3, -2, -1, 0, 1, 2, 3]
    # transformers' _relative_position_bucket (bidirectional, 32 buckets) of key − query = −h
    assert listed["bucket"] == [[19, 18, 17, 0, 1, 2, 3]]


def test_seed_is_refused_where_nothing_is_random(cli, tmp_path):
    for scheme in (["alibi", "--heads", "2"], ["t5"], ["kerple"]):
        assert_clean_error(cli("distance", *scheme, "--len", "4", "--seed", "3"), 2, "--seed", "drop --seed")


def test_resample_names_the_antialias_flag_given(cli, tmp_path):
    table = tmp_path / "bert.npy"
    np.save(table, np.zeros((8, 2), dtype=np.float32))
    output = tmp_path / "out.npy"
    result = cli("resample", str(table), "--len", "10", "--no-antialias", "-o", str(output))
    assert_clean_error(result, 2, "--no-antialias applies to --grid", "drop it")
    assert not output.exists()
