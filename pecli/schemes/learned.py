"""Learned position embeddings, as initialised before training."""

from __future__ import annotations

import numpy as np

from pecli.dtypes import round_to
from pecli.schemes.checks import finite_above, non_negative_int, positive_int, row_range

__all__ = ["learned_table"]


def learned_table(
    length: int,
    dim: int,
    *,
    std: float = 0.02,
    seed: int = 0,
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """A learned position-embedding table at initialisation: ``N(0, std²)`` entries.

    BERT initialises with std 0.02 (``initializer_range``), ConvS2S with 0.1. The values come
    from numpy's PCG64 generator (``np.random.default_rng(seed)``) drawn row-major in float64, so a
    seed gives the same table on every machine, and rows ``a..b`` equal rows ``a..b`` of the whole.

    Example:
        >>> table = learned_table(4, 3, seed=1)
        >>> table.shape, bool((learned_table(4, 3, seed=1) == table).all())
        ((4, 3), True)
    """
    length = positive_int("length", length)
    dim = positive_int("dim", dim)
    std = finite_above("std", std, 0.0, example="0.02")
    seed = non_negative_int("seed", seed)
    rows = row_range(rows, length, per_row=dim)
    generator = np.random.default_rng(seed)
    if rows.start:
        # Standard normals consume the stream one draw at a time, so skipping the earlier rows
        # keeps every row identical to the whole table's; draw them in bounded chunks.
        skip_rows = max(1, (1 << 22) // dim)
        for lo in range(0, rows.start, skip_rows):
            generator.standard_normal(size=(min(skip_rows, rows.start - lo), dim))
    with np.errstate(over="ignore"):  # an absurd --std overflows: round_to refuses the result
        return round_to(generator.standard_normal(size=(len(rows), dim)) * std, dtype)
