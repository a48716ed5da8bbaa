"""Block averaging: shrink a table to a grid of cells, each the mean of the values it covers.

Taking every n-th column would alias: a sinusoid whose period is shorter than the stride shows
up as a slow, false wave. The mean of a block instead tends to 0 for dimensions that oscillate
faster than a cell, which is what the eye should see.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

__all__ = ["Downsampled", "block_average", "block_edges"]


class Downsampled(NamedTuple):
    """A block-averaged table and, per axis, the ``n + 1`` edges of its blocks in input indices."""

    values: np.ndarray
    row_edges: np.ndarray
    col_edges: np.ndarray

    @property
    def shrunk(self) -> bool:
        """Whether any cell averages more than one input value."""
        return self.values.shape != (int(self.row_edges[-1]), int(self.col_edges[-1]))


def block_edges(size: int, blocks: int, *, uniform: bool = False) -> np.ndarray:
    """Integer edges splitting ``range(size)`` into at most ``blocks`` consecutive blocks.

    By default exactly ``min(blocks, size)`` near-equal blocks (sizes differ by at most one:
    what a terminal needs to fill its width). With ``uniform``, blocks of one size
    ``ceil(size / blocks)`` (only the last may be shorter): near 1:1 ratios then never mix single
    columns with pairs, which in an interleaved sin/cos table shows as false stripes.

    >>> block_edges(10, 4).tolist(), block_edges(10, 4, uniform=True).tolist()
    ([0, 2, 5, 7, 10], [0, 3, 6, 9, 10])
    >>> block_edges(3, 8).tolist()  # never more blocks than values
    [0, 1, 2, 3]
    """
    blocks = max(1, min(int(blocks), int(size)))
    if uniform:
        step = -(-int(size) // blocks)
        return np.append(np.arange(0, size, step, dtype=np.int64), np.int64(size))
    return (np.arange(blocks + 1, dtype=np.int64) * size) // blocks


def _sum_columns(values: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    if len(col_edges) - 1 == values.shape[-1]:
        return values
    return np.add.reduceat(values, col_edges[:-1], axis=-1)


def block_average(matrix: np.ndarray, max_rows: int, max_cols: int, *, uniform: bool = False) -> Downsampled:
    """Average ``matrix`` (2-D) over blocks so that it has at most ``max_rows`` × ``max_cols`` cells.

    Blocks come from :func:`block_edges` (``uniform``: all of one size, else near-equal).
    Non-finite values (NaN, ±inf) are left out of the means; a block with no finite value is NaN.
    A table already small enough comes back unchanged (as float64). Sums run in float64, one
    block of rows at a time, so a float32 table is never copied whole.

    >>> checkerboard = np.tile([1.0, -1.0], (4, 8))  # columns alternate +1, -1
    >>> block_average(checkerboard, 2, 4).values.tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    >>> block_average(np.array([[1.0, np.nan, 3.0, 5.0]]), 1, 2).values.tolist()
    [[1.0, 4.0]]
    """
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"block_average takes a 2-D table, got shape {matrix.shape}")
    rows, cols = matrix.shape
    row_edges = block_edges(rows, max_rows, uniform=uniform)
    col_edges = block_edges(cols, max_cols, uniform=uniform)
    col_sizes = np.diff(col_edges).astype(np.float64)
    values = np.empty((len(row_edges) - 1, len(col_edges) - 1))
    row_sums = np.empty(cols)
    for block, (first, last) in enumerate(itertools.pairwise(row_edges)):
        rows_block = matrix[first:last]
        # summing a contiguous block along axis 0 is numpy's fast path (reduceat on axis 0 is ~20x slower)
        np.sum(rows_block, axis=0, dtype=np.float64, out=row_sums)
        if np.isfinite(row_sums).all():  # a finite float64 sum means every value in the block is finite
            values[block] = _sum_columns(row_sums, col_edges) / (col_sizes * (last - first))
            continue
        finite = np.isfinite(rows_block)
        sums = _sum_columns(np.where(finite, rows_block, 0).sum(axis=0, dtype=np.float64), col_edges)
        counts = _sum_columns(finite.sum(axis=0, dtype=np.float64), col_edges)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[block] = np.where(counts > 0, sums / counts, np.nan)
    return Downsampled(values, row_edges, col_edges)
