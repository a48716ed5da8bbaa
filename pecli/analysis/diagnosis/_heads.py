"""Findings on per-head bias tables (ALiBi's (heads, L, L) and (heads, L)): each head is its slope times
one pattern of offsets, so B against A is a set of per-head slopes, matched to the slope formulas the
schemes name (:attr:`pecli.schemes.mistakes.Mistakes.head_slopes`): the power-of-two formula applied to
a head count that is not a power of two (ml-explore/mlx#3071), a bias of the wrong sign, the heads reversed,
or heads scaled one by one."""

from __future__ import annotations

from typing import Any

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, row_blocks
from pecli.schemes.catalog import SCHEMES, find_scheme

__all__ = ["head_findings", "head_ranges", "row_offset_findings"]


def head_ranges(heads: list[int]) -> str:
    """Head indices as runs.

    >>> head_ranges([0, 2, 3, 4, 8]), head_ranges([5])
    ('heads 0, 2–4, 8', 'head 5')
    """
    runs: list[list[int]] = []
    for head in heads:
        if runs and head == runs[-1][-1] + 1:
            runs[-1].append(head)
        else:
            runs.append([head])
    text = ", ".join(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)
    return f"head{'s' * (len(heads) != 1)} {text}"


def _pattern(flat: np.ndarray, tolerance: np.ndarray) -> np.ndarray | None:
    """The integer offsets every head of ``flat`` (heads × entries) is a multiple of, scaled by its
    largest head's smallest nonzero value (ALiBi's slope: the bias at offset 1); None when there is none.
    ``tolerance``: each entry's bound (heads × entries)."""
    head = int(np.argmax(np.abs(flat).max(axis=1)))
    largest, bound = flat[head], tolerance[head]
    nonzero = np.abs(largest) > np.maximum(bound, 0.0) * 2
    if not nonzero.any():
        return None
    unit = float(np.abs(largest[nonzero]).min())
    offsets = np.round(largest / unit)
    if np.any(np.abs(offsets * unit - largest) > bound) or np.abs(offsets).max() > 1 << 24:
        return None
    return offsets


