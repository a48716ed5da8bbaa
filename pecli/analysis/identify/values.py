"""The table's values themselves: the precision they are held in, and their statistics when nothing matches.

A bfloat16 or float16 table stored as float32 still carries its coarser rounding (:func:`_values_precision`,
:func:`_coarser`); a table that matched nothing is described by its mean, standard deviation and whether it
looks like a normal draw (a learned table's initialisation: :func:`_looks_gaussian`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from pecli.analysis.identify.verify import _CHUNK_BYTES
from pecli.analysis.value_precision import (
    on_a_dyadic_grid,
    precision_flags,
    precision_name,
    rounding_tolerance,
    value_precision,
)

#: the value statistics read this many values at a time, in float64
_STATISTICS_VALUES = 1 << 20

#: the kurtosis of a large table is estimated on about this many values
_KURTOSIS_VALUES = 1 << 20


def _looks_gaussian(values: np.ndarray, mean: float, std: float) -> bool:
    """Kurtosis within 0.5 of a normal distribution's 3 (on at most ``_KURTOSIS_VALUES`` values, rows
    spread over the table), and a mean within 5 standard errors of 0."""
    if values.size < 256 or std == 0:
        return False
    sample = values[:: max(1, values.size // _KURTOSIS_VALUES)]  # every n-th row
    centred = (sample - mean) / std
    kurtosis = float(np.mean(centred**4))
    return abs(kurtosis - 3.0) < 0.5 and abs(mean) < 5 * std / math.sqrt(values.size)


def _value_statistics(values: np.ndarray) -> tuple[float, float]:
    """The mean and (population) standard deviation of every value, in float64, of a table of any shape.

    >>> _value_statistics(np.array([[1.0, 3.0], [5.0, 7.0]]))
    (4.0, 2.23606797749979)
    """
    values = np.asarray(values)
    if not values.size:
        return math.nan, math.nan
    # scaled into [-1, 1] first: the sum and the squares of 1e308s overflow
    scale = max(float(values.max()), -float(values.min()))
    scale = scale if 0 < scale < math.inf else 1.0
    # two passes over float64 chunks of rows (a float64 copy of a 256 MiB float32 table was 512 MiB and 2.4 s)
    rows = values.reshape(len(values), -1) if values.ndim else values.reshape(1, 1)
    step = max(1, _STATISTICS_VALUES // rows.shape[1])
    chunks = [slice(start, start + step) for start in range(0, len(rows), step)]
    total = math.fsum(float(np.divide(rows[chunk], scale, dtype=np.float64).sum()) for chunk in chunks)
    mean = total / values.size
    squares = 0.0
    for chunk in chunks:
        scaled = np.divide(rows[chunk], scale, dtype=np.float64)
        scaled -= mean
        squares += float(np.dot(scaled.reshape(-1), scaled.reshape(-1)))
    return scale * mean, scale * math.sqrt(squares / values.size)


def _values_precision(table: np.ndarray) -> str:
    """:func:`value_precision` of ``table``; of ALiBi's (H, L, L) biases block by block (its whole-table
    passes hold several temporaries of the table's size): the first 64 heads first, then every head, then
    whether each row's values lie on a dyadic grid, as there.

    >>> slopes = 2.0 ** -np.arange(1, 9)
    >>> biases = np.stack([-m * np.abs(np.subtract.outer(np.arange(8.0), np.arange(8.0))) for m in slopes])
    >>> _values_precision(biases.astype(np.float32)), value_precision(biases.astype(np.float32))
    ('float32', 'float32')
    """
    array = np.asarray(table)
    if array.ndim != 3 or array.dtype.name not in ("float32", "float64"):
        return value_precision(array)
    step = max(1, _CHUNK_BYTES // (8 * max(1, array.shape[-1])))

    def blocks(heads: int) -> Iterator[np.ndarray]:
        rows, width = array.shape[1:]
        if rows <= step:  # small heads, several to a block: (70000, 2, 2) took 11 s of CPU one head at a time
            group = step // max(1, rows)
            for head in range(0, heads, group):
                block = array[head : min(head + group, heads)]
                yield block.reshape(len(block) * rows, width)
            return
        for head in range(heads):
            for start in range(0, rows, step):
                yield array[head, start : start + step]

    def flags(heads: int) -> tuple[bool, bool, bool]:
        wide, bfloat16, float16 = False, True, True
        for block in blocks(heads):
            block_wide, block_bfloat16, block_float16 = precision_flags(block)
            wide, bfloat16, float16 = wide or block_wide, bfloat16 and block_bfloat16, float16 and block_float16
        return wide, bfloat16, float16

    heads = len(array)
    for counted in (min(64, heads), heads):  # as value_precision: its first 64 entries of axis 0 first
        precision = precision_name(flags(counted))
        if precision == "float32":
            return precision
    return "float32" if all(on_a_dyadic_grid(block) for block in blocks(heads)) else precision


def _coarser(precision: str, dtype: str) -> str:
    """The coarser of the values' precision and the stored float dtype (an integer dtype says nothing)."""
    if dtype not in ("bfloat16", "float16", "float32", "float64"):
        return precision
    return max((precision, dtype), key=lambda name: rounding_tolerance(name))
