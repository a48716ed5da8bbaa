"""Attack of compare's precision reasoning (issue 30, class 1: a wrong answer with exit 0).

Each test failed on the code before its fix: values float64 does not hold (64-bit integers beyond 2^53,
longdouble) were widened before subtracting, so their differences were lost or misreported as rounding;
a longdouble table's tolerance was named "float32 arithmetic"; a safetensors header naming a key twice was
refused for "a gap". The commands run in process (the real entry point): their subject is what is printed.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from pecli.analysis.compare import compare_tables
from tests.conftest import assert_clean_error, run_in_process


def _save(tmp_path, name, table):
    path = tmp_path / name
    np.save(path, table)
    return str(path)


@pytest.mark.parametrize(
    ("dtype", "start"),
    [(np.int64, 2**53), (np.int64, -(2**62)), (np.uint64, 2**63), (np.uint64, 2**64 - 64)],
)
def test_64_bit_integers_beyond_float64_differ_by_exactly_one(dtype, start):
    """int64 2^53 … 2^53+31 against itself + 1 said 'max 2 … they differ only by rounding'; uint64 above 2^63
    + 1 said 'same', exit 0: float64 cannot hold the values, and the difference was taken after widening."""
    a = (np.arange(32, dtype=np.uint64).astype(dtype) + dtype(start)).reshape(8, 4)
    result = compare_tables(a, a + dtype(1))
    assert not result.agree
    assert result.max_abs == 1.0 and result.mean_abs == 1.0
    assert not any(found.code == "rounding_only" for found in result.diagnosis)
    same = compare_tables(a, a.copy())
    assert same.agree and same.max_abs == 0.0


def test_int64_beyond_float64_against_float64_differs_by_its_exact_amount():
    """An int64 table 2^53+1 … against float64 2^53 … (what widening makes of it) said they were equal."""
    a = (np.arange(16, dtype=np.int64) * 2 + 2**53 + 1).reshape(4, 4)
    b = (np.arange(16, dtype=np.int64) * 2 + 2**53).astype(np.float64).reshape(4, 4)
    result = compare_tables(a, b, exact=True)
    assert not result.agree and result.max_abs == 1.0


def test_compare_cli_int64_off_by_one_says_one_and_exits_1(tmp_path):
    a = np.arange(2**53, 2**53 + 32, dtype=np.int64).reshape(8, 4)
    result = run_in_process("compare", _save(tmp_path, "a.npy", a), _save(tmp_path, "b.npy", a + 1))
    assert result.code == 1, result.stderr
    assert "max |A − B|        1 (position 0, dimension 0)" in result.out
    assert "rounding" not in result.out


def test_longdouble_tolerance_names_float64_not_float32():
    """`compare q128.npy q128.npy` said 'same within float32 arithmetic': the tables are float128."""
    q = np.arange(32, dtype=np.longdouble).reshape(8, 4) / 3
    text = compare_tables(q, q.copy()).tolerance_text()
    assert not text.startswith("float32 arithmetic")
    assert text.startswith("float64 rounding")
    assert np.dtype(np.longdouble).name in text


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="longdouble is float64 here")
def test_longdouble_differences_below_float64_are_not_lost():
    """Two float128 tables apart by 2^-60 relative compared 'max |A − B| 0', and --exact said 'bit for bit'."""
    q = np.arange(1, 33, dtype=np.longdouble).reshape(8, 4) / 3
    r = q * (1 + np.longdouble(2) ** -60)
    exact = compare_tables(q, r, exact=True)
    assert not exact.agree and exact.max_abs > 0
    assert compare_tables(q, r).agree  # within float64's slack, and says so


def test_safetensors_duplicated_key_is_named(tmp_path):
    """A header naming 'w' twice was refused as 'tensor 'w' … leaves a gap of 8 bytes'."""
    entry = '{"dtype":"F32","shape":[2],"data_offsets":[%d,%d]}'
    header = ('{"w":' + entry % (0, 8) + ',"w":' + entry % (8, 16) + "}").encode()
    json.loads(header)  # valid JSON: only the duplicate is wrong
    path = tmp_path / "dup.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + np.zeros(4, np.float32).tobytes())
    result = run_in_process("info", str(path))
    assert_clean_error(result, 2, "names 'w' twice")
    assert "gap" not in result.stderr
