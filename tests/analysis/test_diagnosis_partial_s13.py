"""A reference with partial parameters (a library caller's) is read with the scheme's defaults, not a base of 0."""

from __future__ import annotations

import pecli
from pecli.analysis.diagnosis import diagnose_difference
from pecli.analysis.diagnosis.finding import Reference
from pecli.schemes import resolve


def test_a_reference_without_its_base_diagnoses_as_the_full_one() -> None:
    a = pecli.encode("rope", 64, 16, part="cos", dtype="float64")
    b = pecli.encode("rope", 64, 16, part="cos", base=500000.0, dtype="float64")
    partial = diagnose_difference(a, b, tolerance=1e-9, reference=Reference("rope", {"part": "cos"}))
    full = diagnose_difference(
        a, b, tolerance=1e-9, reference=Reference("rope", resolve("rope", None, {"part": "cos"})[1])
    )
    assert [finding.code for finding in partial] == [finding.code for finding in full]
    assert "base_differs" in [finding.code for finding in partial]
