"""identify attacked at the edges, session 14 (issue 30 class 5: a claimed match must be right).

Found and fixed: a RoPE table of d = 2 (its one frequency base⁰ = 1: cos p, sin p or p in both columns) matched
nothing ("closest: memn2n, max error 1.91", exit 1); it is RoPE, and its base is any base.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.analysis.identify import identify_table
from tests.conftest import assert_reproduces


@pytest.mark.parametrize(
    ("part", "dtype", "name"),
    [("cos", "float32", "c.npy"), ("sin", "float32", "s.npy"), ("cos", "bfloat16", "c.safetensors")],
)
def test_a_d2_rope_part_is_rope_of_any_base(cli, tmp_path, part, dtype, name):
    target = tmp_path / name
    written = cli("generate", "rope", "--d", "2", "--len", "64", "--part", part, "--dtype", dtype, "-o", str(target))
    assert written.code == 0
    found = cli("identify", str(target))
    assert found.code == 0, found.out
    assert f"match: rope: part={part}" in found.out
    assert "this table cannot tell: base: any; d = 2 holds frequency 1 only" in found.out
    assert_reproduces(cli, found.out, target, tmp_path)
    reading = json.loads(cli("identify", str(target), "--json").out)
    assert [entry["parameter"] for entry in reading["undetermined"]] == ["base"]


def test_a_d2_rope_pair_is_rope_of_any_base(cli, tmp_path):
    target = tmp_path / "pair.safetensors"
    assert cli("generate", "rope", "--d", "2", "--len", "300", "-o", str(target)).code == 0
    found = cli("identify", str(target))
    assert found.code == 0, found.out
    assert "match: rope: its defaults" in found.out
    assert "base: any; d = 2 holds frequency 1 only" in found.out
    assert_reproduces(cli, found.out, target, tmp_path)


@pytest.mark.parametrize(
    "columns",
    [
        lambda p: (np.ones_like(p), np.ones_like(p)),  # constant
        lambda p: (np.cos(2 * p), np.cos(2 * p)),  # frequency 2: no RoPE's (each is at most 1)
        lambda p: (np.cos(p / 2), np.cos(p / 2)),  # frequency 1/2: a scaling of d = 2 is not read
        lambda p: (1.2 * np.cos(p), 1.2 * np.cos(p)),  # an amplitude no d = 2 RoPE has
        lambda p: (np.cos(p), np.cos(p) + 1e-3),  # the columns differ
    ],
)
def test_d2_tables_that_are_no_rope_match_nothing(columns):
    positions = np.arange(64.0)
    table = np.stack(columns(positions), axis=1).astype(np.float32)
    found = identify_table(table)
    assert not found.matched, found.best.describe()
