"""Findings that regenerate the reference with one mistake (its scheme's :class:`pecli.schemes.mistakes.Mistakes`):
the frequency scaling left out, another base, a flipped flag, another parameter set, the positions negated,
vLLM's cos_sin_cache, the frequencies rounded to a dtype."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.diagnosis._layout import rotary_columns
from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, reproduced, residual, within
from pecli.dtypes import numpy_dtype, round_to
from pecli.errors import PecliError
from pecli.schemes import encode, get_scheme

__all__ = ["frequency_index", "variant_findings"]

#: bases tried for "the base differs" (RoPE's θ and the sinusoids' max period in shipped models)
BASES: tuple[float, ...] = (
    10.0, 100.0, 1000.0, 10000.0, 20000.0, 50000.0, 75000.0, 100000.0, 150000.0, 160000.0, 250000.0,
    500000.0, 640000.0, 1000000.0, 2000000.0, 5000000.0, 8000000.0, 10000000.0, 25000000.0, 50000000.0,
    100000000.0, 1000000000.0,
)  # fmt: skip
#: rows a candidate base is screened on (the last rows: the largest angles tell bases apart)
_SCREEN_ROWS = 8


def frequency_index(table: np.ndarray, column: int, tolerance: float | np.ndarray) -> int:
    """The frequency a column of a RoPE-like table carries: halves repeat (j mod r/2), pairs repeat (j // 2)
    (``tolerance``: a number, or one per row).

    >>> import pecli
    >>> frequency_index(pecli.encode("rope", 8, 8, part="cos", layout="interleaved"), 5, 1e-6)
    2
    """
    rotary = rotary_columns(table)
    half = rotary // 2
    bound = per_row(tolerance, table.shape)
    if half and column < rotary and within(table[:, :half], table[:, half:rotary], bound):
        return column % half
    if half and column < rotary and within(table[:, 0:rotary:2], table[:, 1:rotary:2], bound):
        return column // 2
    return column


def _table(
    reference: Reference, length: int, dim: int, changes: Mapping[str, Any], rows: range | None = None
) -> np.ndarray | None:
    params = {**reference.params, **changes}
    whole = reference.length or length  # the diagnosed rows may be the first rows of a longer table
    if rows is None and whole != length:
        rows = range(length)
    # a bias over query and key positions (t5) has no dim: its columns are the keys
    width = dim if get_scheme(reference.scheme).takes_dim else None
    parts = reference.parts or (None,)
    if width is not None and width % len(parts):
        return None
    try:  # each part (RoPE's cos, sin) in its own columns, as the compared table holds them
        tables = [
            encode(reference.scheme, whole, None if width is None else width // len(parts), dtype="float64",
                   rows=rows, **(params if part is None else {**params, "part": part}))
            for part in parts
        ]  # fmt: skip
    except (PecliError, ValueError):
        return None
    if not all(isinstance(table, np.ndarray) and table.ndim == 2 for table in tables):
        return None
    return tables[0] if len(tables) == 1 else np.hstack(tables)


def _reproduces(
    reference: Reference, b: np.ndarray, tolerance: np.ndarray, changes: Mapping[str, Any], scale: float = 1.0
) -> tuple[np.ndarray | None, float]:
    """The reference with ``changes`` (its values times ``scale``) and its residual against ``b`` when it
    reproduces ``b`` within every row's ``tolerance`` (else None, inf); screened on the last rows first."""
    length, dim = b.shape
    rows = range(max(0, length - _SCREEN_ROWS), length)
    tail = _table(reference, length, dim, changes, rows=rows)
    if tail is None or not within(scale * tail, b[rows.start :], tolerance[rows.start :]):
        return None, float("inf")
    table = _table(reference, length, dim, changes)
    if table is not None:
        table = scale * table
    if table is None or not reproduced(table, b, tolerance):  # within B's own rounding, not only the row's bound
        return None, float("inf")
    return table, residual(table, b)


def _first_parting_column(a: np.ndarray, other: np.ndarray, tolerance: np.ndarray) -> int:
    parted = np.flatnonzero(np.any(np.abs(a - other) > tolerance, axis=0))
    return int(parted[0]) if len(parted) else 0


def _layer_type_settings(
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
        table, off = _reproduces(replace(reference, params={**params, **changed}), b, tolerance, {})
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


def _unscaled(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    if mistakes.unscaled is None:
        return
    # the scaling left out of the frequencies only: a constant the scaling names (YaRN's attention factor) may stay
    table, off, scale, relation = None, float("inf"), 1.0, ""
    for scale in (1.0, *dict.fromkeys(mistakes.factors.values())):
        table, off = _reproduces(reference, b, tolerance, mistakes.unscaled, scale)
        if table is not None:
            break
    other_base = None if table is not None else _unscaled_base(b, tolerance, reference, mistakes)
    if other_base is not None:  # the unscaled settings of another layer (Gemma 3's local layers: base 10000, none)
        base, table, off, relation = other_base
        scale = 1.0  # (the loop above left the last factor tried: the rebased table is unscaled, no factor kept)
    if table is not None:
        kept = f", its factor {scale:.6g} on cos and sin kept" if scale != 1.0 else ""
        column = _first_parting_column(a, table, tolerance)
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
    ours = float(reference.params.get(mistakes.base or "") or 0.0)
    if mistakes.base is None or ours <= 0:
        return None
    factor = float(reference.params.get("factor") or 0.0)
    derived = [(ours / factor, f"divided by the factor {factor:g}"), (ours * factor, f"times the factor {factor:g}")]
    for base, relation in (*(derived if factor > 1.0 else ()), *((base, "") for base in BASES)):
        if base == ours:
            continue
        table, off = _reproduces(reference, b, tolerance, {**mistakes.unscaled, mistakes.base: base})
        if table is not None:
            return base, table, off, relation
    return None


def _base(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    if mistakes.base is None:
        return
    ours = float(reference.params.get(mistakes.base) or 0.0)
    for base in (*BASES, *((float(np.sqrt(ours)), ours**2) if ours > 0 else ())):  # a shipped base, √A's, A's²
        if base == ours:
            continue
        table, off = _reproduces(reference, b, tolerance, {mistakes.base: base})
        if table is not None:
            yield _base_finding(mistakes.base, ours, base, off)
            return


def _any_base(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """A base no shipped model uses, fitted to B (dynamic NTK's): tried only when no named mistake explains B, as
    another base can imitate one (a sinusoid's other freq_shift is the base 10000^(h/(h−1)))."""
    ours = float(reference.params.get(mistakes.base) or 0.0) if mistakes.base is not None else 0.0
    fitted = _fitted_base(*_first_part(reference, b), tolerance, mistakes.base) if ours > 0 else None
    if fitted is None:
        return
    for base in (*(float(f"{fitted:.{digits}g}") for digits in (3, 4, 6)), fitted):  # the roundest that reproduces
        table, off = _reproduces(reference, b, tolerance, {mistakes.base: base})
        if table is not None:
            yield _base_finding(mistakes.base, ours, base, off)
            return


def _first_part(reference: Reference, b: np.ndarray) -> tuple[Reference, np.ndarray]:
    """The reference and ``b`` cut to the first of the parts side by side (RoPE's cos of a cos | sin pair): a base
    fitted to it is the pair's (each part holds every frequency), for half the tables regenerated.

    >>> part, cut = _first_part(Reference("rope", {}, parts=("cos", "sin")), np.zeros((2, 8)))
    >>> part.parts, cut.shape
    (('cos',), (2, 4))
    """
    if len(reference.parts) < 2 or b.shape[-1] % len(reference.parts):
        return reference, b
    width = b.shape[-1] // len(reference.parts)
    return replace(reference, parts=reference.parts[:1]), b[..., :width]


def _base_finding(parameter: str, ours: float, base: float, off: float) -> Finding:
    """``base_differs``, naming B's base as A's square root or square when it is one.

    >>> print(_base_finding("base", 10000.0, 100.0, 0.0).message)
    the base differs: A uses base 10000, B is the same table with base 100 (the square root of A's)
    """
    related = {"the square root of A's": np.sqrt(ours), "A's squared": ours**2}
    named = next((f" ({words})" for words, value in related.items() if abs(base / value - 1.0) < 1e-6), "")
    return Finding(
        "base_differs",
        f"the base differs: A uses {parameter} {ours:g}, B is the same table with {parameter} {base:g}{named}",
        {"parameter": parameter, "a_base": ours, "b_base": base, "residual": off},
    )


#: the bracket of log(base) a base is fitted in (2 to 1e12), and the points tried in it at each position
_LOG_BASES, _FIT_POINTS = (np.log(2.0), np.log(1e12)), 41
#: the error past which a fit stops (values of unit scale: no base comes near)
_FIT_GIVE_UP = 0.1


def _fitted_base(reference: Reference, b: np.ndarray, tolerance: np.ndarray, parameter: str) -> float | None:
    """The base that reproduces ``b``'s rows 1, 4, 16… (a base no shipped model uses: √θ, dynamic NTK's), fitted
    coarse to fine: at row 1 each angle is below 1 radian, so the error is unimodal in the base; each later row
    narrows the bracket to the points around the best. None when a row's best is beyond its noise.

    >>> import pecli
    >>> b = pecli.encode("rope", 512, 32, part="cos", base=707.1, dtype="float64")
    >>> reference = Reference("rope", {"part": "cos", "base": 10000.0})
    >>> round(_fitted_base(reference, b, np.full(b.shape[0], 1e-9), "base"), 3)
    707.1
    """
    length, dim = b.shape
    low, high = _LOG_BASES
    best = None
    rows = [4**k for k in range(12) if 4**k < length - 1] + [length - 1] * 4  # the last row again: to its noise
    for stage, row in enumerate(rows):
        grid = np.linspace(low, high, _FIT_POINTS)
        errors = []
        for log_base in grid:
            table = _table(reference, length, dim, {parameter: float(np.exp(log_base))}, rows=range(row, row + 1))
            if table is None:
                return None
            errors.append(float(np.max(np.abs(table - b[row : row + 1]))))
        at = int(np.argmin(errors))
        if stage and errors[at] > _FIT_GIVE_UP:  # no base comes near this row: another cause
            return None
        best = float(grid[at])
        step = grid[1] - grid[0]
        low, high = best - 2 * step, best + 2 * step
    return None if best is None else float(np.exp(best))


def _toggles(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    for name in mistakes.toggles:
        value = bool(reference.params.get(name))
        table, off = _reproduces(reference, b, tolerance, {name: not value})
        if table is not None:
            yield Finding(
                name,
                f"{name} differs: A has {name}={value}, B is the same table with {name}={not value}",
                {"parameter": name, "a_value": value, "b_value": not value, "residual": off},
            )


def _swaps(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    for code, meaning, changes in mistakes.swaps:
        # the other parameter set alone, or with a constant the scaling names (LongRoPE's original context ignored:
        # the short factors past it, and no attention factor, as the ratio max / original is then 1)
        for name, scale in (("", 1.0), *mistakes.factors.items()):
            table, off = _reproduces(reference, b, tolerance, changes, scale)
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
    a, table = _first_part(reference, a)[1], _first_part(reference, table)[1]
    parted = np.flatnonzero(np.any(np.abs(a - table) > tolerance, axis=0))
    # the frequencies of the float64 table regenerated: its slow columns turn, where a float32 cos may hold 1
    return {"frequency_indices": sorted({frequency_index(table, int(column), tolerance) for column in parted})}


def _base_held(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with its base held in a narrower dtype (an engine's θ in a float16 tensor): rounded to it
    (50000 → 49984), or overflowed to inf past its largest value (float16's 65504: 1e6, 500000), where every frequency
    base^(−2i/d) but base^0 = 1 is 0 and every column that depends on the base holds its value at position 0."""
    ours = float(reference.params.get(mistakes.base or "") or 0.0)
    if mistakes.base is None or ours <= 0:
        return
    for dtype in mistakes.base_dtypes:
        try:
            held = float(np.asarray(round_to(np.array([ours]), dtype), dtype=np.float64)[0])
        except PecliError:  # past the dtype's largest value: inf
            held = float("inf")
        if held == ours:
            continue
        figures: dict[str, Any] = {"parameter": mistakes.base, "dtype": dtype, "a_base": ours}
        if np.isfinite(held):
            table, off = _reproduces(reference, b, tolerance, {mistakes.base: held})
            if table is not None:
                yield Finding(
                    "base_rounded",
                    f"the base rounded to {dtype}: A uses {mistakes.base} {ours:g}, B the same table with {held:g}, "
                    f"its nearest {dtype} value (an engine holding the base in a {dtype} tensor)",
                    {**figures, "b_base": held, "residual": off},
                )
                return
            continue
        overflowed = _overflowed_base(reference, b, tolerance, mistakes)
        if overflowed is not None:
            table, turning = overflowed
            largest = float(np.finfo(numpy_dtype(dtype)).max)
            yield Finding(
                "base_overflowed",
                f"the base overflowed {dtype} (inf): A's {mistakes.base} {ours:g} is past {dtype}'s largest value "
                f"{largest:g}, so B's frequencies base^(−2i/d) are 1, then 0: only the columns of base^0 = 1 turn "
                f"({_columns(turning) if len(turning) else 'none'}), every other column holds its value at position 0",
                {**figures, "largest": largest, "turning_columns": [int(column) for column in turning],
                 "residual": residual(table, b)},
            )  # fmt: skip
            return


def _overflowed_base(
    reference: Reference, b: np.ndarray, tolerance: np.ndarray, mistakes: Any
) -> tuple[np.ndarray, np.ndarray] | None:
    """The reference with an infinite base, when it reproduces ``b``, and the columns that still turn: those that
    do not depend on the base (base^0's: the last rows with twice the base hold them too) as they are, every other
    at its value at position 0 (angle 0: cos 1, times any factor on it, sin 0). Screened on the last rows first."""
    if mistakes.position_offset is None:
        return None
    length, dim = b.shape
    screen = range(max(0, length - _SCREEN_ROWS), length)
    twice = {mistakes.base: 2.0 * float(reference.params[mistakes.base])}
    tail, other = (_table(reference, length, dim, changes, rows=screen) for changes in ({}, twice))
    at_zero = _table(reference, length, dim, {mistakes.position_offset: 0}, rows=range(0, 1))
    if tail is None or other is None or at_zero is None:
        return None
    moved = ~np.all(tail == other, axis=0)  # the columns that depend on the base
    tail[:, moved] = at_zero[0, moved]
    if not within(tail, b[screen.start :], tolerance[screen.start :]):
        return None
    table = _table(reference, length, dim, {})
    if table is None:
        return None
    table[:, moved] = at_zero[0, moved]
    if not reproduced(table, b, tolerance):
        return None
    return table, np.flatnonzero(~moved & np.any(tail != at_zero, axis=0))


def _frequencies_rounded(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with its frequencies held in another dtype (an engine's ``inv_freq.half()``: float16
    keeps 11 significant bits, bfloat16 8), or exact where the reference rounds them: the angles p·θ drift with p,
    so A and B part from some position on. The first dtype that reproduces B is named."""
    parameter = mistakes.frequency_dtype
    if parameter is None:
        return
    ours = reference.params.get(parameter)
    for dtype in (*mistakes.frequency_dtypes, None):
        if dtype == ours:
            continue
        table, off = _reproduces(reference, b, tolerance, {parameter: dtype})
        if table is None:
            continue
        parted = np.flatnonzero(np.any(np.abs(a - b) > tolerance, axis=1))
        first = int(parted[0]) if len(parted) else 0
        held = "exact frequencies" if dtype is None else f"its frequencies rounded to {dtype}"
        where = "exact frequencies" if ours is None else f"frequencies held in {ours}"
        yield Finding(
            "frequencies_rounded",
            f"B is the same table with {held} where A has {where} ({parameter}): the angles p·θ drift with the "
            f"position, so they part from position {first} on",
            {"parameter": parameter, "a_dtype": ours, "b_dtype": dtype, "first_position": first, "residual": off},
        )
        return


def _held_in(table: np.ndarray) -> str | None:
    """The coarsest of bfloat16 and float16 that holds every value of ``table`` exactly, else None.

    >>> _held_in(np.array([0.5, 1.0 + 2.0**-10])), _held_in(np.array([0.1]))
    ('float16', None)
    """
    for name in ("bfloat16", "float16"):
        with np.errstate(over="ignore", invalid="ignore"):
            if np.array_equal(np.asarray(round_to(table, name), dtype=np.float64), table):
                return name
    return None


def _pairings(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference regenerated with another pairing of its columns (RoPE's halves against adjacent pairs).
    The layout findings find it as a column permutation of A when A's slow columns turn; a table rounded to
    float16 or bfloat16 holds them constant (cos 1), and the permutation found there is another one."""
    parameter, ours = mistakes.pairing, reference.params.get(mistakes.pairing or "")
    names = dict(mistakes.pairings)
    if parameter is None or ours not in names:
        return
    parts = len(reference.parts or (None,))
    for value, meaning in mistakes.pairings:
        if value == ours:
            continue
        table, off = _reproduces(reference, b, tolerance, {parameter: value})
        if table is None:
            continue
        held = _held_in(b)
        if held is not None:  # B's own rounding of the regenerated table: what an engine storing it holds
            off = min(off, residual(np.asarray(round_to(table, held), dtype=np.float64), b))
        width = a.shape[1] // parts
        rotary = rotary_columns(table[:, :width])
        partial = f" over the first {rotary} of {width} columns (partial rotary)" if rotary < width else ""
        each = f" in each of {parts} blocks of {width} columns (cos | sin)" if parts > 1 else ""
        yield Finding(
            "pairing",
            f"the pairing differs: A pairs {names[ours]}, B {meaning}{partial}{each}",
            {"a_pairing": names[ours].split(" (")[0], "b_pairing": meaning.split(" (")[0], "rotary_columns": rotary,
             "blocks": parts, "residual": off},
        )  # fmt: skip
        return


def _negated_table(reference: Reference, length: int, dim: int, mistakes: Any) -> np.ndarray | None:
    """The reference's rows at negated positions −p: from row 0's position (the rows of the table that starts at
    −(offset + L − 1), reversed: L the whole table's length, so a length-dependent scaling stays), or with the
    positions' multiplier negated; None when the scheme declares neither or cannot make it."""
    if mistakes.position_offset is not None:
        whole = reference.length or length
        start = reference.params.get(mistakes.position_offset) or 0
        changes = {mistakes.position_offset: -int(start) - (whole - 1)}
        table = _table(reference, length, dim, changes, rows=range(whole - length, whole))
        return None if table is None else table[::-1]
    if mistakes.position_scale is not None:
        scale = reference.params.get(mistakes.position_scale)
        return _table(reference, length, dim, {mistakes.position_scale: -float(1.0 if scale is None else scale)})
    return None


def _negated_positions(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is A at positions −p: sin(−pω) = −sin(pω), cos(−pω) = cos(pω), so its sin columns are negated and its
    cos columns kept (an engine that takes the angles as −p·ω, or subtracts positions the wrong way)."""
    length, dim = b.shape
    table = _negated_table(reference, length, dim, mistakes)
    if table is None or not reproduced(table, b, tolerance):
        return
    negated = np.flatnonzero(np.any(np.abs(a - table) > tolerance, axis=0))
    if not len(negated):
        return
    which = "every column: a sin table" if len(negated) == dim else f"{_columns(negated)}; the cos columns kept"
    yield Finding(
        "positions_negated",
        f"the sin columns are negated ({which}): B is A at positions −p, an engine that takes the angles as −p·ω "
        "or subtracts positions the wrong way",
        {"negated_columns": len(negated), "first_column": int(negated[0]), "residual": residual(table, b)},
    )


def _columns(columns: np.ndarray) -> str:
    """Column indices in words: a run, every k-th column of a run, or the first few.

    >>> _columns(np.arange(4)), _columns(np.arange(0, 8, 2)), _columns(np.array([1, 2, 6]))
    ('columns 0–3', 'every 2nd column from 0 to 6', 'columns 1, 2, 6')
    """
    first, last = int(columns[0]), int(columns[-1])
    steps = np.diff(columns)
    if len(columns) > 2 and np.all(steps == 1):
        return f"columns {first}–{last}"
    if len(columns) > 2 and np.all(steps == steps[0]):
        step = int(steps[0])
        return f"every {step}{'nd' if step == 2 else 'rd' if step == 3 else 'th'} column from {first} to {last}"
    shown = ", ".join(str(int(column)) for column in columns[:8])
    return f"columns {shown}{', …' if len(columns) > 8 else ''}"


def _cos_sin_cache(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    parts = get_scheme(reference.scheme).parts
    if mistakes.pairing is None or not {"cos", "sin"} <= set(parts) or reference.parts:
        return  # (a reference of cos and sin side by side is already the cache's shape)
    length, width = a.shape
    half = width // 2
    if not within(a[:, :half], b[:, :half], tolerance) and not within(a[:, :half], b[:, half:], tolerance):
        return  # the cache holds A's own cos half on one side
    cos, sin = (_table(reference, length, width, {"part": part}) for part in ("cos", "sin"))
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


def variant_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """The reference regenerated with each known mistake of its scheme, kept where it reproduces ``b`` within
    every row's ``tolerance`` (a number, or one per row)."""
    if reference is None:
        return []
    mistakes = get_scheme(reference.scheme).known_mistakes(reference.params)
    if mistakes is None:
        return []
    tolerance = per_row(tolerance, b.shape)
    found: list[Finding] = []
    explanations = (_layer_type_settings, _unscaled, _base, _base_held, _toggles, _swaps, _negated_positions,
                    _cos_sin_cache)  # fmt: skip
    for explain in (*explanations, _frequencies_rounded):
        found.extend(explain(a, b, tolerance, reference, mistakes))
    found.extend(_pairings(a, b, tolerance, reference, mistakes))
    if not found:  # two mistakes at once: the other pairing with rounded frequencies, no scaling or another base
        found.extend(_pairing_and(a, b, tolerance, reference, mistakes))
    return found or list(_any_base(a, b, tolerance, reference, mistakes))


def _pairing_and(
    a: np.ndarray, b: np.ndarray, tolerance: np.ndarray, reference: Reference, mistakes: Any
) -> Iterator[Finding]:
    """B is the reference with the other pairing AND one more of its known mistakes (an engine pairing adjacent
    columns with ``inv_freq.half()``): each single mistake is tried on the reference regenerated with the other
    pairing, the same strict test of reproduction (a few tables of 8 rows screened for each: cheap)."""
    parameter, ours = mistakes.pairing, reference.params.get(mistakes.pairing or "")
    names = dict(mistakes.pairings)
    if parameter is None or ours not in names:
        return
    for value, meaning in mistakes.pairings:
        if value == ours:
            continue
        paired = replace(reference, params={**reference.params, parameter: value})
        # A with B's pairing: where the second mistake parts from it
        repaired = _table(paired, b.shape[0], b.shape[1], {})
        if repaired is None:
            return
        for explain in (_frequencies_rounded, _unscaled, _base):
            for second in explain(repaired, b, tolerance, paired, mistakes):
                figures = {"a_pairing": names[ours].split(" (")[0], "b_pairing": meaning.split(" (")[0],
                           "also": second.code, **second.figures}  # fmt: skip
                yield Finding(
                    "pairing",
                    f"two mistakes: the pairing differs (A pairs {names[ours]}, B {meaning}), and {second.message}",
                    figures,
                )
                return
