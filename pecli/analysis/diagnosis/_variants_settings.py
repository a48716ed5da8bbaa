"""Findings of other settings: B is the reference without its frequency scaling, with another layer type's
settings, a boolean parameter flipped, or another of its parameter sets (a swap)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._regenerate import first_part, frequency_index, parted_columns, reproduces
from pecli.analysis.diagnosis._variants_base import BASES, base_of
from pecli.analysis.diagnosis.finding import Finding, Reference, within

__all__ = ["layer_type_findings", "swap_findings", "toggle_findings", "unscaled_findings"]


def layer_type_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference computed with another layer type's settings (an engine giving Gemma 3's sliding layers the
    full layers' base and scaling, or the reverse): the settings that differ between the config's layer types
    (:class:`~pecli.analysis.diagnosis.finding.ConfigFacts`) changed, the reference's other parameters kept."""
    facts = reference.config
    layers = dict(facts.layers) if facts is not None else {}
    own = layers.get(facts.layer_type) if facts is not None and facts.layer_type is not None else None
    if facts is None or own is None:
        return
    for name, settings in facts.layers:
        removed = [key for key in own if key not in settings]
        changed = {key: value for key, value in settings.items() if own.get(key) != value}
        if name == facts.layer_type or not (removed or changed):
            continue
        params = {key: value for key, value in reference.params.items() if key not in removed}
        table, off = reproduces(replace(reference, params={**params, **changed}), b, tolerance, {})
        if table is None:
            continue
        keys = [*changed, *(key for key in removed if key not in changed)]
        theirs, ours = _settings_words(settings, keys), _settings_words(own, keys)
        yield Finding(
            "layer_type_settings",
            f"B was computed with {name}'s rope settings ({theirs}) where A's layer type, {facts.layer_type}, has "
            f"{ours}",
            {"layer_type": facts.layer_type, "settings_of": name, "settings": {key: settings.get(key) for key in keys},
             "layer_settings": {key: own.get(key) for key in keys}, "residual": off},
        )  # fmt: skip
        return


def _settings_words(settings: Mapping[str, Any], keys: list[str]) -> str:
    """The values of ``keys`` in ``settings`` in words, those it lacks as "no …".

    >>> _settings_words({"base": 1e6, "scaling": "linear"}, ["base", "scaling", "factor"])
    'base 1e+06, scaling linear, no factor'
    >>> _settings_words({"base": 10000.0}, ["base", "scaling", "factor"])
    'base 10000, no scaling or factor'
    """

    def shown(value: Any) -> str:
        if isinstance(value, (list, tuple)):
            return f"[{len(value)} values]"
        return f"{value:g}" if isinstance(value, float) else str(value)

    given = [f"{key} {shown(settings[key])}" for key in keys if settings.get(key) is not None]
    missing = [key for key in keys if settings.get(key) is None]
    return ", ".join(given + ([f"no {' or '.join(missing)}"] if missing else []))


def unscaled_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference without its frequency scaling (a constant the scaling names may stay), or with the
    unscaled settings of another base: the factor applied to the base, or another layer's settings."""
    if mistakes.unscaled is None:
        return
    # the scaling left out of the frequencies only: a constant the scaling names (YaRN's attention factor) may stay
    table, off, scale, relation = None, float("inf"), 1.0, ""
    for scale in (1.0, *dict.fromkeys(mistakes.factors.values())):
        table, off = reproduces(reference, b, tolerance, mistakes.unscaled, scale)
        if table is not None:
            break
    other_base = None if table is not None else _unscaled_base(b, tolerance, reference, mistakes)
    if other_base is not None:  # the unscaled settings of another layer (Gemma 3's local layers: base 10000, none)
        base, table, off, relation = other_base
        scale = 1.0  # (the loop above left the last factor tried: the rebased table is unscaled, no factor kept)
    if table is not None:
        kept = f", its factor {scale:.6g} on cos and sin kept" if scale != 1.0 else ""
        parted = parted_columns(a, table, tolerance)
        column = int(parted[0]) if len(parted) else 0
        index = frequency_index(a, column, tolerance)
        scaling = ", ".join(
            f"{name}={reference.params.get(name)}"
            for name in mistakes.unscaled
            if reference.params.get(name) is not None
        )
        ours = reference.params.get(str(mistakes.base))
        rebased = ""
        if other_base is not None:
            how = f" (A's {mistakes.base} {relation}: the factor applied to the base instead of the positions)"
            rebased = f" and with {mistakes.base} {base:g} where A has {ours:g}{how if relation else ''}"
        yield Finding(
            "unscaled",
            f"B is the same RoPE without its frequency scaling ({scaling}){kept}{rebased}: they part from column "
            f"{column} (frequency index {index}) on",
            {
                "scaling": scaling,
                "first_column": column,
                "frequency_index": index,
                **({"factor": scale} if scale != 1.0 else {}),
                **({"a_base": ours, "b_base": base} if other_base is not None else {}),
                **({"base_relation": relation} if other_base is not None and relation else {}),
                "residual": off,
            },
        )


