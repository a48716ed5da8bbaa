"""KERPLE's logarithmic bias: a penalty that grows with the log of the distance.

KERPLE (Chi et al. 2022, arXiv:2205.09921, §4) adds to the attention logit of query i and key j
a conditionally positive definite kernel of their distance; its log variant, the one the paper
recommends, is ``−r1·log(1 + r2·|i − j|)`` with r1, r2 > 0 learned per head (the authors'
GPT-NeoX code, ``ParallelKerpleLog``, computes ``-bias_p * log(1 + bias_a * diff)``). Unlike
ALiBi's linear penalty it flattens with distance. pecli draws one head of given r1, r2.

>>> kerple_table(3, dtype="float64").round(4).tolist()
[[0.0, -0.6931, -1.0986], [-0.6931, 0.0, -0.6931], [-1.0986, -0.6931, 0.0]]
"""

from __future__ import annotations

import numpy as np

from pecli.dtypes import round_to
from pecli.schemes.checks import finite_above, no_dim, positive_int, row_range

__all__ = ["kerple_bias", "kerple_head_names", "kerple_table"]


def kerple_bias(offsets: np.ndarray, *, r1: float = 1.0, r2: float = 1.0, **_: object) -> np.ndarray:
    """The bias ``−r1·log(1 + r2·|offset|)`` at key − query ``offsets``: one head, (1, *offsets.shape), float64.

    The relative view of ``pecli distance`` (the registry's ``bias``).

    >>> kerple_bias(np.array([0, -1, 3]), r1=2.0, r2=1.0).round(4).tolist()
    [[0.0, -1.3863, -2.7726]]
    """
    r1 = finite_above("r1", r1, 0.0, example="1")
    r2 = finite_above("r2", r2, 0.0, example="1")
    distance = np.abs(np.asarray(offsets)).astype(np.float64)
    return 0.0 - r1 * np.log1p(r2 * distance)[None]  # 0.0 − x: the diagonal is +0, not −0


def kerple_head_names(*, r1: float = 1.0, r2: float = 1.0, **_: object) -> list[str]:
    """The name of the one head :func:`kerple_bias` returns.

    >>> kerple_head_names(r1=2.0, r2=0.5)
    ['r1 2, r2 0.5']
    """
    return [f"r1 {r1:.4g}, r2 {r2:.4g}"]


def kerple_table(
    length: int,
    dim: None = None,
    *,
    r1: float = 1.0,
    r2: float = 1.0,
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """KERPLE-log's (len, len) bias ``bias[i, j] = −r1·log(1 + r2·|i − j|)`` of one head.

    Args:
        length: number of positions (query and key).
        dim: unused (a bias has no embedding dimension); must be None.
        r1: the bias's scale, > 0 (the paper's r1, the code's ``bias_p``).
        r2: the distance's scale, > 0 (r2, ``bias_a``).
        dtype: output dtype.
        rows: query positions (rows) to compute.

    Example:
        >>> kerple_table(2, r1=0.5, r2=3.0, dtype="float64").tolist()
        [[0.0, -0.6931471805599453], [-0.6931471805599453, 0.0]]
    """
    no_dim("kerple", dim)
    length = positive_int("length", length)
    rows = row_range(rows, length, per_row=length, hint="use a smaller {length}")
    queries = np.arange(rows.start, rows.stop)
    return round_to(kerple_bias(np.arange(length)[None, :] - queries[:, None], r1=r1, r2=r2)[0], dtype)
