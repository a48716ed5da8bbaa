"""A RoPE table stored as its two parts (``cos`` and ``sin``, as ``pecli generate rope`` writes it) identified as one.

>>> import pecli
>>> cos, sin = (pecli.encode("rope", 32, 16, base=500000.0, part=part) for part in ("cos", "sin"))
>>> found = identify_rope_pair(cos, sin)
>>> found.level, found.best.describe(), found.parts
('exact', 'rope: base=500000.0', ('cos', 'sin'))
>>> print(found.recipe())
rope(base=500000.0, dim=16, length=32) -> pe.safetensors
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pecli.analysis.identify.candidates import presets_with
from pecli.analysis.identify.result import Identification
from pecli.analysis.identify.search import Progress, _checked, _errors, identify_table
from pecli.schemes.catalog import SCHEMES

__all__ = ["identify_rope_pair"]


def identify_rope_pair(
    cos: np.ndarray, sin: np.ndarray, *, dtype: str | None = None, progress: Progress | None = None
) -> Identification:
    """Identify ``cos`` and ``sin`` as the two parts of one RoPE table.

    The cos part is searched as any table is; a RoPE match is then regenerated as its sin part and
    held against ``sin`` with the same tolerance. The result describes the pair (no ``part``), its
    error is the larger of the two, and its command writes both parts (``.safetensors``). When the
    cos part is no RoPE table, or the sin part does not follow it, the pair matches nothing.

    Args:
        cos: the cos part, a 2-D (positions × dimensions) table.
        sin: the sin part, of the same shape.
        dtype: the dtype the parts were stored in, when they are widened copies (see identify_table).
        progress: called with a short description of each stage.
    """
    if np.shape(cos) != np.shape(sin):
        raise ValueError(f"the cos and sin parts differ in shape: {np.shape(cos)} and {np.shape(sin)}")
    found = identify_table(cos, dtype=dtype, progress=progress)
    best = found.best
    described = SCHEMES[best.scheme]  # a 1-D rotary table (an axial one's pair is not searched)
    if described.kind != "rotary" or described.axes != "positions" or best.params.get("part") != "cos":
        return replace(found, level="none", parts=("cos", "sin"))
    if progress is not None:
        progress("checking the sin part")
    values = _checked(sin)
    scale = max(float(values.max()), -float(values.min())) or 1.0
    sin_candidate = replace(best, params={**best.params, "part": "sin"}, presets=())
    sin_error, sin_excess = _errors(values, sin_candidate, [range(0, values.shape[0])], found.precision, scale)
    pair_params = {**best.params, "part": None}
    error = max(best.max_error, sin_error)
    pair = replace(best, params=pair_params, max_error=error, presets=presets_with(best.scheme, pair_params))
    level = "exact" if error <= found.tolerance else "approximate"
    level = "none" if not found.matched or sin_excess > 1.0 else level
    return replace(found, best=pair, level=level, runners_up=[], parts=("cos", "sin"))
