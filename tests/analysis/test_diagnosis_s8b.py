"""compare's truth on tables a seeded diagnosis attack (session 8, second round) found misread: ALiBi biases
from float64 slopes computed another way, and sinusoids with their sin columns negated. Each engine table is
computed here with numpy, independently of pecli's own code."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_tables


def _press_slopes(heads: int) -> list[float]:
    """The ALiBi paper's get_slopes (ofirpress/attention_with_linear_biases; BLOOM's in float64): the powers of
    a rounded base 2^(−8/n), start · start^i."""

    def powers_of_two(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        return powers_of_two(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return powers_of_two(closest) + _press_slopes(2 * closest)[0::2][: heads - closest]


def _alibi(slopes: np.ndarray, length: int) -> np.ndarray:
    positions = np.arange(length)
    return -np.abs(positions[None, :, None] - positions[None, None, :]) * np.asarray(slopes)[:, None, None]


@pytest.mark.parametrize("heads", [16, 32])
def test_alibi_slopes_computed_as_powers_of_a_rounded_base_agree(heads: int) -> None:
    # 16 heads: the last slope start·start^15 is 2^-8 off by 5 units of float64's last place, and compare said
    # "different beyond float32 arithmetic" (exit 1) for |A − B| = 7e-15
    reference = pecli.encode("alibi", 64, None, heads=heads, part="bias", dtype="float64")
    table = _alibi(np.array(_press_slopes(heads)), 64)
    assert 0 < np.abs(reference - table).max() < 1e-13
    assert compare_tables(reference, table).agree
    # a slope off by 1e-12 (relative) is beyond any float64 computation of it: still different
    slopes = np.array(_press_slopes(heads))
    slopes[heads // 2] *= 1.0 + 1e-12
    assert not compare_tables(reference, _alibi(slopes, 64)).agree


@pytest.mark.parametrize("heads", [4, 8])
def test_power_of_two_slopes_computed_inexactly_are_float64_roundings_not_exact_values(heads: int) -> None:
    # pecli's power-of-two slopes make exact values; an engine's exp(log m) slopes are a unit or two off: its
    # table was held to one unit in the last place of exact values ("different", exit 1, at |A − B| = 2e-15)
    reference = pecli.encode("alibi", 96, None, heads=heads, part="bias", dtype="float64")
    table = _alibi(np.exp(np.log(2.0 ** (-8.0 * np.arange(1, heads + 1) / heads))), 96)
    assert 0 < np.abs(reference - table).max() < 1e-13
    assert compare_tables(reference, table).agree
    assert compare_tables(reference.astype(np.float32), table.astype(np.float32)).agree
    # exact values against exact values stay exact; one entry shifted by 2^-30 differs
    assert compare_tables(reference, reference.copy()).atol == 0.0
    shifted = reference.copy()
    shifted[1, 5, 7] += 2.0**-30
    assert not compare_tables(reference, shifted).agree
