"""Issue 32: the RoPE frequency reading scans only the rows up to each column's turn, and M-RoPE's threshold
is read once a table; the readings are those of a pass over every row."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pecli
from pecli.analysis.identify.grids import mrope_sections
from pecli.analysis.identify.rotary import frequency_profile


def _whole_table_profile(columns: np.ndarray, part: str) -> tuple[np.ndarray, np.ndarray]:
    """The former reading: every row normalised, clipped and compared at once."""
    first = columns[0].astype(np.float64)
    amplitude = float(np.median(first)) if part == "cos" else 1.0
    inverse = np.arccos if part == "cos" else np.arcsin
    normalised = np.clip(columns.astype(np.float64) / amplitude, -1.0, 1.0)
    reached = normalised <= math.cos(1.0) if part == "cos" else normalised >= math.sin(0.5)
    rows = np.maximum(np.where(reached.any(axis=0), reached.argmax(axis=0), len(columns) - 1), 1)
    return inverse(normalised[rows, np.arange(columns.shape[1])]) / rows, rows


@pytest.mark.parametrize(
    ("part", "length", "dim", "dtype", "base"),
    [
        ("cos", 3000, 64, "float32", 10000.0),  # the slowest columns turn past the first blocks
        ("cos", 300, 64, "float32", 10000.0),  # some columns never turn: read at the last row
        ("sin", 5000, 32, "float32", 500000.0),
        ("cos", 700, 16, "bfloat16", 10000.0),
        ("cos", 2, 8, "float32", 10000.0),
    ],
)
def test_profile_equals_a_pass_over_every_row(part: str, length: int, dim: int, dtype: str, base: float) -> None:
    table = pecli.encode("rope", length, dim, part=part, base=base, dtype=dtype)
    columns = table[:, : dim // 2]
    profile = frequency_profile(columns, part)
    assert profile is not None
    rates, _, rows = profile
    expected_rates, expected_rows = _whole_table_profile(columns, part)
    assert rows.tolist() == expected_rows.tolist()
    assert np.array_equal(rates, expected_rates)  # bit for bit


def test_profile_rows_past_the_first_block() -> None:
    table = pecli.encode("rope", 4000, 64, part="cos", base=10000.0)
    _, _, rows = frequency_profile(table[:, :32], "cos")  # type: ignore[misc]
    # ω_k = 10^(-k/8) passes 1 radian at row ⌈10^(k/8)⌉: ω_20 at 317 (the third block), ω_28 at 3163 (the
    # sixth); ω_29 (row 4217) and slower never turn within 4000 rows: read at the last
    assert rows[[0, 20, 28]].tolist() == [1, 317, 3163]
    assert rows[29:].tolist() == [3999, 3999, 3999]


def test_mrope_thresholds_kept_between_grids() -> None:
    table = pecli.encode("rope2d", 48, 32, part="cos", grid="6,8", sections="4,6,6")
    thresholds: dict[str, float] = {}
    assert mrope_sections(table, 6, 8, "half", thresholds) == mrope_sections(table, 6, 8, "half") == "4,6,6"
    assert set(thresholds) == {"half"}
    kept = thresholds["half"]
    assert mrope_sections(table, 6, 8, "half", thresholds) == "4,6,6" and thresholds["half"] == kept
