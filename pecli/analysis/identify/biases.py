"""ALiBi read off its tensors: all heads' (H, L, L) biases, one head's (L, L) matrix, the (H,) slopes,
or one query row per head, (H, 1, L): HF BLOOM's ``build_alibi_tensor`` (the key form m·j, alike on
every query row) and MPT's ``build_mpt_alibi_tensor`` (m·(j − L + 1): the distance form's last row).

The form of all heads' biases and of a query row is read off the row's shape; the scaling off the
least-squares ratio of the values to the standard slopes × the form's slope-1 bias: 1 for BLOOM's,
1/√head_dim for HF Falcon's (its bfloat16 slopes and positions, divided by √head_dim). Each
arithmetic's slopes give their own ratio, whose nearest head_dims are tried; the search keeps the
one its regeneration holds.

Head h's bias is −|i − j|·m_h, so the entry next to the diagonal is −m_h: a single head is named
by the head counts whose slopes include it (the fewest heads first), all heads by their count.

>>> from pecli.schemes.alibi import alibi_table
>>> next(alibi_candidates(alibi_table(6, heads=8)))
{'heads': 8}
>>> falcon = alibi_table(6, heads=32, form="key", arithmetic="bfloat16", head_dim=64)  # each arithmetic's reading
>>> [params for params in alibi_candidates(falcon) if params.get("head_dim") == 64]
[{'heads': 32, 'form': 'key', 'head_dim': 64}, {'heads': 32, 'form': 'key', 'arithmetic': 'bfloat16', 'head_dim': 64}]
>>> next(alibi_candidates(alibi_table(6, heads=8, head=2)))  # slope 2^-3: also head 5 of 6
{'heads': 6, 'head': 5}
>>> next(alibi_row_candidates(alibi_table(6, heads=8, form="key")[:, 0]))
({'heads': 8, 'form': 'key'}, 0)
>>> next(alibi_row_candidates(alibi_table(6, heads=8)[:, -1]))  # MPT's
({'heads': 8, 'form': 'distance'}, 5)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.schemes.alibi import ALIBI_ARITHMETICS, MAX_HEADS, alibi_slopes, alibi_table

__all__ = ["alibi_candidates", "alibi_row_candidates", "alibi_rows", "alibi_scalings", "alibi_shape"]

#: head counts searched for a single head's slope (a scan of 0.1 s; models ship up to 128)
_MAX_SINGLE_HEADS = 1024
#: a single head is tried at this many (head count, head) pairs at most, the closest slopes first: each is screened
_SINGLE_TRIED = 16
#: a scaling read off the values within this (relative) of 1/√head_dim is tried (bfloat16 slopes are 2^-9 off)
_RATIO = 1e-2
#: head_dims tried for each arithmetic's ratio, the closest first
_HEAD_DIMS_TRIED = 3
#: the largest head_dim tried (models' are 64 to 256)
_MAX_HEAD_DIM = 1 << 16
#: the least-squares sums of a scaling take this many values of the rows at a time (8 MiB of float64)
_BLOCK_VALUES = 1 << 20
#: slopes closer than this (relative) are alike: the fewest heads first (bfloat16's rounding is 2^-9)
_ALIKE = 2.0**-8


def alibi_shape(shape: tuple[int, ...]) -> bool:
    """True for the shapes of ALiBi's tensors other than a (len, d) table: (H, L, L), the last q query rows of
    L keys (H, q, L) that a decoding step holds, and (H,); never more query rows than keys.

    >>> alibi_shape((8, 32, 32)), alibi_shape((8,)), alibi_shape((2, 3, 4)), alibi_shape((2, 4, 3))
    (True, True, True, False)
    """
    return len(shape) == 1 or (len(shape) == 3 and 1 <= shape[1] <= shape[2])


def alibi_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    """ALiBi parameters (heads, head, part) whose tensor has ``table``'s shape and first off-diagonal slope."""
    if table.ndim == 1:
        yield {"heads": len(table), "part": "slopes"}
    elif table.ndim == 3:
        # the last query row tells the forms apart: −m·(L − 1 − j) or m·j
        heads, length = table.shape[0], table.shape[-1]
        rows = np.asarray(table[:, -1], dtype=np.float64)
        biased, padding = _unpadded(rows)
        found = [
            {"heads": biased, **({"form": "key"} if form == "key" else {}), **scaling, **padding}
            for form in ("distance", "key")
            for scaling in alibi_scalings(rows[:biased], _basis(form, length, length - 1))
        ]
        yield from found or [{"heads": heads}]
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
    length = table.shape[1]
    if length < 2:
        return
    first = np.asarray(table[0], dtype=np.float64)
    query = int(np.argmax(first))
    shapes = []
    if first[0] == 0 and first[1] > first[0]:  # rises from 0 at key 0
        shapes.append(("key", 0))
    if first[query] == 0:  # peaks at 0 on the query's own position
        shapes.append(("distance", query))
    biased, padding = _unpadded(table)
    for form, row in shapes:
        basis = _basis(form, length, row)
        if not _proportional(first, basis):  # head 0's row is its slope × the basis (a sinusoid's is not)
            continue
        for scaling in alibi_scalings(table[:biased], basis):
            yield {"heads": biased, "form": form, **scaling, **padding}, row


