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

Each reading is then regenerated head by head, a block of query rows at a time (no float64 copy of the
whole tensor), and named only if its command writes what compare accepts (:func:`_identify_alibi`,
:func:`_identify_alibi_rows`).

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

import functools
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from pecli.analysis.identify.result import Candidate, Identification, Undetermined
from pecli.analysis.identify.values import _looks_gaussian, _value_statistics
from pecli.analysis.identify.verify import _CHUNK_BYTES, _agrees, _noise, _set
from pecli.dtypes import held_values
from pecli.schemes.alibi import ALIBI_ARITHMETICS, MAX_HEADS, alibi_slopes, alibi_table
from pecli.schemes.catalog import SCHEMES, get_scheme

__all__ = [
    "alibi_candidates",
    "alibi_row_candidates",
    "alibi_rows",
    "alibi_scalings",
    "alibi_shape",
    "same_slope_heads",
]

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


#: the (heads, head) pairs named in a single head's note (the rest are counted)
_PAIRS_NAMED = 6


def same_slope_heads(best: Candidate) -> Undetermined | None:
    """The (head count, head) pairs whose slope is ``best``'s single head's, bit for bit (so they write its (L, L)
    biases identically), up to the head counts searched; None when ``best`` is no single head or no other has it.

    >>> same_slope_heads(Candidate("alibi", {"heads": 5, "head": 4})).note
    '1020 pairs up to 1024 heads have this slope, 2^-1, and write it identically: (5, 4), (8, 0), (16, 1), \
(32, 3), (64, 7), (128, 15), …'
    """
    params = best.params
    heads, head = params.get("heads"), params.get("head")
    defaults = SCHEMES[best.scheme].defaults  # a scheme of heads, one of which a table may be: ALiBi's
    if "heads" not in defaults or "head" not in defaults or not isinstance(heads, int) or not isinstance(head, int):
        return None
    slope = float(alibi_slopes(heads)[head])
    pairs = [
        (count, int(index))
        for count in range(1, _MAX_SINGLE_HEADS + 1)
        for index in np.flatnonzero(alibi_slopes(count) == slope)
    ]
    if len(pairs) < 2:
        return None
    # the fewest heads at each head index (9 to 15 heads hold 8's slopes first: (8, 0) stands for them)
    firsts = list({index: (count, index) for count, index in reversed(pairs)}.values())[::-1]
    named = ", ".join(f"({count}, {index})" for count, index in sorted(firsts)[:_PAIRS_NAMED])
    more = ", …" if len(pairs) > min(len(firsts), _PAIRS_NAMED) else ""
    return Undetermined(
        "heads, head",
        f"{len(pairs)} pairs up to {_MAX_SINGLE_HEADS} heads have this slope, 2^{math.log2(slope):g}, and write it "
        f"identically: {named}{more}",
        readings=tuple({"heads": count, "head": index} for count, index in pairs),
    )


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


def _identify_alibi(
    values: np.ndarray, dtype: str, precision: str, tolerance: float, stored_tolerance: float, scale: float
) -> Identification:
    """All heads' (H, L, L) ALiBi biases, their last q query rows (H, q, L) as a decoding step holds them, or
    the (H,) slopes, regenerated head by head (a block of rows at a time, compared in place: no float64 copy
    of the whole table): each form and scaling read off the values, the closest on the last query row first,
    until one holds (else the closest, no match)."""
    found = [{**SCHEMES["alibi"].defaults, **params} for params in alibi_candidates(values)]
    length = values.shape[-1] if values.ndim == 3 else None
    if length is not None and len(found) > 1:  # screened on the last query row of each head (H × L values)
        last = values[:, -1]
        errors = [_rounded_error(last, alibi_rows(_set(params), length, length - 1), precision) for params in found]
        found = [found[index] for index in sorted(range(len(found)), key=errors.__getitem__)]
    closest: tuple[dict[str, Any], float, float, bool, str] | None = None
    for params in found:
        # the first reading's error is reported when none holds: measured over every row; a later one stops
        # at the first block beyond the noise
        error, excess = _alibi_excess(values, params, precision, scale, stop=closest is not None)
        reproduce = dtype if error <= stored_tolerance else precision
        # its command must reproduce it
        unverified = excess <= 1.0 and not _agrees(functools.partial(_alibi_blocks, values, params, reproduce))
        if closest is None or (excess <= 1.0 and not unverified):
            closest = (params, error, excess, unverified, reproduce)
        if excess <= 1.0 and not unverified:
            break
    assert closest is not None  # alibi_candidates yields at least one
    params, error, excess, unverified, reproduce = closest
    level = "none" if excess > 1.0 or unverified else "exact" if error <= tolerance else "approximate"
    # the value statistics describe a tensor that matched nothing, as for a (len, d) table
    mean, std = _value_statistics(values) if level == "none" else (0.0, 0.0)
    return Identification(
        shape=values.shape,
        dtype=dtype,
        reproduce_dtype=reproduce,
        best=Candidate("alibi", params, error),
        level=level,
        tolerance=tolerance,
        precision=precision,
        value_mean=mean,
        value_std=std,
        gaussian=level == "none" and _looks_gaussian(values.reshape(-1), mean, std),
        unverified=unverified,
        # decoding's last q query rows of L keys: rows L − q … L − 1 of the (H, L, L) biases
        query_start=length - values.shape[1] if length is not None and values.shape[1] < length else None,
    )


