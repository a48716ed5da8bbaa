"""Relative-position bucket tables (T5's) read off their (L, L) matrix of bucket indices.

Entry (i, j) is the bucket of the offset j − i: 0 on the diagonal; a bidirectional table puts
the keys after the query from ``half = num_buckets // 2`` up (so entry (0, 1) is half + 1), a
causal one buckets only the keys before it. Below ``max_exact = half // 2`` a distance is its own
bucket; beyond, bucket ``max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact) ·
(half − max_exact))``, capped at half − 1. Each bucket seen past the exact ones bounds
log(max_distance / max_exact) from both sides: the integers within the bounds are tried (T5's
128 first), and every candidate is verified by regeneration, as every match is.

>>> from pecli.schemes.t5 import t5_bucket_table
>>> next(bucket_candidates(t5_bucket_table(64).astype(float)))
{'num_buckets': 32, 'max_distance': 128, 'bidirectional': True}
>>> next(bucket_candidates(t5_bucket_table(300, num_buckets=16, max_distance=64, bidirectional=False)))
{'num_buckets': 16, 'max_distance': 64, 'bidirectional': False}
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["bucket_candidates"]

#: the bucket counts and largest distances libraries ship, tried first where the table allows them
#: (T5, mT5, LongT5, UMT5, Pix2Struct: 32 buckets up to 128)
_SHIPPED_BUCKETS = 32
_SHIPPED_DISTANCES = (128, 256, 64, 512, 1024)
#: integers tried for max_distance within the bounds the table sets, beyond the shipped ones
_MAX_TRIED = 8


def _distances(table: np.ndarray) -> tuple[bool, np.ndarray] | None:
    """Whether the table is bidirectional, and the bucket of each distance 0 … L − 1 to an earlier key
    (column 0 of the table); None when it is no bucket matrix (not square, not whole, not 0 on the diagonal)."""
    if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] < 2:
        return None
    # the first row and column hold every offset (a Toeplitz matrix: the full check is the regeneration's)
    first_row, first_column = np.asarray(table[0], dtype=np.float64), np.asarray(table[:, 0], dtype=np.float64)
    edges = np.concatenate([first_row, first_column])
    if not np.all(edges >= 0) or not np.array_equal(edges, np.round(edges)) or first_row[0] != 0:
        return None
    if edges.max() > 1 << 24:
        return None
    return bool(first_row[1] != 0), first_column.astype(np.int64)


def _max_distance_bounds(buckets: np.ndarray, half: int, max_exact: int) -> tuple[float, float] | None:
    """The open range of max_distance the buckets past the exact ones allow (real numbers); None when no
    max_distance does: a distance past the exact ones in a bucket below them (T5's never are)."""
    low, high = 0.0, math.inf  # bounds on x = log(max_distance / max_exact)
    span = half - max_exact
    for distance in range(max_exact, len(buckets)):
        bucket = int(buckets[distance]) - max_exact
        if bucket < 0:
            return None
        ratio = math.log(distance / max_exact)
        if bucket < span - 1:  # trunc(ratio / x · span) == bucket: bucket ≤ ratio·span/x < bucket + 1
            low = max(low, ratio * span / (bucket + 1))
            if bucket > 0:
                high = min(high, ratio * span / bucket)
        else:  # the last bucket: ratio·span/x ≥ span − 1 (or the cap)
            high = min(high, ratio * span / (span - 1)) if span > 1 else high
    return max_exact * math.exp(low), max_exact * math.exp(high) if high < math.inf else math.inf


def bucket_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    """num_buckets, max_distance and direction whose bucket matrix may be ``table`` (the likeliest first)."""
    read = _distances(table)
    if read is None:
        return
    bidirectional, buckets = read
    length = len(buckets)
    if bidirectional:
        half = int(table[0, 1]) - 1  # key 1 after the query: bucket half + 1
        halves = [half] if half >= 2 else []
    else:
        # half is 2·max_exact or one more, max_exact a little before the first distance not its own bucket
        beyond = np.flatnonzero(buckets != np.arange(length))
        if len(beyond) == 0:  # every distance exact: any half > 2·(L − 1) writes it; T5's first
            halves = list(dict.fromkeys([max(_SHIPPED_BUCKETS, 2 * length), 2 * length]))
        else:
            # distance max_exact is bucket max_exact + trunc(log 1): the first off by one is a little past it
            first_off = int(beyond[0])
            halves = [h for e in range(first_off - 1, max(0, first_off - 4), -1) for h in (2 * e, 2 * e + 1)]
    for half in halves:
        num_buckets = 2 * half if bidirectional else half
        max_exact = half // 2
        if max_exact < 1 or buckets.max() > half - 1:
            continue
        if length <= max_exact:  # no distance past the exact ones: max_distance is not seen
            tried = [d for d in _SHIPPED_DISTANCES if d > max_exact][:1] or [2 * max_exact]
        else:
            bounds = _max_distance_bounds(buckets, half, max_exact)
            if bounds is None:
                continue
            low, high = bounds
            shipped = [d for d in _SHIPPED_DISTANCES if low * (1 - 1e-6) <= d <= high * (1 + 1e-6)]
            first = max(max_exact + 1, math.floor(low))
            last = first + _MAX_TRIED if math.isinf(high) else min(math.ceil(high), first + _MAX_TRIED)
            tried = list(dict.fromkeys([*shipped, *range(first, last + 1)]))
        for max_distance in tried:
            if max_distance > max_exact:
                yield {"num_buckets": num_buckets, "max_distance": int(max_distance), "bidirectional": bidirectional}
