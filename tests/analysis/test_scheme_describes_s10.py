"""A scheme describes its own partial rotary and the model's rotary module decides its cache layout (issue 30).

``partial_width`` read RoPE's parameter names (``rotary_dim``, ``partial_rotary_factor``) itself; it now asks the
scheme's :class:`~pecli.schemes.mistakes.Mistakes` which parameter sets the rotated width. The CLI's nested
``module_layout`` decided when a config's tables are relaid as transformers' rotary module returns them; that
decision is :func:`pecli.analysis.engine_cache.in_module_layout`.
"""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import Reference
from pecli.analysis.engine_cache import in_module_layout
from pecli.analysis.partial_width import partial_width
from pecli.schemes import get_scheme
from pecli.schemes import mistakes as mistakes_module
from pecli.schemes.catalog import SCHEMES
from pecli.sources import resolve_parts


def _rope_reference() -> tuple[Reference, np.ndarray, np.ndarray]:
    params = {**resolve_parts("rope", dim=8, length=6)[0].params, "part": "cos"}
    narrow = np.asarray(pecli.encode("rope", 6, 8, part="cos", dtype="float64"))
    engine = np.asarray(pecli.encode("rope", 6, 32, part="cos", dtype="float64"))
    return Reference("rope", params), narrow, engine


def test_rope_names_the_parameters_of_its_rotated_width():
    described = get_scheme("rope").known_mistakes({})
    assert (described.rotary_width, described.rotary_fraction) == ("rotary_dim", "partial_rotary_factor")
    # every other scheme turns all of its columns, or has no rotation: it names none
    for name, scheme in SCHEMES.items():
        if name != "rope" and scheme.mistakes is not None:
            other = scheme.known_mistakes({})
            assert (other.rotary_width, other.rotary_fraction) == (None, None), name


def test_partial_width_asks_the_scheme_for_its_rotary_width(monkeypatch):
    reference, narrow, engine = _rope_reference()
    found = partial_width(reference, narrow, engine, dtype="float64")
    assert found is not None and found.finding is not None
    assert found.finding.code == "partial_rotary_ignored"
    assert found.finding.figures == {"rotary_columns": 8, "turned_columns": 32, "head_dim": 32}
    assert found.reference.params["rotary_dim"] == 8  # the reference at the head's width, its 8 columns rotary
    expected = pecli.encode("rope", 6, 32, part="cos", rotary_dim=8, dtype="float64")
    np.testing.assert_array_equal(found.reference_table, expected)

    # a scheme whose description names no rotary width is not brought to one width, whatever its parameters
    described = mistakes_module.rope_mistakes
    monkeypatch.setattr(
        mistakes_module,
        "rope_mistakes",
        lambda params: mistakes_module.Mistakes(**{**vars(described(params)), "rotary_width": None}),
    )
    assert get_scheme("rope").known_mistakes({}).rotary_width is None
    assert partial_width(reference, narrow, engine, dtype="float64") is None


def test_partial_width_none_for_a_partial_reference_or_another_scheme():
    reference, narrow, engine = _rope_reference()
    partial = Reference("rope", {**reference.params, "rotary_dim": 4})
    assert partial_width(partial, narrow, engine, dtype="float64") is None
    fraction = Reference("rope", {**reference.params, "partial_rotary_factor": 0.5})
    assert partial_width(fraction, narrow, engine, dtype="float64") is None
    sinusoid = np.asarray(pecli.encode("sinusoidal", 6, 8, dtype="float64"))
    wide = np.asarray(pecli.encode("sinusoidal", 6, 32, dtype="float64"))
    assert partial_width(Reference("sinusoidal", {"base": 10000.0}), sinusoid, wide, dtype="float64") is None


MODULE = ({"layout": "half"}, "its apply_rotary_pos_emb re-interleaves the first half")


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_in_module_layout_relays_adjacent_pairs_as_the_engines_halves(part):
    pairs = np.asarray(pecli.encode("rope", 5, 8, part=part, layout="interleaved", dtype="float64"))
    halves = np.asarray(pecli.encode("rope", 5, 8, part=part, dtype="float64"))
    relaid = in_module_layout(MODULE, [pairs], [halves])
    assert relaid is not None
    assert dict(relaid.changed) == {"layout": "half"} and relaid.how == MODULE[1]
    np.testing.assert_array_equal(relaid.tables[0], halves)
    assert pairs[0, 2] == pairs[0, 3] and relaid.tables[0][0, 1] == pairs[0, 2]  # column 2 moved to 1


def test_in_module_layout_leaves_the_tables_where_the_layouts_agree():
    pairs = np.asarray(pecli.encode("rope", 5, 8, part="cos", layout="interleaved", dtype="float64"))
    halves = np.asarray(pecli.encode("rope", 5, 8, part="cos", dtype="float64"))
    assert in_module_layout(None, [pairs], [halves]) is None  # the model's module returns its attention's pairing
    assert in_module_layout(MODULE, [pairs], [pairs]) is None  # the engine's are adjacent pairs too
    assert in_module_layout(MODULE, [halves], [halves]) is None  # the config's are halves already
    assert in_module_layout(MODULE, [pairs, pairs], [halves, None]) is None  # one side of the pair missing
