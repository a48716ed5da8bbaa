"""Attack round on compare (issue 30, round four): float32's angle noise follows the amplitude of a table that
shows itself computed from angles, and only of such a table."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_row_chunks, compare_tables


def _pecli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pecli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("layout", ["interleaved", "split"])
def test_an_amplitude_3_sinusoid_computed_in_float32_agrees_with_float64(layout):
    """Angle noise a·eps32·p at amplitude 3 is 3·eps32·p: capped at amplitude 1 it was a false "differ"."""
    computed = pecli.encode("sinusoidal", 8192, 64, amplitude=3.0, arithmetic="float32", layout=layout)
    exact = pecli.encode("sinusoidal", 8192, 64, amplitude=3.0, layout=layout, dtype="float64")
    assert compare_tables(computed, exact).agree
    assert compare_tables(exact, computed).agree
    chunks = compare_row_chunks(lambda: ((computed[i : i + 1000], exact[i : i + 1000]) for i in range(0, 8192, 1000)))
    assert chunks.agree


def test_the_cli_finds_amplitude_3_tables_the_same(tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    common = ["sinusoidal", "--d", "64", "--len", "8192", "--amplitude", "3"]
    assert _pecli("generate", *common, "--arithmetic", "float32", "-o", str(a)).returncode == 0
    assert _pecli("generate", *common, "--dtype", "float64", "-o", str(b)).returncode == 0
    run = _pecli("compare", str(a), str(b), "-q")
    assert run.returncode == 0, run.stderr


def _shifted(table: np.ndarray, rows: slice, by: float) -> np.ndarray:
    moved = table.astype(np.float64)
    moved[rows] += by
    return moved.astype(table.dtype)


def test_a_learned_table_of_amplitude_3_is_not_loosened():
    """Random values up to 3 pair on no circle: allowed the unit sinusoid's noise at most (eps32·p)."""
    table = (np.random.default_rng(1).uniform(-3, 3, (8192, 64))).astype(np.float32)
    shift = 2.5 * 2.0**-23 * 8000  # beyond eps32·p, within 3·eps32·p
    assert not compare_tables(table, _shifted(table, slice(8000, None), shift)).agree


def test_a_bias_table_of_large_values_is_not_loosened():
    """A 2-D bias over query and key (values up to 2048), computed, not exact: not angles of amplitude 2048."""
    slope = np.float32(2.0 ** (-8 / 12))
    offsets = np.arange(2048, dtype=np.float32)
    bias = -(slope * np.abs(offsets[None, :] - offsets[:, None])).astype(np.float32) * np.float32(2.7)
    assert not compare_tables(bias, _shifted(bias, slice(2000, None), 1e-3)).agree


def test_a_sinusoid_whose_later_rows_leave_its_circle_loses_its_amplitude():
    """Row 0 of an amplitude-3 sinusoid, then rows of another amplitude: the tables are judged as any table."""
    table = pecli.encode("sinusoidal", 8192, 64, amplitude=3.0, dtype="float64")
    table[4096:] *= 0.5
    shift = 2.0 * 2.0**-23 * 8000
    assert not compare_tables(table, _shifted(table, slice(8000, None), shift)).agree


def test_an_amplitude_3_sinusoid_with_a_shift_beyond_its_noise_still_differs():
    table = pecli.encode("sinusoidal", 8192, 64, amplitude=3.0, dtype="float64")
    shift = 4.0 * 3.0 * 2.0**-23 * 8192
    assert not compare_tables(table, _shifted(table, slice(8000, None), shift)).agree
