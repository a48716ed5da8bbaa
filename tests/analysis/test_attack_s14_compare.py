"""Attack round on compare (issue 30, round three): the default tolerance follows the magnitude of what is
computed, so tables of small values that differ are never called the same."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.analysis.compare import compare_row_chunks, compare_tables
from pecli.schemes.catalog import SCHEMES

from .test_compare_truth import _table

EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23}


def test_small_tables_whose_last_rows_are_unrelated_differ(tmp_path):
    """Float32's angle noise, eps32·p, is a part of the sinusoid's amplitude: 1.2e-4 at row 1023 swallowed whole
    rows of values 1e-6 (cosine −0.3, exit 0)."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((1024, 64)) * 1e-6).astype(np.float32)
    b = a.copy()
    b[1000:] = (rng.standard_normal((24, 64)) * 1e-6).astype(np.float32)
    result = compare_tables(a, b)
    assert not result.agree and result.cosine_min < 0.5
    assert not compare_row_chunks(lambda: ((a[i : i + 100], b[i : i + 100]) for i in range(0, 1024, 100))).agree
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    run = subprocess.run(
        [sys.executable, "-m", "pecli", "compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr


@pytest.mark.parametrize("dtype", list(EPSILON))
@pytest.mark.parametrize("name", list(SCHEMES))
@settings(max_examples=8, deadline=None)
@given(scale=st.floats(1e-7, 1e-2), factor=st.floats(1.5, 1e3))
def test_a_scaled_table_with_its_last_row_moved_beyond_its_noise_differs(name, dtype, scale, factor):
    table = _table(name, "float64") * scale
    if not np.abs(table).max(initial=0.0) > 0:
        return
    table = table.astype(dtype)
    wide = table.astype(np.float64)
    magnitude = float(np.abs(wide).max())
    # the noise bound at the table's own magnitude: roundings and float32's angle noise, both of its amplitude
    # (a count table times 2^-7 fits bfloat16 but needs few of its bits: no evidence of bfloat16 rounding)
    bound = (16 * EPSILON[dtype] + 2 * 2.0**-23 * len(table)) * magnitude + 1e-300
    moved = wide.copy()
    moved[-1] += factor * bound
    moved = moved.astype(dtype)
    assert compare_tables(table, table).agree
    assert not compare_tables(table, moved).agree
    assert not compare_tables(moved, table).agree


@pytest.mark.parametrize("amplitude", [1e-3, 1e-6])
def test_a_small_sinusoid_computed_in_float32_still_agrees_with_float64(amplitude):
    """The slack scales down with the amplitude, and no further: float32 arithmetic is still float32 noise."""
    computed = pecli.encode("sinusoidal", 4096, 64, amplitude=amplitude, arithmetic="float32", dtype="float32")
    exact = pecli.encode("sinusoidal", 4096, 64, amplitude=amplitude, dtype="float64")
    assert compare_tables(computed, exact).agree
    assert compare_tables(exact, computed).agree


@pytest.mark.parametrize("step", [2.0**-7, 3 / 128, 2.0**-20])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_that_fit_a_coarse_dtype_without_needing_it_are_not_taken_for_its_rounding(step, dtype):
    """count × 2^-7 fits bfloat16 (4 of its 8 bits): it was taken for bfloat16 rounding, and a float32 change
    of 8e-7 in its last row (its tolerance 0.0027) was "same within bfloat16 rounding", exit 0."""
    table = (np.arange(12.0)[:, None] * np.ones((1, 8)) * step).astype(dtype)
    moved = table.astype(np.float64)
    moved[-1] += 1e-5 * step * 128
    moved = moved.astype(dtype)
    assert not compare_tables(table, moved).agree
    assert not compare_tables(moved, table).agree


def test_a_real_bfloat16_rounding_keeps_its_tolerance():
    """The other side of the rule: a bfloat16 table (its values need bfloat16's last bit) against its float64
    formula agrees, whole and in chunks of one row."""
    exact = np.sin(np.arange(256.0)[:, None] * np.geomspace(1, 1e-4, 16)[None])
    rounded = (exact.astype(np.float32).view(np.uint32) + 0x8000 & 0xFFFF0000).view(np.float32)
    assert compare_tables(rounded, exact).agree
    assert compare_row_chunks(lambda: ((rounded[i : i + 1], exact[i : i + 1]) for i in range(256))).agree
