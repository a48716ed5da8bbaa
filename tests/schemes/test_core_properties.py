"""Property tests over every registered scheme (tests/schemes/test_schemes.py covers float16/32/64 shape,
finiteness and determinism, and the sinusoidal bounds): one rounding for every dtype including
bfloat16, rows equal to the whole table, prefix stability where a scheme promises it, each
scheme's own bounds, streaming chunks, and refusal rather than inf when a dtype overflows.

The registry drives the tests, so a scheme added later is covered at once; a scheme that takes
extra required parameters or shapes (rope, alibi, sincos2d…) joins through
:data:`EXAMPLE_PARAMS`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pecli
from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.spec import TableSpec

#: the core's 2-D (length, dim) tables of positions, with their default parameters; the registry says which
#: rows do not depend on the table's length and which bounds the values keep (others are tested in their own modules)
TABLE_SCHEMES = sorted(
    name
    for name, scheme in SCHEMES.items()
    if scheme.kind == "table"
    and scheme.axes == "positions"
    and scheme.is_sequence
    and (scheme.bounds is not None or scheme.length_independent)
)
LENGTH_INDEPENDENT = sorted(name for name, scheme in SCHEMES.items() if scheme.length_independent)
BOUNDS = {name: SCHEMES[name].bounds for name in TABLE_SCHEMES if SCHEMES[name].bounds is not None}


def _valid(scheme: str, dim: int) -> bool:
    """Whether ``scheme`` takes this dimension (Gaussian features need an even d)."""
    try:
        pecli.encode(scheme, 1, dim, dtype="float64")
    except ParameterError:
        return False
    return True


CORE = settings(max_examples=40, deadline=None)

shapes = st.tuples(st.integers(1, 200), st.integers(1, 48))


@CORE
@given(scheme=st.sampled_from(TABLE_SCHEMES), shape=shapes, dtype=st.sampled_from(["float32", "float16", "bfloat16"]))
def test_every_dtype_is_the_float64_table_rounded_once(scheme, shape, dtype):
    assume(_valid(scheme, shape[1]))
    length, dim = shape
    exact = pecli.encode(scheme, length, dim, dtype="float64")
    table = pecli.encode(scheme, length, dim, dtype=dtype)
    assert table.shape == (length, dim)
    expected = round_to(exact, dtype)
    assert table.dtype == expected.dtype
    np.testing.assert_array_equal(table.view(np.uint8), expected.view(np.uint8))
    # rounding to nearest: never further from the float64 value than half a unit in the last place
    error = np.abs(table.astype(np.float64) - exact)
    magnitude = np.abs(expected.astype(np.float32) if dtype == "bfloat16" else expected)
    spacing = np.spacing(magnitude).astype(np.float64)  # the step above |value|, the larger neighbour gap
    if dtype == "bfloat16":
        spacing *= 2**16  # bfloat16 keeps 8 significant bits to float32's 24
    assert (error <= spacing / 2 + 1e-300).all()


@CORE
@given(scheme=st.sampled_from(TABLE_SCHEMES), shape=shapes, data=st.data())
def test_any_rows_equal_the_whole_table(scheme, shape, data):
    assume(_valid(scheme, shape[1]))
    length, dim = shape
    start = data.draw(st.integers(0, length - 1))
    stop = data.draw(st.integers(start, length))
    whole = pecli.encode(scheme, length, dim, dtype="float64")
    np.testing.assert_array_equal(
        pecli.encode(scheme, length, dim, dtype="float64", rows=range(start, stop)), whole[start:stop]
    )


@CORE
@given(scheme=st.sampled_from(sorted(LENGTH_INDEPENDENT)), shape=shapes, extra=st.integers(1, 300))
def test_length_independent_schemes_are_prefix_stable(scheme, shape, extra):
    assume(_valid(scheme, shape[1]))
    length, dim = shape
    np.testing.assert_array_equal(
        pecli.encode(scheme, length + extra, dim, dtype="float64")[:length],
        pecli.encode(scheme, length, dim, dtype="float64"),
    )


@CORE
@given(scheme=st.sampled_from(sorted(BOUNDS)), shape=shapes, dtype=st.sampled_from(["float64", "float32", "bfloat16"]))
def test_each_scheme_stays_within_its_bounds(scheme, shape, dtype):
    assume(_valid(scheme, shape[1]))
    low, high = BOUNDS[scheme]
    table = pecli.encode(scheme, *shape, dtype=dtype).astype(np.float64)
    assert np.isfinite(table).all() and table.min() >= low and table.max() <= high


@CORE
@given(
    shape=st.tuples(st.integers(1, 300), st.integers(2, 64)),
    base=st.floats(1.01, 1e7),
    layout=st.sampled_from(["interleaved", "split"]),
    cos_first=st.booleans(),
    offset=st.integers(-(2**40), 2**40),
    shift=st.one_of(st.none(), st.floats(-4.0, 0.99)),
    dtype=st.sampled_from(["float64", "float32", "float16", "bfloat16"]),
)
def test_sinusoidal_random_valid_parameters(shape, base, layout, cos_first, offset, shift, dtype):
    """Any valid combination: finite, bounded, sin² + cos² = 1 for every frequency, deterministic."""
    length, dim = shape
    params = {"base": base, "layout": layout, "cos_first": cos_first, "offset": offset, "freq_shift": shift}
    table = pecli.encode("sinusoidal", length, dim, dtype="float64", **params)
    assert np.isfinite(table).all() and np.abs(table).max() <= 1.0
    pairs = dim // 2
    if layout == "interleaved":
        first, second = table[:, 0 : 2 * pairs : 2], table[:, 1 : 2 * pairs : 2]
    else:
        half = (dim + 1) // 2 if shift is None else pairs
        first, second = table[:, :pairs], table[:, half : half + pairs]
    np.testing.assert_allclose(first**2 + second**2, 1.0, atol=1e-12)
    rounded = pecli.encode("sinusoidal", length, dim, dtype=dtype, **params)
    np.testing.assert_array_equal(rounded.view(np.uint8), round_to(table, dtype).view(np.uint8))


@CORE
@given(
    scheme=st.sampled_from(TABLE_SCHEMES),
    shape=shapes,
    chunk_bytes=st.integers(1, 5000),
    dtype=st.sampled_from(["float32", "bfloat16"]),
)
def test_streamed_chunks_concatenate_to_the_table(scheme, shape, chunk_bytes, dtype):
    assume(_valid(scheme, shape[1]))
    spec = TableSpec.resolve(scheme, None, {}, length=shape[0], dim=shape[1], dtype=dtype)
    chunks = list(spec.chunks(chunk_bytes))
    assert all(chunk.shape[1] == shape[1] for chunk in chunks)
    np.testing.assert_array_equal(np.concatenate(chunks).view(np.uint8), spec.array().view(np.uint8))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**63), std=st.floats(1e-6, 1e3), shape=shapes)
def test_learned_is_a_pure_function_of_its_seed(seed, std, shape):
    table = pecli.encode("learned", *shape, seed=seed, std=std, dtype="float64")
    np.testing.assert_array_equal(table, np.random.default_rng(seed).standard_normal(shape) * std)


@pytest.mark.parametrize(
    ("scheme", "length", "params", "dtype"),
    [
        ("count", 65_600, {}, "float16"),
        ("learned", 4, {"std": 1e39}, "float32"),
        ("learned", 4, {"std": 1e300}, "float16"),
        ("learned", 4, {"std": 1e308}, "float64"),
    ],
)
def test_values_beyond_the_dtype_are_refused_not_written_as_inf(scheme, length, params, dtype):
    with pytest.raises(ParameterError, match=r"cannot hold|not finite"):
        pecli.encode(scheme, length, 4, dtype=dtype, **params)


def test_count_fits_float16_up_to_its_largest_value():
    table = pecli.encode("count", 65_505, 1, dtype="float16")
    assert float(table[-1, 0]) == 65504.0


@pytest.mark.parametrize(
    ("offset", "ok"), [(2**53 - 4, True), (2**53 - 3, False), (-(2**53), True), (-(2**53) - 1, False)]
)
def test_sinusoidal_positions_stay_where_float64_counts_exactly(offset, ok):
    if ok:
        assert np.isfinite(pecli.encode("sinusoidal", 5, 4, offset=offset)).all()
    else:
        with pytest.raises(ParameterError, match="2\\^53"):
            pecli.encode("sinusoidal", 5, 4, offset=offset)


@pytest.mark.parametrize("shift", [float("nan"), float("inf"), float("-inf")])
def test_sinusoidal_freq_shift_must_be_finite(shift):
    with pytest.raises(ParameterError, match="freq_shift must be a finite number"):
        pecli.encode("sinusoidal", 4, 8, freq_shift=shift)
