"""float16 from float64 rounds once, bit for bit as numpy's own cast (issue 32).

pecli's float16 route (:func:`pecli.dtypes._float16_bits`) is Veltkamp's split to 11 bits and an
integer repack; numpy's float64 -> float16 cast rounds once correctly and is the reference here.
"""

import numpy as np
import pytest

from pecli.dtypes import _HALF_CHUNK, _float16_bits, half_bits, round_to


def _reference(values: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.float16).view(np.uint16)


def _with_neighbours(values: np.ndarray) -> np.ndarray:
    values = np.concatenate([values, -values])
    return np.concatenate([values, np.nextafter(values, np.inf), np.nextafter(values, -np.inf)])


def test_every_float16_midpoint_and_its_float64_neighbours():
    # the halfway cases decide ties-to-even; their neighbours decide the direction just off a tie
    patterns = np.arange(0, 0x7C00, dtype=np.uint16)
    low = patterns[:-1].view(np.float16).astype(np.float64)
    high = patterns[1:].view(np.float16).astype(np.float64)
    values = _with_neighbours(np.concatenate([(low + high) / 2, low, [65504.0, 65520.0, 65536.0]]))
    np.testing.assert_array_equal(_float16_bits(values), _reference(values))


def test_random_values_of_every_exponent_and_the_specials():
    rng = np.random.default_rng(32)
    bits = rng.integers(0, 2**64, size=400_000, dtype=np.uint64)  # every exponent, NaN payloads, ±inf
    values = np.concatenate([
        bits.view(np.float64),
        rng.uniform(-1, 1, 200_000) * 2.0 ** rng.integers(-30, 20, 200_000),  # float16's range and just past it
        [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14, 1e300, -1e-300],
    ])  # fmt: skip
    got, want = _float16_bits(values), _reference(values)
    nan = np.isnan(values)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert (got[nan] & 0x7C00 == 0x7C00).all() and (got[nan] & 0x03FF != 0).all()  # NaN stays NaN


@pytest.mark.parametrize("shape", [(0,), (7,), (_HALF_CHUNK + 3,), (3, _HALF_CHUNK // 2 + 1)])
def test_any_shape_and_strided_input(shape):
    rng = np.random.default_rng(5)
    values = rng.standard_normal(shape) * 100
    np.testing.assert_array_equal(_float16_bits(values), _reference(values))
    if values.ndim == 2:
        strided = values[:, ::2]
        np.testing.assert_array_equal(half_bits(strided, "float16"), _reference(strided))
        np.testing.assert_array_equal(round_to(strided, "float16").view(np.uint16), _reference(strided))
