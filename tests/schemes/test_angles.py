"""The fast angle engine against a straightforward float64 computation, every layout."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.dtypes import numpy_dtype, round_to
from pecli.schemes import _angles
from pecli.schemes._angles import fill_sin_cos, geometric_frequencies, integer_phasors, place_sin_cos

#: one unit in the last place at 1.0: the most a correctly rounded value may differ by when the
#: float64 input sits within float64 noise of a rounding boundary
ULP_AT_ONE = {"float64": 1e-12, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def straightforward(positions: np.ndarray, dim: int, *, base, layout, cos_first, freq_shift) -> np.ndarray:
    """sin and cos of p·ω per element in float64, columns placed by hand (no angle addition)."""
    if freq_shift is None:
        freqs = base ** (-2.0 * np.arange((dim + 1) // 2) / dim)
    else:
        freqs = base ** (-np.arange(dim // 2) / (dim // 2 - freq_shift))
    angles = np.outer(positions.astype(np.float64), freqs)
    first, second = (np.cos(angles), np.sin(angles)) if cos_first else (np.sin(angles), np.cos(angles))
    table = np.zeros((len(positions), dim))
    if layout == "interleaved":
        pairs = np.stack([first, second], axis=2).reshape(len(positions), -1)
        width = min(dim, pairs.shape[1])
        table[:, :width] = pairs[:, :width]
    else:
        both = np.concatenate([first, second], axis=1)
        width = min(dim, both.shape[1])
        table[:, :width] = both[:, :width]
    return table


tables = st.fixed_dictionaries(
    {
        "length": st.integers(1, 120),
        "dim": st.integers(1, 40),
        "offset": st.one_of(st.integers(-50, 50), st.integers(-(10**6), 10**6)),
        "base": st.sampled_from([10000.0, 100.0, 1.5]),
        "layout": st.sampled_from(["interleaved", "split"]),
        "cos_first": st.booleans(),
        "freq_shift": st.sampled_from([None, 0.0, 1.0]),
        "dtype": st.sampled_from(["float64", "float32", "float16", "bfloat16"]),
    }
)


@settings(max_examples=150, deadline=None)
@given(spec=tables, block_rows=st.integers(1, 7), threads=st.booleans())
def test_fast_path_equals_the_float64_formula_rounded_once(spec, block_rows, threads):
    if spec["freq_shift"] is not None and spec["dim"] // 2 <= spec["freq_shift"]:
        spec["freq_shift"] = None
    count = len(geometric_frequencies(spec["dim"], spec["base"], spec["freq_shift"]))
    # small blocks and a low thread threshold, so the block seams and the threaded path are exercised
    with (
        mock.patch.object(_angles, "_BLOCK_BYTES", 16 * max(count, 1) * block_rows),
        mock.patch.object(_angles, "_PARALLEL_BYTES", 0 if threads else 1 << 62),
    ):
        length, dim, dtype = spec["length"], spec["dim"], spec["dtype"]
        params = {k: spec[k] for k in ("base", "layout", "cos_first", "freq_shift", "offset")}
        table = pecli.sinusoidal_table(length, dim, dtype=dtype, **params)
    assert table.dtype == numpy_dtype(dtype) and table.shape == (length, dim)
    positions = np.arange(length) + spec["offset"]
    reference = straightforward(positions, dim, **{k: params[k] for k in params if k != "offset"})
    tolerance = ULP_AT_ONE[dtype] + 1e-15 * (1 + np.abs(positions).max())
    assert np.abs(table.astype(np.float64) - round_to(reference, dtype).astype(np.float64)).max() <= tolerance


@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(2, 3000),
    dim=st.integers(1, 33),
    cut=st.floats(0, 1),
    offset=st.integers(-(10**5), 10**5),
    layout=st.sampled_from(["interleaved", "split"]),
)
def test_row_chunks_equal_the_whole_table_bit_for_bit(length, dim, cut, offset, layout):
    whole = pecli.sinusoidal_table(length, dim, offset=offset, layout=layout, dtype="float64")
    split = int(cut * length)
    parts = [
        pecli.sinusoidal_table(length, dim, offset=offset, layout=layout, dtype="float64", rows=rows)
        for rows in (range(0, split), range(split, length))
    ]
    np.testing.assert_array_equal(np.concatenate(parts), whole)


@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(2, 400),
    count=st.integers(1, 9),
    block_rows=st.integers(1, 5),
    cut=st.floats(0, 1),
    offset=st.integers(-(10**5), 10**5),
    dtype=st.sampled_from(["float32", "float64", "float16"]),
)
def test_chunks_across_anchors_equal_the_whole_table_bit_for_bit(length, count, block_rows, cut, offset, dtype):
    # blocks of a few rows: many anchors and chained block starts, whole blocks stored straight
    # into the table and partial ones through the temporary
    freqs = geometric_frequencies(2 * count, 1e4, None)
    with mock.patch.object(_angles, "_BLOCK_BYTES", 16 * count * block_rows):
        whole = fill_sin_cos(np.empty((length, 2 * count), dtype), offset, freqs, layout="interleaved", cos_first=False)
        split = int(cut * length)
        head = fill_sin_cos(np.empty((split, 2 * count), dtype), offset, freqs, layout="interleaved", cos_first=False)
        tail = fill_sin_cos(
            np.empty((length - split, 2 * count), dtype), offset + split, freqs, layout="interleaved", cos_first=False
        )
    np.testing.assert_array_equal(np.concatenate([head, tail]), whole)
    angles = np.outer(np.arange(offset, offset + length, dtype=np.float64), freqs)
    # the float64 formula itself rounds p·ω: about 1e-16 · |p| of absolute noise
    half_ulp = {"float64": 1e-15, "float32": 2.0**-24, "float16": 2.0**-11}[dtype]
    tolerance = half_ulp + 1e-15 * (1 + abs(offset) + length)
    assert np.abs(whole[:, 0::2] - np.sin(angles)).max() <= tolerance


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(1, 300),
    count=st.integers(1, 40),
    block_rows=st.integers(1, 9),
    offset=st.integers(-(10**5), 10**5),
    threads=st.booleans(),
)
def test_float16_is_the_float64_table_rounded_once(length, count, block_rows, offset, threads):
    # float16 rows are cast from the same complex128 products the float64 table stores: one rounding
    freqs = geometric_frequencies(2 * count, 1e4, None)
    with (
        mock.patch.object(_angles, "_BLOCK_BYTES", 16 * count * block_rows),
        mock.patch.object(_angles, "_PARALLEL_BYTES", 0 if threads else 1 << 62),
    ):
        wide = fill_sin_cos(np.empty((length, 2 * count)), offset, freqs, layout="interleaved", cos_first=False)
        narrow = fill_sin_cos(
            np.empty((length, 2 * count), np.float16), offset, freqs, layout="interleaved", cos_first=False
        )
    np.testing.assert_array_equal(narrow.view(np.uint16), wide.astype(np.float16).view(np.uint16))


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(1, 300),
    count=st.integers(1, 40),
    extra=st.integers(-1, 2),
    layout=st.sampled_from(["interleaved", "split"]),
    dtype=st.sampled_from(["float16", "bfloat16"]),
    offset=st.integers(-(10**5), 10**5),
)
def test_half_tables_are_the_float64_table_rounded_once_in_both_layouts(length, count, extra, layout, dtype, offset):
    # 2-byte tables round the contiguous block and place its bit patterns: the same values, placed alike
    freqs = geometric_frequencies(2 * count, 1e4, None)
    dim = max(1, 2 * count + extra)
    wide = fill_sin_cos(np.empty((length, dim)), offset, freqs, layout=layout, cos_first=True)
    narrow = fill_sin_cos(np.empty((length, dim), numpy_dtype(dtype)), offset, freqs, layout=layout, cos_first=True)
    np.testing.assert_array_equal(narrow.view(np.uint16), round_to(wide, dtype).view(np.uint16))


def test_large_table_is_threaded_and_within_1e6_of_float64():
    positions = np.arange(65536 - 64, 65536)
    freqs = geometric_frequencies(64, 1e4, None)
    with mock.patch.object(_angles, "_PARALLEL_BYTES", 0):
        table = fill_sin_cos(np.empty((65536, 64), np.float32), 0, freqs, layout="interleaved", cos_first=False)
    reference = straightforward(positions, 64, base=1e4, layout="interleaved", cos_first=False, freq_shift=None)
    assert np.abs(table[-64:] - reference).max() < 1e-6


def test_thread_errors_reach_the_caller():
    def fail(spans):
        for span in spans:
            if span.start:
                raise ValueError("in a worker")

    try:
        _angles._run_in_threads(fail, [range(0, 1), range(1, 2)], 2)
    except ValueError as error:
        assert str(error) == "in a worker"
    else:
        raise AssertionError("the worker's error was lost")


def test_threads_share_the_spans_each_taken_once():
    taken = []

    def record(spans):
        for span in spans:
            taken.append(span)

    spans = [range(lo, lo + 3) for lo in range(0, 60, 3)]
    _angles._run_in_threads(record, spans, 3)
    assert sorted(taken, key=lambda span: span.start) == spans


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 400), offset=st.integers(-(10**5), 10**5), block_rows=st.integers(1, 4))
def test_threaded_spans_equal_one_thread_bit_for_bit(length, offset, block_rows):
    # many spans of a few blocks, taken by threads in any order, give the one-thread table
    freqs = geometric_frequencies(6, 1e4, None)
    with mock.patch.object(_angles, "_BLOCK_BYTES", 16 * 3 * block_rows), mock.patch.object(_angles, "_SPAN_BLOCKS", 2):
        one = fill_sin_cos(np.empty((length, 6), np.float32), offset, freqs, layout="interleaved", cos_first=False)
        with mock.patch.object(_angles, "_PARALLEL_BYTES", 0):
            many = fill_sin_cos(np.empty((length, 6), np.float32), offset, freqs, layout="interleaved", cos_first=False)
    np.testing.assert_array_equal(many, one)


def test_compatible_phasors_and_placement():
    freqs = geometric_frequencies(7, 10000.0, None)
    phasors = integer_phasors(-3, 40, freqs)
    np.testing.assert_allclose(phasors, np.exp(1j * np.outer(np.arange(-3, 40), freqs)), atol=1e-13)
    out = np.empty((43, 7))
    place_sin_cos(out, phasors, layout="interleaved", cos_first=False)
    expected = straightforward(
        np.arange(-3, 40), 7, base=10000.0, layout="interleaved", cos_first=False, freq_shift=None
    )
    np.testing.assert_allclose(out, expected, atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(2, 700),
    count=st.integers(1, 40),
    block_rows=st.integers(2, 10).map(lambda k: 8 * k),
    cut=st.floats(0, 1),
    offset=st.integers(-(10**5), 10**5),
    dtype=st.sampled_from(["float32", "float64"]),
    threads=st.booleans(),
)
def test_products_over_several_table_rows_keep_chunks_and_strided_tables_bit_for_bit(
    length, count, block_rows, cut, offset, dtype, threads
):
    # each product row spans several table rows (the block start repeated); a table whose rows are
    # not contiguous goes through the temporary, and both give the contiguous table bit for bit
    freqs = geometric_frequencies(2 * count, 1e4, None)
    with (
        mock.patch.object(_angles, "_BLOCK_BYTES", 16 * count * block_rows),
        mock.patch.object(_angles, "_MIN_REPEATED_PHASORS", 1),
        mock.patch.object(_angles, "_INNER_PHASORS", 5 * count),
        mock.patch.object(_angles, "_PARALLEL_BYTES", 0 if threads else 1 << 62),
    ):
        assert _angles._rows_per_product(block_rows, count) > 1
        whole = fill_sin_cos(np.empty((length, 2 * count), dtype), offset, freqs, layout="interleaved", cos_first=False)
        split = int(cut * length)
        head = fill_sin_cos(np.empty((split, 2 * count), dtype), offset, freqs, layout="interleaved", cos_first=False)
        tail = fill_sin_cos(
            np.empty((length - split, 2 * count), dtype), offset + split, freqs, layout="interleaved", cos_first=False
        )
        wider = np.full((length, 2 * count + 3), 7.0, dtype)
        fill_sin_cos(wider[:, : 2 * count], offset, freqs, layout="interleaved", cos_first=False)
    np.testing.assert_array_equal(np.concatenate([head, tail]), whole)
    np.testing.assert_array_equal(wider[:, : 2 * count], whole)
    assert (wider[:, 2 * count :] == 7.0).all()
    angles = np.outer(np.arange(offset, offset + length, dtype=np.float64), freqs)
    half_ulp = {"float64": 1e-15, "float32": 2.0**-24}[dtype]
    tolerance = half_ulp + 1e-15 * (1 + abs(offset) + length)
    assert np.abs(whole[:, 0::2] - np.sin(angles)).max() <= tolerance
    assert np.abs(whole[:, 1::2] - np.cos(angles)).max() <= tolerance
