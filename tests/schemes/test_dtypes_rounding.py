"""bfloat16 rounding: float64 -> float32 -> bfloat16 bits with ties redone equals one rounding of float64."""

from fractions import Fraction

import numpy as np

from pecli.dtypes import _bfloat16_bits_from_float64, _round_to_bfloat16


def _exact_bits(value: float) -> int:
    """bfloat16 bits nearest ``value`` (ties to even), by comparing exact rationals."""
    sign = 0x8000 if np.signbit(value) else 0
    target = Fraction(abs(value))
    guess = int(np.float32(abs(value)).view(np.uint32) >> 16)
    best = min(
        (abs(Fraction(float(np.uint32(m << 16).view(np.float32))) - target), m & 1, m)
        for m in (guess - 1, guess, guess + 1)
        if m >= 0
    )
    return best[2] | sign


def _near_ties(rng: np.random.Generator, n: int) -> np.ndarray:
    ties = (rng.integers(0x0080, 0x7F7F, n, dtype=np.uint32) << 16 | 0x8000).view(np.float32).astype(np.float64)
    steps = rng.integers(-2, 3, n)
    return np.concatenate([ties, ties + np.spacing(ties) * steps, ties * (1 + rng.uniform(-1e-9, 1e-9, n))])


def test_fast_route_equals_float64_rounding_on_ties_near_ties_and_specials():
    rng = np.random.default_rng(7)
    values = np.concatenate(
        [_near_ties(rng, 200_000), rng.standard_normal(200_000), [0.0, -0.0, 1.0, -1.0, 3.4e38, -3.4e38]]
    )
    values = np.concatenate([values, -values])
    fast = _round_to_bfloat16(values).view(np.uint16)
    assert np.array_equal(fast, _bfloat16_bits_from_float64(values))  # the previous implementation
    with np.errstate(over="ignore"):
        special = _round_to_bfloat16(np.array([np.inf, -np.inf, np.nan, 1e300])).astype(np.float64)
    assert np.isposinf(special[0]) and np.isneginf(special[1]) and np.isnan(special[2]) and np.isposinf(special[3])


def test_subnormal_range_is_rounded_once():
    """Below 2**-126 the previous route rounded twice (to 8 bits, then to float32's grid); this one does not."""
    rng = np.random.default_rng(3)
    values = rng.uniform(-1, 1, 3000) * 2.0 ** rng.integers(-140, -126, 3000)
    fast = _round_to_bfloat16(values).view(np.uint16)
    assert [int(b) for b in fast] == [_exact_bits(v) for v in values]
    # a value the double rounding got wrong: just above the halfway point of two subnormals
    value = float(np.uint32(0x00008000).view(np.float32)) * (1 + 2.0**-40)
    assert int(_round_to_bfloat16(np.array([value])).view(np.uint16)[0]) == 1 == _exact_bits(value)
    assert int(_bfloat16_bits_from_float64(np.array([value]))[0]) != _exact_bits(value)
