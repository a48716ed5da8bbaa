"""Which known convention produced a table? A search over the registry's deterministic schemes.

The sinusoidal family is searched over its layout, sin/cos order, frequency shift (Vaswani's
``None``; 0 as in guided-diffusion; 1 as in tensor2tensor, fairseq and diffusers), a grid of bases
and the first position. The base and the first position are also read off the table itself, from
the phase of its lowest-frequency sin/cos pair, so an unusual base or a table cut out of a longer
one are found too. Every preset and every other scheme without a random seed (count, binary,
MemN2N… and whatever the registry holds) is tried at its defaults. Learned tables match nothing.

Candidates are screened on a few rows (the first and last eight), and the best few are then
regenerated and checked against every row; a match is *exact* when its largest error is within
the rounding of the table's values, *approximate* when within the noise of a float32
implementation: row p of a sin/cos convention may be off by eps32·|p|·ω_max more
(:func:`pecli.analysis.compare.arithmetic_tolerance`), a table of plain numbers (count, binary…)
by its rounding only. Among the candidates within that noise the first in search order wins:
presets, then round bases and offsets, then fitted ones.

>>> import pecli
>>> found = identify_table(pecli.encode(None, 64, 32, preset="fairseq"))
>>> found.level, found.best.presets, found.best.params["offset"]
('exact', ('fairseq',), 2)
>>> found.command()
'pecli generate --preset fairseq --d 32 --len 64 -o pe.npy'
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pecli.analysis.compare import arithmetic_tolerance, rounding_tolerance, value_precision
from pecli.errors import PecliError
from pecli.schemes.catalog import SCHEMES, get_scheme, resolve
from pecli.schemes.params import PARAMS
from pecli.schemes.presets import PRESETS
from pecli.schemes.sinusoidal import place_sin_cos

__all__ = ["BASES", "Candidate", "Identification", "generate_command", "identify_table"]

#: bases tried for every sinusoidal structure: Vaswani's 10000 (also LLaMA 1/2's RoPE theta), the
#: RoPE bases of Llama 3 (500000, meta-llama/llama3 llama/model.py, rope_theta) and Code Llama
#: (1e6, rope_theta in its params.json), and a decade grid around them
BASES: tuple[float, ...] = (10000.0, 500000.0, 1e6, 100.0, 1000.0, 5000.0, 20000.0, 50000.0, 1e5, 5e6, 1e7)
#: first positions always tried (fairseq starts at 2); a detected one is added
OFFSETS: tuple[int, ...] = (0, 1, 2, 3, 4)
#: the rows every candidate is screened on, at each end of the table
_SCREEN_ROWS = 8
#: candidates checked against the whole table after screening
_VERIFY = 6
#: schemes computed from angles p·ω (ω ≤ 1), whose float32 implementations carry eps32·|p·ω| noise
_ANGLE_SCHEMES = ("sinusoidal", "timestep", "rope", "sincos2d", "binary-sine")
#: the largest noise, relative to the table's scale, under which a float32 table still tells conventions apart
_DISCERNIBLE = 1e-2


@dataclass(frozen=True)
class Candidate:
    """A scheme with full parameters, and its largest absolute error against the table."""

    scheme: str
    params: Mapping[str, Any]
    max_error: float = math.inf
    presets: tuple[str, ...] = ()  #: presets with exactly these parameters

    def describe(self) -> str:
        """``scheme (preset …): param=value …``."""
        presets = f" (preset {', '.join(self.presets)})" if self.presets else ""
        params = " ".join(f"{name}={value}" for name, value in self.params.items())
        return f"{self.scheme}{presets}" + (f": {params}" if params else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "params": dict(self.params),
            "presets": list(self.presets),
            "max_error": self.max_error,
        }


@dataclass(frozen=True)
class Identification:
    """The outcome of :func:`identify_table`: the closest candidate and how well it matches."""

    shape: tuple[int, int]
    dtype: str  #: the dtype of the table as given (the file's)
    best: Candidate
    level: str  #: "exact", "approximate" or "none"
    tolerance: float  #: the largest error of an exact match (rounding of ``precision``)
    precision: str = "float32"  #: the coarsest dtype holding every value exactly (see value_precision)
    runners_up: list[Candidate] = field(default_factory=list)
    value_mean: float = 0.0
    value_std: float = 0.0
    reproduce_dtype: str = ""  #: the dtype the reproduce command writes (the values' precision when coarser)
    gaussian: bool = False  #: no match, and the values look like N(mean, std²) draws (a random or learned table)

    @property
    def matched(self) -> bool:
        return self.level != "none"

    def command(self) -> str:
        """The ``pecli generate`` command that reproduces the best candidate's table."""
        dtype = self.reproduce_dtype or self.dtype
        return generate_command(self.best, length=self.shape[0], dim=self.shape[1], dtype=dtype)

    def to_json(self) -> dict[str, Any]:
        return {
            "shape": list(self.shape),
            "dtype": self.dtype,
            "match": self.level,
            "best": self.best.to_json(),
            "command": self.command(),
            "tolerance": self.tolerance,
            "precision": self.precision,
            "runners_up": [c.to_json() for c in self.runners_up],
            "value_mean": self.value_mean,
            "value_std": self.value_std,
        }


