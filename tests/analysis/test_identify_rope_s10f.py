"""identify names RoPE with few frequencies held in a half type, over a refitted base or float32 arithmetic
(issue 30: found by fuzz4's freqs-dtype kind)."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table


@pytest.mark.parametrize(
    ("dim", "length", "base", "part", "freqs_dtype", "dtype"),
    [
        # 3 frequencies: a base 9999.13 computed in float32 explained the rounded table within float32's noise
        (6, 49, 10000.0, "cos", "float16", "float32"),
        (6, 24, 10000.0, "cos", "float16", "float32"),
        # bfloat16 angles: the base fitted from the furthest-turned frequencies read 9514, 5% off every round one
        (30, 40, 10000.0, "angle", "bfloat16", "float32"),
        # the second frequency turns 0.18 radians: a sine reads it well, the exact base 500000 does not fit it
        (6, 15, 500000.0, "sin", "bfloat16", "float64"),
        # base 503100 with exact frequencies writes the table alike, within float32's rounding: the round base wins
        (6, 11, 500000.0, "cos", "bfloat16", "float32"),
    ],
)
def test_few_rounded_frequencies_are_named_with_their_dtype(dim, length, base, part, freqs_dtype, dtype) -> None:
    table = pecli.encode("rope", length, dim, part=part, base=base, freqs_dtype=freqs_dtype, dtype=dtype)
    found = identify_table(table)
    assert found.level == "exact"
    params = found.best.params
    assert (found.best.scheme, params["part"], params["base"]) == ("rope", part, base)
    assert params["freqs_dtype"] == freqs_dtype
    assert params.get("arithmetic") in (None, "float64")  # generate computes in float64 and rounds once
    again = pecli.encode("rope", length, dim, **{k: v for k, v in params.items() if v is not None}, dtype=dtype)
    assert np.array_equal(again, table)


def test_a_refitted_base_is_still_named_for_exact_frequencies() -> None:
    """The half-type readings do not take a table that exact frequencies of a non-round base regenerate."""
    table = pecli.encode("rope", 49, 6, part="cos", base=9999.13)
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.params["base"] == 9999.13 and found.best.params.get("freqs_dtype") is None
