"""Issue 30 (compare's tolerance), session 16: float32's angle noise follows the amplitude of a sinusoid whose positions
do not start at 0 (positions 1…L, an offset): its row 0 holds (a·sin ω, a·cos ω), not (0, a), and still pairs on
one circle. Learned tables, bias tables and constant tables keep the unit cap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pecli.analysis.compare import compare_row_chunks, compare_tables
from pecli.analysis.value_precision import pairing_radius

LENGTH, DIM, AMPLITUDE = 8192, 64, 3.0
EPS32 = 2.0**-23


def _sinusoid(first: int, dtype: type, layout: str = "interleaved") -> np.ndarray:
    """AMPLITUDE × Vaswani's table at positions first … first + L − 1, every step in ``dtype`` (float32: an
    engine's arithmetic; float64: the exact table)."""
    positions = np.arange(first, first + LENGTH, dtype=dtype)[:, None]
    frequencies = (1.0 / 10000.0 ** (np.arange(0, DIM, 2) / DIM)).astype(dtype)
    angles = positions * frequencies
    sin, cos = dtype(AMPLITUDE) * np.sin(angles), dtype(AMPLITUDE) * np.cos(angles)
    if layout == "split":
        return np.concatenate([sin, cos], axis=1)
    return np.stack([sin, cos], axis=-1).reshape(LENGTH, DIM)


def _shifted(table: np.ndarray, rows: slice, by: float) -> np.ndarray:
    moved = table.astype(np.float64)
    moved[rows] += by
    return moved.astype(table.dtype)


@pytest.mark.parametrize("layout", ["interleaved", "split"])
@pytest.mark.parametrize("first", [1, 2])
def test_an_amplitude_3_sinusoid_from_position_1_in_float32_agrees_with_float64(first: int, layout: str) -> None:
    computed, exact = _sinusoid(first, np.float32, layout), _sinusoid(first, np.float64, layout)
    off = np.abs(computed - exact)
    positions = np.arange(first, first + LENGTH)[:, None]
    rows = np.arange(LENGTH)[:, None]
    assert np.any(off > EPS32 * rows + 4 * EPS32 * AMPLITUDE)  # beyond a unit sinusoid's noise: the cap's false differ
    assert np.all(off <= 2.0 * AMPLITUDE * EPS32 * positions + 4 * EPS32 * AMPLITUDE)  # within a's angle noise
    assert compare_tables(computed, exact).agree
    assert compare_tables(exact, computed).agree
    chunks = compare_row_chunks(lambda: ((computed[i : i + 1000], exact[i : i + 1000]) for i in range(0, LENGTH, 1000)))
    assert chunks.agree
    assert compare_tables(exact.astype(np.float32), exact).agree  # the float32 copy of the float64 table


def test_row_zero_at_position_1_reads_its_radius() -> None:
    row = _sinusoid(1, np.float64)[0]
    assert abs(row[0]) > 1.0  # 3·sin 1: no pair sits on an axis
    step, radius = pairing_radius(row, 1e-9)
    assert step == 1 and radius == pytest.approx(AMPLITUDE, rel=1e-12)
    split = _sinusoid(1, np.float64, "split")[0]
    assert pairing_radius(split, 1e-9) == (DIM // 2, pytest.approx(AMPLITUDE, rel=1e-12))


def test_the_cli_finds_offset_tables_the_same(cli, tmp_path: Path) -> None:
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    common = ["sinusoidal", "--d", str(DIM), "--len", str(LENGTH), "--amplitude", "3", "--offset", "1"]
    assert cli("generate", *common, "--arithmetic", "float32", "-o", str(a)).code == 0
    assert cli("generate", *common, "--dtype", "float64", "-o", str(b)).code == 0
    assert np.allclose(np.load(b), _sinusoid(1, np.float64), rtol=0, atol=1e-10)
    result = cli("compare", str(a), str(b), "-q")
    assert result.code == 0, result.stderr


def test_an_offset_sinusoid_with_a_shift_beyond_its_noise_still_differs() -> None:
    table = _sinusoid(1, np.float64)
    shift = 4.0 * AMPLITUDE * EPS32 * LENGTH
    assert not compare_tables(table, _shifted(table, slice(8000, None), shift)).agree


def test_an_offset_sinusoid_whose_later_rows_leave_its_circle_loses_its_amplitude() -> None:
    table = _sinusoid(1, np.float64)
    table[4096:] *= 0.5
    assert not compare_tables(table, _shifted(table, slice(8000, None), 2.0 * EPS32 * 8000)).agree


def test_a_constant_table_pairs_on_a_circle_but_is_not_loosened() -> None:
    """(c, c) in every pair lies on the circle of radius c·√2, at one angle: no sinusoid's row, capped at 1."""
    table = np.full((LENGTH, DIM), 2.7, dtype=np.float32)
    assert pairing_radius(table[0].astype(np.float64), 1e-6) == (0, 0.0)
    shift = 2.5 * EPS32 * 8000  # beyond eps32·p, within 2.7·√2·eps32·p
    assert not compare_tables(table, _shifted(table, slice(8000, None), shift)).agree


@pytest.mark.parametrize("kind", ["learned", "bias"])
def test_learned_and_bias_rows_pair_on_no_circle(kind: str) -> None:
    if kind == "learned":
        table = np.random.default_rng(1).uniform(-3, 3, (LENGTH, DIM)).astype(np.float32)
    else:
        offsets = np.arange(2048, dtype=np.float32)
        table = -(np.float32(2.0 ** (-8 / 12)) * np.abs(offsets[None, :] - offsets[:, None])) * np.float32(2.7)
    assert pairing_radius(table[0].astype(np.float64), 1e-6) == (0, 0.0)
    assert pairing_radius(table[1].astype(np.float64), 1e-6) == (0, 0.0)
    shift = 2.5 * EPS32 * 8000 if kind == "learned" else 1e-3
    rows = slice(8000, None) if kind == "learned" else slice(2000, None)
    assert not compare_tables(table, _shifted(table, rows, shift)).agree
