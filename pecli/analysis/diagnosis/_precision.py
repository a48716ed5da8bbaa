"""The reduced-precision finding: positions computed in bfloat16 or float16, so that rows alias."""

from __future__ import annotations

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, per_row
from pecli.dtypes import held_values

__all__ = ["aliased_positions", "precision_findings"]

#: the dtypes positions are computed in by mistake, their significant bits and their largest finite value
_DTYPES = (("bfloat16", 8, 3.3895313892515355e38), ("float16", 11, 65504.0))


def aliased_positions(length: int, dtype: str, start: int = 0) -> np.ndarray:
    """The positions ``start … start + length − 1`` as ``dtype`` rounds them (to nearest, ties to even).

    >>> aliased_positions(4, "bfloat16", start=256).tolist()
    [256.0, 256.0, 258.0, 260.0]
    """
    positions = np.arange(start, start + length, dtype=np.float64)
    return held_values(positions, dtype)


def precision_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """B's row p is A's row at p rounded to bfloat16 or float16 (or A's is B's: either table may carry
    the mistake): the dtype, the table that has it, and the first aliasing position.

    Rows whose rounded position falls beyond the table are not checked; every other row must match
    within its own row's ``tolerance`` (a number, or one per row).

    >>> import pecli
    >>> a = pecli.encode("sinusoidal", 300, 8, dtype="float64")
    >>> b = a[aliased_positions(300, "bfloat16").astype(int).clip(max=299)]
    >>> found = precision_findings(a, b, 1e-9, None)[0]
    >>> found.figures["dtype"], found.figures["first_aliased_position"], found.message[:13]
    ('bfloat16', 257, "B's positions")
    >>> precision_findings(b, a, 1e-9, None)[0].message[:13]
    "A's positions"
    >>> long = np.zeros((70_000, 1))  # beyond float16's 65504: its rows up to 65504 are checked
    >>> precision_findings(long, long + 1.0, 1e-9, None)
    []
    """
    bound = per_row(tolerance, b.shape)
    length = len(a)
    offset = int(reference.params.get("offset") or 0) if reference is not None else 0
    for dtype, bits, largest in _DTYPES:
        # positions beyond the dtype's largest value are not held at all (float16 stops at 65504): the
        # rows up to it are checked, as those whose rounded position falls beyond the table are not
        usable = min(length, max(0, int(largest) - offset + 1))
        rounded = aliased_positions(usable, dtype, start=offset).astype(np.int64) - offset
        moved = np.flatnonzero(rounded != np.arange(usable))
        if not len(moved):
            continue
        rows = np.flatnonzero((rounded >= 0) & (rounded < length))  # a position rounded below the first: not here
        if not np.isin(moved, rows).any():
            continue
        for side, right, aliased in (("B", a, b), ("A", b, a)):
            # the aliased table's row p is the right table's row at p's rounded position
            if not np.all(np.abs(right[rounded[rows]] - aliased[rows]) <= bound[rows]):
                continue
            off = float(np.abs(right[rounded[rows]] - aliased[rows]).max())
            first = int(moved[0]) + offset
            return [
                Finding(
                    "positions_rounded",
                    f"{side}'s positions computed in {dtype} ({bits} significant bits): from position {first} on, "
                    f"positions alias (position {first} rounds to {int(rounded[moved[0]]) + offset})",
                    {
                        "dtype": dtype,
                        "first_aliased_position": first,
                        "rows_checked": len(rows),
                        "residual": off,
                    },
                )
            ]
    return []
