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

from dataclasses import dataclass

import numpy as np

__all__ = ["Diagnosis", "diagnose", "named_permutations"]

#: rows used to match columns (the verification then uses every row)
_MATCH_ROWS = 4096


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
    evens, odds = list(range(0, dim, 2)), list(range(1, dim, 2))
    half = dim // 2

    def inverse(perm: list[int]) -> tuple[int, ...]:
        return tuple(int(i) for i in np.argsort(perm))

    split_of_interleaved = evens + odds
    swapped_split_of_interleaved = odds + evens
    named = (
        (
            split_of_interleaved,
            "A interleaved [sin, cos, …], B split [sin … | cos …]: B holds A's even columns, then its odd columns",
        ),
        (inverse(split_of_interleaved), "A split [sin … | cos …], B interleaved [sin, cos, …]"),
        (
            [j + 1 if j % 2 == 0 else j - 1 for j in range(dim)],
            "the sin/cos order (interleaved layout): each adjacent pair of columns swapped",
        ),
        (list(range(half, dim)) + list(range(half)), "the sin/cos order (split layout): the two halves swapped"),
        (
            swapped_split_of_interleaved,
            "A interleaved, B split with the other sin/cos order: B holds A's odd columns, then its even columns",
        ),
        (inverse(swapped_split_of_interleaved), "A split, B interleaved with the other sin/cos order"),
    )
    permutations: dict[tuple[int, ...], str] = {}
    for perm, meaning in named:  # at d = 4 a reordering can be its own inverse: the first meaning stays
        permutations.setdefault(tuple(perm), meaning)
    return permutations


def _match_columns(a: np.ndarray, b: np.ndarray, tolerance: float) -> list[int] | None:
    """A permutation ``perm`` with ``b ≈ a[:, perm]`` within ``tolerance`` (max abs), or None."""
    sample_a, sample_b = a[:_MATCH_ROWS], b[:_MATCH_ROWS]
    squared = (
        np.einsum("ij,ij->j", sample_a, sample_a)[:, None]
        + np.einsum("ij,ij->j", sample_b, sample_b)[None, :]
        - 2.0 * (sample_a.T @ sample_b)
    )
    limit = len(sample_a) * tolerance**2 + 1e-12 * max(1.0, float(np.abs(squared).max()))
    used = np.zeros(a.shape[1], dtype=bool)
    permutation = []
    for column in range(b.shape[1]):
        order = np.argsort(squared[:, column], kind="stable")
        choice = next((int(i) for i in order if not used[i]), None)
        if choice is None or squared[choice, column] > limit:
            return None
        used[choice] = True
        permutation.append(choice)
    if np.abs(a[:, permutation] - b).max() > tolerance:
        return None
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
        named = named_permutations(len(permutation)).get(tuple(permutation))
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
