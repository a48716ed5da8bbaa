"""``pecli distance --metric cosine`` says when a row of zeros is given cosine 0 (issue 30)."""

from __future__ import annotations

import json

NOTE = "position 0 is all zeros: a zero vector has no direction, so its cosine with every position is shown as 0"


def test_a_zero_row_is_noted_on_stderr_and_is_zero_in_the_matrix(cli):
    result = cli("distance", "count", "--d", "1", "--len", "3", "--metric", "cosine", "--json")
    assert result.code == 0, result.stderr
    assert NOTE in result.stderr
    assert json.loads(result.out)["matrix"][0] == [0.0, 0.0, 0.0]


def test_the_profile_notes_it_too(cli):
    result = cli("distance", "count", "--d", "1", "--len", "3", "--metric", "cosine", "--profile", "--json")
    assert result.code == 0 and NOTE in result.stderr


def test_no_note_without_zero_rows_or_for_other_metrics(cli):
    shifted = cli("distance", "sinusoidal", "--d", "4", "--len", "3", "--metric", "cosine", "--json")
    dot = cli("distance", "count", "--d", "1", "--len", "3", "--metric", "dot", "--json")
    assert shifted.code == 0 and dot.code == 0
    assert "all zeros" not in shifted.stderr and "all zeros" not in dot.stderr


def test_the_metric_help_says_so(cli):
    shown = cli("distance", "--help")
    assert "a row of zeros has cosine 0" in " ".join(shown.out.split())