def _slopes(flat: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    return flat @ offsets / float(offsets @ offsets)


def _off(slopes: np.ndarray, offsets: np.ndarray, flat: np.ndarray) -> float:
    return max((float(np.abs(np.multiply.outer(slopes[rows], offsets) - part).max(initial=0.0))
                for _, part, rows in row_blocks(flat, flat)), default=0.0)  # fmt: skip


def _fits(slopes: np.ndarray, offsets: np.ndarray, flat: np.ndarray, tolerance: np.ndarray) -> bool:
    """Whether each head of ``flat`` is its slope times ``offsets`` within each entry's bound, plus the float64
    rounding of the product and of the fitted slope (a few units in the last place of the entry: a float64 table
    of slopes that are no powers of two is not exact, while the bound may be that of exact values)."""
    eps = 8.0 * np.finfo(np.float64).eps
    for _, part, rows in row_blocks(flat, flat):  # in blocks of heads: a long table's product is never held whole
        product = np.multiply.outer(slopes[rows], offsets)
        bound = tolerance[rows] if len(tolerance) == len(flat) else tolerance
        if not np.all(np.abs(product - part) <= bound + eps * np.abs(product)):
            return False
    return True


def _visible(change: np.ndarray, offsets: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """Per head: whether a change of its slope by ``change`` moves some entry beyond that entry's bound."""
    return np.any(np.multiply.outer(np.abs(change), np.abs(offsets)) > tolerance, axis=1)


def _slope_sets(heads: int) -> list[tuple[str, str, np.ndarray]]:
    """The slope formulas the schemes name for ``heads`` heads, each scheme's reference first."""
    sets: list[tuple[str, str, np.ndarray]] = []
    for scheme in SCHEMES.values():
        mistakes = scheme.known_mistakes({"heads": heads}) if scheme.mistakes else None
        if mistakes is not None:
            sets.extend((code, words, np.asarray(slopes, np.float64)) for code, words, slopes in mistakes.head_slopes)
    return sets


def _differ(heads: list[int]) -> str:
    """The verb after :func:`head_ranges`: "head 2 differs", "heads 0–11 differ"."""
    return "differs" if len(heads) == 1 else "differ"


def _figures(slopes_a: np.ndarray, slopes_b: np.ndarray, differ: list[int], off: float, **more: Any) -> dict[str, Any]:
    return {
        "heads": differ,
        # fitted by least squares: digits past the 10th are summation-order noise (BLAS threads), not figures
        "a_slopes": [float(f"{s:.10g}") for s in slopes_a],
        "b_slopes": [float(f"{s:.10g}") for s in slopes_b],
        **more,
        "residual": off,
    }


def head_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """:func:`slope_findings`, then :func:`row_offset_findings`: what tells a per-head bias B from A."""
    return [*slope_findings(a, b, tolerance, reference), *row_offset_findings(a, b, tolerance, reference)]


def slope_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """Per-head slopes of ``a`` and ``b`` ((heads, …) tables), named when a slope formula explains them
    within each row's ``tolerance`` (a number, or one per row: ``b.shape[:-1]`` values).

    >>> from pecli.schemes.alibi import alibi_table
    >>> a = alibi_table(16, heads=12, dtype="float64")
    >>> power_of_two = 2.0 ** (-8.0 * np.arange(1, 13) / 12)
    >>> b = a * (power_of_two / alibi_table(None, heads=12, part="slopes", dtype="float64"))[:, None, None]
    >>> found = slope_findings(a, b, 1e-9, None)
    >>> found[0].code, found[0].message[:61]
    ('alibi_slopes_power_of_two', 'heads 0–11 differ: B has slopes from the power-of-two formula')
    """
    heads = len(a)
    if heads < 2 and a.ndim == 2:
        return []
    flat_a, flat_b = a.reshape(heads, -1), b.reshape(heads, -1)
    bound = per_row(tolerance, b.shape)  # each row's bound: (heads, 1) for a 2-D table, broadcast over its entries
    if a.ndim > 2:  # each entry's row's bound
        bound = np.broadcast_to(bound, b.shape).reshape(heads, -1)
    offsets = _pattern(flat_a, bound)
    if offsets is None:
        return []
    slopes_a, slopes_b = _slopes(flat_a, offsets), _slopes(flat_b, offsets)
    if not (_fits(slopes_a, offsets, flat_a, bound) and _fits(slopes_b, offsets, flat_b, bound)):
        return []  # not every head of both a multiple of one pattern
    off_b = _off(slopes_b, offsets, flat_b)
    reach = float(np.abs(offsets).max())
    differ = [int(h) for h in np.flatnonzero(_visible(slopes_a - slopes_b, offsets, bound))]
    if not differ:
        return []
    sets = _slope_sets(heads)

    def named(slopes: np.ndarray) -> tuple[str, str] | None:
        for code, words, known in sets:
            # within the bound, or within the float64 rounding of a fitted slope times the offsets (as :func:`_fits`)
            rounding = 8.0 * np.finfo(np.float64).eps * np.abs(np.multiply.outer(known, offsets))
            if not _visible(known - slopes, offsets, bound + rounding).any():
                return code, words
        return None

    name_a, name_b = named(slopes_a), named(slopes_b)
    found: list[Finding] = []
    if name_a and name_b and name_a != name_b:
        mistaken, right = (name_b, name_a) if name_a[0] == sets[0][0] else (name_a, name_b)
        wrong_side = "B" if mistaken is name_b else "A"
        found.append(Finding(
            f"alibi_slopes_{mistaken[0]}",
            f"{head_ranges(differ)} {_differ(differ)}: {wrong_side} has {mistaken[1]}; "
            f"{'A' if wrong_side == 'B' else 'B'} has {right[1]}",
            _figures(slopes_a, slopes_b, differ, off_b, a_formula=name_a[0], b_formula=name_b[0]),
        ))  # fmt: skip
    known = name_a or name_b
    if known is None:
        return found  # neither side holds slopes a scheme names: no per-head story to tell
    if not _visible(slopes_a + slopes_b, offsets, bound).any():
        found.append(Finding(
            "alibi_sign",
            f"the bias has the opposite sign: B = −A, slopes of opposite sign in every head ({known[1]})",
            _figures(slopes_a, slopes_b, differ, off_b, formula=known[0]),
        ))  # fmt: skip
    elif not _visible(slopes_a[::-1] - slopes_b, offsets, bound).any():
        found.append(Finding(
            "alibi_heads_reversed",
            f"the heads are in reverse order: B's head h is A's head {heads - 1} − h ({known[1]})",
            _figures(slopes_a, slopes_b, differ, off_b, formula=known[0]),
        ))  # fmt: skip
    elif (
        not found
        and np.ptp(np.divide(slopes_b, slopes_a, out=np.zeros(heads), where=slopes_a != 0)) * reach > bound.max()
    ):
        ratios = [float(r) for r in np.divide(slopes_b, slopes_a, out=np.full(heads, np.nan), where=slopes_a != 0)]
        found.append(Finding(
            "alibi_head_factors",
            f"{head_ranges(differ)} {_differ(differ)}: B's heads are A's scaled head by head "
            f"(factors {', '.join(f'{ratios[h]:.4g}' for h in differ[:6])}{', …' if len(differ) > 6 else ''})",
            _figures(slopes_a, slopes_b, differ, off_b, factors=ratios),
        ))  # fmt: skip
    return found


def row_offset_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """B − A constant along each query row of an attention bias, beyond the noise: softmax removes a row's
    constant, so the attention probabilities are identical (MPT's ``build_alibi_bias``, m·(j − (k − 1)), against
    the paper's −m·|i − j| or BLOOM's m·j).

    ``a``, ``b``: (heads, q, k) biases, the last q query rows of k keys (query row r is query k − q + r); or 2-D
    rows of keys, one query row each ((heads, k): one per head), taken as bias rows only when ``reference`` is a
    scheme over query and key positions or ``a`` holds per-head multiples of one pattern of offsets (ALiBi's).
    A 3-D bias whose rows are not constant apart over every key may still be over the keys up to each query,
    all that a causal mask keeps: that finding says so, and what the keys after the query differ by.

    >>> from pecli.schemes.alibi import alibi_table
    >>> paper = alibi_table(8, heads=4, dtype="float64")
    >>> mpt = alibi_table(8, heads=4, form="key", dtype="float64") - alibi_table(None, heads=4, part="slopes",
    ...                                                                          dtype="float64")[:, None, None] * 7
    >>> [found.code for found in row_offset_findings(paper, mpt, 1e-12, None)]
    ['attention_row_offset_causal']
    >>> [found.code for found in row_offset_findings(paper[:, -1:, :][:, 0], mpt[:, -1:, :][:, 0], 1e-12, None)]
    []
    >>> [f.code for f in row_offset_findings(mpt[:, 0], alibi_table(8, heads=4, form="key")[:, 0], 1e-12, None)]
    ['attention_row_offset']
    """
    if a.shape != b.shape or a.ndim not in (2, 3) or a.shape[-1] < 2 or not _bias_rows(a, tolerance, reference):
        return []
    cube_a, cube_b = (a if a.ndim == 3 else a[:, None, :]), (b if b.ndim == 3 else b[:, None, :])
    bound = per_row(tolerance, cube_b.shape)  # (heads, q, 1)
    _, rows, keys = cube_b.shape
    # query row r is query k − q + r: the keys up to it are those a causal mask keeps (a 2-D row: every key)
    queries = np.arange(keys - rows, keys)[:, None] if a.ndim == 3 else np.full((1, 1), keys - 1)
    kept = np.arange(keys)[None, :] <= queries  # (q, k)
    difference = cube_b - cube_a
    offsets = difference[..., :1]  # key 0: kept in every row
    # each entry's float64 rounding of b − a − c beside the comparison's bound, as slope_findings' fit
    slack = bound + 8.0 * np.finfo(np.float64).eps * (np.abs(cube_a) + np.abs(cube_b) + np.abs(offsets))
    off = np.abs(difference - offsets)
    if not np.all(np.where(kept, off <= slack, True)):
        return []
    if np.all(np.abs(offsets) <= bound) or np.ptp(offsets) <= float(bound.min()):
        return []  # no offset, or one constant over every row: constant_offset's finding, not a row's
    figures = {
        "offset_min": float(offsets.min()),
        "offset_max": float(offsets.max()),
        "residual": float(np.where(kept, off, 0.0).max()),
    }
    row = "query row" if a.ndim == 3 else "row"
    shifted = f"B − A is one constant along each {row} ({figures['offset_min']:.4g} … {figures['offset_max']:.4g})"
    if np.all(off <= slack):
        message = f"{shifted}: softmax removes a {row}'s constant, so the attention probabilities are identical"
        return [Finding("attention_row_offset", message, figures)]
    figures["after_query_max_abs"] = float(np.where(kept, 0.0, off).max())
    message = (
        f"{shifted} over the keys up to each query, all a causal mask keeps: softmax removes a {row}'s constant, "
        "so under a causal mask the attention probabilities are identical; the keys after the query differ by up to "
        f"{figures['after_query_max_abs']:.4g} beyond that constant (seen only without a causal mask)"
    )
    return [Finding("attention_row_offset_causal", message, figures)]


def _bias_rows(a: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None) -> bool:
    """Whether the rows of ``a`` are an attention bias's rows of keys: a per-head table (3-D), a reference
    scheme over query and key positions, or rows that are per-head multiples of one pattern of offsets
    that is no constant (ALiBi's key rows; a table of positions is no such thing)."""
    if a.ndim == 3:
        return True
    scheme = None if reference is None else find_scheme(reference.scheme)
    if scheme is not None:
        return scheme.axes == "query-key"
    if len(a) < 2:
        return False
    bound = np.broadcast_to(per_row(tolerance, a.shape), a.shape)
    offsets = _pattern(a, bound)
    return offsets is not None and bool(np.ptp(offsets) > 0) and _fits(_slopes(a, offsets), offsets, a, bound)
