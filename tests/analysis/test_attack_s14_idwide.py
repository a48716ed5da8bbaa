"""identify of wide tables (issue 30 class 4): candidates screened on a sample of columns first.

A 1 × 10^6 sinusoidal table took 50–60 s: each of ~370 candidates was regenerated at full width on
the screening rows. The sinusoidal rows are now computed at a sample of columns (bit for bit the full
rows' values there), which bounds each candidate's excess from below, and a candidate is measured at
full width only when the ranking reaches it: identify's answer, text and JSON, is the full width's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.analysis.identify import screening, search, verify
from pecli.analysis.identify.result import Candidate
from pecli.analysis.identify.sinusoids import sinusoidal_rows
from pecli.dtypes import DTYPES, round_to
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.sinusoidal import pair_columns, place_pairs

LAYOUTS = ("interleaved", "split")
SHIFTS = (None, 0.0, 1.0, 0.5, 3.0)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("count", "dim"), [(0, 3), (1, 1), (1, 2), (2, 3), (2, 4), (3, 5), (3, 6), (4, 7), (5, 8)])
def test_pair_columns_is_where_place_pairs_puts_each_pair(layout, count, dim):
    out = np.full((1, dim), np.nan)
    codes = np.arange(1, count + 1, dtype=np.float64)[None, :]
    place_pairs(out, codes, -codes, layout=layout)
    index, first = pair_columns(np.arange(dim), count, dim, layout=layout)
    placed = np.where(index >= 0, np.where(first, index + 1.0, -(index + 1.0)), 0.0)
    assert placed.tolist() == out[0].tolist()


@settings(max_examples=300, deadline=None)
@given(
    dim=st.integers(1, 300),
    layout=st.sampled_from(LAYOUTS),
    cos_first=st.booleans(),
    freq_shift=st.sampled_from(SHIFTS),
    pad_dim=st.booleans(),
    base=st.floats(1.5, 1e8),
    positions=st.lists(
        st.one_of(st.integers(-(10**7), 10**9).map(float), st.floats(-1e4, 1e4)), min_size=1, max_size=5
    ),
    data=st.data(),
)
def test_sampled_columns_are_the_full_rows_bit_for_bit(
    dim, layout, cos_first, freq_shift, pad_dim, base, positions, data
):
    params = {"base": base, "layout": layout, "cos_first": cos_first, "freq_shift": freq_shift, "pad_dim": pad_dim}
    columns = np.array(sorted(data.draw(st.sets(st.integers(0, dim - 1), min_size=1))))
    full = sinusoidal_rows(params, dim, np.array(positions))
    sampled = sinusoidal_rows(params, dim, np.array(positions), columns)
    assert (full is None) == (sampled is None)
    if full is not None:
        assert np.array_equal(_bits(sampled), _bits(full[:, columns]))


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize(
    ("layout", "cos_first", "freq_shift", "pad_dim"),
    list(itertools.product(LAYOUTS, (False, True), SHIFTS, (False, True))),
)
def test_a_wide_tables_screen_columns_round_as_its_full_rows(dtype, layout, cos_first, freq_shift, pad_dim):
    """At the screen's own columns of a 1 × 10^5 + 1 row, in every dtype a table is written in."""
    dim = 100_001
    params = {"base": 10000.0, "layout": layout, "cos_first": cos_first, "freq_shift": freq_shift, "pad_dim": pad_dim}
    positions = np.array([0.0, 1.0, 7.0, 123456.0])
    columns = screening.screen_columns(dim)
    full = sinusoidal_rows(params, dim, positions)
    sampled = sinusoidal_rows(params, dim, positions, columns)
    assert np.array_equal(_bits(sampled), _bits(full[:, columns]))
    assert round_to(sampled, dtype).tobytes() == round_to(full[:, columns], dtype).tobytes()


@pytest.mark.parametrize(
    ("scheme", "params"),
    [
        ("sinusoidal", {"offset": 2, "padding_idx": 1, "amplitude": 0.125}),
        ("sinusoidal", {"layout": "split", "cos_first": True, "freq_shift": 1.0, "pad_dim": True}),
        ("sinusoidal", {"arithmetic": "float32"}),  # not computed directly: the scheme's own rows, sliced
        ("rope", {"part": "cos"}),
    ],
)
def test_the_candidates_rows_at_columns_are_its_rows_there(scheme, params):
    params = {**SCHEMES[scheme].defaults, **params}
    shape, rows, columns = (40, 302), [range(0, 8), range(32, 40)], np.array([0, 1, 5, 150, 299, 301])
    whole = verify._rows(scheme, params, shape, rows)
    assert np.array_equal(_bits(verify._rows(scheme, params, shape, rows, columns=columns)), _bits(whole[:, columns]))


def test_the_excess_on_a_sample_of_columns_is_at_most_the_full_widths():
    table = pecli.encode("sinusoidal", 16, 3000, base=500000.0, offset=1)
    scale, rows, columns = 1.0, [range(0, 8), range(8, 16)], screening.screen_columns(3000)
    for base, offset, layout in itertools.product((10000.0, 500000.0, 1e6), (0, 1, 2), LAYOUTS):
        params = {**SCHEMES["sinusoidal"].defaults, "base": base, "offset": offset, "layout": layout}
        candidate = Candidate("sinusoidal", params)
        sampled = verify._errors(table, candidate, rows, "float32", scale, columns=columns)
        full = verify._errors(table, candidate, rows, "float32", scale)
        assert sampled[0] <= full[0] and sampled[1] <= full[1]


