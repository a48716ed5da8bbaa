"""identify of square tables that look like bucket matrices (found by the CLI property fuzz; issue 30).

A square binary table (0/1 entries, rows = positions) was read as a T5 bucket matrix whose distances past
the exact ones fall in buckets below them: ZeroDivisionError, exit 3."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table


@pytest.mark.parametrize("size", [4, 6, 10, 16, 22, 24])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_square_binary_tables_are_named_binary(size, dtype):
    table = np.asarray(pecli.encode("binary", size, size, dtype=dtype))
    found = identify_table(table)
    assert found.matched and found.best.scheme == "binary", found.best.describe()


def test_random_zero_one_squares_are_answered_not_crashed():
    rng = np.random.default_rng(3)
    for size in range(3, 30):
        table = (rng.random((size, size)) < 0.5).astype(np.float32)
        identify_table(table)  # an answer (a match or none), never an exception
