"""The noise model and the checks: a candidate's rows regenerated and held against the table's.

Each entry may be off by the noise an implementation of the candidate shows (:func:`_noise`: one unit
of roundoff of the values' precision, the arithmetic's at the table's scale, and eps·|p| for the angle
p·ω of a sin/cos convention). A candidate is measured on a few rows (:func:`_errors`), on a sample of
runs spread over the table (:func:`_sample_rows`), then over every row a chunk at a time
(:func:`_full_excess`); a match is named only if its command writes what compare accepts
(:func:`_verified`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.compare import compare_row_chunks
from pecli.analysis.identify.result import Candidate
from pecli.analysis.identify.sinusoids import sinusoidal_frequencies, sinusoidal_rows
from pecli.analysis.value_precision import FLOAT32_ANGLE_NOISE, rounding_tolerance
from pecli.dtypes import held_values
from pecli.errors import PecliError
from pecli.schemes.catalog import get_scheme
from pecli.schemes.checks import axial_grid
from pecli.schemes.timestep import timestep_embedding

#: the sample: this many runs of ``_RUN_ROWS`` rows spread over a long table (a short one is checked whole)
_SAMPLE_RUNS, _RUN_ROWS = 32, 16
#: the largest noise, relative to the table's scale, under which a float32 table still tells conventions apart
_DISCERNIBLE = 1e-2
#: rows per chunk of a full regeneration (8 MiB of float64)
_CHUNK_BYTES = 8 << 20

#: screening rows are computed directly up to this many (the scheme's block engine wins on more)
_DIRECT_ROWS = 1024
#: runs of rows spanning at most this many values are computed in one call over the span (a small table's
#: first and last rows: one RoPE call of 128 × 64 values, 1.9 ms, against 5.3 ms for two of 8 rows)
_MERGED_VALUES = 1 << 15

Progress = Callable[[str], None]


def _rows(
    scheme: str,
    params: Mapping[str, Any],
    shape: tuple[int, int],
    rows: list[range],
    timesteps: np.ndarray | None = None,
    *,
    direct: bool = True,
    columns: np.ndarray | None = None,
) -> np.ndarray:
    """The candidate's float64 rows ``rows`` (runs of rows, concatenated), at ``columns`` only when given.

    A few sinusoidal rows are computed directly (``direct``), and of those only the columns asked for
    (:func:`computed_directly`); a chunk of a full regeneration is the scheme's own (its block engine: sin
    and cos of every value directly cost twice the whole check).
    """
    if timesteps is not None:
        times = np.concatenate([timesteps[r.start : r.stop] for r in rows])
        return _columns(timestep_embedding(times, shape[1], dtype="float64", **params), columns)
    described = get_scheme(scheme)
    if direct and computed_directly(scheme, params, rows):
        positions = np.concatenate([np.arange(r.start, r.stop) for r in rows]) + params["offset"]
        computed = sinusoidal_rows(params, shape[1], positions.astype(np.float64), columns)
        if computed is not None:
            computed *= params.get("amplitude", 1.0)
            if params.get("padding_idx") is not None:
                computed[positions - params["offset"] == params["padding_idx"]] = 0.0
            return computed
    # a query × key bias (ALiBi's (L, L) head) has no embedding dimension
    dim = shape[1] if described.takes_dim else None
    given = _set(params)
    span = range(min(r.start for r in rows), max(r.stop for r in rows))
    if len(rows) > 1 and described.axes == "positions" and described.angles and len(span) * shape[1] <= _MERGED_VALUES:
        # one call over the rows' span, sliced: a scheme's rows are the whole table's bit for bit
        # (tests/schemes/test_core_properties.py), and a call of angles at integer positions computes a
        # whole block of them (fill_sin_cos) however few rows it returns. A grid's call does not: left alone
        whole = described.function(shape[0], dim, dtype="float64", rows=span, **given)
        return _columns(np.concatenate([whole[r.start - span.start : r.stop - span.start] for r in rows]), columns)
    runs = [described.function(shape[0], dim, dtype="float64", rows=r, **given) for r in rows]
    return _columns(runs[0] if len(runs) == 1 else np.concatenate(runs), columns)


def computed_directly(scheme: str, params: Mapping[str, Any], rows: list[range]) -> bool:
    """Whether :func:`_rows` computes these rows directly (a few sinusoidal rows in float64 arithmetic),
    so that a sample of their columns costs only those columns."""
    float64 = params.get("arithmetic") in (None, "float64")  # the direct rows are float64's
    return get_scheme(scheme).search == "sinusoids" and float64 and sum(len(r) for r in rows) <= _DIRECT_ROWS


def _columns(rows: np.ndarray, columns: np.ndarray | None) -> np.ndarray:
    return rows if columns is None else rows[:, columns]


def _set(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters given a value (an unset one takes the scheme function's default)."""
    return {name: value for name, value in params.items() if value is not None}


