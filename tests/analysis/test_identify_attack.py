"""identify, attack round two: the file's real precision, too few rows, a transposed table (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table


@pytest.mark.parametrize("scheme", ["binary", "count"])
def test_a_bfloat16_file_of_exact_values_is_reported_in_bfloat16(tmp_path, cli, scheme):
    """0/1 (or small integers) are exact in float32, but the file holds bfloat16: say so."""
    path = tmp_path / "b.safetensors"
    assert cli("generate", scheme, "--d", "16", "--len", "64", "--dtype", "bfloat16", "-o", str(path)).code == 0
    result = cli("identify", str(path))
    assert result.code == 0, result.stderr
    assert "value precision bfloat16" in result.out
    assert "within bfloat16 rounding" in result.out
    assert "float32" not in result.out
    assert "--dtype bfloat16" in result.out  # the reproduce command writes what the file holds
    found = json.loads(cli("identify", str(path), "--json").out)
    assert (found["dtype"], found["precision"]) == ("bfloat16", "bfloat16")


def test_identify_table_takes_the_stored_dtype_of_a_widened_copy():
    widened = pecli.encode("binary", 64, 16, dtype="float32")
    assert identify_table(widened).precision == "float32"
    found = identify_table(widened, dtype="bfloat16")
    assert (found.dtype, found.precision, found.level) == ("bfloat16", "bfloat16", "exact")
    assert found.tolerance == pytest.approx(4 * 2.0**-7)  # bfloat16's rounding at scale 1
    # an integer file's dtype says nothing of float rounding
    assert identify_table(np.arange(12.0).reshape(3, 4), dtype="int64").precision != "int64"


def test_one_row_cannot_tell_the_frequencies_apart(tmp_path, cli):
    """A 1 × d sinusoidal row fits every base: it was called 'match vaswani' (and base 500000 too)."""
    path = tmp_path / "one.npy"
    np.save(path, pecli.encode("sinusoidal", 1, 16, base=500000.0))
    result = cli("identify", str(path))
    assert result.code == 1, result.out
    assert "1 row: too few positions to tell the frequencies apart (need at least 2)" in result.out
    assert "match:" not in result.out
    assert json.loads(cli("identify", str(path), "--json").out)["reason"].startswith("1 row")


@pytest.mark.parametrize("dim", [16, 128, 1024])
@pytest.mark.parametrize("scheme, base", [("sinusoidal", 500000.0), ("sinusoidal", 10000.0), ("rope", 500000.0)])
def test_two_rows_are_enough_to_pin_down_the_base(dim, scheme, base):
    """The measurement behind MIN_ROWS: from 2 rows the base found is the base written."""
    params = {"part": "cos"} if scheme == "rope" else {}
    found = identify_table(pecli.encode(scheme, 2, dim, base=base, **params))
    assert found.level == "exact" and found.reason is None
    assert (found.best.scheme, found.best.params["base"]) == (scheme, pytest.approx(base, rel=1e-6))


def test_a_transposed_table_gets_a_hint(tmp_path, cli):
    path = tmp_path / "t.npy"
    np.save(path, pecli.encode(None, 64, 16).T.copy())
    result = cli("identify", str(path))
    assert result.code == 1
    assert "(the table looks transposed: d × len; read as 64 × 16 it is sinusoidal" in result.out
    # a random table gets no such hint
    np.save(path, np.random.default_rng(0).normal(0, 0.02, (64, 16)).astype(np.float32))
    assert "transposed" not in cli("identify", str(path)).out


def test_a_large_table_is_not_searched_twice(tmp_path, monkeypatch):
    """The other-way-round search doubles identify's time: it is tried only on tables of at most
    ``TRANSPOSED_VALUES`` values (a 65536 × 1024 table matching nothing took 52 s instead of 30)."""
    from pecli.analysis.identify import search

    table = pecli.encode(None, 64, 16).T.copy()
    assert search.identify_table(table).transposed is not None
    monkeypatch.setattr(search, "TRANSPOSED_VALUES", table.size - 1)
    steps: list[str] = []
    found = search.identify_table(table, progress=steps.append)
    assert found.transposed is None and not any("other way round" in step for step in steps)
