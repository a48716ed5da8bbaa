"""Grid tables (sincos2d, CoordConv) read off their token count: every H × W with H·W tokens.

A grid table has one row per patch token, row-major, behind an optional all-zero cls row; its
shape fixes H·W but not H and W, so each factorisation is a candidate (square ones first), and
regenerating decides.

>>> [params["grid"] for params in grid_candidates(np.ones((12, 8)))]
['3,4', '4,3', '2,6', '6,2', '1,12', '12,1']
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["grid_candidates"]

#: grids tried per token count (the most square first)
_MAX_GRIDS = 16


def _factor_pairs(tokens: int) -> list[tuple[int, int]]:
    pairs = [(h, tokens // h) for h in range(1, tokens + 1) if tokens % h == 0]
    return sorted(pairs, key=lambda pair: (round(abs(math.log(pair[0] / pair[1])), 9), -pair[1]))[:_MAX_GRIDS]


def grid_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    """``grid`` (``"H,W"``) and ``cls_token`` for every grid ``table``'s rows can cover."""
    with_cls = (False, True) if len(table) > 1 and not table[0].any() else (False,)
    for cls_token in with_cls:
        for height, width in _factor_pairs(len(table) - int(cls_token)):
            yield {"grid": f"{height},{width}", "cls_token": cls_token}
