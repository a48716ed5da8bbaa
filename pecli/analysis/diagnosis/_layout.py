"""Findings of layout: positions shifted, columns permuted, RoPE's pairings, halves swapped, transposed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pecli.analysis.diagnose import Diagnosis, _describe, _named, diagnose, permutation_name
from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, residual, within

__all__ = ["layout_findings", "pairing_permutation", "rotary_columns"]


def rotary_columns(table: np.ndarray) -> int:
    """How many leading columns of ``table`` turn (the rest are constant: pass-through columns), even.

    >>> import pecli
    >>> rotary_columns(pecli.encode("rope", 8, 8, part="cos", partial_rotary_factor=0.5))
    4
    """
    constant = np.all(table == table[:1], axis=0)
    turning = np.flatnonzero(~constant)
    count = int(turning[-1]) + 1 if len(turning) else 0
    return count + count % 2


def pairing_permutation(width: int, rotary: int) -> list[int]:
    """Columns of a halves-paired table in adjacent-pairs order: [0, h, 1, h + 1, …], then the rest.

    >>> pairing_permutation(6, 4)
    [0, 2, 1, 3, 4, 5]
    """
    half = rotary // 2
    perm = [column for k in range(half) for column in (k, k + half)]
    return perm + list(range(rotary, width))


def _pairing(a: np.ndarray, b: np.ndarray, tolerance: np.ndarray) -> Finding | None:
    """RoPE's other pairing over the whole width, or in each half of it: a cos and a sin table side by side
    (compare joins a file's tensors, cos | sin), each paired the same way."""
    width = a.shape[1]
    for blocks in (1, 2):
        found = _pairing_in_blocks(a, b, tolerance, blocks) if width % blocks == 0 else None
        if found is not None:
            return found
    return None


def _pairing_in_blocks(a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, blocks: int) -> Finding | None:
    width = a.shape[1] // blocks
    # each block's turning columns: a cos block rounded to float16 holds its slow columns at 1 (constant), as a
    # float32 one does at a large base (Qwen2's 1e6, 512 positions): the whole width is tried first, its halves
    turning = max(rotary_columns(a[:, block * width : (block + 1) * width]) for block in range(blocks))
    for rotary in dict.fromkeys((width, turning)):
        found = _pairing_at(a, b, tolerance, blocks, width, rotary)
        if found is not None:
            return found
    return None


def _pairing_at(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, blocks: int, width: int, rotary: int
) -> Finding | None:
    """RoPE's other pairing over the first ``rotary`` columns of each of ``blocks`` blocks ``width`` wide."""
    if rotary < 4 or rotary > width or rotary % 2:
        return None
    half = rotary // 2
    adjacent = pairing_permutation(width, rotary)
    to_adjacent = [block * width + column for block in range(blocks) for column in adjacent]
    to_halves = [int(i) for i in np.argsort(to_adjacent)]
    parts = [a[:, block * width : (block + 1) * width] for block in range(blocks)]
    repeated_halves = all(within(part[:, :half], part[:, half:rotary], tolerance) for part in parts)
    repeated_pairs = all(within(part[:, 0:rotary:2], part[:, 1:rotary:2], tolerance) for part in parts)
    for perm, repeated, pairings in (
        (to_adjacent, repeated_halves, ("halves (NeoX, rotate_half)", "adjacent pairs (GPT-J, rotate every two)")),
        (to_halves, repeated_pairs, ("adjacent pairs (GPT-J, rotate every two)", "halves (NeoX, rotate_half)")),
    ):
        if not repeated:
            continue
        if within(a[:, perm], b, tolerance):
            off = residual(a[:, perm], b)
            partial = f" over the first {rotary} of {width} columns (partial rotary)" if rotary < width else ""
            each = f" in each of {blocks} blocks of {width} columns (cos | sin)" if blocks > 1 else ""
            return Finding(
                "pairing",
                f"the pairing differs: A pairs {pairings[0]}, B {pairings[1]}{partial}{each}",
                {"a_pairing": pairings[0].split(" (")[0], "b_pairing": pairings[1].split(" (")[0],
                 "rotary_columns": rotary, "blocks": blocks, "residual": off},
            )  # fmt: skip
    return None


def _shift_or_permutation(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference | None = None, parts: tuple[str, ...] = ()
) -> Finding | None:
    found = diagnose(a, b, tolerance=float(tolerance.max(initial=0.0)))  # searched within the loosest bound…
    if found is None:
        found = _halves_swapped(a, b, tolerance)
    if found is None:
        return None
    if found.shift == 0 and found.permutation is None:
        return None  # no layout change: rounding, when it is that, is told by diagnose_difference
    shared = len(a) - abs(found.shift)  # …and kept only when every row B shares is within its own bound
    part_a = a[found.shift :] if found.shift >= 0 else a[:shared]
    rows = slice(0, shared) if found.shift >= 0 else slice(-found.shift, None)
    if found.permutation is not None:
        part_a = part_a[:, found.permutation]
    if not within(part_a, b[rows], tolerance[rows]):
        return None
    if found.shift and _shift_untold(a, found.shift, tolerance):
        return None
    if found.permutation is not None and permutation_name(found.permutation) is None:
        # columns that repeat (RoPE's halves hold each frequency twice) or that rounding makes equal (float16's
        # slow columns) match more than one way: a named reordering that also reproduces B is the one meant
        width = len(found.permutation)
        for perm, _ in _named(width):
            if within(part_a[:, np.argsort(found.permutation)][:, perm], b[rows], tolerance[rows]):
                off = residual(part_a[:, np.argsort(found.permutation)][:, perm], b[rows])
                found = replace(found, permutation=[int(i) for i in perm], residual=off,
                                description=_describe(found.shift, [int(i) for i in perm], shared))  # fmt: skip
                break
    figures = {"shift": found.shift, "permutation": found.permutation, "residual": found.residual}
    if found.permutation is None:
        steps = abs(found.shift)
        words = " (off by one)" if steps == 1 else ""
        return Finding(
            "positions_shifted",
            f"positions shifted by {found.shift}{words}: {found.description}",
            figures,
        )
    width = len(found.permutation)
    swapped = found.shift == 0 and np.array_equal(found.permutation, np.roll(np.arange(width), -(width // 2)))
    named = reference.parts if reference is not None and reference.parts else parts
    if swapped and len(named) == 2:  # a pair side by side (RoPE's cos | sin), its parts named by a reference or a file
        first, second = named
        return Finding(
            "parts_swapped",
            f"the {first} and {second} are swapped: B holds the {second} where the {first} belongs, and the {first} "
            f"where the {second} does",
            figures,
        )
    if swapped:
        return Finding(
            "flip_sin_to_cos",
            "the sin and cos halves are swapped: flip_sin_to_cos differs (diffusers' get_timestep_embedding)",
            figures,
        )
    return Finding("columns_permuted" if found.shift == 0 else "positions_shifted", found.description, figures)


def _halves_swapped(a: np.ndarray, b: np.ndarray, tolerance: np.ndarray) -> Diagnosis | None:
    """B is A with its two halves swapped (a cos | sin pair passed in the other order), tried outright: the column
    matching gives up where many columns agree within the bound (a long bfloat16 pair: its slow cos columns all 1,
    its slow sin columns all near 0, more alike than its tries).

    >>> a = np.arange(8.0).reshape(2, 4)
    >>> _halves_swapped(a, a[:, [2, 3, 0, 1]], np.full((2, 1), 1e-9)).permutation
    [2, 3, 0, 1]
    """
    width = a.shape[1]
    if width % 2:
        return None
    perm = [int(i) for i in np.roll(np.arange(width), -(width // 2))]
    if not within(a[:, perm], b, tolerance):
        return None
    return Diagnosis(0, perm, residual(a[:, perm], b), _describe(0, perm, len(a)))


def _shift_untold(a: np.ndarray, shift: int, tolerance: np.ndarray) -> bool:
    """Whether another shift t (none, or s ± 1, s ± 2) puts A's same values on the rows of B both shifts cover, within
    each row's bound: A repeats (every row alike: a constant table), so the evidence cannot tell the shifts apart — a
    shift then "fits" only by leaving out the rows where A and B part, and names no offset.

    >>> same = np.ones((8, 2))
    >>> _shift_untold(same, -4, np.full((8, 1), 1e-9))
    True
    >>> _shift_untold(np.arange(16.0).reshape(8, 2), -4, np.full((8, 1), 1e-9))
    False
    """
    length = len(a)
    for other in (0, shift - 1, shift + 1, shift - 2, shift + 2):
        if other == shift:
            continue
        # B's rows i that both shifts cover: A's row i + shift against A's row i + other
        first, stop = max(0, -shift, -other), min(length, length - shift, length - other)
        if stop - first < 1:
            continue
        rows = slice(first, stop)
        if within(a[first + shift : stop + shift], a[first + other : stop + other], tolerance[rows]):
            return True
    return False


def layout_findings(
    a: np.ndarray,
    b: np.ndarray,
    tolerance: float | np.ndarray,
    reference: Reference | None = None,
    *,
    parts: tuple[str, ...] = (),
) -> list[Finding]:
    """The layout explanations that reproduce ``b`` from ``a`` within ``tolerance`` (a number, or one per row).

    ``parts``: the parts the tables hold side by side (cos, then sin) when no ``reference`` names them: a file's
    tensors. Their halves swapped are then ``parts_swapped``, not a sinusoidal table's ``flip_sin_to_cos``.

    >>> import pecli
    >>> a = pecli.encode("sinusoidal", 32, 8, dtype="float64")
    >>> [found.code for found in layout_findings(a[1:], a[:-1], 1e-9)]
    ['positions_shifted']
    """
    tolerance = per_row(tolerance, b.shape)
    found = []
    pairing = _pairing(a, b, tolerance)
    if pairing is not None:
        found.append(pairing)
    else:
        shifted = _shift_or_permutation(a, b, tolerance, reference, parts)
        if shifted is not None:
            found.append(shifted)
    # B's row p holds A's column p: A's row p against B's column p, each judged by its own row's bound (B's row p
    # spans every position, and a bound of position p would take float32's angle noise of later rows for a mistake)
    if a.shape[0] == a.shape[1] and within(a, b.T, tolerance):
        off = residual(a.T, b)
        found.append(Finding("transposed", "B is A transposed (rows and columns swapped)", {"residual": off}))
    return found
