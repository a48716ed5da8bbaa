"""Name the cause of a difference: each known mistake is tried on A (the reference) and B, and kept
only when it reproduces B from A within the noise.

The explanations: a row shift (positions off by one), a column permutation, RoPE's two pairings
(halves vs adjacent pairs, partial rotary too), sin and cos halves swapped (``flip_sin_to_cos``), a
transposed table, vLLM's ``cos_sin_cache`` ([cos | sin] in one table), the positions negated (the sin
columns' sign), a constant factor (named
when the reference's parameters know it: YaRN's attention factor…), positions rounded to
bfloat16/float16, per-head bias tables ((heads, L, L) or (heads, L): ALiBi's slopes from the power-of-two
formula for a head count that is not a power of two, of the wrong sign, heads reversed or scaled one by
one; any per-head table's heads in another order, every head transposed, or only some heads differing; T5's
bias read off its bucket structure: another direction, num_buckets or max_distance, the bucket index or the
relative position off by one), and, when the reference is a scheme with parameters, its frequency scaling left out,
another base, or another of its parameter sets (:mod:`pecli.schemes.mistakes`).

>>> import pecli
>>> a = pecli.encode("rope", 64, 16, part="cos", dtype="float64")
>>> [found.code for found in diagnose_difference(a, 1.5 * a, tolerance=1e-9)]
['constant_factor']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from pecli.analysis.diagnosis._buckets import bucket_findings
from pecli.analysis.diagnosis._head_layout import heads_transposed_findings, only_heads_findings
from pecli.analysis.diagnosis._head_order import head_order_findings
from pecli.analysis.diagnosis._heads import head_findings
from pecli.analysis.diagnosis._layout import layout_findings
from pecli.analysis.diagnosis._precision import precision_findings
from pecli.analysis.diagnosis._scale import factor_findings, offset_findings
from pecli.analysis.diagnosis._variants import variant_findings
from pecli.analysis.diagnosis.finding import (
    ConfigFacts,
    Finding,
    Reference,
    entry_rounding,
    per_row,
    residual,
    within,
)

__all__ = ["ConfigFacts", "Finding", "Reference", "diagnose_difference"]

_EXPLANATIONS = (layout_findings, factor_findings, offset_findings, precision_findings, variant_findings, head_findings)


def diagnose_difference(
    a: np.ndarray,
    b: np.ndarray,
    *,
    tolerance: float | np.ndarray,
    reference: Reference | None = None,
    swapped: bool = False,
    parts: tuple[str, ...] = (),
) -> list[Finding]:
    """The findings that reproduce ``b`` from ``a`` within ``tolerance`` (abs, row by row), best first.

    Args:
        a: the reference table (2-D, or 3-D (heads, L, L): a per-head bias, diagnosed per head).
        b: the table to explain, of ``a``'s shape.
        tolerance: the noise: an explanation is kept when it leaves no entry further off than its row's
            bound. One number for every row, or one per row (``b.shape[:-1]`` values: compare's tolerance
            grows with the position, and a row is judged by its own bound, never by the loosest).
        reference: the scheme and parameters ``a`` was generated with, when known: the findings
            that need them (scaling, base, factor names) regenerate variants through :func:`pecli.encode`.
        swapped: the reference is the second table of the comparison: the sentences name it B and
            the other table A, and a figure of one side (``a_slopes``, ``b_base``) is named by its letter.
        parts: the parts the tables hold side by side, each its own columns, when a file names them and no
            ``reference`` does (an engine's cache saved as its ``cos`` and ``sin`` tensors): their halves
            swapped are those parts swapped, not the sin and cos halves of one sinusoidal table.

    Example:
        >>> import pecli
        >>> a = pecli.encode("sinusoidal", 32, 8, dtype="float64")
        >>> [(f.code, f.figures["shift"]) for f in diagnose_difference(a[1:], a[:-1], tolerance=1e-9)]
        [('positions_shifted', -1)]
        >>> pair = np.hstack([pecli.encode("rope", 8, 8, part=part, dtype="float64") for part in ("cos", "sin")])
        >>> [found.code for found in diagnose_difference(pair, np.roll(pair, 8, axis=1), tolerance=1e-9)]
        ['flip_sin_to_cos']
        >>> [f.code for f in diagnose_difference(pair, np.roll(pair, 8, axis=1), tolerance=1e-9, parts=("cos", "sin"))]
        ['parts_swapped']
        >>> diagnose_difference(a, np.random.default_rng(0).normal(size=a.shape), tolerance=1e-6)
        []
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim not in (2, 3) or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return []
    bound = per_row(tolerance, b.shape)
    if within(a, b, bound):  # within every row's noise bound: no cause stands out from noise
        # only rounding, or nothing: the row bound is at the table's scale, and small entries may differ well
        # beyond their own rounding (a base off by 10 moves the slow columns' small values) — not "only rounding"
        rounding = _rounding_only(a, b)
        if rounding:
            return rounding
        # beyond each entry's rounding (the comparison found them different): judged by that rounding instead, two
        # of them at the row's scale (B's own, and float32 arithmetic tipping it) plus the row's angle noise (its
        # bound's growth past row 0); four let the exact table through where B's frequencies were rounded
        noise = bound - bound.min()
        bound = np.minimum(bound, 2.0 * entry_rounding(a, b).max(axis=-1).reshape(bound.shape) + noise)
        if within(a, b, bound):
            return []
    found: dict[str, Finding] = {}
    explanations: tuple[Callable[[np.ndarray, np.ndarray, np.ndarray, Reference | None], list[Finding]], ...]
    explanations = _EXPLANATIONS
    if a.ndim == 3:  # per-head tables: their heads, and a constant factor over all of them
        explanations = (head_order_findings, head_findings, _all_heads_factor, _all_heads_offset,
                        heads_transposed_findings, bucket_findings, only_heads_findings)  # fmt: skip
    for explain in explanations:
        # the layout also takes the parts a file names (its halves swapped are those parts swapped)
        if explain is layout_findings:
            findings = layout_findings(a, b, bound, reference, parts=parts)
        else:
            findings = explain(a, b, bound, reference)
        for finding in findings:
            found.setdefault(finding.code, finding)
    ordered = sorted(found.values(), key=lambda finding: finding.figures.get("residual", 0.0))
    ordered = _without_ties(_permutation_first(_negation_first(ordered)))
    if len(ordered) > 1:  # which heads differ tells where, not why: said only when nothing else is
        ordered = [found for found in ordered if found.code != "only_heads_differ"]
    if swapped:
        ordered = [_swapped(found) for found in ordered]
    return ordered


def _without_ties(ordered: list[Finding]) -> list[Finding]:
    """The findings less each changed parameter that reproduces B exactly as well as a finding before it (the
    same residual to the last bit: the same table over these rows): the unscaled RoPE is the cause, not the
    original context 64× longer that scales none of the frequencies the rows show.

    >>> unscaled = Finding("unscaled", "no scaling", {"residual": 7.7e-06})
    >>> figures = {"changed": ["original_max_position"], "residual": 7.7e-06}
    >>> longer = Finding("original_max_position", "64 × 8192", figures)
    >>> [found.code for found in _without_ties([unscaled, longer])]
    ['unscaled']
    """
    kept: list[Finding] = []
    for finding in ordered:
        residual = finding.figures.get("residual")
        tied = any(earlier.figures.get("residual") == residual for earlier in kept)
        if "changed" in finding.figures and residual is not None and tied:
            continue
        kept.append(finding)
    return kept


def _negation_first(ordered: list[Finding]) -> list[Finding]:
    """The findings with "positions negated" ahead of a constant factor −1 (a RoPE sin table negated is both: the
    positions name the cause, the factor only its effect).

    >>> factor = Finding("constant_factor", "B = -1·A", {"factor": -1.0, "residual": 0.0})
    >>> negated = Finding("positions_negated", "B is A at −p", {"residual": 0.0})
    >>> [found.code for found in _negation_first([factor, negated])]
    ['positions_negated', 'constant_factor']
    """
    codes = [found.code for found in ordered]
    if "positions_negated" not in codes or "constant_factor" not in codes:
        return ordered
    factor, negated = codes.index("constant_factor"), codes.index("positions_negated")
    if factor > negated or abs(float(ordered[factor].figures.get("factor", 0.0)) + 1.0) > 1e-6:
        return ordered
    reordered = [found for found in ordered if found.code != "positions_negated"]
    reordered.insert(factor, ordered[negated])
    return reordered


def _permutation_first(ordered: list[Finding]) -> list[Finding]:
    """The findings with the heads' order (the cause) ahead of everything else, unless ALiBi's reversal names the same
    order with its slopes: B's heads scaled by 2 and 0.5 are two heads swapped.

    >>> factors = Finding("alibi_head_factors", "heads 0–1 scaled", {"residual": 0.0})
    >>> permuted = Finding("heads_permuted", "heads 0, 1 are A's 1, 0", {"residual": 1e-9})
    >>> [found.code for found in _permutation_first([factors, permuted])]
    ['heads_permuted', 'alibi_head_factors']
    """
    codes = [found.code for found in ordered]
    if "heads_permuted" not in codes:
        return ordered
    permuted = ordered[codes.index("heads_permuted")]
    rest = [found for found in ordered if found is not permuted]
    if "alibi_heads_reversed" in codes:
        return rest
    return [permuted, *rest]


def _rounding_only(a: np.ndarray, b: np.ndarray) -> list[Finding]:
    """ "They differ only by rounding" when the difference is within a few roundings of the coarser table's
    values (a float16 table against float32 ones); otherwise nothing: a difference that is merely inside
    the tolerance of the table's last rows (angle noise) is not rounding at its first rows.

    >>> a = np.linspace(-1, 1, 64).reshape(8, 8)
    >>> [found.code for found in _rounding_only(a, a.astype(np.float16).astype(np.float64))]
    ['rounding_only']
    >>> _rounding_only(a, a + 1e-5)
    []
    """
    off = residual(a, b)
    # each entry by its own magnitude: a value of 0.006 where the other table holds 0.02 is no rounding of
    # either, however large the table's other values (a float format's rounding is relative, to its subnormals)
    if not np.all(np.abs(a - b) <= 4.0 * entry_rounding(a, b)):
        return []
    return [Finding("rounding_only", f"they differ only by rounding (max {off:.3g})", {"residual": off})]


def _all_heads_factor(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference | None
) -> list[Finding]:
    """:func:`factor_findings` of (heads, L, L) tables, their heads stacked (``tolerance``: per row)."""
    stacked = tolerance.reshape(-1, 1)
    return factor_findings(a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1]), stacked, reference)


