"""Grid tables (sincos2d, CoordConv) read off their token count: every H × W with H·W tokens.

A grid table has one row per patch token, row-major, behind optional all-zero rows: a cls row
(MAE), or diffusers' ``extra_tokens`` of them; its shape fixes H·W but not H and W, so each
factorisation is a candidate (square ones first), and regenerating decides.

>>> [params["grid"] for params in grid_candidates(np.ones((12, 8)))]
['3,4', '4,3', '2,6', '6,2', '1,12', '12,1']
>>> table = np.ones((11, 8)); table[:2] = 0  # two leading zero rows: diffusers' extra_tokens=2
>>> [(params["grid"], params["extra_tokens"]) for params in grid_candidates(table)][-3:]
[('3,3', 2), ('1,9', 2), ('9,1', 2)]
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
    """``grid`` (``"H,W"``), ``cls_token`` and ``extra_tokens`` for every grid ``table``'s rows can cover."""
    nonzero = np.flatnonzero(table[:-1].any(axis=1))  # the last row is a patch's
    zero_rows = int(nonzero[0]) if len(nonzero) else len(table) - 1
    leading = [(False, None, 0)] + [(True, None, 1)] * (zero_rows >= 1)
    leading += [(True, zero_rows, zero_rows)] * (zero_rows >= 2)
    for cls_token, extra_tokens, rows in leading:
        for height, width in _factor_pairs(len(table) - rows):
            yield {"grid": f"{height},{width}", "cls_token": cls_token, "extra_tokens": extra_tokens}
