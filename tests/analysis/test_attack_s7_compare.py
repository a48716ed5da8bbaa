"""Attack round s7 on compare's diagnosis (issue 30, class 1): a cause named against the verdict."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pecli


@pytest.mark.parametrize(("length", "dim"), [(3, 4), (3, 8)])
def test_a_wrong_base_in_bfloat16_is_not_called_rounding(length: int, dim: int) -> None:
    """A bfloat16 table of base 100000 against base 10000: its slow columns' small values differ 3×, far beyond
    their rounding; the verdict says "different", and the diagnosis said "they differ only by rounding"
    (judged at the table's scale, 1, instead of each entry's)."""
    theirs = pecli.encode("sinusoidal", length, dim, dtype="float64", base=100000.0).astype(ml_dtypes.bfloat16)
    report = pecli.compare("sinusoidal", theirs)
    assert not report.agree
    assert report.result.max_rel > 1.0  # 0.0063 where 0.0200 is due: no rounding
    assert "rounding_only" not in [found.code for found in report.result.diagnosis]
    assert "differ only by rounding" not in str(report)


def test_a_float16_copy_is_still_rounding_only() -> None:
    """What the rule is for stays: the same table rounded to float16, against float32 arithmetic's own."""
    from pecli.analysis.diagnosis import diagnose_difference

    table = np.linspace(-1.0, 1.0, 64).reshape(8, 8)
    found = diagnose_difference(table, table.astype(np.float16).astype(np.float64), tolerance=1e-2)
    assert [finding.code for finding in found] == ["rounding_only"]
    assert found[0].figures["residual"] == pytest.approx(np.abs(table - table.astype(np.float16)).max())
