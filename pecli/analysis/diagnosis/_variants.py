"""Findings that regenerate the reference with one mistake (its scheme's :class:`pecli.schemes.mistakes.Mistakes`),
or two: each family in its own module (another base: :mod:`._variants_base`; a narrower dtype:
:mod:`._variants_precision`; other settings: :mod:`._variants_settings`; another layout: :mod:`._variants_layout`),
tried here in order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._regenerate import regenerated
from pecli.analysis.diagnosis._variants_base import any_base_findings, base_findings
from pecli.analysis.diagnosis._variants_layout import (
    cos_sin_cache_findings,
    negated_positions_findings,
    other_pairings,
    pairing_figures,
    pairing_findings,
)
from pecli.analysis.diagnosis._variants_precision import base_held_findings, frequencies_rounded_findings
from pecli.analysis.diagnosis._variants_settings import (
    layer_type_findings,
    swap_findings,
    toggle_findings,
    unscaled_findings,
)
from pecli.analysis.diagnosis.finding import Finding, Reference, per_row
from pecli.schemes import get_scheme

__all__ = ["variant_findings"]

#: the single mistakes, in the order they are tried (each kept where it reproduces B)
_SINGLE = (
    layer_type_findings, unscaled_findings, base_findings, base_held_findings, toggle_findings, swap_findings,
    negated_positions_findings, cos_sin_cache_findings, frequencies_rounded_findings, pairing_findings,
)  # fmt: skip
#: the mistakes tried on the reference regenerated with the other pairing, when no single one explains B
_WITH_PAIRING = (frequencies_rounded_findings, unscaled_findings, base_findings)


def variant_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """The reference regenerated with each known mistake of its scheme, kept where it reproduces ``b`` within
    every row's ``tolerance`` (a number, or one per row).

    >>> import pecli
    >>> a = pecli.encode("rope", 64, 16, part="cos", dtype="float64")
    >>> b = pecli.encode("rope", 64, 16, part="cos", base=500000.0, dtype="float64")
    >>> reference = Reference("rope", {"part": "cos", "base": 10000.0})
    >>> [(f.code, f.figures["b_base"]) for f in variant_findings(a, b, 1e-9, reference)]
    [('base_differs', 500000.0)]
    """
    if reference is None:
        return []
    mistakes = get_scheme(reference.scheme).known_mistakes(reference.params)
    if mistakes is None:
        return []
    tolerance = per_row(tolerance, b.shape)
    found: list[Finding] = []
    for explain in _SINGLE:
        found.extend(explain(a, b, tolerance, reference, mistakes))
    if not found:  # two mistakes at once: the other pairing with rounded frequencies, no scaling or another base
        found.extend(_pairing_and(a, b, tolerance, reference, mistakes))
    return found or list(any_base_findings(a, b, tolerance, reference, mistakes))


def _pairing_and(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with the other pairing AND one more of its known mistakes (an engine pairing adjacent
    columns with ``inv_freq.half()``): each single mistake is tried on the reference regenerated with the other
    pairing, the same strict test of reproduction (a few tables of 8 rows screened for each: cheap)."""
    for parameter, ours, value, meaning in other_pairings(reference, mistakes):
        paired = replace(reference, params={**reference.params, parameter: value})
        # A with B's pairing: where the second mistake parts from it
        repaired = regenerated(paired, b.shape[0], b.shape[1], {})
        if repaired is None:
            return
        for explain in _WITH_PAIRING:
            for second in explain(repaired, b, tolerance, paired, mistakes):
                yield Finding(
                    "pairing",
                    f"two mistakes: the pairing differs (A pairs {ours}, B {meaning}), and {second.message}",
                    {**pairing_figures(ours, meaning), "also": second.code, **second.figures},
                )
                return
