"""Findings on per-head tables (heads, q, k) that need no scheme: every head's (query, key) matrix transposed, and
which heads differ when the others agree."""

from __future__ import annotations

import numpy as np

from pecli.analysis.diagnosis._buckets import relative_values
from pecli.analysis.diagnosis._heads import head_ranges
from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, residual, within

__all__ = ["heads_transposed_findings", "only_heads_findings"]


def heads_transposed_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """``transposed``: B's head h is A's head h transposed, in every head; of a relative bias (each head a function
    of j − i), the relative position i − j where j − i applies.

    >>> a = np.arange(18.0).reshape(2, 3, 3)
    >>> [found.code for found in heads_transposed_findings(a, a.transpose(0, 2, 1), 1e-9, None)]
    ['transposed']
    >>> heads_transposed_findings(a, a + 1.0, 1e-9, None)
    []
    """
    if a.ndim != 3 or a.shape != b.shape or a.shape[1] != a.shape[2]:
        return []
    bound = per_row(tolerance, b.shape)
    if not all(within(a[head].T, b[head], bound[head]) for head in range(len(a))):
        return []
    message = "the (query, key) bias of every head is transposed: B[h] = A[h]ᵀ"
    if relative_values(a, per_row(tolerance, a.shape)) is not None:
        message += " (relative position i − j where j − i applies)"
    return [Finding("transposed", message, {"residual": residual(a.transpose(0, 2, 1), b)})]


def only_heads_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """``only_heads_differ``: some heads differ beyond their rows' ``tolerance`` while the others agree within it
    (one head's weights wrong). Where the difference lies, not why: its residual is the whole difference, so any
    finding that reproduces B comes first.

    >>> a = np.zeros((4, 2, 2))
    >>> b = a.copy(); b[2] += 1.0
    >>> found = only_heads_findings(a, b, 1e-9, None)
    >>> found[0].message, found[0].figures["heads"]
    ('only head 2 differs; heads 0–1, 3 agree within the noise', [2])
    """
    if a.ndim != 3 or a.shape != b.shape or len(a) < 2:
        return []
    bound = per_row(tolerance, b.shape)
    differ = [head for head in range(len(a)) if not within(a[head], b[head], bound[head])]
    if not differ or len(differ) == len(a):
        return []
    agree = [head for head in range(len(a)) if head not in differ]
    verb = "differs" if len(differ) == 1 else "differ"
    message = f"only {head_ranges(differ)} {verb}; {head_ranges(agree)} agree within the noise"
    return [Finding("only_heads_differ", message, {"heads": differ, "residual": residual(a, b)})]