def _alibi_blocks(
    values: np.ndarray, params: Mapping[str, Any], dtype: str | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(the values' rows, the candidate's same rows in float64) of ALiBi's (H, L, L) biases, or their last q
    query rows (H, q, L), head by head and a block of query rows at a time (about ``_CHUNK_BYTES`` of float64),
    or of the (H,) slopes whole; ``dtype``: the candidate's rows rounded once to it (as its command writes
    them), widened again."""
    given = _set(params)
    if values.ndim != 3:
        blocks: Iterator[tuple[np.ndarray, Any]] = iter([(values, None)])
    else:
        held, length = values.shape[1:]
        first = length - held  # the table's row 0 is this query of the (L, L) biases
        step = max(1, _CHUNK_BYTES // (8 * length))
        blocks = (
            (values[head, start : start + step], (head, range(first + start, first + min(start + step, held))))
            for head in range(values.shape[0])
            for start in range(0, held, step)
        )
    for rows, where in blocks:
        if where is None:
            expected = get_scheme("alibi").function(None, None, dtype="float64", **given)
        else:
            head, queries = where
            expected = alibi_table(length, dtype="float64", rows=queries, **{**given, "head": head})
        if dtype is not None:
            expected = held_values(expected, dtype)
        yield rows, expected


def _alibi_excess(
    values: np.ndarray, params: Mapping[str, Any], precision: str, scale: float, *, stop: bool
) -> tuple[float, float]:
    """The largest |error| of the ALiBi reading ``params`` and its largest error in units of the noise,
    block by block (``stop``: at the first block beyond the noise)."""
    error, excess = 0.0, 0.0
    for rows, expected in _alibi_blocks(values, params):
        difference = np.subtract(rows, expected, dtype=np.float64)
        np.abs(difference, out=difference)
        error = max(error, float(difference.max()))
        noise = _noise("alibi", params, np.zeros(1), expected, precision, scale)  # (in place of expected)
        excess = max(excess, float(np.divide(difference, noise, out=difference).max()))
        if stop and excess > 1.0:
            break
    return error, excess


def _rounded_error(values: np.ndarray, expected: np.ndarray, precision: str) -> float:
    """The largest |error| of the float64 ``expected`` rounded once to the values' ``precision``: the ranking
    of ALiBi's readings (BLOOM's bfloat16 biases are its float64 ones rounded, as Falcon's arithmetic's are:
    the tie goes to the simpler, tried first)."""
    return float(np.abs(values - held_values(expected, precision)).max())


def _identify_alibi_rows(
    values: np.ndarray, dtype: str, precision: str, tolerance: float, stored_tolerance: float, scale: float
) -> Identification | None:
    """An (H, L) table of one ALiBi query row per head (BLOOM's, MPT's, Falcon's), regenerated a block of heads
    at a time (a reading beyond the noise dropped at its first such block), the closest form and scaling first;
    None if none holds."""
    held: list[tuple[float, int, dict[str, Any], int, float]] = []
    for index, (params, query_row) in enumerate(alibi_row_candidates(values)):
        params = {**SCHEMES["alibi"].defaults, **params}
        measured = _alibi_rows_errors(values, params, query_row, precision, scale)
        if measured is not None:
            held.append((measured[0], index, params, query_row, measured[1]))
    for _, _, params, query_row, error in sorted(held, key=lambda entry: entry[:2]):
        reproduce = dtype if error <= stored_tolerance else precision
        if _agrees(functools.partial(_alibi_row_blocks, values, params, query_row, reproduce)):
            return Identification(
                shape=values.shape,
                dtype=dtype,
                reproduce_dtype=reproduce,
                best=Candidate("alibi", params, error),
                level="exact" if error <= tolerance else "approximate",
                tolerance=tolerance,
                precision=precision,
                query_row=query_row,
            )
    return None


def _alibi_row_blocks(
    values: np.ndarray, params: Mapping[str, Any], query_row: int, dtype: str | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(a block of the (H, L) table's heads, the reading's same rows in float64; ``dtype``: rounded once to it,
    widened again), about ``_CHUNK_BYTES`` of float64 at a time."""
    heads, length = values.shape
    step = max(1, _CHUNK_BYTES // (8 * length))
    for start in range(0, heads, step):
        block = range(start, min(start + step, heads))
        expected = alibi_rows(_set(params), length, query_row, block)
        if dtype is not None:
            expected = held_values(expected, dtype)
        yield values[block.start : block.stop], expected


def _alibi_rows_errors(
    values: np.ndarray, params: Mapping[str, Any], query_row: int, precision: str, scale: float
) -> tuple[float, float] | None:
    """The largest |error| of the ALiBi query-row reading rounded to the values' precision (the ranking) and
    unrounded; None once a block is beyond the noise (no match)."""
    rounded_error, error = 0.0, 0.0
    for given, expected in _alibi_row_blocks(values, params, query_row):
        rounded_error = max(rounded_error, _rounded_error(given, expected, precision))
        difference = np.abs(np.subtract(given, expected, dtype=np.float64))
        error = max(error, float(difference.max()))
        noise = _noise("alibi", params, np.zeros(1), expected, precision, scale)  # (in place of expected)
        if float(np.divide(difference, noise, out=difference).max()) > 1.0:
            return None
    return rounded_error, error
