"""compare's diagnosis judges each row against that row's own tolerance (issue 30, class 1).

compare's default tolerance grows with the position (float32's angle noise, 2^-23 · p, plus the rounding
of the lower-precision table). The diagnosis used to receive one number, the last row's, so a real bug
plus noise at the early rows (far above what those rows allow, under what the last row allows) was
named as the one bug although the residual after that fix is far above the early rows' bound.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_tables
from pecli.analysis.diagnosis import diagnose_difference
from pecli.dtypes import round_to

D, L = 64, 1024
#: compare's default tolerance of float32 tables, row by row: rounding + float32 angle noise
ROW_TOLERANCE = 4 * 2.0**-24 + 2.0**-23 * np.arange(L, dtype=np.float64)


def _f32(table: np.ndarray) -> np.ndarray:
    return np.asarray(table, np.float32).astype(np.float64)


def _shifted() -> tuple[np.ndarray, np.ndarray]:
    """A RoPE cos table, and the same table with positions offset by one (B's row i is A's row i + 1)."""
    whole = pecli.encode("rope", L + 1, D, dtype="float64", part="cos")
    return _f32(whole[:-1]), _f32(whole[1:])


def _early_noise(table: np.ndarray) -> np.ndarray:
    """Noise on the first quarter of the rows: half the LAST row's tolerance, hundreds of times the first rows'."""
    noise = np.zeros_like(table)
    rows = L // 4
    noise[:rows] = np.random.default_rng(0).uniform(-1.0, 1.0, (rows, D)) * 0.5 * ROW_TOLERANCE[-1]
    return _f32(table + noise)


def _save(tmp_path, name, array):
    path = tmp_path / name
    np.save(path, np.asarray(array, dtype=np.float32))
    return str(path)


def test_an_offset_plus_early_row_noise_is_not_named_as_the_offset():
    a, b = _shifted()
    noisy = _early_noise(b)
    shift_fixed = noisy[:-1] - a[1:]  # what is left after the named fix, over the rows both cover
    assert np.abs(shift_fixed[:8]).max() > 50 * ROW_TOLERANCE[7]  # far above the early rows' bound
    assert np.abs(shift_fixed).max() < ROW_TOLERANCE[-1]  # but under the loosest (last row's) one
    result = compare_tables(a, noisy)
    assert not result.agree
    assert result.diagnosis == []  # the old code named 'positions_shifted'
    assert compare_tables(noisy, a).diagnosis == []
    # the library call with the same per-row tolerance agrees; the loosest one alone still names it
    assert diagnose_difference(a, noisy, tolerance=ROW_TOLERANCE) == []
    loose = diagnose_difference(a, noisy, tolerance=float(ROW_TOLERANCE[-1]))
    assert [found.code for found in loose] == ["positions_shifted"]


def test_an_offset_alone_is_still_positions_shifted():
    a, b = _shifted()
    for first, second, shift in ((a, b, 1), (b, a, -1)):
        (found,) = compare_tables(first, second).diagnosis
        assert (found.code, found.figures["shift"]) == ("positions_shifted", shift)
    (found,) = diagnose_difference(a, b, tolerance=ROW_TOLERANCE)
    assert (found.code, found.figures["shift"]) == ("positions_shifted", 1)


def test_an_offset_plus_early_noise_on_the_command_line(cli, tmp_path):
    a, b = _shifted()
    first, second = _save(tmp_path, "a.npy", a), _save(tmp_path, "b.npy", _early_noise(b))
    for one, other in ((first, second), (second, first)):
        result = cli("compare", one, other, "--json")
        report = json.loads(result.out)
        assert result.code == 1 and report["agree"] is False
        assert report["diagnosis"] == []
    clean = cli("compare", first, _save(tmp_path, "clean.npy", b), "--json")
    assert clean.code == 1
    assert [found["code"] for found in json.loads(clean.out)["diagnosis"]] == ["positions_shifted"]


def test_a_tolerance_of_the_wrong_length_is_refused():
    a, b = _shifted()
    with pytest.raises(ValueError):
        diagnose_difference(a, b, tolerance=ROW_TOLERANCE[:10])


def _bfloat16_positions(length: int) -> tuple[np.ndarray, np.ndarray]:
    """A RoPE cos table, and the same with positions computed in bfloat16 (transformers#29285)."""
    right = pecli.encode("rope", length, D, dtype="float64", part="angle")
    inverse = right[1]  # the angle at position 1: the inverse frequencies
    positions = np.asarray(round_to(np.arange(length, dtype=np.float64), "bfloat16"), np.float64)
    return _f32(np.cos(right)), _f32(np.cos(positions[:, None] * inverse[None, :]))


@pytest.mark.parametrize("swap", [False, True])
def test_positions_rounded_is_named_whichever_table_comes_first(swap):
    right, rounded = _bfloat16_positions(600)
    first, second = (rounded, right) if swap else (right, rounded)
    (found,) = compare_tables(first, second).diagnosis
    assert found.code == "positions_rounded"
    assert (found.figures["dtype"], found.figures["first_aliased_position"]) == ("bfloat16", 257)
    assert found.message.startswith("A's positions" if swap else "B's positions")
    assert "position 257 rounds to 256" in found.message
