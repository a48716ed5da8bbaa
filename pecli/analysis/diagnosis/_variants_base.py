"""Findings of another base: B is the reference regenerated with a shipped base, A's square root or square, or a
base no shipped model uses fitted to B (dynamic NTK's)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._regenerate import first_part, regenerated, reproduces
from pecli.analysis.diagnosis.finding import Finding, Reference

__all__ = ["BASES", "any_base_findings", "base_findings", "base_of"]

#: bases tried for "the base differs" (RoPE's θ and the sinusoids' max period in shipped models)
BASES: tuple[float, ...] = (
    10.0, 100.0, 1000.0, 10000.0, 20000.0, 50000.0, 75000.0, 100000.0, 150000.0, 160000.0, 250000.0,
    500000.0, 640000.0, 1000000.0, 2000000.0, 5000000.0, 8000000.0, 10000000.0, 25000000.0, 50000000.0,
    100000000.0, 1000000000.0,
)  # fmt: skip
#: the bracket of log(base) a base is fitted in (2 to 1e12), and the points tried in it at each position
_LOG_BASES, _FIT_POINTS = (np.log(2.0), np.log(1e12)), 41
#: the error past which a fit stops (values of unit scale: no base comes near)
_FIT_GIVE_UP = 0.1


def base_of(reference: Reference, mistakes: Any) -> float:
    """A's base (the parameter its scheme's mistakes name as the base), 0 when it has none.

    A reference that leaves the base out has the scheme's default (a caller's partial parameters).

    >>> from pecli.schemes import get_scheme
    >>> base_of(Reference("rope", {"base": 500000.0}), get_scheme("rope").known_mistakes({}))
    500000.0
    >>> base_of(Reference("rope", {"part": "cos"}), get_scheme("rope").known_mistakes({}))
    10000.0
    """
    from pecli.schemes import get_scheme

    if not mistakes.base:
        return 0.0
    default = get_scheme(reference.scheme).defaults.get(mistakes.base)
    return float(reference.params.get(mistakes.base, default) or 0.0)


def base_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with a shipped base, or A's square root or square."""
    if mistakes.base is None:
        return
    ours = base_of(reference, mistakes)
    tried = (*BASES, *_related_bases(ours).values())  # a shipped base, √A's, A's²
    yield from _first_base(reference, b, tolerance, mistakes.base, ours, [base for base in tried if base != ours])


def any_base_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """A base no shipped model uses, fitted to B (dynamic NTK's): tried only when no named mistake explains B, as
    another base can imitate one (a sinusoid's other freq_shift is the base 10000^(h/(h−1)))."""
    ours = base_of(reference, mistakes)
    fitted = _fitted_base(*first_part(reference, b), tolerance, mistakes.base) if ours > 0 else None
    if fitted is None:
        return
    rounded = [*(float(f"{fitted:.{digits}g}") for digits in (3, 4, 6)), fitted]  # the roundest that reproduces
    yield from _first_base(reference, b, tolerance, mistakes.base, ours, rounded)


def _first_base(
    reference: Reference, b: np.ndarray, tolerance: np.ndarray, parameter: str, ours: float, bases: list[float]
) -> Iterator[Finding]:
    """``base_differs`` for the first of ``bases`` whose table reproduces ``b``, if any."""
    for base in bases:
        table, off = reproduces(reference, b, tolerance, {parameter: base})
        if table is not None:
            yield _base_finding(parameter, ours, base, off)
            return


def _base_finding(parameter: str, ours: float, base: float, off: float) -> Finding:
    """``base_differs``, naming B's base as A's square root or square when it is one.

    >>> print(_base_finding("base", 10000.0, 100.0, 0.0).message)
    the base differs: A uses base 10000, B is the same table with base 100 (the square root of A's)
    """
    related = _related_bases(ours)
    named = next((f" ({words})" for words, value in related.items() if abs(base / value - 1.0) < 1e-6), "")
    return Finding(
        "base_differs",
        f"the base differs: A uses {parameter} {ours:g}, B is the same table with {parameter} {base:g}{named}",
        {"parameter": parameter, "a_base": ours, "b_base": base, "residual": off},
    )


def _related_bases(ours: float) -> dict[str, float]:
    """A's base's square root and square, by what B's base is to A's: none for a base that is no positive finite
    number, and no square past the largest float (a user's base of 1e300 has no square to try, and raises nothing).

    >>> _related_bases(10000.0)
    {"the square root of A's": 100.0, "A's squared": 100000000.0}
    >>> _related_bases(1e300)
    {"the square root of A's": 1e+150}
    >>> _related_bases(0.0), _related_bases(float("inf"))
    ({}, {})
    """
    if not (0.0 < ours < float("inf")):
        return {}
    square = ours * ours  # a float product past the largest float is inf, where ** raises OverflowError
    return {"the square root of A's": float(np.sqrt(ours)), **({"A's squared": square} if np.isfinite(square) else {})}


def _fitted_base(reference: Reference, b: np.ndarray, tolerance: np.ndarray, parameter: str) -> float | None:
    """The base that reproduces ``b``'s rows 1, 4, 16… (a base no shipped model uses: √θ, dynamic NTK's), fitted
    coarse to fine: at row 1 each angle is below 1 radian, so the error is unimodal in the base; each later row
    narrows the bracket to the points around the best. None when a row's best is beyond its noise.

    >>> import pecli
    >>> b = pecli.encode("rope", 512, 32, part="cos", base=707.1, dtype="float64")
    >>> reference = Reference("rope", {"part": "cos", "base": 10000.0})
    >>> round(_fitted_base(reference, b, np.full(b.shape[0], 1e-9), "base"), 3)
    707.1
    """
    length, dim = b.shape
    low, high = _LOG_BASES
    best = None
    rows = [4**k for k in range(12) if 4**k < length - 1] + [length - 1] * 4  # the last row again: to its noise
    for stage, row in enumerate(rows):
        grid = np.linspace(low, high, _FIT_POINTS)
        errors = []
        for log_base in grid:
            changes = {parameter: float(np.exp(log_base))}
            table = regenerated(reference, length, dim, changes, rows=range(row, row + 1))
            if table is None:
                return None
            errors.append(float(np.max(np.abs(table - b[row : row + 1]))))
        at = int(np.argmin(errors))
        if stage and errors[at] > _FIT_GIVE_UP:  # no base comes near this row: another cause
            return None
        best = float(grid[at])
        step = grid[1] - grid[0]
        low, high = best - 2 * step, best + 2 * step
    return None if best is None else float(np.exp(best))
