"""A RoPE table stored as its two parts (``cos`` and ``sin``, as ``pecli generate rope`` and ``rope2d`` write
them) identified as one.

>>> import pecli
>>> cos, sin = (pecli.encode("rope", 32, 16, base=500000.0, part=part) for part in ("cos", "sin"))
>>> found = identify_rope_pair(cos, sin)
>>> found.level, found.best.describe(), found.parts
('exact', 'rope: base=500000.0', ('cos', 'sin'))
>>> print(found.recipe())
rope(base=500000.0, dim=16, length=32) -> pe.safetensors
>>> cos, sin = (pecli.encode("rope2d", 16, 8, grid="4,4", part=part) for part in ("cos", "sin"))
>>> found = identify_rope_pair(cos, sin)
>>> found.level, found.best.describe()
('exact', 'rope2d: grid=4,4')
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from pecli.analysis.identify.candidates import presets_with
from pecli.analysis.identify.grids import assumed_sections
from pecli.analysis.identify.result import Candidate, Identification, Undetermined
from pecli.analysis.identify.search import _checked, _finite_arithmetic, identify_table
from pecli.analysis.identify.undetermined import base_bound, writers
from pecli.analysis.identify.values import _looks_gaussian, _value_statistics
from pecli.analysis.identify.verify import Progress, _errors
from pecli.schemes.catalog import SCHEMES

__all__ = ["identify_rope_pair"]


@_finite_arithmetic
def identify_rope_pair(
    cos: np.ndarray,
    sin: np.ndarray,
    *,
    dtype: str | None = None,
    progress: Progress | None = None,
    names: tuple[str, str] = ("cos", "sin"),
) -> Identification:
    """Identify ``cos`` and ``sin`` as the two parts of one RoPE table.

    The cos part is searched as any table is; a match that is the cos part of a scheme written as its
    cos and sin (RoPE, axial RoPE over a grid) is then regenerated as its sin part and held against
    ``sin`` with the same tolerance. The result describes the pair (no ``part``), its error is the
    larger of the two, and its command writes both parts (``.safetensors``). When the cos part is no
    such table, or the sin part does not follow it, the pair matches nothing, and the value statistics
    are those of both parts.

    Args:
        cos: the cos part, a 2-D (positions × dimensions) table.
        sin: the sin part, of the same shape.
        dtype: the dtype the parts were stored in, when they are widened copies (see identify_table).
        progress: called with a short description of each stage.
        names: the two tensors' names in their file (``cos_cached``, ``sin_cached``), the result's ``parts``.
    """
    if np.shape(cos) != np.shape(sin):
        raise ValueError(f"the cos and sin parts differ in shape: {np.shape(cos)} and {np.shape(sin)}")
    found = identify_table(cos, dtype=dtype, progress=progress)
    best = found.best
    values = _checked(sin)
    if not _cos_part(best):
        return _unmatched(replace(found, level="none"), cos, values, names)
    if progress is not None:
        progress("checking the sin part")
    scale = max(float(values.max()), -float(values.min())) or 1.0
    sin_error, sin_excess = _sin_errors(values, best, found.precision, scale)
    also = found.also
    if found.matched and sin_excess > 1.0:
        # the cos part alone cannot tell some readings apart (a 1 × W grid's and a 1-D RoPE's): another
        # reading within its rounding whose sin part holds names the pair
        others = [also, *(c for c in found.runners_up if c.max_error <= found.tolerance)]
        for other in (c for c in others if c is not None and _cos_part(c)):
            other_error, other_excess = _sin_errors(values, other, found.precision, scale)
            if other_excess <= 1.0:
                best, sin_error, sin_excess, also = other, other_error, other_excess, None
                break
    if found.matched and sin_excess > 1.0:
        # a cos part whose low frequencies round to 1 (d = 4 at base 10⁷ in bfloat16) bounds the base, no more:
        # the sin part reads it (a small angle is its own sine), and the cos part must follow that reading
        read = _read_from_sin(cos, values, dtype)
        if read is not None:
            best, sin_error, sin_excess, also = read[0], read[1], 0.0, None
    pair_params = {**best.params, "part": None}
    error = max(best.max_error, sin_error)
    pair = replace(best, params=pair_params, max_error=error, presets=presets_with(best.scheme, pair_params))
    level = "exact" if error <= found.tolerance else "approximate"
    level = "none" if not found.matched or sin_excess > 1.0 else level
    if also is not None and _cos_part(also):  # a one-line grid's other reading: when its sin part holds too
        also_error, _ = _sin_errors(values, also, found.precision, scale)
        also_params = {**also.params, "part": None}
        also = replace(also, params=also_params, max_error=max(also.max_error, also_error), presets=())
        also = also if also.max_error <= found.tolerance else None
    undetermined = _pair_undetermined(_checked(cos), values, best, found) if level == "exact" else ()
    paired = replace(found, best=pair, level=level, runners_up=[], parts=names, also=also, undetermined=undetermined)
    return _unmatched(paired, cos, values, names) if level == "none" else paired


def _pair_undetermined(
    cos: np.ndarray, sin: np.ndarray, best: Candidate, found: Identification
) -> tuple[Undetermined, ...]:
    """What the two parts together cannot tell of the cos-part reading ``best``: the sin part turns linearly
    where the cos part rounds to 1, so it reads sections and bases the cos part alone only bounds."""
    entries: list[Undetermined | None] = []
    sections = assumed_sections(cos, best)
    if sections is not None and assumed_sections(sin, best) is not None:
        entries.append(sections)
    dtype = found.reproduce_dtype or found.dtype
    cos_within, cos_written = writers(cos, found.tolerance, dtype)
    sin_within, sin_written = writers(sin, found.tolerance, dtype)

    def as_sin(candidate: Candidate) -> Candidate:
        return replace(candidate, params={**candidate.params, "part": "sin"})

    entries.append(
        base_bound(
            lambda c: cos_within(c) and sin_within(as_sin(c)),
            lambda c: cos_written(c) and sin_written(as_sin(c)),
            best,
            dim=cos.shape[1],
        )
    )
    return tuple(entry for entry in entries if entry is not None)


def _read_from_sin(cos: np.ndarray, sin: np.ndarray, dtype: str | None) -> tuple[Candidate, float] | None:
    """The cos-part reading (and the sin part's error) of the scheme the ``sin`` part alone reads as, when
    ``cos`` follows it within its noise; None otherwise."""
    found = identify_table(sin, dtype=dtype)
    best = found.best
    if not found.matched or SCHEMES[best.scheme].default_parts != ("cos", "sin") or best.params.get("part") != "sin":
        return None
    values = _checked(cos)
    scale = max(float(values.max()), -float(values.min())) or 1.0
    as_cos = replace(best, params={**best.params, "part": "cos"}, presets=())
    cos_error, cos_excess = _errors(values, as_cos, [range(0, values.shape[0])], found.precision, scale)
    return (replace(as_cos, max_error=cos_error), best.max_error) if cos_excess <= 1.0 else None


def _cos_part(candidate: Candidate) -> bool:
    """Whether ``candidate`` is the cos part of a scheme written as its cos and sin (RoPE, axial RoPE)."""
    return SCHEMES[candidate.scheme].default_parts == ("cos", "sin") and candidate.params.get("part") == "cos"


def _sin_errors(sin: np.ndarray, cos_match: Candidate, precision: str, scale: float) -> tuple[float, float]:
    """The largest |error| of ``sin`` against ``cos_match``'s sin part, and in units of its noise."""
    candidate = replace(cos_match, params={**cos_match.params, "part": "sin"}, presets=())
    return _errors(sin, candidate, [range(0, sin.shape[0])], precision, scale)


def _unmatched(found: Identification, cos: np.ndarray, sin: np.ndarray, names: tuple[str, str]) -> Identification:
    """``found`` (no match) with the statistics of both parts' values (the cos part's search gives its own,
    or none when that part alone matched)."""
    cos = np.asarray(cos)
    mean_cos, std_cos = _value_statistics(cos)
    mean_sin, std_sin = _value_statistics(sin)
    mean = (mean_cos + mean_sin) / 2  # both parts hold as many values
    std = math.sqrt(max(0.0, (std_cos**2 + mean_cos**2 + std_sin**2 + mean_sin**2) / 2 - mean**2))
    gaussian = all(
        _looks_gaussian(part.reshape(-1), m, s) for part, m, s in ((cos, mean_cos, std_cos), (sin, mean_sin, std_sin))
    )
    return replace(found, parts=names, value_mean=mean, value_std=std, gaussian=gaussian)
