"""Why two tables differ, when it is structural: a row shift and a column permutation that make them agree.

Real code bases disagree on the column layout (interleaved [sin, cos, …] or split [sin … | cos …]),
the sin/cos order and the first position (fairseq starts at padding_idx + 1 = 2). Such tables
have the same values in other places: :func:`diagnose` finds the shift and permutation, and names
the known ones.

>>> import pecli
>>> a = pecli.encode(None, 16, 8, preset="tensor2tensor")
>>> b = pecli.encode(None, 16, 8, preset="fairseq")
>>> found = diagnose(a, b, tolerance=1e-6)
>>> found.shift, found.permutation is None
(2, True)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["Diagnosis", "diagnose", "named_permutations", "permutation_name"]

#: rows used to match columns (the verification then uses every row)
_MATCH_ROWS = 4096
#: columns of A tried for one column of B whose keys fall in its window before giving up
_MATCH_TRIES = 64
#: values per block when columns are compared (float64: 8 MiB)
_BLOCK_VALUES = 1 << 20


@dataclass(frozen=True)
class Diagnosis:
    """B[i, j] = A[i + shift, permutation[j]] on the rows both cover, within ``residual``."""

    shift: int
    permutation: list[int] | None
    residual: float
    description: str


def named_permutations(dim: int) -> dict[tuple[int, ...], str]:
    """The column reorderings that the sinusoidal conventions differ by, with what each means.

    A permutation ``perm`` means B[:, j] = A[:, perm[j]].

    >>> [perm for perm, meaning in named_permutations(4).items() if "sin/cos order" in meaning][:2]
    [(1, 0, 3, 2), (2, 3, 0, 1)]
    """
    if dim % 2 or dim < 4:
        return {}
    permutations: dict[tuple[int, ...], str] = {}
    for perm, meaning in _named(dim):  # at d = 4 a reordering can be its own inverse: the first meaning stays
        permutations.setdefault(tuple(int(i) for i in perm), meaning)
    return permutations


def _named(dim: int) -> Iterator[tuple[np.ndarray, str]]:
    """The reorderings of :func:`named_permutations`, as arrays, one at a time."""
    if dim % 2 or dim < 4:
        return
    columns = np.arange(dim)
    evens, odds = columns[0::2], columns[1::2]
    half = dim // 2
    split_of_interleaved = np.concatenate([evens, odds])
    swapped_split_of_interleaved = np.concatenate([odds, evens])
    yield (
        split_of_interleaved,
        "A interleaved [sin, cos, …], B split [sin … | cos …]: B holds A's even columns, then its odd columns",
    )
    yield np.argsort(split_of_interleaved), "A split [sin … | cos …], B interleaved [sin, cos, …]"
    yield (
        columns ^ 1,
        "the sin/cos order (interleaved layout): each adjacent pair of columns swapped",
    )
    yield np.roll(columns, -half), "the sin/cos order (split layout): the two halves swapped"
    yield (
        swapped_split_of_interleaved,
        "A interleaved, B split with the other sin/cos order: B holds A's odd columns, then its even columns",
    )
    yield np.argsort(swapped_split_of_interleaved), "A split, B interleaved with the other sin/cos order"


def permutation_name(permutation: list[int]) -> str | None:
    """What a column reordering means when it is one of :func:`named_permutations`, else None
    (linear in the width: no tuple or dict of every reordering).

    >>> permutation_name([2, 3, 0, 1])
    'the sin/cos order (split layout): the two halves swapped'
    >>> permutation_name([0, 1, 3, 2]) is None
    True
    """
    wanted = np.asarray(permutation)
    return next((meaning for perm, meaning in _named(len(wanted)) if np.array_equal(perm, wanted)), None)


def _match_columns(a: np.ndarray, b: np.ndarray, tolerance: float) -> list[int] | None:
    """A permutation ``perm`` with ``b ≈ a[:, perm]`` within ``tolerance`` (max abs), or None.

    Near-linear in the table, never a d × d matrix: each column is keyed by a fixed random
    projection of its first rows. Columns that agree have keys within ``tolerance · Σ|w|``: the
    columns are paired in the order of their keys, and when that fails, each of ``b``'s columns
    takes the nearest unused column of ``a`` among those whose keys fall in its window.

    >>> a = np.arange(12.0).reshape(3, 4)
    >>> _match_columns(a, a[:, [2, 0, 3, 1]], 1e-9)
    [2, 0, 3, 1]
    """
    sample_a, sample_b = a[:_MATCH_ROWS], b[:_MATCH_ROWS]
    weights = np.random.default_rng(0).uniform(0.5, 1.5, size=len(sample_a))
    key_a, key_b = weights @ sample_a, weights @ sample_b
    order = np.argsort(key_a, kind="stable")
    by_rank = np.empty(len(order), dtype=np.intp)
    by_rank[np.argsort(key_b, kind="stable")] = order
    if _columns_within(sample_a, sample_b, by_rank, tolerance):
        permutation: list[int] | None = [int(i) for i in by_rank]
    else:
        permutation = _nearest_in_window(sample_a, sample_b, key_a, key_b, order, tolerance, weights)
    if permutation is None or not _columns_within(a, b, np.asarray(permutation), tolerance):
        return None
    return permutation


def _columns_within(a: np.ndarray, b: np.ndarray, permutation: np.ndarray, tolerance: float) -> bool:
    """Whether ``|a[:, permutation] − b| <= tolerance`` everywhere, in blocks of columns."""
    step = max(1, _BLOCK_VALUES // max(1, len(a)))
    return all(
        np.abs(a[:, permutation[start : start + step]] - b[:, start : start + step]).max(initial=0.0) <= tolerance
        for start in range(0, b.shape[1], step)
    )


def _nearest_in_window(
    sample_a: np.ndarray,
    sample_b: np.ndarray,
    key_a: np.ndarray,
    key_b: np.ndarray,
    order: np.ndarray,
    tolerance: float,
    weights: np.ndarray,
) -> list[int] | None:
    """Greedy matching: each column of B the nearest unused column of A whose key is in its window."""
    scale = float(weights.sum())
    slack = tolerance * scale + 1e-12 * scale * max(1.0, float(np.abs(sample_a).max(initial=0.0)))
    sorted_keys = key_a[order]
    lows = np.searchsorted(sorted_keys, key_b - slack, side="left")
    highs = np.searchsorted(sorted_keys, key_b + slack, side="right")
    following = np.arange(len(order) + 1)  # the next unused index in key order (union-find, path halving)

    def next_unused(index: int) -> int:
        while following[index] != index:
            following[index] = following[following[index]]
            index = int(following[index])
        return index

    permutation = []
    for column in range(sample_b.shape[1]):
        index, tries, choice, nearest = next_unused(int(lows[column])), 0, -1, np.inf
        while index < highs[column] and tries < _MATCH_TRIES:
            off = float(np.abs(sample_a[:, order[index]] - sample_b[:, column]).max(initial=0.0))
            if off <= tolerance and off < nearest:
                choice, nearest = index, off
            index, tries = next_unused(index + 1), tries + 1
        if choice < 0:
            return None
        following[choice] = choice + 1
        permutation.append(int(order[choice]))
    return permutation


def _candidate_shifts(a: np.ndarray, b: np.ndarray, tolerance: float) -> list[int]:
    """Shifts s (B[i] = A[i + s]) whose first shared row matches up to a column permutation."""
    length = len(a)
    limit = length // 2  # at least half of the rows must be shared for a diagnosis to mean anything
    sorted_a, sorted_b = np.sort(a[: limit + 1], axis=1), np.sort(b[: limit + 1], axis=1)
    forward = np.flatnonzero(np.abs(sorted_a - sorted_b[0]).max(axis=1) <= tolerance)
    backward = np.flatnonzero(np.abs(sorted_b - sorted_a[0]).max(axis=1) <= tolerance)
    shifts = {int(s) for s in forward} | {-int(s) for s in backward}
    return sorted(shifts, key=lambda s: (abs(s), s))[:8]


def _describe(shift: int, permutation: list[int] | None, shared: int) -> str:
    parts = []
    if shift:
        later = "later" if shift > 0 else "earlier"
        parts.append(
            f"B's row i is A's row i {'+' if shift > 0 else '−'} {abs(shift)}: B starts {abs(shift)} "
            f"position{'s' if abs(shift) > 1 else ''} {later} (an offset), over the {shared} rows both cover"
        )
    if permutation is not None:
        named = permutation_name(permutation)
        if named:
            parts.append(f"the columns are permuted: {named}")
        else:
            shown = ", ".join(map(str, permutation[:12])) + (", …" if len(permutation) > 12 else "")
            parts.append(f"the columns are permuted: B's column j is A's column [{shown}][j]")
    return "; ".join(parts)


def diagnose(a: np.ndarray, b: np.ndarray, *, tolerance: float) -> Diagnosis | None:
    """Explain how ``b`` follows from ``a`` by a row shift and/or a column permutation, or None.

    Example:
        >>> import pecli
        >>> a = pecli.encode("sinusoidal", 16, 8, dtype="float64")
        >>> b = pecli.encode("sinusoidal", 16, 8, layout="split", dtype="float64")
        >>> found = diagnose(a, b, tolerance=1e-12)
        >>> found.shift, found.permutation
        (0, [0, 2, 4, 6, 1, 3, 5, 7])
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    length = len(a)
    for shift in _candidate_shifts(a, b, tolerance):
        shared = length - abs(shift)
        part_a = a[shift:] if shift >= 0 else a[:shared]
        part_b = b[:shared] if shift >= 0 else b[-shift:]
        residual = float(np.abs(part_a - part_b).max())
        if residual <= tolerance:
            if shift == 0:
                return Diagnosis(0, None, residual, f"they differ only by rounding (max {residual:.3g})")
            return Diagnosis(shift, None, residual, _describe(shift, None, shared))
        permutation = _match_columns(part_a, part_b, tolerance)
        if permutation is not None:
            residual = float(np.abs(part_a[:, permutation] - part_b).max())
            return Diagnosis(shift, permutation, residual, _describe(shift, permutation, shared))
    return None