def _sampled_from_another(shape: tuple[int, int]) -> np.ndarray:
    """Base 10000 at the screen's columns, base 500000 elsewhere: the sample's closest candidate is not the
    full width's, so a ranking by the sample alone would name another best and other runners-up."""
    table = pecli.encode("sinusoidal", *shape, base=500000.0, offset=1, dtype="float64")
    columns = screening.screen_columns(shape[1])
    table[:, columns] = pecli.encode("sinusoidal", *shape, offset=1, dtype="float64")[:, columns]
    return table


def _wide_tables() -> dict[str, Callable[[], np.ndarray]]:
    random = np.random.default_rng(30)
    sinusoid = pecli.encode("sinusoidal", 4, 300, dtype="float64")
    return {
        "one-row": lambda: pecli.encode("sinusoidal", 1, 300),
        "split-cos-first": lambda: pecli.encode(
            "sinusoidal", 2, 300, layout="split", cos_first=True, base=500000.0, offset=2
        ),
        "pad-dim": lambda: pecli.encode("sinusoidal", 3, 257, pad_dim=True),
        "shifted": lambda: pecli.encode("sinusoidal", 4, 200, freq_shift=1.0, base=1e6),
        "float16": lambda: pecli.encode("sinusoidal", 6, 300, dtype="float16"),
        "fairseq": lambda: pecli.encode(None, 12, 256, preset="fairseq"),
        "scaled": lambda: pecli.encode("sinusoidal", 5, 300, amplitude=300**-0.5),
        "float32-arithmetic": lambda: pecli.encode("sinusoidal", 3, 300, arithmetic="float32", offset=4000),
        "off-by-noise": lambda: sinusoid + random.normal(0.0, 1e-4, sinusoid.shape),
        "random": lambda: random.normal(0.0, 0.02, (2, 400)).astype(np.float32),
        "rope-cos": lambda: pecli.encode("rope", 3, 300, part="cos"),
        "base-read-off": lambda: pecli.encode("sinusoidal", 2, 300, base=31337.0),
        "sample-fits-another": lambda: _sampled_from_another((2, 300)),
        "sample-fits-another-one-row": lambda: _sampled_from_another((1, 300)),
    }


@pytest.fixture
def small_screen(monkeypatch):
    """The column sample at a few hundred columns (16 of them), so small tables take the sampled path."""
    monkeypatch.setattr(screening, "_FULL_WIDTH", 32)
    monkeypatch.setattr(screening, "_EDGE_COLUMNS", 4)
    monkeypatch.setattr(screening, "_SPREAD_COLUMNS", 8)


def _identify_outputs(cli, path, monkeypatch, sampled: bool) -> tuple:
    with monkeypatch.context() as patch:
        if not sampled:
            patch.setattr(screening, "screen_columns", lambda dim: None)
        text, json_text = cli("identify", str(path), "--no-color"), cli("identify", str(path), "--json")
    return text.code, text.out, json_text.code, json_text.out


@pytest.mark.parametrize("name", list(_wide_tables()))
def test_identify_says_the_same_with_and_without_the_column_sample(name, cli, tmp_path, monkeypatch, small_screen):
    path = tmp_path / f"{name}.npy"
    np.save(path, _wide_tables()[name]())
    assert _identify_outputs(cli, path, monkeypatch, sampled=True) == _identify_outputs(
        cli, path, monkeypatch, sampled=False
    )


@pytest.mark.parametrize(
    "table",
    [pecli.encode("sinusoidal", 1, 4096), pecli.encode("sinusoidal", 2, 5000, layout="split", offset=3)],
    ids=["1x4096", "2x5000-split"],
)
def test_identify_of_a_wide_table_is_unchanged_at_the_real_sample(table, cli, tmp_path, monkeypatch):
    path = tmp_path / "wide.npy"
    np.save(path, table)
    assert _identify_outputs(cli, path, monkeypatch, sampled=True) == _identify_outputs(
        cli, path, monkeypatch, sampled=False
    )


def test_a_wide_table_measures_few_candidates_at_full_width(monkeypatch):
    """The ranking measures a sinusoidal candidate at full width only when it reaches it: a handful of the
    hundreds (the other schemes' rows are not computed directly: measured at full width as before)."""
    widths: list[int] = []
    original = screening._errors

    def counted(table, candidate, rows, *args, columns=None, **kwargs):
        if candidate.scheme == "sinusoidal":
            widths.append(table.shape[1] if columns is None else len(columns))
        return original(table, candidate, rows, *args, columns=columns, **kwargs)

    monkeypatch.setattr(screening, "_errors", counted)
    found = search.identify_table(pecli.encode("sinusoidal", 2, 20_000))
    assert found.level == "exact" and found.best.params["base"] == 10000.0
    assert len(widths) > 300
    assert sum(width == 20_000 for width in widths) < 20