def _angle_positions(scheme: str, params: Mapping[str, Any], rows: np.ndarray) -> np.ndarray:
    """|p| of each row's angles p·ω: its position, or for an axial RoPE the largest of its grid coordinates."""
    offset = params.get("offset") or 0
    if get_scheme(scheme).axes == "grid":  # token (h, w) turns by h·ω and w·ω, not by its index
        sides = axial_grid(params["grid"], params.get("sections"))
        return np.max(np.unravel_index(rows.astype(np.intp), sides), axis=0) + abs(offset)
    if get_scheme(scheme).axes == "patches" and params.get("grid") is not None:
        # a patch's coordinates are at most its row, scaled as diffusers scales them: i / (M / base_size)
        # / interpolation_scale on an M-sided (cropped) grid, shifted by the crop's corner
        sides = axial_grid(params["grid"], None)
        cropped = params.get("pos_embed_max_size")
        corner = 0 if cropped is None else max(0, int(cropped) - min(sides)) // 2
        full = sides if cropped is None else (int(cropped), int(cropped))
        size = params.get("base_size")
        stretch = 1.0 if size is None else max(float(size) / side for side in full)
        stretch /= float(params.get("interpolation_scale") or 1.0)
        return (np.abs(rows) + corner) * max(stretch, 1.0)
    return np.abs(rows + offset)


def _arithmetic(precision: str) -> str:
    """The arithmetic whose roundoff a table of ``precision`` may carry: float32's, unless its values need float64."""
    return "float64" if precision == "float64" else "float32"


def _noise(
    scheme: str, params: Mapping[str, Any], positions: np.ndarray, expected: np.ndarray, precision: str, scale: float
) -> np.ndarray:
    """The per-element error an implementation of this candidate may show, rounded to ``precision``
    (computed in place of ``expected``).

    One unit of roundoff of ``precision`` at each value (a table rounded once is within half of it),
    the arithmetic's at the table's scale (its intermediates), plus eps·|p| for the angle p·ω
    (ω ≤ 1) of a sin/cos convention. The arithmetic is float32's, unless the values need float64
    (no float32 computation gives them): then float64's.
    """
    epsilon = rounding_tolerance(_arithmetic(precision), roundings=1.0)
    noise = np.abs(expected, out=expected)
    noise *= rounding_tolerance(precision, roundings=1.0)
    noise += epsilon * scale
    if get_scheme(scheme).angles:  # computed from angles p·ω (ω ≤ 1): float32 carries eps32·|p·ω| noise
        # the angle's error is scaled with the values (x-transformers' d^-0.5 amplitude)
        angle_noise = epsilon * abs(params.get("amplitude", 1.0)) * _angle_positions(scheme, params, positions)
        noise += angle_noise[:, None]
    return noise


