"""A RoPE reference and an engine's table of another width (partial rotary ignored, or assumed), brought to one
width, with the mistake named when it reproduces the engine's table.

>>> import pecli
>>> from pecli.sources import resolve_parts
>>> params = {**resolve_parts("rope", dim=8, length=4)[0].params, "part": "cos"}
>>> narrow = pecli.encode("rope", 4, 8, part="cos", dtype="float64")
>>> found = partial_width(Reference("rope", params), narrow, pecli.encode("rope", 4, 32, part="cos", dtype="float64"))
>>> found.finding.code, found.widths
('partial_rotary_ignored', 'A is 32 columns, B 8: the rotary columns of a head of 32 (partial rotary 0.25)')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pecli.analysis.compare import compare_tables
from pecli.analysis.diagnosis import Finding, Reference

__all__ = ["PartialWidth", "partial_width"]


@dataclass(frozen=True)
class PartialWidth:
    """A RoPE reference and an engine's table of another width, brought to one width (:func:`partial_width`)."""

    reference_table: np.ndarray  #: the reference at the compared width
    engine_table: np.ndarray  #: the engine's table at that width (its cache's cos and sin placed as a pair)
    reference: Reference  #: the reference's parameters at that width (for the diagnosis)
    finding: Finding | None  #: the mistake, when it reproduces the engine's table; else None
    words: str  #: how the two tables were brought to one width, for a note
    widths: str = ""  #: the two widths in words, for an error
    #: the codes the diagnosis at one width may name that ``finding`` explains better (a head width read from
    #: hidden_size / num_attention_heads is no partial rotary, though the table at one width looks like one)
    supersedes: tuple[str, ...] = ()


