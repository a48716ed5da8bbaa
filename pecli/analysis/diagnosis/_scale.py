"""The constant findings: B = c·A, with c named from the reference's parameters when it matches; B = A + c."""

from __future__ import annotations

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, residual, within
from pecli.schemes import get_scheme

__all__ = ["factor_findings", "named_factors", "offset_findings"]


def named_factors(reference: Reference | None) -> dict[str, float]:
    """The constants the reference's scheme names for its parameters (YaRN's attention factor, mscale alone…).

    >>> sorted(named_factors(None))
    []
    """
    if reference is None:
        return {}
    mistakes = get_scheme(reference.scheme).known_mistakes(reference.params)
    return dict(mistakes.factors) if mistakes is not None else {}


def factor_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """``B = c·A`` within the tolerance (each row's, scaled by |c|), c ≠ 1: the factor, and what it matches.

    >>> a = np.array([[1.0, 0.5], [0.25, -1.0]])
    >>> factor_findings(a, 2 * a, 1e-9, None)[0].figures["factor"]
    2.0
    """
    norm = float(np.einsum("ij,ij->", a, a))
    if norm == 0.0:
        return []
    bound = per_row(tolerance, b.shape)
    factor = float(np.einsum("ij,ij->", a, b)) / norm
    slack = bound * max(1.0, abs(factor))
    row_size = np.abs(a).max(axis=1, keepdims=True)  # a factor's error shows most at a row's largest value
    if not within(factor * a, b, slack) or np.all(abs(factor - 1.0) * row_size <= bound):
        return []  # not a factor, or one that no row can tell from 1
    off = residual(factor * a, b)
    matches = [
        (abs(factor - value), name)
        for name, value in named_factors(reference).items()
        if np.all(abs(factor - value) * row_size <= slack)
    ]
    figures: dict[str, object] = {"factor": factor, "residual": off}
    message = f"B = {factor:.6g}·A: a constant factor"
    if matches:
        name = min(matches)[1]
        figures["matches"] = name
        message += f", {name}"
    return [Finding("constant_factor", message, figures)]


def offset_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """``B = A + c`` within each row's tolerance, c beyond it: every value shifted by one constant (a bias
    added, positions counted from another origin in a table of positions).

    >>> a = np.arange(8.0).reshape(2, 4)
    >>> [(f.code, f.figures["offset"]) for f in offset_findings(a, a + 0.5, 1e-9, None)]
    [('constant_offset', 0.5)]
    >>> offset_findings(a, 2 * a, 1e-9, None)
    []
    >>> offset_findings(a, a - 0.25, 1e-9, None)[0].message
    'B = A − 0.25: every value shifted by one constant'
    """
    bound = per_row(tolerance, b.shape)
    offset = float(np.mean(b - a))
    if not np.isfinite(offset) or np.all(abs(offset) <= bound) or not within(a + offset, b, bound):
        return []
    return [
        Finding(
            "constant_offset",
            f"B = A {'−' if offset < 0 else '+'} {abs(offset):.6g}: every value shifted by one constant",
            {"offset": offset, "residual": residual(a + offset, b)},
        )
    ]
