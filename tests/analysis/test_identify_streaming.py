"""identify's verification over every row streams through the scheme's own engine (issue 32).

A 65536 × 1024 float32 table took 3.7 s and 198k page faults: its full pass computed each
1024-row chunk as direct sin/cos rows (1024 rows at d = 1024 is exactly the direct-row limit),
each chunk in fresh arrays, and a table-sized NaN mask was made before the search.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from pecli.analysis.identify import search, verify
from pecli.dtypes import round_to
from pecli.schemes.sinusoidal import sinusoidal_table


@pytest.fixture
def direct_rows(monkeypatch):
    """The row counts of every direct sinusoidal computation identify makes."""
    counts: list[int] = []
    original = verify.sinusoidal_rows

    def counted(params, dim, positions, columns=None):
        counts.append(len(positions))
        return original(params, dim, positions, columns)

    monkeypatch.setattr(verify, "sinusoidal_rows", counted)
    return counts


def test_the_full_pass_of_a_1024_wide_table_is_not_computed_as_direct_rows(direct_rows):
    """Only the screening rows and the 512-row sample are direct; the chunks of the full pass are not."""
    table = sinusoidal_table(2048, 1024)
    result = search.identify_table(table)
    assert (result.level, result.best.scheme, result.best.params["base"]) == ("exact", "sinusoidal", 10000.0)
    assert result.best.max_error < 6e-8
    assert direct_rows and max(direct_rows) == verify._SAMPLE_RUNS * verify._RUN_ROWS  # 512, not 1024


def _identified_with_peak(table: np.ndarray):
    """identify's result for ``table`` and the peak of the memory it allocated (tracemalloc)."""
    tracemalloc.start()
    try:
        return search.identify_table(table), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_identify_makes_no_table_sized_temporary():
    """Traced allocations stay under 3/4 of a 32 MiB float32 table (a bool NaN mask and fresh chunks: 0.83)."""
    table = sinusoidal_table(8192, 1024)
    result, peak = _identified_with_peak(table)
    assert result.level == "exact"
    assert peak < 0.75 * table.nbytes


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_table_holding_nan_or_infinity_is_still_refused(bad):
    table = sinusoidal_table(64, 16)
    table[40, 3] = bad
    with pytest.raises(Exception, match="NaN or infinite"):
        search.identify_table(table)


def test_a_table_matching_nothing_is_described_without_a_float64_copy():
    """Every 7th column ×1.3: no match, and its mean and standard deviation are read in float64 chunks
    (a float64 copy of the whole table and numpy's std temporary peaked at 3× the table; a copy divided by
    the amplitude read off its first row added another table's size)."""
    table = sinusoidal_table(8192, 1024)
    table[:, ::7] *= np.float32(1.3)
    result, peak = _identified_with_peak(table)
    assert result.level == "none"
    wide = table.astype(np.float64)
    assert result.value_mean == pytest.approx(wide.mean(), rel=1e-12)
    assert result.value_std == pytest.approx(wide.std(), rel=1e-12)
    assert peak < 0.75 * table.nbytes


@pytest.mark.parametrize("shape", [(3,), (5, 7), (2, 3, 4), (3000, 700)])
def test_the_streamed_value_statistics_are_numpys(shape):
    values = np.random.default_rng(1).normal(0.5, 2.0, shape)
    mean, std = search._value_statistics(values)
    assert mean == pytest.approx(values.mean(), rel=1e-13)
    assert std == pytest.approx(values.std(), rel=1e-13)


def _float32_arithmetic(length: int, dim: int) -> np.ndarray:
    """A float32 library's sinusoidal table: angles, sin and cos in float32 (within the noise, not bit for bit)."""
    positions = np.arange(length, dtype=np.float32)[:, None]
    freqs = np.exp(np.arange(0, dim, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / dim))
    angles = positions * freqs
    table = np.empty((length, dim), np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def _perturbed(table: np.ndarray, by: float) -> np.ndarray:
    table = table.copy()
    table[-3, 5] += by
    return table


@pytest.mark.parametrize(
    "make",
    [
        lambda: sinusoidal_table(4096, 64, dtype="float32"),  # written bit for bit: every chunk within the floor
        lambda: sinusoidal_table(4096, 64, dtype="float64"),  # float64: a floor of eps64, most chunks past it
        lambda: _float32_arithmetic(4096, 64),  # within the noise, not bit for bit
        lambda: np.nextafter(sinusoidal_table(4096, 64, dtype="float32"), np.float32(2)),  # one unit up everywhere
        lambda: _perturbed(sinusoidal_table(4096, 64, dtype="float32"), 3e-7),  # past the floor, within the noise
        lambda: _perturbed(sinusoidal_table(4096, 64, dtype="float32"), 1e-2),  # past the noise in the last chunk
    ],
)
def test_the_streamed_full_check_decides_as_every_entry_against_its_own_noise(monkeypatch, make):
    """The full pass skips the per-entry noise of a chunk within the least noise any entry has: its error,
    its verdict (within the noise or not) and its bit-for-bit finding are those of the entry-by-entry check."""
    monkeypatch.setattr(verify, "_CHUNK_BYTES", 8 * 64 * 512)  # 8 chunks of 512 rows
    table = make()
    dtype = table.dtype.name
    scale = float(np.abs(table).max())
    candidate = search.identify_table(sinusoidal_table(4096, 64, dtype=dtype)).best
    precision = search.value_precision(table)
    every = [range(0, len(table))]
    error, excess, written = verify._full_excess(table, candidate, precision, scale, lambda text: None, dtype)
    whole_error, whole_excess = verify._errors(table, candidate, every, precision, scale, direct=False)
    expected = verify._rows(candidate.scheme, candidate.params, table.shape, every, direct=False)
    assert (excess <= 1.0) == (whole_excess <= 1.0)
    if whole_excess <= 1.0:  # a pass that stops at the first chunk past the noise has seen fewer rows
        assert error == whole_error
    assert written == (whole_excess <= 1.0 and np.array_equal(table, round_to(expected, dtype)))
