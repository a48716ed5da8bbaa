"""Fuzz of compare's diagnosis (issue 30, class 1: a cause named with its evidence, never a false one).

Each test failed on the code before its fix.
"""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_tables
from pecli.analysis.diagnosis import diagnose_difference


@pytest.mark.parametrize("heads", [4, 12])
def test_a_constant_added_to_every_alibi_head_is_named_constant_offset(heads):
    """A (heads, L, L) bias + 0.25 named no cause: the per-head path tried only heads and a factor."""
    a = np.asarray(pecli.encode("alibi", 24, None, dtype="float64", heads=heads, part="bias"), np.float64)
    found = diagnose_difference(a, a + 0.25, tolerance=1e-4)
    assert [f.code for f in found] == ["constant_offset"]
    assert found[0].figures["offset"] == pytest.approx(0.25, abs=1e-12)
    result = compare_tables(a + 0.25, a, atol=1e-4)
    assert not result.agree
    assert [(f.code, round(f.figures["offset"], 9)) for f in result.diagnosis] == [("constant_offset", -0.25)]
    assert diagnose_difference(a, -a, tolerance=1e-4)[0].code in ("alibi_sign", "constant_factor")
    assert not any(f.code == "constant_offset" for f in diagnose_difference(a, 2 * a, tolerance=1e-4))
