"""Reduced-precision tables: the best candidates regenerated in each arithmetic a library computes in.

A table from transformers' rotary module is computed in float32 (its ``inv_freq``, positions,
product and cos/sin), or with the positions held in bfloat16 (``position_ids.to(torch.bfloat16)``:
neighbouring positions alias past 256). A float64 candidate matches the first only within float32
noise, the second not at all; the same candidate with ``arithmetic`` set regenerates either within
rounding. Only schemes that take the parameter (:attr:`pecli.schemes.catalog.Scheme.arithmetics`)
are tried, float32 first, on a sample of rows, then every row.

The other way round, RoPE's frequencies held in a half type at one base can be exact frequencies at
another: a match's twin read with its frequencies held the other way is named beside it
(:func:`_half_type_twin`).

>>> from pecli.schemes.catalog import SCHEMES
>>> rope = Candidate("rope", {**SCHEMES["rope"].defaults, "part": "cos"})
>>> [c.params["arithmetic"] for c in arithmetic_variants([rope])]
['float32', 'bfloat16', 'float16']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

import numpy as np

from pecli.analysis.identify.result import Candidate
from pecli.analysis.identify.verify import _max_error
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


def _half_type_twin(
    values: np.ndarray, best: Candidate, screened: Iterable[tuple[float, Candidate]], tolerance: float
) -> Candidate | None:
    """The first screened reading of ``best``'s table with its frequencies held the other way (in a half type
    when ``best``'s are exact, exact when ``best``'s are held) that writes every row within rounding too;
    None when there is none.

    A few frequencies held in float16 or bfloat16 at one base are exact frequencies at another (d = 4 has
    one besides ω_0 = 1: bfloat16's 10000^(−1/2) is exactly 9980.497^(−1/2)): the table cannot tell them apart,
    and the search names the one its order prefers and this one beside it."""
    if "freqs_dtype" not in best.params:
        return None
    held = best.params.get("freqs_dtype") is not None
    unrelated = ("base", "freqs_dtype")
    same_reading = {name: value for name, value in best.params.items() if name not in unrelated}
    for excess, candidate in screened:
        if excess > 1.0:
            break  # sorted: the rest are beyond the noise
        params = candidate.params
        if candidate.scheme != best.scheme or (params.get("freqs_dtype") is not None) == held:
            continue
        if {name: value for name, value in params.items() if name not in unrelated} != same_reading:
            continue
        error = _max_error(values, candidate, [range(0, len(values))], tolerance)
        if error <= tolerance:
            return replace(candidate, max_error=error)
    return None
