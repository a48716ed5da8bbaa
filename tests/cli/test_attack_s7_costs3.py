"""Costs out of proportion to the input (issue 30, class 4), third attack: real processes under a 1.5 GiB cap."""

from __future__ import annotations

import numpy as np

from tests.conftest import run_capped as _capped


def test_a_huge_sinusoidal_width_is_refused_with_its_size_not_out_of_memory():
    # was "out of memory", exit 3: one row of 5e7 frequencies held 4 complex128 copies (3.2 GB) in fill_sin_cos
    done = _capped("plot", "sinusoidal", "--d", "100000000", "--len", "4", "--terminal", "--width", "80",
                   "--height", "20")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "would take 1.5 GiB, more than the" in done.stderr


def test_the_column_chunked_fill_equals_the_whole_fill_bit_for_bit():
    from pecli.schemes import _angles
    from pecli.schemes._angles import fill_sin_cos, geometric_frequencies

    freqs = geometric_frequencies(301, 10000.0, None)
    for layout in ("interleaved", "split"):
        for dtype in (np.float64, np.float32, np.float16):
            for dim, start, rows in ((301, 5, 40), (310, 60, 200)):
                whole = fill_sin_cos(np.full((rows, dim), 7, dtype), start, freqs, layout=layout, cos_first=False)
                saved = _angles._MAX_COLUMN_PHASORS
                _angles._MAX_COLUMN_PHASORS = 16
                try:
                    chunked = fill_sin_cos(np.full((rows, dim), 7, dtype), start, freqs, layout=layout, cos_first=False)
                finally:
                    _angles._MAX_COLUMN_PHASORS = saved
                np.testing.assert_array_equal(chunked, whole)


def test_the_wavelength_chart_of_a_huge_width_fits_under_the_cap():
    # was "out of memory", exit 3: log10 of two 5e7-element wavelength arrays, and their temporaries, at once
    done = _capped("plot", "rope", "--d", "100000000", "--len", "4", "--view", "wavelength", "--terminal",
                   "--width", "80", "--height", "20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "0                                                  49999999  pair i" in done.stdout
    assert "context 4" in done.stdout


def test_reduced_arithmetic_angles_cos_and_sin_hold_no_more_than_themselves():
    # was 6.5 results' worth at the peak (held() rounded whole arrays through float32 and float64 copies
    # while angles and cos were alive): part of plot rope --view precision's out of memory at d 100000
    import tracemalloc

    from pecli.schemes.arithmetic import angle_sin_cos

    positions, freqs = np.arange(2000, dtype=np.float64), np.geomspace(1.0, 1e-4, 1000)
    unit = positions.size * freqs.size * 8
    for arithmetic in ("float32", "bfloat16"):
        tracemalloc.start()
        try:
            angles, cos, _sin = angle_sin_cos(positions, freqs, arithmetic, scale=1.5, product_scale=0.5)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        # the three results and a few MiB of blocks (was 6.5 results' worth)
        assert peak < 3.5 * unit, (arithmetic, peak / unit)
        expected = np.float32(np.float32(positions[7]) * np.float32(freqs[3])) * np.float32(0.5)
        assert angles[7, 3] == expected
        if arithmetic == "float32":
            assert cos[7, 3] == np.float32(np.float32(np.cos(np.float64(expected))) * np.float32(1.5))