def _unpadded(rows: np.ndarray) -> tuple[int, dict[str, Any]]:
    """The heads before trailing all-zero ones, and ``total_heads`` when there are such heads: x-transformers'
    ``AlibiPositionalBias(heads, total_heads)`` pads with heads that get no bias.

    >>> _unpadded(alibi_table(4, heads=3, total_heads=5)[:, -1])
    (3, {'total_heads': 5})
    >>> _unpadded(alibi_table(4, heads=3)[:, -1])
    (3, {})
    """
    heads = len(rows)
    biased = heads
    while biased > 1 and not np.any(rows[biased - 1]):
        biased -= 1
    if biased == heads or not np.any(rows[0]):
        return heads, {}
    return biased, {"total_heads": heads}


def _proportional(row: np.ndarray, basis: np.ndarray) -> bool:
    """Whether ``row`` is a positive multiple of ``basis`` within bfloat16's rounding of each value.

    >>> _proportional(0.5 * np.arange(6.0), np.arange(6.0)), _proportional(np.array([0, 1, 0, 1.0]), np.arange(4.0))
    (True, False)
    """
    norm = float(basis @ basis)
    factor = float(row @ basis) / norm if norm > 0 else 0.0
    return factor > 0 and float(np.abs(row - factor * basis).max()) <= 2.0**-7 * float(np.abs(row).max())


def alibi_scalings(rows: np.ndarray, basis: np.ndarray) -> Iterator[dict[str, Any]]:
    """The arithmetic and head_dim (unset: float64, none) under which each head's standard slope × ``basis``
    may be ``rows`` (H, L): for each arithmetic's slopes, the least-squares ratio of the values to them is
    1 (no division) or about 1/√head_dim (Falcon's), the nearest head_dims first.

    >>> rows = alibi_table(8, heads=4, form="key", arithmetic="bfloat16", head_dim=128, dtype="float64")[:, 0]
    >>> list(alibi_scalings(rows, np.arange(8.0)))[:2]
    [{'head_dim': 128}, {'head_dim': 129}]
    >>> [s for s in alibi_scalings(rows, np.arange(8.0)) if s.get("arithmetic")][0]
    {'arithmetic': 'bfloat16', 'head_dim': 128}
    """
    heads = len(rows)
    if not 0 < heads <= MAX_HEADS:
        return
    # each head's values against the basis, in float64 a block of heads at a time (no (H, L) copy or model)
    step = max(1, _BLOCK_VALUES // max(1, len(basis)))
    along = np.concatenate([np.asarray(rows[h : h + step], dtype=np.float64) @ basis for h in range(0, heads, step)])
    for arithmetic in ALIBI_ARITHMETICS:
        named = {} if arithmetic == "float64" else {"arithmetic": arithmetic}
        slopes = alibi_table(None, heads=heads, part="slopes", arithmetic=arithmetic, dtype="float64")
        # least squares of rows against slopes ⊗ basis: <rows, s⊗b> / (|s|²·|b|²)
        norm = float(slopes @ slopes) * float(basis @ basis)
        ratio = float(slopes @ along) / norm if norm > 0 else 0.0
        if not ratio > 0:
            continue
        if abs(ratio - 1.0) <= _RATIO:
            yield named
        if not (_MAX_HEAD_DIM * (1 + 3 * _RATIO)) ** -0.5 <= ratio < 1.5**-0.5:  # 1/√head_dim: 1.5 < head_dim ≤ most
            continue  # (nor 1/ratio² past float64's range)
        centre = 1.0 / ratio**2
        near = range(
            max(2, math.floor(centre * (1 - 3 * _RATIO))), min(_MAX_HEAD_DIM, math.ceil(centre * (1 + 3 * _RATIO))) + 1
        )
        fits = sorted((abs(ratio * math.sqrt(dim) - 1.0), dim) for dim in near)
        for off, dim in fits[:_HEAD_DIMS_TRIED]:
            if off <= _RATIO:
                yield {**named, "head_dim": dim}


def _basis(form: str, length: int, query: int) -> np.ndarray:
    """The slope-1 bias of query ``query`` at each key: j (the key form) or −|query − j|."""
    keys = np.arange(length, dtype=np.float64)
    return keys if form == "key" else 0.0 - np.abs(keys - query)


def alibi_rows(params: dict[str, Any], length: int, query_row: int, heads: range | None = None) -> np.ndarray:
    """Query row ``query_row`` of every head's float64 (L, L) biases: an (H, L) table (of the heads ``heads``:
    all by default)."""
    return np.concatenate(
        [
            alibi_table(length, dtype="float64", rows=range(query_row, query_row + 1), **{**params, "head": head})
            for head in (range(params.get("total_heads") or params["heads"]) if heads is None else heads)
        ]
    )