def _unscaled_base(
    b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> tuple[float, np.ndarray, float, str] | None:
    """The base that, with the scaling left out, reproduces ``b``, with its table, residual and how it follows from
    A's (empty: a shipped base): A's base divided (or multiplied) by the scaling factor (an engine applying the factor
    to the base instead of the positions), or a shipped base (an engine giving a scaled layer another layer's unscaled
    settings: Gemma 3's global layers computed as its local ones)."""
    ours = base_of(reference, mistakes)
    if mistakes.base is None or ours <= 0:
        return None
    factor = float(reference.params.get("factor") or 0.0)
    derived = [(ours / factor, f"divided by the factor {factor:g}"), (ours * factor, f"times the factor {factor:g}")]
    for base, relation in (*(derived if factor > 1.0 else ()), *((base, "") for base in BASES)):
        if base == ours:
            continue
        table, off = reproduces(reference, b, tolerance, {**mistakes.unscaled, mistakes.base: base})
        if table is not None:
            return base, table, off, relation
    return None


def toggle_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with one of its boolean parameters flipped (each flip a known bug of its scheme)."""
    for name in mistakes.toggles:
        value = bool(reference.params.get(name))
        table, off = reproduces(reference, b, tolerance, {name: not value})
        if table is not None:
            yield Finding(
                name,
                f"{name} differs: A has {name}={value}, B is the same table with {name}={not value}",
                {"parameter": name, "a_value": value, "b_value": not value, "residual": off},
            )


def swap_findings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with another of its parameter sets (its scheme's swaps), alone or with a named factor."""
    for code, meaning, changes in mistakes.swaps:
        # the other parameter set alone, or with a constant the scaling names (LongRoPE's original context ignored:
        # the short factors past it, and no attention factor, as the ratio max / original is then 1)
        for name, scale in (("", 1.0), *mistakes.factors.items()):
            table, off = reproduces(reference, b, tolerance, changes, scale)
            if table is not None and name and within(table / scale, a, tolerance):
                break  # the swap changes none of these rows (the long set past the original context): the factor alone
            if table is not None:
                also = f", and its cos and sin times {scale:.6g} ({name})" if name else ""
                factor = {"factor": scale, "matches": name} if name else {}
                evidence = _parted_frequencies(reference, a, table, tolerance) if code in mistakes.evidence else {}
                figures = {**mistakes.evidence.get(code, {}), **evidence, "changed": sorted(changes), **factor}
                yield Finding(code, f"B uses {meaning}{also}", {**figures, "residual": off})
                break


def _parted_frequencies(
    reference: Reference, a: np.ndarray, table: np.ndarray, tolerance: np.ndarray
) -> dict[str, Any]:
    """The frequency indices of the columns where ``table`` (B reproduced) parts from ``a`` (in the first of the
    parts side by side: each holds every frequency), as ``table`` pairs them: a swap's evidence.

    >>> import pecli
    >>> a = pecli.encode("rope", 64, 8, part="cos", dtype="float64")
    >>> b = pecli.encode("rope", 64, 8, part="cos", base=100.0, dtype="float64")
    >>> _parted_frequencies(Reference("rope", {}), a, b, np.full((64, 1), 1e-9))
    {'frequency_indices': [1, 2, 3]}
    """
    a, table = first_part(reference, a)[1], first_part(reference, table)[1]
    parted = parted_columns(a, table, tolerance)
    # the frequencies of the float64 table regenerated: its slow columns turn, where a float32 cos may hold 1
    return {"frequency_indices": sorted({frequency_index(table, int(column), tolerance) for column in parted})}
