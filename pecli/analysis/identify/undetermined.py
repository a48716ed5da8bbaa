"""What a matched table cannot tell: a base it only bounds (:func:`base_bound`).

A table's lowest frequencies may turn by less than its rounding over its rows (d = 4 at a large base in
bfloat16: cos(p·ω) rounds to 1): every base above some bound then writes it alike, and the base read is
only one of them. The other things a table cannot tell are found where their readings are
(:func:`pecli.analysis.identify.biases.same_slope_heads`, :func:`pecli.analysis.identify.grids.assumed_sections`,
the timesteps refused in :func:`pecli.analysis.identify.candidates.timestep_candidates`).

>>> import pecli
>>> from pecli.analysis.identify.result import Candidate
>>> table = pecli.encode("rope", 16, 4, base=2e6, part="cos", dtype="bfloat16").astype(np.float64)
>>> found = Candidate("rope", {**pecli.schemes.catalog.SCHEMES["rope"].defaults, "base": 5e5, "part": "cos"})
>>> within, written = writers(table, 2**-5, "bfloat16")  # bfloat16's 4 roundings at 1
>>> print(base_bound(within, written, found).note)
any base ≥ 3.6e+03 writes it within rounding; bit for bit from 5.8e+04 (500000, read, is one of them)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from pecli.analysis.identify.result import Candidate, Undetermined
from pecli.analysis.identify.verify import _max_error
from pecli.analysis.identify.verify import _rows as _candidate_rows
from pecli.dtypes import held_values

__all__ = ["base_bound", "least_base", "writers"]

#: a base this large is "any larger base": its frequencies below ω_0 = 1 are 1e-15 and less
_HUGE_BASE = 1e15
#: the least base tried (a base of 1 has every frequency 1)
_LEAST_BASE = 1.5
#: the rows a base is checked on before the whole table
_LAST_ROWS = 8
#: halvings of the log-base interval (2⁻³⁰ of ln 1e15: the bound to 1e-7, relative)
_HALVINGS = 30


def _rows(candidate: Candidate, table: np.ndarray) -> np.ndarray:
    """Every row of ``candidate``'s table at ``table``'s shape (float64)."""
    return _candidate_rows(candidate.scheme, candidate.params, table.shape, [range(0, len(table))], None)


def writers(
    table: np.ndarray, tolerance: float, dtype: str
) -> tuple[Callable[[Candidate], bool], Callable[[Candidate], bool]]:
    """(within, written): whether a reading writes ``table`` within ``tolerance`` (a chunk beyond it ends the
    check), and whether its rows rounded once to ``dtype`` are the table's bit for bit."""
    everything = [range(0, len(table))]
    last = [range(max(0, len(table) - _LAST_ROWS), len(table))]  # where the slow frequencies turned furthest

    def within(candidate: Candidate) -> bool:
        # the last rows first: a base that does not write them costs no chunk-sized temporaries
        return _max_error(table, candidate, last, tolerance) <= tolerance and (
            _max_error(table, candidate, everything, tolerance) <= tolerance
        )

    def written(candidate: Candidate) -> bool:
        return within(candidate) and np.array_equal(held_values(_rows(candidate, table), dtype), table)

    return within, written


def _at(candidate: Candidate, base: float) -> Candidate:
    return replace(candidate, params={**candidate.params, "base": base})


def least_base(writes: Callable[[Candidate], bool], best: Candidate) -> float | None:
    """The least base (2 significant digits, rounded up) from which every larger one writes the table as
    ``best`` does (``writes``: whether a reading writes it); None when a base far above ``best``'s does not."""
    base = best.params.get("base")
    if not isinstance(base, float) or not base > _LEAST_BASE or not writes(_at(best, _HUGE_BASE)):
        return None
    low, high = math.log(_LEAST_BASE), math.log(_HUGE_BASE)
    if writes(_at(best, _LEAST_BASE)):
        low = high = math.log(_LEAST_BASE)
    for _ in range(_HALVINGS * (high > low)):
        middle = (low + high) / 2
        low, high = (low, middle) if writes(_at(best, math.exp(middle))) else (middle, high)
    least = math.exp(high)
    bound = float(f"{least:.2g}")
    bound = bound if bound >= least else float(f"{least * 1.05:.2g}")  # rounded up, not down
    # every decade above the bound writes it too (the frequencies only fall): else it is no lower bound
    checked = [bound * 10.0**k for k in range(0, 16) if bound * 10.0**k <= _HUGE_BASE]
    return bound if all(writes(_at(best, value)) for value in checked) else None


def base_bound(
    within: Callable[[Candidate], bool], written: Callable[[Candidate], bool], best: Candidate, dim: int | None = None
) -> Undetermined | None:
    """What ``best``'s base is bounded by, as an :class:`Undetermined`: the least base from which every larger
    one writes the table ``within`` its rounding (the bound), and the least from which each is ``written`` bit
    for bit; None when the base is pinned down (a base far above ``best``'s does not write the table). A table
    of ``dim`` 2 holds the one frequency base⁰ = 1: any base writes it.

    >>> found = Candidate("rope", {"base": 10000.0, "part": "cos"})
    >>> print(base_bound(lambda c: True, lambda c: True, found, dim=2).note)
    any; d = 2 holds frequency 1 only (base⁰, whatever the base: 10000, the one named, is one of them)
    """
    low = least_base(within, best)
    if low is None:
        return None
    base = best.params["base"]
    if dim == 2 and low <= _LEAST_BASE:
        note = f"any; d = 2 holds frequency 1 only (base⁰, whatever the base: {base:g}, the one named, is one of them)"
        return Undetermined("base", note)
    exact = least_base(written, best)
    bit = f"; bit for bit from {exact:.2g}" if exact is not None and exact != low else ""
    return Undetermined(
        "base", f"any base ≥ {low:.2g} writes it within rounding{bit} ({base:g}, read, is one of them)", low=low
    )