def _all_heads_offset(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference | None
) -> list[Finding]:
    """:func:`offset_findings` of (heads, L, L) tables, their heads stacked: one constant added to every head's
    bias (``tolerance``: per row).

    >>> a = np.arange(8.0).reshape(2, 2, 2)
    >>> [(f.code, f.figures["offset"]) for f in _all_heads_offset(a, a + 0.25, np.full((2, 2), 1e-9), None)]
    [('constant_offset', 0.25)]
    """
    stacked = tolerance.reshape(-1, 1)
    return offset_findings(a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1]), stacked, reference)


def _swapped(found: Finding) -> Finding:
    """A finding on (reference, other) stated of (other, reference): sentence, row/column mappings, and the
    figures of one side (``a_slopes``, ``b_base``…) under the other side's letter.

    >>> _swapped(Finding("x", "B has 2", {"a_base": 1.0, "b_base": 2.0, "residual": 0.0})).figures
    {'b_base': 1.0, 'a_base': 2.0, 'residual': 0.0}
    """
    letters = {"a_": "b_", "b_": "a_"}
    figures = {letters.get(name[:2], name[:2]) + name[2:]: value for name, value in found.figures.items()}
    if "shift" in figures:  # B[i] = A[i + s, perm] <=> A[i] = B[i − s, argsort(perm)]
        figures["shift"] = -figures["shift"]
        if figures.get("permutation") is not None:
            figures["permutation"] = [int(i) for i in np.argsort(figures["permutation"])]
    message = _swap_letters(found.message)
    if "shift" in figures:
        message = re.sub(r"positions shifted by -?\d+", f"positions shifted by {figures['shift']}", message)
    return replace(found, message=message, figures=figures)


def _swap_letters(message: str) -> str:
    """A sentence about (A, B) said of (B, A).

    >>> _swap_letters("B = 2·A: B's row i is A's row i")
    "A = 2·B: A's row i is B's row i"
    """
    return re.sub(r"\b[AB]\b", lambda letter: "B" if letter.group() == "A" else "A", message)
