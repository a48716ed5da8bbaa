"""Block means of a matrix that depends on the offset only, M[m, n] = f(m − n), without building it.

RoPE's score, ALiBi's and T5's biases are such (Toeplitz) matrices. The sum of f(m − n) over a
block of rows r0..r1 − 1 and columns c0..c1 − 1 is a second difference of the twice-summed f,

    Σ_m Σ_n f(m − n) = Q(r1 − c0 + 1) − Q(r0 − c0 + 1) − Q(r1 − c1 + 1) + Q(r0 − c1 + 1),

with P(x) = Σ_{h<x} f(h) and Q(x) = Σ_{y<x} P(y), so every block mean of a len × len matrix costs
O(1) after O(len) prefix sums: the terminal and figure views of a million positions never hold
more than their cells.

>>> values = np.arange(-3, 4, dtype=np.float64)  # f(h) = h for h = −3 … 3: a 4 × 4 matrix
>>> toeplitz_block_means(values, np.array([0, 2, 4]), np.array([0, 2, 4])).tolist()
[[0.0, -2.0], [2.0, 0.0]]
"""

from __future__ import annotations

import numpy as np

from pecli.errors import ParameterError

__all__ = ["toeplitz_block_means", "toeplitz_matrix"]


def _length(values: np.ndarray) -> int:
    if values.ndim < 1 or values.shape[-1] % 2 == 0:
        raise ParameterError(
            f"values must hold f(h) for h = −(len − 1) … len − 1 (an odd count), got shape {values.shape}",
            hint="pass f at every offset of the matrix",
        )
    return (values.shape[-1] + 1) // 2


def toeplitz_matrix(values: np.ndarray) -> np.ndarray:
    """The whole (…, len, len) matrix M[m, n] = f(m − n) of ``values`` = f(−(len − 1)) … f(len − 1).

    >>> toeplitz_matrix(np.array([-1.0, 0.0, 1.0])).tolist()
    [[0.0, -1.0], [1.0, 0.0]]
    """
    length = _length(values)
    positions = np.arange(length)
    return values[..., positions[:, None] - positions[None, :] + length - 1]


def toeplitz_block_means(values: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    """Means of M[m, n] = f(m − n) over the blocks between ``row_edges`` and ``col_edges``, float64.

    ``values`` holds f(h) for h = −(len − 1) … len − 1 along its last axis (any leading axes, e.g.
    one per head); the result has shape (…, len(row_edges) − 1, len(col_edges) − 1).
    """
    length = _length(values)
    values = np.asarray(values, dtype=np.float64)
    zero = np.zeros((*values.shape[:-1], 1))
    # index i of P and Q is offset x = i − (len − 1)
    prefix = np.concatenate([zero, np.cumsum(values, axis=-1)], axis=-1)
    twice = np.concatenate([zero, np.cumsum(prefix, axis=-1)], axis=-1)
    rows, cols = np.asarray(row_edges), np.asarray(col_edges)

    def q(x: np.ndarray) -> np.ndarray:
        return twice[..., x + length - 1]

    r0, r1 = rows[:-1, None], rows[1:, None]
    c0, c1 = cols[None, :-1], cols[None, 1:]
    total = q(r1 - c0 + 1) - q(r0 - c0 + 1) - q(r1 - c1 + 1) + q(r0 - c1 + 1)
    return total / ((r1 - r0) * (c1 - c0))
