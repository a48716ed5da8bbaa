"""Costs out of proportion to the input (issue 30, class 4), fourth attack: real processes under a 1.5 GiB cap."""

from __future__ import annotations

import numpy as np

from tests.conftest import run_capped as _capped


def test_the_precision_view_of_a_wide_long_rope_draws_under_the_cap():
    # was "out of memory", exit 3: 512-row blocks of d 100000 held the reduced table, the exact one, their
    # difference, and rope_table's angles, cos and sin at once (and the whole sample would take minutes)
    done = _capped("plot", "rope", "--d", "100000", "--len", "100000", "--view", "precision", "--terminal",
                   "--width", "80", "--height", "20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(64 blocks of 5 consecutive rows, log-spaced)" in done.stdout
    assert "max |error| per arithmetic: bfloat16 2, float32 0.0114" in done.stdout


def test_table_error_in_row_blocks_equals_the_whole_difference_bit_for_bit():
    from pecli.analysis import precision
    from pecli.schemes.spec import TableSpec

    spec = TableSpec.resolve("rope", None, {}, length=600, dim=40, dtype="float64")
    rows = range(250, 590)
    whole = precision.table_error(spec, "bfloat16", rows)
    saved = precision._ERROR_BLOCK_BYTES
    precision._ERROR_BLOCK_BYTES = 8 * 40 * 7  # blocks of 7 rows
    try:
        blocked = precision.table_error(spec, "bfloat16", rows)
    finally:
        precision._ERROR_BLOCK_BYTES = saved
    np.testing.assert_array_equal(blocked, whole)
    assert blocked[257 - 250].max() > 0.4  # 257 held as 256


def test_round_to_float64_gives_a_fresh_array_back_without_a_copy():
    from pecli.dtypes import round_to

    table = np.full((2, 3), 1.5)
    assert round_to(table, "float64") is table
    view = round_to(np.broadcast_to(np.arange(3.0), (2, 3)), "float64")  # a read-only broadcast: copied
    assert view.flags.writeable and view.tolist() == [[0.0, 1.0, 2.0]] * 2


def test_the_wavelength_view_of_a_huge_width_holds_one_frequency_array():
    # was 1178 MB at d 1e8: the frequencies computed twice (scaled and not) and their ratio for the bands
    import tracemalloc

    from pecli.analysis import wavelengths

    tracemalloc.start()
    try:
        found = wavelengths.rope_wavelengths(4_000_000, length=4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.inv_freq is found.inv_freq_original
    assert peak < 1.3 * 2_000_000 * 8, peak / (2_000_000 * 8)  # was 3 arrays' worth
    saved = wavelengths._BAND_BLOCK
    wavelengths._BAND_BLOCK = 5  # the bands read off in blocks of 5 pairs: the same bands
    try:
        yarn = wavelengths.rope_wavelengths(128, scaling="yarn", factor=4.0, original_max_position=4096)
        llama = wavelengths.rope_wavelengths(128, base=500000.0, scaling="llama3", factor=8.0,
                                             original_max_position=8192)  # fmt: skip
    finally:
        wavelengths._BAND_BLOCK = saved
    assert [(b.start, b.stop) for b in llama.bands] == [(0, 29), (29, 35), (35, 64)]
    factor = yarn.inv_freq_original / yarn.inv_freq
    kept, scaled = np.isclose(factor, 1.0, rtol=1e-12, atol=0), np.isclose(factor, 4.0, rtol=1e-12, atol=0)
    assert [(b.start, b.stop) for b in yarn.bands][1] == (int(np.argmin(kept)), int(np.argmax(scaled)))


def test_a_narrow_offset_profile_walks_the_band_offset_by_offset_with_the_same_values():
    # was 32-row tiles (3,125 BLAS calls at len 100000, > 60 s for --max-offset 10 --d 1024); now one pass per offset
    import pecli
    from pecli.analysis import distance

    table = pecli.encode("sinusoidal", 3000, 64, dtype="float64")
    table[5] = 0.0  # a zero row: cosine 0 there, as the tiles give
    calls = []
    tile = distance._Positions.tile
    distance._Positions.tile = lambda self, *a: calls.append(a) or tile(self, *a)  # type: ignore[method-assign]
    try:
        narrow = {(m, h): distance.offset_profile(table, m, max_offset=h) for m in distance.METRICS for h in (0, 1, 10)}
    finally:
        distance._Positions.tile = tile  # type: ignore[method-assign]
    assert calls == []
    saved = distance._NARROW_BAND
    distance._NARROW_BAND = 0  # the tiles, as before
    try:
        for (metric, offset), profile in narrow.items():
            tiled = distance.offset_profile(table, metric, max_offset=offset)
            for field in ("mean", "min", "max"):
                np.testing.assert_allclose(getattr(profile, field), getattr(tiled, field), rtol=1e-12, atol=1e-12)
            assert profile.count.tolist() == tiled.count.tolist()
    finally:
        distance._NARROW_BAND = saved
