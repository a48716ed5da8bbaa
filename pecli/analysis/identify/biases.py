"""ALiBi read off its tensors: all heads' (H, L, L) biases, one head's (L, L) matrix, or the (H,) slopes.

Head h's bias is −|i − j|·m_h, so the entry next to the diagonal is −m_h: a single head is named
by the head counts whose slopes include it (the fewest heads first), all heads by their count.

>>> from pecli.schemes.alibi import alibi_table
>>> list(alibi_candidates(alibi_table(6, heads=8)))
[{'heads': 8}]
>>> next(alibi_candidates(alibi_table(6, heads=8, head=2)))  # slope 2^-3: also head 5 of 6
{'heads': 6, 'head': 5}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.schemes.alibi import alibi_slopes

__all__ = ["alibi_candidates", "alibi_shape"]

#: head counts searched for a single head's slope
_MAX_HEADS = 128


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
        for heads in range(1, _MAX_HEADS + 1):
            for head in np.flatnonzero(np.isclose(alibi_slopes(heads), slope, rtol=1e-2, atol=0)):
                yield {"heads": heads, "head": int(head)}