def _errors(
    table: np.ndarray,
    candidate: Candidate,
    rows: list[range],
    precision: str,
    scale: float,
    *,
    direct: bool = True,
    buffer: np.ndarray | None = None,
    equal: tuple[str, list[bool]] | None = None,
    expected: np.ndarray | None = None,
    columns: np.ndarray | None = None,
) -> tuple[float, float]:
    """The largest |error| on ``rows``, and the largest error in units of the candidate's noise
    (the difference computed into ``buffer`` when given: a streamed pass reuses one, page faults and all).
    ``equal`` (a dtype, a list): whether the rows are the candidate's rounded once to that dtype, bit for bit,
    is appended to the list. ``expected``: the candidate's rows, when already regenerated. ``columns``: on
    those columns only; each entry's error and noise are its own, so both are at most the full rows'."""
    timesteps = None if candidate.timesteps is None else np.array(candidate.timesteps)
    if expected is None:
        scheme, params = candidate.scheme, candidate.params
        expected = _rows(scheme, params, table.shape, rows, timesteps, direct=direct, columns=columns)
    positions = np.concatenate([np.arange(r.start, r.stop, dtype=np.float64) for r in rows])
    given = table[rows[0].start : rows[0].stop] if len(rows) == 1 else table[positions.astype(np.intp)]
    given = _columns(given, columns)
    if timesteps is not None:  # the angle noise grows with t, not with the row
        positions = timesteps[positions.astype(np.intp)]
    if equal is not None:
        equal[1].append(bool(np.array_equal(given, held_values(expected, equal[0]))))
    fits = buffer is not None and buffer.size >= expected.size
    out = buffer[: expected.size].reshape(expected.shape) if buffer is not None and fits else None
    difference = np.subtract(given, expected, dtype=np.float64, out=out)
    np.abs(difference, out=difference)
    error = float(difference.max())
    noise = _noise(candidate.scheme, candidate.params, positions, expected, precision, scale)
    if noise.max() > _DISCERNIBLE * scale:  # far-off positions (a fitted offset of 10^8): float32 noise hides all
        return error, math.inf
    return error, float(np.divide(difference, noise, out=difference).max())