def _number(value: float) -> str:
    """A float as the command line should spell it: 500000, 1, 12345.5 (exact, shortest)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def generate_command(candidate: Candidate, *, length: int, dim: int, dtype: str = "float32") -> str:
    """The ``pecli generate`` command line that writes ``candidate``'s table.

    Example:
        >>> generate_command(Candidate("sinusoidal", {**SCHEMES["sinusoidal"].defaults, "base": 5e5}), length=8, dim=4)
        'pecli generate sinusoidal --base 500000 --d 4 --len 8 -o pe.npy'
    """
    parts = ["pecli", "generate"]
    if candidate.presets:
        parts += ["--preset", candidate.presets[0]]
        reference = resolve(None, candidate.presets[0], {})[1]
    else:
        parts.append(candidate.scheme)
        reference = dict(SCHEMES[candidate.scheme].defaults)
    for name, value in candidate.params.items():
        if value == reference.get(name) and type(value) is type(reference.get(name)):
            continue
        param = PARAMS[name]
        if param.kind is bool:
            parts.append(param.flag if value else param.negative_flag or "")
        else:
            parts += [param.flag, _number(value) if param.kind in (int, float) else str(value)]
    parts += ["--d", str(dim), "--len", str(length)]
    if dtype != "float32":
        parts += ["--dtype", dtype]
    parts += ["-o", "pe.safetensors" if dtype == "bfloat16" else "pe.npy"]
    return " ".join(parts)


def _column_roles(dim: int, count: int, layout: str, cos_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """Columns holding sin and cos of each of ``count`` frequencies (−1 where a column is cut off).

    The layout engine itself places a code per frequency, so identify never restates a layout.
    """
    codes = np.arange(1, count + 1, dtype=np.float64)
    placed = np.zeros((1, dim))
    place_sin_cos(placed, (codes - 1j * codes)[None, :], layout=layout, cos_first=False)
    sin_columns, cos_columns = np.full(count, -1), np.full(count, -1)
    for column, code in enumerate(placed[0]):
        if code < 0:
            sin_columns[int(-code) - 1] = column
        elif code > 0:
            cos_columns[int(code) - 1] = column
    return (cos_columns, sin_columns) if cos_first else (sin_columns, cos_columns)


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def _read_base_and_offset(
    table: np.ndarray, layout: str, cos_first: bool, freq_shift: float | None
) -> tuple[list[float], list[int]]:
    """Bases and first positions that the phase of the lowest-frequency sin/cos pair suggests."""
    length, dim = table.shape
    count = (dim + 1) // 2 if freq_shift is None else dim // 2
    if length < 2 or count < 2 or (freq_shift is not None and count - freq_shift <= 0):
        return [], []
    sin_columns, cos_columns = _column_roles(dim, count, layout, cos_first)
    complete = np.flatnonzero((sin_columns >= 0) & (cos_columns >= 0))
    k = int(complete[-1]) if len(complete) else 0
    if k == 0:
        return [], []
    sin_column, cos_column = (table[:, column].astype(np.float64) for column in (sin_columns[k], cos_columns[k]))
    phase = np.unwrap(np.arctan2(sin_column, cos_column))
    slope, intercept = np.polyfit(np.arange(length, dtype=np.float64), phase, 1)
    if not 0 < slope < 1:
        return [], []
    # ω_k = base^(−2k/d) (Vaswani) or base^(−k/(h − S)) (shifted): solve for the base
    exponent = 2.0 * k / dim if freq_shift is None else k / (count - freq_shift)
    estimate = math.exp(-math.log(slope) / exponent)
    bases = [] if not 1.0 < estimate < 1e12 else [_significant(estimate, digits) for digits in range(2, 8)]
    offset = round(intercept / slope)
    return list(dict.fromkeys([*bases, estimate] if bases else [])), ([offset] if abs(offset) < 1e9 else [])


def _sinusoidal_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    for layout in ("interleaved", "split"):
        for cos_first in (False, True):
            for freq_shift in (None, 0.0, 1.0):
                bases, offsets = _read_base_and_offset(table, layout, cos_first, freq_shift)
                for base in dict.fromkeys([*BASES, *bases]):
                    for offset in dict.fromkeys([*OFFSETS, *offsets]):
                        yield {
                            "base": base,
                            "layout": layout,
                            "cos_first": cos_first,
                            "freq_shift": freq_shift,
                            "offset": offset,
                        }


def _candidates(table: np.ndarray) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (scheme, full parameters) to try: presets first, then the sinusoidal grid, then the rest."""
    for preset in PRESETS.values():
        scheme, params = resolve(preset.scheme, preset.name, {})
        if "seed" not in params:
            yield scheme.name, params
    for params in _sinusoidal_candidates(table):
        yield "sinusoidal", {**SCHEMES["sinusoidal"].defaults, **params}
    for scheme in SCHEMES.values():
        # schemes drawn from a random generator are learned tables, which no convention fixes;
        # grids and head-wise biases are not (len, d) tables of positions
        if scheme.name == "sinusoidal" or "seed" in scheme.defaults or not scheme.is_sequence:
            continue
        for part in scheme.parts or (None,):
            yield scheme.name, dict(scheme.defaults) if part is None else {**scheme.defaults, "part": part}


