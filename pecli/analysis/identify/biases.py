"""ALiBi read off its tensors: all heads' (H, L, L) biases, one head's (L, L) matrix, the (H,) slopes,
or one query row per head, (H, 1, L): HF BLOOM's ``build_alibi_tensor`` (the key form m·j, alike on
every query row) and MPT's ``build_mpt_alibi_tensor`` (m·(j − L + 1): the distance form's last row).

Head h's bias is −|i − j|·m_h, so the entry next to the diagonal is −m_h: a single head is named
by the head counts whose slopes include it (the fewest heads first), all heads by their count.

>>> from pecli.schemes.alibi import alibi_table
>>> list(alibi_candidates(alibi_table(6, heads=8)))
[{'heads': 8}]
>>> next(alibi_candidates(alibi_table(6, heads=8, head=2)))  # slope 2^-3: also head 5 of 6
{'heads': 6, 'head': 5}
>>> list(alibi_row_candidates(alibi_table(6, heads=8, form="key")[:, 0]))
[({'heads': 8, 'form': 'key'}, 0)]
>>> list(alibi_row_candidates(alibi_table(6, heads=8)[:, -1]))  # MPT's
[({'heads': 8, 'form': 'distance'}, 5)]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.schemes.alibi import alibi_slopes, alibi_table

__all__ = ["alibi_candidates", "alibi_row_candidates", "alibi_rows", "alibi_shape"]

#: head counts searched for a single head's slope (a scan of 0.1 s; models ship up to 128)
_MAX_SINGLE_HEADS = 1024
#: a single head is tried at this many (head count, head) pairs at most, the closest slopes first: each is screened
_SINGLE_TRIED = 16
#: slopes closer than this (relative) are alike: the fewest heads first (bfloat16's rounding is 2^-9)
_ALIKE = 2.0**-8


def alibi_shape(shape: tuple[int, ...]) -> bool:
    """True for the shapes of ALiBi's tensors other than a (len, d) table: (H, L, L) and (H,).

    >>> alibi_shape((8, 32, 32)), alibi_shape((8,)), alibi_shape((2, 3, 4))
    (True, True, False)
    """
    return len(shape) == 1 or (len(shape) == 3 and shape[1] == shape[2])


def alibi_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    """ALiBi parameters (heads, head, part) whose tensor has ``table``'s shape and first off-diagonal slope."""
    if table.ndim == 1:
        yield {"heads": len(table), "part": "slopes"}
    elif table.ndim == 3:
        yield {"heads": table.shape[0]}
    elif table.ndim == 2 and table.shape[0] == table.shape[1] >= 2:
        slope = -float(table[0, 1])
        if slope <= 0:
            return
        near = []
        for heads in range(1, _MAX_SINGLE_HEADS + 1):
            slopes = alibi_slopes(heads)
            for index in np.flatnonzero(np.isclose(slopes, slope, rtol=1e-2, atol=0)):
                near.append((max(abs(float(slopes[index]) - slope) / slope, _ALIKE), heads, int(index)))
        for _, count, head in sorted(near)[:_SINGLE_TRIED]:
            yield {"heads": count, "head": head}


def alibi_row_candidates(table: np.ndarray) -> Iterator[tuple[dict[str, Any], int]]:
    """ALiBi parameters and the query row whose biases are ``table``'s (H, L) rows, one per head.

    Head 0's row steps by its slope m_0 of H heads: the key form rises from 0 at j = 0; the
    distance form peaks at 0 on the query's own position.
    """
    heads, length = table.shape
    if length < 2:
        return
    first = np.asarray(table[0], dtype=np.float64)
    step = first[1] - first[0]
    # the slope over the longest straight run from column 0 (to the query's column): a float16 row's
    # neighbours near −100 are each 0.03 off, its mean step a run's length less
    end = int(np.argmax(first)) or length - 1
    slope = alibi_slopes(heads)[0]
    if not np.isclose(abs(first[end] - first[0]) / end, slope, rtol=1e-2, atol=0):
        return
    # head 0's row is straight (a table-sized regeneration of every head costs what the table does)
    columns = np.arange(length)
    query = int(np.argmax(first))
    allowed = 1e-2 * float(np.abs(first).max())
    if first[0] == 0 and step > 0 and np.abs(first - slope * columns).max() <= allowed:
        yield {"heads": heads, "form": "key"}, 0
    if first[query] == 0 and np.abs(first + slope * np.abs(columns - query)).max() <= allowed:
        yield {"heads": heads, "form": "distance"}, query


def alibi_rows(params: dict[str, Any], length: int, query_row: int) -> np.ndarray:
    """Query row ``query_row`` of every head's float64 (L, L) biases: an (H, L) table."""
    return np.concatenate(
        [
            alibi_table(length, dtype="float64", rows=range(query_row, query_row + 1), **{**params, "head": head})
            for head in range(params["heads"])
        ]
    )
