"""The heads of a per-head table ((heads, q, k): ALiBi's, T5's learned bias) in another order: B's head h is A's
head ``permutation[h]``, each within the noise. A permutation is the cause; every per-head effect it has (two
ALiBi heads' slopes scaled by 2 and 0.5) follows from it."""

from __future__ import annotations

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, residual, within

__all__ = ["head_order_findings"]

#: entries of each head compared first (evenly spaced), before a candidate head is checked whole
_SAMPLE = 4096


def head_order_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """``heads_permuted``: B's heads are A's in another order (each within its rows' ``tolerance``), with the
    permutation as evidence; nothing when the order is A's own or some head of B is none of A's.

    >>> a = np.arange(24.0).reshape(3, 2, 4)
    >>> found = head_order_findings(a, a[[1, 0, 2]], 1e-9, None)
    >>> found[0].code, found[0].message, found[0].figures["permutation"]
    ('heads_permuted', "B's heads are A's in another order: B's heads 0, 1 are A's heads 1, 0", [1, 0, 2])
    >>> head_order_findings(a, a[::-1], 1e-9, None)[0].message
    "B's heads are A's in reverse order: B's head h is A's head 2 − h"
    >>> head_order_findings(a, a + 1.0, 1e-9, None)
    []
    """
    if a.ndim != 3 or a.shape != b.shape or len(a) < 2:
        return []
    heads = len(a)
    bound = per_row(tolerance, b.shape)  # (heads, q, 1)
    step = max(1, a[0].size // _SAMPLE)
    sample_a, sample_b = a.reshape(heads, -1)[:, ::step], b.reshape(heads, -1)[:, ::step]
    sample_bound = np.broadcast_to(bound, b.shape).reshape(heads, -1)[:, ::step]
    permutation: list[int] = []
    for head in range(heads):
        # A's head the same first (a duplicated head stays in place), then the closest on the sample
        distance = np.abs(sample_a - sample_b[head]).max(axis=1)
        order = sorted(range(heads), key=lambda g: (g != head, float(distance[g])))
        match = next(
            (g for g in order if g not in permutation and bool(np.all(np.abs(sample_a[g] - sample_b[head])
                                                                  <= sample_bound[head]))
             and within(a[g], b[head], bound[head])),
            None,
        )  # fmt: skip
        if match is None:
            return []
        permutation.append(match)
    moved = [head for head in range(heads) if permutation[head] != head]
    if not moved:
        return []
    figures = {"permutation": permutation, "moved": moved, "residual": residual(a[permutation], b)}
    if permutation == list(range(heads - 1, -1, -1)):
        message = f"B's heads are A's in reverse order: B's head h is A's head {heads - 1} − h"
    else:
        shown = moved[:8]
        more = ", …" if len(moved) > len(shown) else ""
        message = (
            f"B's heads are A's in another order: B's heads {', '.join(map(str, shown))}{more} are A's heads "
            f"{', '.join(str(permutation[h]) for h in shown)}{more}"
        )
    return [Finding("heads_permuted", message, figures)]