def _rows(scheme: str, params: Mapping[str, Any], shape: tuple[int, int], rows: range) -> np.ndarray:
    return get_scheme(scheme).function(shape[0], shape[1], dtype="float64", rows=rows, **params)


def _presets_with(scheme: str, params: Mapping[str, Any]) -> tuple[str, ...]:
    names = []
    for preset in PRESETS.values():
        resolved, full = resolve(preset.scheme, preset.name, {})
        if resolved.name == scheme and full == dict(params):
            names.append(preset.name)
    return tuple(names)


def _noise(
    scheme: str, params: Mapping[str, Any], rows: range, expected: np.ndarray, precision: str, scale: float
) -> np.ndarray:
    """The per-element error a float32 implementation of this candidate may show, rounded to ``precision``.

    One unit of roundoff of ``precision`` at each value (a table rounded once is within half of it),
    float32's at the table's scale (the arithmetic's intermediates), plus eps32·|p| for the angle
    p·ω (ω ≤ 1) of a sin/cos convention.
    """
    noise = rounding_tolerance(precision) / 4 * np.abs(expected) + rounding_tolerance("float32", scale=scale) / 4
    if scheme in _ANGLE_SCHEMES:
        positions = np.arange(rows.start, rows.stop) + (params.get("offset") or 0)
        noise = noise + arithmetic_tolerance(len(rows), "float64", scale=0.0, positions=positions)
    return noise


def _errors(
    table: np.ndarray, scheme: str, params: Mapping[str, Any], rows: range, precision: str, scale: float
) -> tuple[float, float]:
    """The largest |error| on ``rows``, and the largest error in units of the candidate's noise."""
    expected = _rows(scheme, params, table.shape, rows)
    difference = np.abs(table[rows.start : rows.stop] - expected)
    noise = _noise(scheme, params, rows, expected, precision, scale)
    if noise.max() > _DISCERNIBLE * scale:  # far-off positions (a fitted offset of 10^8): float32 noise hides all
        return float(difference.max()), math.inf
    return float(difference.max()), float((difference / noise).max())


def _full_error(
    table: np.ndarray, scheme: str, params: Mapping[str, Any], chunk_rows: int, precision: str, scale: float
) -> tuple[float, float]:
    error, excess = 0.0, 0.0
    for start in range(0, len(table), chunk_rows):
        rows = range(start, min(start + chunk_rows, len(table)))
        chunk_error, chunk_excess = _errors(table, scheme, params, rows, precision, scale)
        error, excess = max(error, chunk_error), max(excess, chunk_excess)
    return error, excess


