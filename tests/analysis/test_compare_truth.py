"""compare never calls different tables the same: the default tolerance is the tables' own rounding at
each entry's magnitude plus float32's angle noise, never a guess that swallows a real difference (issue 30)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pecli
from pecli.analysis.compare import compare_row_chunks, compare_tables
from pecli.schemes.catalog import SCHEMES

DTYPES = ("float32", "float64", "float16", "bfloat16")
EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
LENGTH = 12


def _table(name: str, dtype: str) -> np.ndarray:
    """A small 2-D table of scheme ``name`` in ``dtype``, whatever shape the scheme takes."""
    attempts = (
        {"dim": 8},
        {"dim": 7},
        {"dim": 8, "grid": (3, 4)},
        {"dim": None},
        {"dim": None, "heads": 2},
        {"dim": None, "grid": (3, 4)},
    )
    for options in attempts:
        dim = options.pop("dim")
        try:
            table = pecli.encode(name, LENGTH, dim, dtype=dtype, **options)
        except pecli.errors.PecliError:
            continue
        if isinstance(table, dict):
            table = np.hstack(list(table.values()))
        table = np.asarray(table)
        return table.reshape(-1, table.shape[-1])
    raise AssertionError(f"no small table of {name}")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pecli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("shift", [0.4, 0.01, 1e-5])
def test_integers_against_shifted_integers_differ(tmp_path, shift):
    """The issue's example: count + 0.4 was 'same within float32 arithmetic (tolerance 8)', exit 0."""
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    assert _run("generate", "count", "--d", "4", "--len", "256", "-o", str(a)).returncode == 0
    np.save(b, np.load(a) + np.float32(shift))
    result = _run("compare", str(a), str(b))
    assert result.returncode == 1, result.stdout
    assert "different beyond float32 arithmetic" in result.stdout
    assert _run("compare", str(a), str(a)).returncode == 0


def test_integer_tables_have_no_noise():
    ints = pecli.encode("count", 256, 4, dtype="float64")
    result = compare_tables(ints, ints)
    assert result.agree and result.atol == 0.0
    assert "hold exact values" in result.tolerance_text()
    assert not compare_tables(ints, ints + 1e-9).agree


def test_nan_in_one_table_is_counted_and_the_figures_agree(tmp_path):
    a = pecli.encode("sinusoidal", 16, 8, dtype="float64")
    b = a.copy()
    b[5, 2], b[7, 1] = np.nan, b[7, 1] + 0.25
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    text = _run("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert text.returncode == 1
    assert "NaN in one table only at 1 entry (first at position 5, dimension 2" in text.stdout
    assert "max |A − B|        0.25 (position 7, dimension 1)" in text.stdout
    document = json.loads(_run("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--json").stdout)
    assert document["max_abs"] == pytest.approx(0.25)
    assert document["max_rel"] == pytest.approx(0.25 / abs(b[7, 1]))
    assert document["nan_in_one"] == {"count": 1, "first": {"position": 5, "dimension": 2}}
    assert document["agree"] is False


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_a_difference_made_only_of_nan_is_said_so_not_beyond_a_tolerance(dtype):
    """A NaN in one table, every number equal: the verdict said "different beyond float32 arithmetic"."""
    from pecli.analysis.compare_report import CompareReport, Side

    a = pecli.encode("sinusoidal", 16, 8, dtype=dtype)
    only_nan, shifted, all_nan = a.copy(), a.copy(), np.full_like(a, np.nan)
    only_nan[3, 2] = shifted[3, 2] = np.nan
    shifted[9, 1] += 0.25

    def verdict(b: np.ndarray) -> tuple[bool, str]:
        result = compare_tables(a, b)
        side = Side("t", a.shape, dtype)
        lines = CompareReport(side, side, result).text_lines()
        return result.agree, next(line for line in lines if line.startswith(("same", "different")))

    agree, line = verdict(only_nan)
    assert not agree and line.startswith("different: NaN in one table only; the other entries agree within")
    for b in (shifted, all_nan):  # a number differs, or no number to agree: the plain verdict
        agree, line = verdict(b)
        assert not agree and line.startswith("different beyond"), line


def test_infinity_in_one_table_is_infinite_in_both_figures():
    a = np.ones((3, 2))
    b = a.copy()
    b[1, 1] = np.inf
    result = compare_tables(a, b)
    assert not result.agree and result.max_abs == np.inf and result.max_rel == np.inf


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(SCHEMES))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(factor=st.floats(1.01, 1e3), sign=st.sampled_from([-1.0, 1.0]), step=st.integers(1, LENGTH))
def test_a_shift_beyond_the_noise_bound_is_a_difference(name, dtype, factor, sign, step):
    table = _table(name, dtype)
    wide = table.astype(np.float64)
    # the noise bound: 4 roundings of the dtype at the table's magnitude plus float32's angle noise
    magnitude = float(np.abs(wide[np.isfinite(wide)]).max(initial=0.0))
    bound = 16 * EPSILON[dtype] * magnitude + 2 * 2.0**-23 * len(table) + 1e-6
    shifted = (wide + sign * factor * bound).astype(table.dtype)
    assert compare_tables(table, table).agree
    assert not compare_tables(table, shifted).agree
    assert not compare_tables(shifted, table).agree
    # the streamed path (row chunks, as compare reads large files) applies the same rule
    chunks = compare_row_chunks(
        lambda: ((table[i : i + step], shifted[i : i + step]) for i in range(0, len(table), step))
    )
    assert not chunks.agree


def test_exact_values_on_a_dyadic_grid_are_not_taken_for_bfloat16_rounding():
    """ALiBi with power-of-two slopes holds values bfloat16 holds exactly: its float32 table was taken for a
    bfloat16 one and a +1.5 difference passed as "same within float32 arithmetic (tolerance 4)"."""
    a = pecli.encode("alibi", 256, None, heads=8)
    b = a.copy()
    b[3, 200, 10] += 1.5
    shifted = compare_tables(a, b)
    assert not shifted.agree and shifted.atol == 0.0
    assert compare_tables(a, a.copy()).agree
    assert compare_tables(a, a + np.float32(2.0**-20)).agree is False


def test_a_bfloat16_rounded_table_saved_as_float32_still_gets_bfloat16_slack():
    """The grid rule must not turn real rounding into exactness: 12 heads' slopes are not powers of two."""
    exact = pecli.encode("alibi", 300, None, heads=12, dtype="float64")
    rounded = pecli.encode("alibi", 300, None, heads=12, dtype="bfloat16").astype(np.float32)  # widened, as saved
    result = compare_tables(exact.astype(np.float32), rounded)
    assert result.agree and result.atol > 1.0  # bfloat16's slack at |bias| ~ 200
    assert compare_tables(exact.astype(np.float32), rounded + np.float32(16.0)).agree is False
