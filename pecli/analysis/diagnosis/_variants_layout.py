"""Findings of another layout regenerated from the reference: RoPE's other pairing of its columns, the positions
negated, vLLM's cos_sin_cache ([cos | sin] in one table where A is one part)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._layout import rotary_columns
from pecli.analysis.diagnosis._regenerate import column_words, parted_columns, regenerated, reproduces
from pecli.analysis.diagnosis.finding import Finding, Reference, held_precision, reproduced, residual, within
from pecli.dtypes import held_values
from pecli.schemes import get_scheme

__all__ = ["cos_sin_cache_findings", "negated_positions_findings", "other_pairings", "pairing_findings"]


def other_pairings(reference: Reference, mistakes: Any) -> Iterator[tuple[str, str, Any, str]]:
    """The pairings of the reference's scheme other than its own: the pairing parameter, A's pairing in words,
    then each other pairing's value and words; none when the scheme has no pairing or A's is not among them.

    >>> from pecli.schemes import get_scheme
    >>> mistakes, reference = get_scheme("rope").known_mistakes({}), Reference("rope", {"layout": "half"})
    >>> [(parameter, value) for parameter, _, value, _ in other_pairings(reference, mistakes)]
    [('layout', 'interleaved')]
    """
    parameter, ours = mistakes.pairing, reference.params.get(mistakes.pairing or "")
    names = dict(mistakes.pairings)
    if parameter is None or ours not in names:
        return
    for value, meaning in mistakes.pairings:
        if value != ours:
            yield parameter, names[ours], value, meaning


def pairing_figures(ours: str, theirs: str) -> dict[str, str]:
    """The pairings of A and B, as a finding's figures: each pairing's words up to its parenthesis.

    >>> pairing_figures("halves (NeoX, rotate_half)", "adjacent pairs (GPT-J, rotate every two)")
    {'a_pairing': 'halves', 'b_pairing': 'adjacent pairs'}
    """
    return {"a_pairing": ours.split(" (")[0], "b_pairing": theirs.split(" (")[0]}


def pairing_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference regenerated with another pairing of its columns (RoPE's halves against adjacent pairs).
    The layout findings find it as a column permutation of A when A's slow columns turn; a table rounded to
    float16 or bfloat16 holds them constant (cos 1), and the permutation found there is another one."""
    parts = len(reference.parts or (None,))
    for parameter, ours, value, meaning in other_pairings(reference, mistakes):
        table, off = reproduces(reference, b, tolerance, {parameter: value})
        if table is None:
            continue
        held = held_precision(b)  # B's own rounding of the regenerated table: what an engine storing it holds
        if held in ("bfloat16", "float16"):
            off = min(off, residual(held_values(table, held), b))
        width = a.shape[1] // parts
        rotary = rotary_columns(table[:, :width])
        partial = f" over the first {rotary} of {width} columns (partial rotary)" if rotary < width else ""
        each = f" in each of {parts} blocks of {width} columns (cos | sin)" if parts > 1 else ""
        yield Finding(
            "pairing",
            f"the pairing differs: A pairs {ours}, B {meaning}{partial}{each}",
            {**pairing_figures(ours, meaning), "rotary_columns": rotary, "blocks": parts, "residual": off},
        )
        return


def _negated_table(reference: Reference, length: int, dim: int, mistakes: Any) -> np.ndarray | None:
    """The reference's rows at negated positions −p: from row 0's position (the rows of the table that starts at
    −(offset + L − 1), reversed: L the whole table's length, so a length-dependent scaling stays), or with the
    positions' multiplier negated; None when the scheme declares neither or cannot make it."""
    if mistakes.position_offset is not None:
        whole = reference.length or length
        start = reference.params.get(mistakes.position_offset) or 0
        changes = {mistakes.position_offset: -int(start) - (whole - 1)}
        table = regenerated(reference, length, dim, changes, rows=range(whole - length, whole))
        return None if table is None else table[::-1]
    if mistakes.position_scale is not None:
        scale = reference.params.get(mistakes.position_scale)
        return regenerated(reference, length, dim, {mistakes.position_scale: -float(1.0 if scale is None else scale)})
    return None


def negated_positions_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is A at positions −p: sin(−pω) = −sin(pω), cos(−pω) = cos(pω), so its sin columns are negated and its
    cos columns kept (an engine that takes the angles as −p·ω, or subtracts positions the wrong way)."""
    length, dim = b.shape
    table = _negated_table(reference, length, dim, mistakes)
    if table is None or not reproduced(table, b, tolerance):
        return
    negated = parted_columns(a, table, tolerance)
    if not len(negated):
        return
    which = "every column: a sin table" if len(negated) == dim else f"{column_words(negated)}; the cos columns kept"
    yield Finding(
        "positions_negated",
        f"the sin columns are negated ({which}): B is A at positions −p, an engine that takes the angles as −p·ω "
        "or subtracts positions the wrong way",
        {"negated_columns": len(negated), "first_column": int(negated[0]), "residual": residual(table, b)},
    )


def cos_sin_cache_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B holds the reference's cos and sin halves in one table (vLLM's cos_sin_cache), where A is one part."""
    parts = get_scheme(reference.scheme).parts
    if mistakes.pairing is None or not {"cos", "sin"} <= set(parts) or reference.parts:
        return  # (a reference of cos and sin side by side is already the cache's shape)
    length, width = a.shape
    half = width // 2
    if not within(a[:, :half], b[:, :half], tolerance) and not within(a[:, :half], b[:, half:], tolerance):
        return  # the cache holds A's own cos half on one side
    cos, sin = (regenerated(reference, length, width, {"part": part}) for part in ("cos", "sin"))
    if cos is None or sin is None:
        return
    for first, second, order in ((cos, sin, "[cos | sin]"), (sin, cos, "[sin | cos]")):
        cache = np.hstack([first[:, :half], second[:, :half]])
        if reproduced(cache, b, tolerance):
            off = residual(cache, b)
            yield Finding(
                "cos_sin_cache",
                f"B holds cos and sin in one cache, {order} of {half} frequencies each (vLLM's cos_sin_cache), "
                "where A is one part",
                {"order": order, "rotary_dim": width, "residual": off},
            )
            return
