"""identify of one row says what one row can tell (issue 30): row 0 of a sin/cos table shows no frequency."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table

ROW_ZERO = "row 0 of a sin/cos table (sin 0 = 0, cos 0 = 1 in every column)"


@pytest.mark.parametrize(
    ("scheme", "options"),
    [("sinusoidal", {}), ("sinusoidal", {"layout": "split"}), ("rope", {"part": "cos"}), ("rope", {"part": "sin"})],
)
def test_row_zero_of_a_sin_cos_table_is_named_as_such(scheme, options):
    row = pecli.encode(scheme, dim=64, length=1, **options)
    assert set(np.unique(row)) <= {0.0, 1.0}  # sin 0, cos 0: the premise of the answer
    found = identify_table(row)
    assert found.level == "none"
    assert ROW_ZERO in found.reason and "neither the scheme nor its base" in found.reason


def test_another_single_row_is_not_called_row_zero():
    row = pecli.encode("sinusoidal", dim=64, length=8)[5:6]  # position 5: its angles show, one turn of each
    found = identify_table(row)
    assert found.level == "none"
    assert found.reason == "1 row: too few positions to tell the frequencies apart (need at least 2)"


def test_identify_of_a_one_row_file_answers_in_the_shape_of_other_undetermined_answers(cli, tmp_path):
    path = tmp_path / "one.npy"
    assert cli("generate", "sinusoidal", "--d", "64", "--len", "1", "-o", str(path)).code == 0
    text = cli("identify", str(path))
    assert text.code == 1, text.stderr
    assert ROW_ZERO in text.out
    answer = json.loads(cli("identify", str(path), "--json").out)
    other = json.loads(cli("identify", str(_random_table(tmp_path)), "--json").out)
    assert answer["match"] == other["match"] == "none"
    assert ROW_ZERO in answer["reason"]
    assert set(answer) == set(other) | {"reason"}  # the same keys, and the reason it cannot tell


def _random_table(tmp_path):
    path = tmp_path / "random.npy"
    np.save(path, np.random.default_rng(0).normal(0, 0.02, (32, 16)).astype(np.float32))
    return path
