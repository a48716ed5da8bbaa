"""The reference regenerated with one mistake's parameters, the strict test that it reproduces B, and what the
variant findings (:mod:`pecli.analysis.diagnosis._variants`) say of the columns where two tables part."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._layout import rotary_columns
from pecli.analysis.diagnosis.finding import Reference, per_row, reproduced, residual, within
from pecli.errors import PecliError
from pecli.schemes import encode, get_scheme

__all__ = [
    "SCREEN_ROWS", "column_words", "first_part", "frequency_index", "parted_columns", "regenerated", "reproduces",
]  # fmt: skip

#: rows a candidate is screened on (the last rows: the largest angles tell bases apart)
SCREEN_ROWS = 8


def regenerated(
    reference: Reference, length: int, dim: int, changes: Mapping[str, Any], rows: range | None = None
) -> np.ndarray | None:
    """The reference's table (``length`` × ``dim``, in float64) with its parameters ``changes``, only ``rows`` when
    given; None when the scheme cannot make it (a dim its parts cannot share, parameters it refuses).

    >>> regenerated(Reference("rope", {"part": "cos"}), 4, 8, {"base": 100.0}).shape
    (4, 8)
    """
    params = {**reference.params, **changes}
    whole = reference.length or length  # the diagnosed rows may be the first rows of a longer table
    if rows is None and whole != length:
        rows = range(length)
    # a bias over query and key positions (t5) has no dim: its columns are the keys
    width = dim if get_scheme(reference.scheme).takes_dim else None
    parts = reference.parts or (None,)
    if width is not None and width % len(parts):
        return None
    try:  # each part (RoPE's cos, sin) in its own columns, as the compared table holds them
        tables = [
            encode(reference.scheme, whole, None if width is None else width // len(parts), dtype="float64",
                   rows=rows, **(params if part is None else {**params, "part": part}))
            for part in parts
        ]  # fmt: skip
    except (PecliError, ValueError):
        return None
    if not all(isinstance(table, np.ndarray) and table.ndim == 2 for table in tables):
        return None
    return tables[0] if len(tables) == 1 else np.hstack(tables)


def reproduces(
    reference: Reference, b: np.ndarray, tolerance: np.ndarray, changes: Mapping[str, Any], scale: float = 1.0
) -> tuple[np.ndarray | None, float]:
    """The reference with ``changes`` (its values times ``scale``) and its residual against ``b`` when it
    reproduces ``b`` within every row's ``tolerance`` (else None, inf); screened on the last rows first."""
    length, dim = b.shape
    rows = range(max(0, length - SCREEN_ROWS), length)
    tail = regenerated(reference, length, dim, changes, rows=rows)
    if tail is None or not within(scale * tail, b[rows.start :], tolerance[rows.start :]):
        return None, float("inf")
    table = regenerated(reference, length, dim, changes)
    if table is not None:
        table = scale * table
    if table is None or not reproduced(table, b, tolerance):  # within B's own rounding, not only the row's bound
        return None, float("inf")
    return table, residual(table, b)


def frequency_index(table: np.ndarray, column: int, tolerance: float | np.ndarray) -> int:
    """The frequency a column of a RoPE-like table carries: halves repeat (j mod r/2), pairs repeat (j // 2)
    (``tolerance``: a number, or one per row).

    >>> import pecli
    >>> frequency_index(pecli.encode("rope", 8, 8, part="cos", layout="interleaved"), 5, 1e-6)
    2
    """
    rotary = rotary_columns(table)
    half = rotary // 2
    bound = per_row(tolerance, table.shape)
    if half and column < rotary and within(table[:, :half], table[:, half:rotary], bound):
        return column % half
    if half and column < rotary and within(table[:, 0:rotary:2], table[:, 1:rotary:2], bound):
        return column // 2
    return column


def first_part(reference: Reference, b: np.ndarray) -> tuple[Reference, np.ndarray]:
    """The reference and ``b`` cut to the first of the parts side by side (RoPE's cos of a cos | sin pair): a base
    fitted to it is the pair's (each part holds every frequency), for half the tables regenerated.

    >>> part, cut = first_part(Reference("rope", {}, parts=("cos", "sin")), np.zeros((2, 8)))
    >>> part.parts, cut.shape
    (('cos',), (2, 4))
    """
    if len(reference.parts) < 2 or b.shape[-1] % len(reference.parts):
        return reference, b
    width = b.shape[-1] // len(reference.parts)
    return replace(reference, parts=reference.parts[:1]), b[..., :width]


def parted_columns(a: np.ndarray, other: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """The columns where ``other`` parts from ``a`` beyond some row's ``tolerance``, in order.

    >>> parted_columns(np.zeros((2, 3)), np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), np.full((2, 1), 0.5))
    array([1, 2])
    """
    return np.flatnonzero(np.any(np.abs(a - other) > tolerance, axis=0))


def column_words(columns: np.ndarray) -> str:
    """Column indices in words: a run, every k-th column of a run, or the first few.

    >>> column_words(np.arange(4)), column_words(np.arange(0, 8, 2)), column_words(np.array([1, 2, 6]))
    ('columns 0–3', 'every 2nd column from 0 to 6', 'columns 1, 2, 6')
    """
    first, last = int(columns[0]), int(columns[-1])
    steps = np.diff(columns)
    if len(columns) > 2 and np.all(steps == 1):
        return f"columns {first}–{last}"
    if len(columns) > 2 and np.all(steps == steps[0]):
        step = int(steps[0])
        return f"every {step}{'nd' if step == 2 else 'rd' if step == 3 else 'th'} column from {first} to {last}"
    shown = ", ".join(str(int(column)) for column in columns[:8])
    return f"columns {shown}{', …' if len(columns) > 8 else ''}"
