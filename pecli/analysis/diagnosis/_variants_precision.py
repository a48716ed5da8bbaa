"""Findings of a narrower dtype in the reference's own computation: its base held in float16 (rounded, or
overflowed to inf), its frequencies rounded to a dtype (an engine's ``inv_freq.half()``) or exact where the
reference rounds them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._regenerate import SCREEN_ROWS, column_words, regenerated, reproduces
from pecli.analysis.diagnosis._variants_base import base_of
from pecli.analysis.diagnosis.finding import Finding, Reference, reproduced, residual, within
from pecli.dtypes import held_values, largest_value
from pecli.errors import PecliError

__all__ = ["base_held_findings", "frequencies_rounded_findings"]


def base_held_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with its base held in a narrower dtype (an engine's θ in a float16 tensor): rounded to it
    (50000 → 49984), or overflowed to inf past its largest value (float16's 65504: 1e6, 500000), where every frequency
    base^(−2i/d) but base^0 = 1 is 0 and every column that depends on the base holds its value at position 0."""
    ours = base_of(reference, mistakes)
    if mistakes.base is None or ours <= 0:
        return
    for dtype in mistakes.base_dtypes:
        try:
            held = float(held_values(np.array([ours]), dtype)[0])
        except PecliError:  # past the dtype's largest value: inf
            held = float("inf")
        if held == ours:
            continue
        figures: dict[str, Any] = {"parameter": mistakes.base, "dtype": dtype, "a_base": ours}
        if np.isfinite(held):
            table, off = reproduces(reference, b, tolerance, {mistakes.base: held})
            if table is not None:
                yield Finding(
                    "base_rounded",
                    f"the base rounded to {dtype}: A uses {mistakes.base} {ours:g}, B the same table with {held:g}, "
                    f"its nearest {dtype} value (an engine holding the base in a {dtype} tensor)",
                    {**figures, "b_base": held, "residual": off},
                )
                return
            continue
        overflowed = _overflowed_base(reference, b, tolerance, mistakes)
        if overflowed is not None:
            table, turning = overflowed
            largest = largest_value(dtype)
            yield Finding(
                "base_overflowed",
                f"the base overflowed {dtype} (inf): A's {mistakes.base} {ours:g} is past {dtype}'s largest value "
                f"{largest:g}, so B's frequencies base^(−2i/d) are 1, then 0: only the columns of base^0 = 1 turn "
                f"({column_words(turning) if len(turning) else 'none'}), every other column holds its value at "
                "position 0",
                {**figures, "largest": largest, "turning_columns": [int(column) for column in turning],
                 "residual": residual(table, b)},
            )  # fmt: skip
            return


def _overflowed_base(
    reference: Reference, b: np.ndarray, tolerance: np.ndarray, mistakes: Any
) -> tuple[np.ndarray, np.ndarray] | None:
    """The reference with an infinite base, when it reproduces ``b``, and the columns that still turn: those that
    do not depend on the base (base^0's: the last rows with twice the base hold them too) as they are, every other
    at its value at position 0 (angle 0: cos 1, times any factor on it, sin 0). Screened on the last rows first."""
    if mistakes.position_offset is None:
        return None
    length, dim = b.shape
    screen = range(max(0, length - SCREEN_ROWS), length)
    twice = {mistakes.base: 2.0 * float(reference.params[mistakes.base])}
    tail, other = (regenerated(reference, length, dim, changes, rows=screen) for changes in ({}, twice))
    at_zero = regenerated(reference, length, dim, {mistakes.position_offset: 0}, rows=range(0, 1))
    if tail is None or other is None or at_zero is None:
        return None
    moved = ~np.all(tail == other, axis=0)  # the columns that depend on the base
    tail[:, moved] = at_zero[0, moved]
    if not within(tail, b[screen.start :], tolerance[screen.start :]):
        return None
    table = regenerated(reference, length, dim, {})
    if table is None:
        return None
    table[:, moved] = at_zero[0, moved]
    if not reproduced(table, b, tolerance):
        return None
    return table, np.flatnonzero(~moved & np.any(tail != at_zero, axis=0))


def frequencies_rounded_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with its frequencies held in another dtype (an engine's ``inv_freq.half()``: float16
    keeps 11 significant bits, bfloat16 8), or exact where the reference rounds them: the angles p·θ drift with p,
    so A and B part from some position on. The first dtype that reproduces B is named."""
    parameter = mistakes.frequency_dtype
    if parameter is None:
        return
    ours = reference.params.get(parameter)
    for dtype in (*mistakes.frequency_dtypes, None):
        if dtype == ours:
            continue
        table, off = reproduces(reference, b, tolerance, {parameter: dtype})
        if table is None:
            continue
        parted = np.flatnonzero(np.any(np.abs(a - b) > tolerance, axis=1))
        first = int(parted[0]) if len(parted) else 0
        held = "exact frequencies" if dtype is None else f"its frequencies rounded to {dtype}"
        where = "exact frequencies" if ours is None else f"frequencies held in {ours}"
        yield Finding(
            "frequencies_rounded",
            f"B is the same table with {held} where A has {where} ({parameter}): the angles p·θ drift with the "
            f"position, so they part from position {first} on",
            {"parameter": parameter, "a_dtype": ours, "b_dtype": dtype, "first_position": first, "residual": off},
        )
        return
