"""bfloat16 rounding: float64 -> float32 -> bfloat16 bits with ties redone equals one rounding of float64."""

from fractions import Fraction

import numpy as np

from pecli.dtypes import _bfloat16_bits, _round_to_bfloat16, half_bits, held_values


def _bfloat16_bits_from_float64(values: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns of float64 ``values`` by integer rounding of the float64 bits to 8
    significant bits: pecli's previous implementation, kept here as an independent reference."""
    bits = values.view(np.uint64)
    lsb = (bits >> np.uint64(45)) & np.uint64(1)
    rounded = (bits + np.uint64((1 << 44) - 1) + lsb) & ~np.uint64((1 << 45) - 1)
    rounded = np.where(np.isnan(values), bits, rounded)
    with np.errstate(over="ignore"):  # beyond float32's range is inf in bfloat16 too: the rounding wanted
        as_float32 = rounded.view(np.float64).astype(np.float32)
    return (as_float32.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


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


def test_half_bits_round_every_float16_midpoint_and_its_neighbours_once():
    finite = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = (finite[:-1] + finite[1:]) / 2
    specials = [65520.0, 1e6, np.inf, np.nan]
    values = np.concatenate([finite, mids, np.nextafter(mids, 0), np.nextafter(mids, 1), specials])
    values = np.concatenate([values, -values])
    with np.errstate(over="ignore"):  # numpy's float64 -> float16 cast is correctly rounded: the reference
        reference = values.astype(np.float16).view(np.uint16)
    assert np.array_equal(half_bits(values, "float16"), reference)
    assert half_bits(np.array([1.0 + 2.0**-11]), "float16").tolist() == [0x3C00]  # a tie: to even
    assert half_bits(np.array([1.0 + 2.0**-11 + 2.0**-40]), "float16").tolist() == [0x3C01]


def test_bfloat16_every_midpoint_and_its_float64_neighbours_round_once():
    patterns = np.arange(0, 0x7F80, dtype=np.uint32)
    finite = (patterns << 16).view(np.float32).astype(np.float64)
    mids = (finite[:-1] + finite[1:]) / 2
    values = np.concatenate([finite, mids, np.nextafter(mids, 0), np.nextafter(mids, 1)])
    values = np.concatenate([values, -values])
    normal = np.abs(values) >= 2.0**-126  # below, the previous route rounded twice: checked exactly instead
    assert np.array_equal(half_bits(values[normal], "bfloat16"), _bfloat16_bits_from_float64(values[normal]))
    rng = np.random.default_rng(11)
    sample = np.concatenate([values[~normal], rng.choice(values, 2000)])
    assert [int(b) for b in half_bits(sample, "bfloat16")] == [_exact_bits(v) for v in sample]


def test_integer_route_equals_ml_dtypes_route_on_every_midpoint_subnormals_and_specials():
    """held_values rounds bfloat16 on the integer bits (no ml_dtypes): the same patterns as the compiled route."""
    patterns = np.arange(0, 0x7F80, dtype=np.uint32)
    finite = (patterns << 16).view(np.float32).astype(np.float64)
    mids = (finite[:-1] + finite[1:]) / 2
    rng = np.random.default_rng(5)
    tiny = rng.uniform(-1, 1, 3000) * 2.0 ** rng.integers(-150, -126, 3000)
    values = np.concatenate([finite, mids, np.nextafter(mids, 0), np.nextafter(mids, 1), tiny, _near_ties(rng, 50_000)])
    values = np.concatenate([values, -values, [3.4e38, -3.39e38, 1e300, np.inf, -np.inf]])
    with np.errstate(over="ignore"):
        assert np.array_equal(_bfloat16_bits(values), _round_to_bfloat16(values).view(np.uint16))
    nan = _bfloat16_bits(np.array([np.nan, -np.nan]))
    assert np.isnan((nan.astype(np.uint32) << 16).view(np.float32)).all() and nan[1] >> 15 == 1
    sample = rng.choice(values[np.isfinite(values) & (np.abs(values) < 3.38e38)], 2000)
    assert held_values(sample, "bfloat16").tolist() == [
        float(np.uint32(_exact_bits(v) << 16).view(np.float32)) for v in sample
    ]


def test_held_values_refuses_past_the_range_as_round_to_does():
    import pytest

    from pecli.errors import ParameterError

    for name in ("bfloat16", "float16", "float32"):
        with pytest.raises(ParameterError, match="cannot hold"):
            held_values(np.array([1e39 if name != "float16" else 1e5]), name)
    assert held_values(np.array([1 / 3]), "float32").dtype == np.float64
