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


def _sinusoids_at_negated_positions(length: int, dim: int, *, split: bool, shifted: bool, offset: int) -> np.ndarray:
    """sin/cos of −p·ω (an engine that negates the angles): Vaswani's interleaved, or tensor2tensor's split."""
    half = dim // 2
    frequencies = np.exp(-math.log(10000.0) * np.arange(half) / (half - 1.0 if shifted else half))
    angles = -(np.arange(length) + offset)[:, None] * frequencies[None, :]
    if split:
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    table = np.empty((length, dim))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


@pytest.mark.parametrize(
    ("spec", "split", "shifted", "offset", "columns"),
    [
        ("sinusoidal", False, False, 0, "every 2nd column from 0 to 62"),
        ("tensor2tensor", True, True, 0, "columns 0–31"),
        ("fairseq", True, True, 2, "columns 0–31"),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sin_columns_negated_are_named_positions_negated(spec, split, shifted, offset, columns, dtype) -> None:
    # was "no known mistake explains it": an engine computing −p·ω holds A's table with its sin columns negated
    table = _sinusoids_at_negated_positions(300, 64, split=split, shifted=shifted, offset=offset).astype(dtype)
    found = pecli.compare(spec, table).result.diagnosis
    assert [finding.code for finding in found] == ["positions_negated"]
    assert f"the sin columns are negated ({columns}; the cos columns kept)" in found[0].message
    assert "positions −p" in found[0].message
    assert found[0].figures["negated_columns"] == 32 and found[0].figures["first_column"] == 0
    # a cos column negated is no position negation
    table[:, 1 if spec == "sinusoidal" else 40] *= -1.0
    assert "positions_negated" not in [finding.code for finding in pecli.compare(spec, table).result.diagnosis]


def test_rope_sin_table_negated_names_the_positions_before_the_factor() -> None:
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 32, 2) / 32)
    angles = -np.arange(200)[:, None] * inv_freq[None, :]
    found = pecli.compare("rope:part=sin", np.concatenate([np.sin(angles)] * 2, axis=1)).result.diagnosis
    assert [finding.code for finding in found] == ["positions_negated", "constant_factor"]
    assert "every column: a sin table" in found[0].message
    assert found[1].figures["factor"] == pytest.approx(-1.0)


def test_timestep_sin_half_negated_is_named() -> None:
    # diffusers' get_timestep_embedding of −t (flip_sin_to_cos: [cos | sin])
    half = 32
    frequencies = np.exp(-math.log(10000.0) * np.arange(half) / half)
    angles = -np.arange(400.0)[:, None] * frequencies[None, :]
    table = np.concatenate([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    found = pecli.compare("timestep:flip_sin_to_cos=true,freq_shift=0", table).result.diagnosis
    assert [finding.code for finding in found][:1] == ["positions_negated"]
    assert "columns 32–63; the cos columns kept" in found[0].message
