"""Index-based schemes: count, normalised count, binary, binary-sine and MemN2N."""

from __future__ import annotations

import numpy as np

from pecli.dtypes import round_to
from pecli.schemes.checks import choice, positive_int, row_range

__all__ = ["binary_sine_table", "binary_table", "count_normalized_table", "count_table", "memn2n_table"]


def _grid(length: int, dim: int, rows: range | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Validated (positions as a column, column indices as a row, length, dim) in float64."""
    length = positive_int("length", length)
    dim = positive_int("dim", dim)
    rows = row_range(rows, length, per_row=dim)
    positions = np.arange(rows.start, rows.stop, dtype=np.float64)[:, None]
    columns = np.arange(dim, dtype=np.float64)[None, :]
    return positions, columns, length, dim


def count_table(length: int, dim: int, *, dtype: str = "float32", rows: range | None = None) -> np.ndarray:
    """Simple count indexing: ``PE[p, :] = p``.

    Example:
        >>> count_table(3, 2)
        array([[0., 0.],
               [1., 1.],
               [2., 2.]], dtype=float32)
    """
    positions, columns, _, _ = _grid(length, dim, rows)
    return round_to(np.broadcast_to(positions, (positions.shape[0], columns.shape[1])), dtype)


def count_normalized_table(length: int, dim: int, *, dtype: str = "float32", rows: range | None = None) -> np.ndarray:
    """Count indexing normalised by the table length: ``PE[p, :] = p / length``.

    Example:
        >>> count_normalized_table(4, 1, dtype="float64").ravel()
        array([0.  , 0.25, 0.5 , 0.75])
    """
    positions, columns, length, _ = _grid(length, dim, rows)
    return round_to(np.broadcast_to(positions / length, (positions.shape[0], columns.shape[1])), dtype)


def binary_table(
    length: int, dim: int, *, bit_order: str = "lsb", dtype: str = "float32", rows: range | None = None
) -> np.ndarray:
    """Binary indexing: the bits of position ``p``, least significant first (``lsb``) or most (``msb``).

    ``lsb``: column ``k`` holds bit ``k``; ``msb``: column ``k`` holds bit ``dim − 1 − k``, so a row
    reads as the number written in binary (Kazemnejad's table).

    Example:
        >>> binary_table(4, 3)[3]
        array([1., 1., 0.], dtype=float32)
        >>> binary_table(6, 4, bit_order="msb", dtype="float64")[5].tolist()
        [0.0, 1.0, 0.0, 1.0]
    """
    bit_order = choice("bit_order", bit_order, ("lsb", "msb"))
    positions, columns, _, dim = _grid(length, dim, rows)
    bit = columns if bit_order == "lsb" else dim - 1 - columns
    bits = (positions.astype(np.int64) >> np.minimum(bit, 63).astype(np.int64)) & 1
    return round_to(bits, dtype)


def binary_sine_table(length: int, dim: int, *, dtype: str = "float32", rows: range | None = None) -> np.ndarray:
    """The continuous relative of binary indexing: ``PE[p, k] = sin(p·π / 2^(k+1))``.

    Example:
        >>> binary_sine_table(2, 2, dtype="float64")[1].round(6)
        array([1.      , 0.707107])
    """
    positions, columns, _, _ = _grid(length, dim, rows)
    # π / 2^(k+1) as an exact power-of-two scaling: 2.0 ** (k + 1) overflows to inf past k = 1022,
    # where the frequency itself is merely tiny (subnormal, then 0)
    frequencies = np.ldexp(np.pi, -(columns.astype(np.int64) + 1))
    return round_to(np.sin(positions * frequencies), dtype)


def memn2n_table(length: int, dim: int, *, dtype: str = "float32", rows: range | None = None) -> np.ndarray:
    """End-to-End Memory Networks: ``l[j, k] = (1 − j/J) − (k/d)(1 − 2j/J)``, j = 1..J, k = 1..d.

    Row ``r`` holds position ``j = r + 1``; ``J`` is the table length.

    Example:
        >>> memn2n_table(3, 4, dtype="float64")[0].round(5)
        array([0.58333, 0.5    , 0.41667, 0.33333])
    """
    positions, columns, length, dim = _grid(length, dim, rows)
    j, k = positions + 1.0, columns + 1.0
    return round_to((1.0 - j / length) - (k / dim) * (1.0 - 2.0 * j / length), dtype)
