"""The reduced-precision finding: positions computed in bfloat16 or float16, so that rows alias."""

from __future__ import annotations

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, per_row
from pecli.dtypes import round_to

__all__ = ["aliased_positions", "precision_findings"]

#: the dtypes positions are computed in by mistake, and their significant bits
_DTYPES = (("bfloat16", 8), ("float16", 11))


def aliased_positions(length: int, dtype: str, start: int = 0) -> np.ndarray:
    """The positions ``start … start + length − 1`` as ``dtype`` rounds them (to nearest, ties to even).

    >>> aliased_positions(4, "bfloat16", start=256).tolist()
    [256.0, 256.0, 258.0, 260.0]
    """
    positions = np.arange(start, start + length, dtype=np.float64)
    return np.asarray(round_to(positions, dtype), dtype=np.float64)


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
    """
    bound = per_row(tolerance, b.shape)
    length = len(a)
    offset = int(reference.params.get("offset") or 0) if reference is not None else 0
    for dtype, bits in _DTYPES:
        rounded = aliased_positions(length, dtype, start=offset).astype(np.int64) - offset
        moved = np.flatnonzero(rounded != np.arange(length))
        if not len(moved):
            continue
        inside = rounded < length
        if not inside[moved].any():
            continue
        for side, right, aliased in (("B", a, b), ("A", b, a)):
            # the aliased table's row p is the right table's row at p's rounded position
            if not np.all(np.abs(right[rounded[inside]] - aliased[inside]) <= bound[inside]):
                continue
            off = float(np.abs(right[rounded[inside]] - aliased[inside]).max())
            first = int(moved[0]) + offset
            return [
                Finding(
                    "positions_rounded",
                    f"{side}'s positions computed in {dtype} ({bits} significant bits): from position {first} on, "
                    f"positions alias (position {first} rounds to {int(rounded[moved[0]]) + offset})",
                    {
                        "dtype": dtype,
                        "first_aliased_position": first,
                        "rows_checked": int(inside.sum()),
                        "residual": off,
                    },
                )
            ]
    return []
