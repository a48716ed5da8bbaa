"""Figure titles name a size given alone: ``alibi, len=2`` rather than ``alibi, 2``, which reads as a value
(issue 30)."""

from __future__ import annotations

from pecli.render.titles import table_title


def test_a_relative_schemes_length_is_named_in_its_title():
    assert table_title({"scheme": "alibi", "len": "2", "heads": "3"}) == "alibi, len=2: heads=3"


def test_a_dimension_given_alone_is_named_too():
    assert table_title({"scheme": "sinusoidal", "d": "8"}) == "sinusoidal, d=8"


def test_both_sizes_keep_the_shape_form():
    assert table_title({"scheme": "sinusoidal", "len": "16", "d": "8"}) == "sinusoidal, 16 × 8"


def test_the_plotted_heads_carry_the_named_length(cli):
    shown = cli("plot", "alibi", "--heads", "3", "--len", "2", "--no-color", "--width", "60", "--height", "10")
    assert shown.code == 0, shown.stderr
    assert "(alibi, len=2: heads=3)" in shown.out and "alibi, 2:" not in shown.out
