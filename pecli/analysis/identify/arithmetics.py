"""Reduced-precision tables: the best candidates regenerated in each arithmetic a library computes in.

A table from transformers' rotary module is computed in float32 (its ``inv_freq``, positions,
product and cos/sin), or with the positions held in bfloat16 (``position_ids.to(torch.bfloat16)``:
neighbouring positions alias past 256). A float64 candidate matches the first only within float32
noise, the second not at all; the same candidate with ``arithmetic`` set regenerates either within
rounding. Only schemes that take the parameter (:attr:`pecli.schemes.catalog.Scheme.arithmetics`)
are tried, float32 first, on a sample of rows, then every row.

>>> from pecli.schemes.catalog import SCHEMES
>>> rope = Candidate("rope", {**SCHEMES["rope"].defaults, "part": "cos"})
>>> [c.params["arithmetic"] for c in arithmetic_variants([rope])]
['float32', 'bfloat16', 'float16']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from pecli.analysis.identify.result import Candidate
from pecli.schemes.catalog import SCHEMES

__all__ = ["REDUCED", "arithmetic_match", "arithmetic_variants"]

#: the reduced arithmetics tried, in order of preference (float32 is the common case; float16 holds
#: integers exactly up to 2048, so a short table cannot tell it from float32)
REDUCED = ("float32", "bfloat16", "float16")
#: candidates (of schemes that take an arithmetic) regenerated in each arithmetic
_TRIED = 6

#: the largest |error| of ``candidate`` over the given rows (None: every row, stopping past ``bound``)
Measure = Callable[[Candidate, bool, float], float]


def arithmetic_variants(ranked: Iterable[Candidate]) -> Iterator[Candidate]:
    """The first :data:`_TRIED` candidates whose scheme takes an arithmetic, each in every reduced one."""
    tried = 0
    for candidate in ranked:
        if tried == _TRIED:
            return
        if "float32" not in SCHEMES[candidate.scheme].arithmetics:
            continue
        if candidate.params.get("arithmetic") not in (None, "float64"):
            continue
        tried += 1
        for arithmetic in REDUCED:
            yield replace(candidate, params={**candidate.params, "arithmetic": arithmetic})


def arithmetic_match(ranked: Iterable[Candidate], measure: Measure, tolerance: float) -> Candidate | None:
    """The first variant of ``ranked`` (:func:`arithmetic_variants`) within ``tolerance`` on a sample of
    rows (``measure(candidate, False, bound)``) and then on every row (``measure(candidate, True, bound)``)."""
    for variant in arithmetic_variants(ranked):
        if measure(variant, False, tolerance) > tolerance:
            continue
        error = measure(variant, True, tolerance)
        if error <= tolerance:
            return replace(variant, max_error=error)
    return None