def _looks_gaussian(values: np.ndarray) -> bool:
    """Kurtosis within 0.5 of a normal distribution's 3, and a mean within 5 standard errors of 0."""
    std = float(values.std(dtype=np.float64))
    if values.size < 256 or std == 0:
        return False
    centred = (values - values.mean(dtype=np.float64)) / std
    kurtosis = float(np.mean(centred**4))
    return abs(kurtosis - 3.0) < 0.5 and abs(float(values.mean(dtype=np.float64))) < 5 * std / math.sqrt(values.size)


def identify_table(table: np.ndarray, *, verify: int = _VERIFY) -> Identification:
    """Search the registry for the convention that produced ``table``.

    Args:
        table: a 2-D table (any real dtype; its dtype sets the tolerance of an exact match).
        verify: how many of the best-screened candidates are checked against every row.

    Returns:
        An :class:`Identification`: the closest candidate, its level (exact, approximate or none)
        and the runners-up.

    Example:
        >>> import numpy as np
        >>> identify_table(np.random.default_rng(0).normal(0, 0.02, (32, 16))).level
        'none'
    """
    dtype = np.asarray(table).dtype.name
    values = np.asarray(table)
    if values.dtype.kind != "f" or values.dtype.itemsize < 4:  # ints, float16, bfloat16: widen (exactly)
        values = values.astype(np.float64)
    if values.ndim != 2 or values.size == 0:
        from pecli.errors import TableFileError

        raise TableFileError(
            f"identify needs a non-empty 2-D table (positions × dims), got shape {values.shape}",
            hint="give a position table",
        )
    if not np.isfinite(values).all():
        from pecli.errors import TableFileError

        raise TableFileError("the table holds NaN or infinite values", hint="no encoding convention produces them")
    length, dim = values.shape
    scale = float(np.abs(values).max()) or 1.0
    stored_tolerance = max(rounding_tolerance(dtype, scale=scale), 1e-9 * scale)
    # a bfloat16 or float16 table stored as float32 still carries its coarser rounding
    precision = value_precision(table)
    tolerance = max(rounding_tolerance(precision, scale=scale), stored_tolerance)
    head = range(0, min(_SCREEN_ROWS, length))
    tail = range(max(head.stop, length - _SCREEN_ROWS), length)
    screened: list[tuple[float, Candidate]] = []
    seen: set[tuple[str, tuple]] = set()
    for scheme, params in _candidates(values):
        key = (scheme, tuple(sorted(params.items(), key=lambda item: item[0])))
        if key in seen:
            continue
        seen.add(key)
        try:
            errors = [_errors(values, scheme, params, r, precision, scale) for r in (head, tail) if len(r)]
        except PecliError:
            continue  # this candidate does not exist at this shape (e.g. d too small for its frequency shift)
        screened.append((max(e[1] for e in errors), Candidate(scheme, params, max(e[0] for e in errors))))
    # stable sort: among candidates within the noise the earlier (a preset, a grid base, a rounder base) wins
    screened.sort(key=lambda item: max(item[0], 1.0))
    chunk_rows = max(1, (8 << 20) // (8 * dim))
    verified = []
    for _, candidate in screened[:verify]:
        error, excess = _full_error(values, candidate.scheme, candidate.params, chunk_rows, precision, scale)
        verified.append((excess, replace(candidate, max_error=error)))
    verified.sort(key=lambda item: max(item[0], 1.0))
    excess, best = verified[0]
    best = replace(best, presets=_presets_with(best.scheme, best.params))
    if excess > 1.0:
        level = "none"  # regenerated, the best candidate is off by more than the noise of any implementation
    elif best.max_error <= tolerance:
        level = "exact"
    else:
        level = "approximate"
    verified = [candidate for _, candidate in verified]
    runners_up = [c for c in verified[1:] if (c.scheme, dict(c.params)) != (best.scheme, dict(best.params))]
    return Identification(
        shape=(length, dim),
        dtype=dtype,
        # the dtype that reproduces the table: the stored one, unless its values were rounded coarser
        reproduce_dtype=dtype if best.max_error <= stored_tolerance else precision,
        best=best,
        level=level,
        tolerance=tolerance,
        precision=precision,
        runners_up=runners_up[:3],
        # the value statistics describe a table that matched nothing (a learned one)
        value_mean=float(values.mean(dtype=np.float64)) if level == "none" else 0.0,
        value_std=float(values.std(dtype=np.float64)) if level == "none" else 0.0,
        gaussian=level == "none" and _looks_gaussian(values),
    )