def _max_error(table: np.ndarray, candidate: Candidate, rows: list[range], bound: float) -> float:
    """The largest |error| of ``candidate`` on ``rows``, chunk by chunk; stops at the first chunk beyond ``bound``."""
    chunk_rows = max(1, _CHUNK_BYTES // (8 * table.shape[1]))
    timesteps = None if candidate.timesteps is None else np.array(candidate.timesteps)
    error = 0.0
    for run in rows:
        for start in range(run.start, run.stop, chunk_rows):
            chunk = range(start, min(start + chunk_rows, run.stop))
            try:
                expected = _rows(candidate.scheme, candidate.params, table.shape, [chunk], timesteps, direct=False)
            except PecliError:
                return math.inf
            error = max(error, float(np.abs(np.subtract(table[chunk.start : chunk.stop], expected)).max()))
            if error > bound:
                return error
    return error


def _regenerates(table: np.ndarray, candidate: Candidate, dtype: str) -> bool:
    """Whether ``candidate``'s table, rounded once to ``dtype`` as its command writes it, agrees with
    ``table`` within compare's own tolerance (entry by entry): the verdict a reader checking the printed
    command gets. Identify's noise allows float32 intermediates at the table's scale; compare's does not,
    so a candidate within the one may fail the other (a small value a few units of roundoff off)."""
    # small chunks: compare keeps several float64 buffers of a chunk's size (no table-sized temporary)
    chunk_rows = max(1, _CHUNK_BYTES // (64 * table.shape[1]))
    timesteps = None if candidate.timesteps is None else np.array(candidate.timesteps)

    def pairs() -> Any:
        for start in range(0, len(table), chunk_rows):
            chunk = range(start, min(start + chunk_rows, len(table)))
            expected = _rows(candidate.scheme, candidate.params, table.shape, [chunk], timesteps, direct=False)
            yield table[chunk.start : chunk.stop], held_values(expected, dtype)

    try:
        return compare_row_chunks(pairs, diagnose_rows=1).agree
    except PecliError:
        return False


def _agrees(pairs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]) -> bool:
    """Whether the table agrees with the candidate's values rounded once as its command writes them, within
    compare's tolerance, entry by entry (ALiBi's slopes, biases or query rows, as compare reads them: row by
    row): ``pairs()`` yields (the table's rows, the candidate's rounded rows in float64), a block at a time."""

    def rows() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for given, expected in pairs():
            width = given.shape[-1]
            yield given.reshape(-1, width), expected.reshape(-1, width)

    return compare_row_chunks(rows, diagnose_rows=1).agree


def _within_angle_noise(table: np.ndarray, candidates: list[Candidate], dtype: str, precision: str) -> Candidate | None:
    """The first timestep reading of ``candidates`` whose float32 command writes ``table`` within each
    entry's own angle noise: the rounding of ``dtype`` and ``precision`` plus two float32 roundings of
    the angle t·ω_k that entry takes (the library's ω_k, an ``exp`` one unit of roundoff from numpy's,
    and its product with t); None when none does.

    Compare allows float32's angle noise at the row's index, or at each row's t when a file records its
    timesteps: per row, at the largest frequency (diffusers' Timesteps at t = 999 are 2.9e-5 off pecli's
    float32 arithmetic where two of 128 frequencies differ by one unit, 8 times the allowance at row 27).
    This bound is per entry: an alias of the t (shifted by thousands), whose own t would widen compare's
    per-row bound, is not within it — its error does not scale with each column's angle."""
    for candidate in candidates:
        if candidate.timesteps is None or candidate.params.get("arithmetic") not in (None, "float64", "float32"):
            continue
        candidate = replace(candidate, params={**candidate.params, "arithmetic": "float32"})
        params = candidate.params
        freqs = sinusoidal_frequencies(table.shape[1], params["max_period"], params["freq_shift"])
        if freqs is None:
            continue
        half = table.shape[1] // 2
        columns = np.zeros(table.shape[1])
        columns[: 2 * half] = np.concatenate([freqs, freqs]) * abs(params["scale"])
        times = np.array(candidate.timesteps, dtype=np.float64)
        rounding = rounding_tolerance(dtype, precision, scale=float(np.abs(table).max()) or 1.0)
        chunk_rows = max(1, _CHUNK_BYTES // (8 * table.shape[1]))
        error, within = 0.0, True
        for start in range(0, len(table), chunk_rows):
            chunk = range(start, min(start + chunk_rows, len(table)))
            try:
                expected = _rows("timestep", params, table.shape, [chunk], times, direct=False)
            except PecliError:
                within = False
                break
            difference = np.abs(table[chunk.start : chunk.stop] - held_values(expected, dtype))
            angles = np.abs(times[chunk.start : chunk.stop, None]) * columns[None, :]
            allowed = rounding + 2 * FLOAT32_ANGLE_NOISE * angles
            error = max(error, float(difference.max()))
            if np.any(difference > allowed):
                within = False
                break
        if within:
            return replace(candidate, max_error=error)
    return None


def _verified(
    table: np.ndarray,
    best: Candidate,
    others: list[Candidate],
    stored_tolerance: float,
    dtype: str,
    precision: str,
    written: Candidate | None = None,
) -> Candidate | None:
    """The first of ``best`` and ``others`` whose command regenerates ``table`` (:func:`_regenerates`),
    its max error over every row; None when none does (timestep rows alike: a timestep alias within
    identify's noise, t shifted by thousands, is no answer unless its command writes the table).
    ``written``, found bit for bit the table rounded once to ``dtype`` by the full check, needs no second pass."""
    if written is not None and written is best and best.max_error <= stored_tolerance:
        return best
    for candidate in (best, *others):
        if candidate is not best:
            candidate = replace(candidate, max_error=_max_error(table, candidate, [range(0, len(table))], math.inf))
        # timestep rows too: the printed command must write what compare accepts (a float32 library's
        # noise at t ~ 1000 is past compare's per-row allowance; its own arithmetic regenerates it)
        if _regenerates(table, candidate, dtype if candidate.max_error <= stored_tolerance else precision):
            return candidate
    return None


def _sample_rows(length: int) -> list[range]:
    """Runs of rows spread evenly over the table, the first and last included (all rows of a short one)."""
    if length <= _SAMPLE_RUNS * _RUN_ROWS:
        return [range(0, length)]
    starts = np.linspace(0, length - _RUN_ROWS, _SAMPLE_RUNS).astype(int)
    return [range(int(start), int(start) + _RUN_ROWS) for start in starts]


def _full_excess(
    table: np.ndarray, candidate: Candidate, precision: str, scale: float, report: Progress, dtype: str
) -> tuple[float, float, bool]:
    """Error and excess over every row, chunk by chunk; stops at the first chunk beyond the noise. And
    whether every row is the candidate's rounded once to ``dtype``, bit for bit: its command writes this very
    table, which compare accepts without a second regeneration.

    Each chunk is regenerated once into reused buffers. A chunk whose largest error is within the least
    noise any of its entries is allowed (the arithmetic's roundoff at the table's scale) needs no per-entry
    noise: every entry is then within its own (the excess returned is that bound, never above 1)."""
    chunk_rows = max(1, _CHUNK_BYTES // (8 * table.shape[1]))
    buffer = np.empty(min(chunk_rows, len(table)) * table.shape[1])
    # the rounded rows, compared in the table's own dtype, take the difference's buffer before it does
    rounded = buffer.view(np.float32) if table.dtype.name == dtype == "float32" else None
    floor = rounding_tolerance(_arithmetic(precision), roundings=1.0) * scale  # every entry's noise is at least this
    timesteps = None if candidate.timesteps is None else np.array(candidate.timesteps)
    error, excess = 0.0, 0.0
    written = True
    for start in range(0, len(table), chunk_rows):
        report(f"regenerating {candidate.scheme}, row {start} of {len(table)}")
        chunk = [range(start, min(start + chunk_rows, len(table)))]
        expected = _rows(candidate.scheme, candidate.params, table.shape, chunk, timesteps, direct=False)
        given = table[start : chunk[0].stop]
        if written:
            written = _written(given, expected, dtype, rounded)
        difference = np.subtract(given, expected, dtype=np.float64, out=buffer[: expected.size].reshape(expected.shape))
        np.abs(difference, out=difference)
        chunk_error = float(difference.max())
        if chunk_error <= floor and _discernible(table, candidate, chunk, expected, chunk_error, precision, scale):
            chunk_excess = chunk_error / floor if floor > 0 else 0.0
        else:
            chunk_error, chunk_excess = _errors(
                table, candidate, chunk, precision, scale, direct=False, buffer=buffer, expected=expected
            )
        error, excess = max(error, chunk_error), max(excess, chunk_excess)
        del expected  # not held while the next chunk is regenerated
        if excess > 1.0:
            break
    return error, excess, excess <= 1.0 and written


def _written(given: np.ndarray, expected: np.ndarray, dtype: str, rounded: np.ndarray | None) -> bool:
    """Whether ``given`` is ``expected`` rounded once to ``dtype``, bit for bit (into ``rounded`` when given:
    a float32 buffer, ``expected``'s size or more)."""
    if rounded is None:
        return bool(np.array_equal(given, held_values(expected, dtype)))
    once = rounded[: expected.size].reshape(expected.shape)
    np.copyto(once, expected, casting="same_kind")  # round to nearest, ties to even: round_to's float32 cast
    # an overflow to inf is no match: the table is finite (round_to would refuse it; unequal, it is not asked)
    return bool(np.array_equal(given, once))


def _discernible(
    table: np.ndarray,
    candidate: Candidate,
    rows: list[range],
    expected: np.ndarray,
    error: float,
    precision: str,
    scale: float,
) -> bool:
    """Whether :func:`_noise` of these rows is surely no larger than float32 tells conventions apart by
    (an upper bound of its largest entry: |expected| is at most the table's scale plus the error)."""
    positions = np.concatenate([np.arange(r.start, r.stop, dtype=np.float64) for r in rows])
    if candidate.timesteps is not None:
        positions = np.array(candidate.timesteps)[positions.astype(np.intp)]
    epsilon = rounding_tolerance(_arithmetic(precision), roundings=1.0)
    largest = (scale + error) * rounding_tolerance(precision, roundings=1.0) + epsilon * scale
    if get_scheme(candidate.scheme).angles:
        amplitude = abs(candidate.params.get("amplitude", 1.0))
        largest += epsilon * amplitude * float(_angle_positions(candidate.scheme, candidate.params, positions).max())
    return largest * (1 + 1e-9) <= _DISCERNIBLE * scale