def partial_width(
    reference: Reference,
    reference_table: np.ndarray,
    engine_table: np.ndarray,
    *,
    engine_pair: bool = False,
    dtype: str = "float32",
    engine_side: str = "A",
) -> PartialWidth | None:
    """A rotary reference whose table is ``rotary`` columns a part and an engine's table of another width, brought
    to the wider of the two, with the partial-rotary mistake named when it reproduces the engine's table.

    A model of partial rotary (GPT-NeoX's ``rotary_pct``, Phi's ``partial_rotary_factor``) has a table of its
    rotary columns; an engine that ignores it writes one of the whole head, every column turning with frequencies
    over the head's width (``partial_rotary_ignored``): the reference is then compared at the head width, its
    columns past the rotary ones passing through (cos 1, sin 0). The reverse, an engine table narrower than a
    full-rotary reference, is one that assumes a partial rotary (``partial_rotary_assumed``): compared at the
    reference's width, the engine's columns past its own passing through. ``reference_table`` holds
    ``reference.parts`` side by side (cos, then sin), or the one part ``reference.params["part"]``;
    ``engine_table`` is the engine's pair side by side (``engine_pair``), a one-table cache (vLLM's
    ``cos_sin_cache`` or a complex ``freqs_cis``: :func:`pecli.analysis.engine_cache.engine_cache_as_pair`)
    or the one part. None when the reference's scheme names no rotary width (its
    :class:`~pecli.schemes.mistakes.Mistakes`' ``rotary_width`` and ``rotary_fraction``), it is partial already,
    or the widths give no head width.

    >>> import pecli
    >>> from pecli.sources import resolve_parts
    >>> params = {**resolve_parts("rope", dim=8, length=4)[0].params, "part": "cos"}  # base 10000, full rotary
    >>> narrow = pecli.encode("rope", 4, 8, part="cos", dtype="float64")
    >>> engine = pecli.encode("rope", 4, 32, part="cos", dtype="float64")
    >>> found = partial_width(Reference("rope", params), narrow, engine, dtype="float64")
    >>> found.finding.code, found.reference_table.shape
    ('partial_rotary_ignored', (4, 32))
    """
    import pecli
    from pecli.analysis.engine_cache import engine_cache_as_pair
    from pecli.schemes import SCHEMES

    params = dict(reference.params)
    scheme = SCHEMES.get(str(reference.scheme))
    mistakes = scheme.known_mistakes(params) if scheme is not None else None
    width_name = getattr(mistakes, "rotary_width", None)
    fraction_name = getattr(mistakes, "rotary_fraction", None)
    if width_name is None or fraction_name is None or not {width_name, fraction_name} <= params.keys():
        return None  # the scheme turns every column: it names no rotary width
    if params[width_name] is not None or float(params[fraction_name] or 1.0) != 1.0:
        return None  # a partial reference is generated at the head's width already
    parts = reference.parts or (str(params.get("part")),)
    if not set(parts) <= {"cos", "sin"} or reference_table.ndim != 2 or engine_table.ndim != 2:
        return None
    if len(reference_table) != len(engine_table) or reference_table.shape[1] % len(parts):
        return None
    rotary, columns = reference_table.shape[1] // len(parts), engine_table.shape[1]
    complex_table = np.iscomplexobj(engine_table)
    if (len(parts) == 1 and complex_table) or (engine_pair and columns % 2):
        return None
    # a pair side by side holds two parts; a cache (vLLM's cos_sin_cache) one column per frequency in each half,
    # a complex freqs_cis one per frequency
    width = columns // 2 if engine_pair else columns * (2 if complex_table else 1) if len(parts) == 2 else columns
    if width == rotary or width < 2 or width % 2 or rotary % 2:
        return None
    rows = len(reference_table)

    def table(dim: int, part: str, **changes: Any) -> np.ndarray:
        return np.asarray(pecli.encode(reference.scheme, rows, dim, dtype=dtype, **{**params, "part": part, **changes}))

    def engine_parts(cos: np.ndarray) -> list[np.ndarray] | None:
        if len(parts) == 1:
            return [engine_table]
        if engine_pair:
            by_part = {"cos": engine_table[:, :width], "sin": engine_table[:, width:]}
        else:
            cache = engine_cache_as_pair(engine_table, cos)
            if cache is None:
                return None
            by_part = {"cos": cache.cos, "sin": cache.sin}
        return [by_part[part] for part in parts]

    def cos_of(tables: list[np.ndarray]) -> np.ndarray:
        return dict(zip(parts, tables, strict=True)).get("cos", tables[0])

    head, narrow = max(width, rotary), min(width, rotary)
    other = "B" if engine_side == "A" else "A"  # the reference's side
    each, a_part = (" of each part", " a part") if len(parts) == 2 else ("", "")
    partial = {width_name: narrow}
    at_head = [table(head, part, **partial) for part in parts]  # rotary columns, the rest passing through
    if width > rotary:  # the engine's table is the head's, every column turning: partial rotary ignored
        mistake = [table(width, part) for part in parts]
        found = engine_parts(cos_of(mistake))
        if found is None:
            return None
        engine, compared_reference = np.hstack(found), np.hstack(at_head)
        reference = replace(reference, params={**params, **partial})
        code = "partial_rotary_ignored"
        message = (
            f"{engine_side} turns all {head} columns{each}, with frequencies over the whole width, where "
            f"{other} turns only its {narrow} rotary columns (partial rotary {narrow / head:g} ignored)"
        )
        widths = (
            f"{engine_side} is {head} columns{a_part}, {other} {narrow}: the rotary columns of a head of {head} "
            f"(partial rotary {narrow / head:g})"
        )
        words = f"{widths}; compared at {head} columns, {other}'s columns past {narrow} passing through (cos 1, sin 0)"
    else:  # the engine's table is narrower: only its leading columns turn, frequencies over them
        mistake = [table(width, part) for part in parts]
        found = engine_parts(cos_of(mistake))
        if found is None:
            return None
        engine = np.hstack([np.hstack([own, passing[:, width:]]) for own, passing in zip(found, at_head, strict=True)])
        compared_reference = reference_table
        code = "partial_rotary_assumed"
        message = (
            f"{engine_side} turns only the leading {narrow} columns{each}, with frequencies over "
            f"them, where {other} turns all {head} (partial rotary {narrow / head:g} assumed)"
        )
        widths = f"{engine_side} is {narrow} columns{a_part}, {other} {head} (all of them rotary)"
        words = (
            f"{widths}; compared at {head} columns, {engine_side}'s columns past {narrow} passing through "
            "(cos 1, sin 0)"
        )
    reproduced = compare_tables(np.hstack(mistake), np.hstack(found)).agree
    # the probe's figures: the columns the reference turns, those the engine's table turns, the head's
    turned = head if width > rotary else narrow
    figures: dict[str, Any] = {"rotary_columns": rotary, "turned_columns": turned, "head_dim": head}
    supersedes: tuple[str, ...] = ()
    derived = _derived_head_dim(reference, width, rotary)
    if derived is not None:  # the config sets every column rotary and its head width: no partial rotary
        code, supersedes = "head_dim_from_hidden_size", ("partial_rotary_ignored", "partial_rotary_assumed")
        key, keys, values = derived
        derivation = f"{keys.replace('/', ' / ')} = {values.replace('/', ' / ')} = {width}"
        message = (
            f"{engine_side}'s head_dim is {derivation} where the config sets {key} {rotary}: {engine_side} is "
            f"{other}'s RoPE at {width} columns{a_part}, every column turning (the config has no partial rotary)"
        )
        widths = f"{engine_side} is {width} columns{a_part}, {other} {rotary}: {derivation}, the config's "
        widths += f"{key} {rotary}"
        words = f"{widths}; compared at {words.partition('; compared at ')[2]}"
        figures = {"config_head_dim": rotary, "engine_head_dim": width, "derived_from": f"{keys} = {values}"}
    finding = Finding(code, message, figures) if reproduced else None
    return PartialWidth(compared_reference, engine, reference, finding, words, widths, supersedes)


def _derived_head_dim(reference: Reference, width: int, rotary: int) -> tuple[str, str, str] | None:
    """The config's head_dim key and the hidden_size / num_attention_heads keys and values that give ``width``,
    when the config sets the head width ``rotary`` explicitly and the engine's table is ``width`` columns (it
    derived the head width, as a config without head_dim has it); else None.

    >>> from pecli.analysis.diagnosis import ConfigFacts
    >>> facts = ConfigFacts(("head_dim", 256), ("hidden_size/num_attention_heads", "1152/4", 288))
    >>> _derived_head_dim(Reference("rope", {}, config=facts), 288, 256)
    ('head_dim', 'hidden_size/num_attention_heads', '1152/4')
    >>> _derived_head_dim(Reference("rope", {}, config=facts), 128, 256) is None
    True
    """
    facts = reference.config
    if facts is None or facts.head_dim is None or facts.hidden_over_heads is None:
        return None
    (key, head_dim), (keys, values, derived) = facts.head_dim, facts.hidden_over_heads
    if head_dim != rotary or derived != width:
        return None
    return key, keys, values
