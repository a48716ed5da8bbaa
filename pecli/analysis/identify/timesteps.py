"""Diffusion timestep rows at arbitrary t, read back from their phases.

A row ``[cos(t·ω) | sin(t·ω)]`` (or [sin | cos]) fixes t·ω_k modulo 2π for every frequency. The
lowest frequency gives t modulo its period; each higher frequency then refines each of those t (up
to 2π·max_period) by the wrapped difference of its phase, down to ω_0 = 1, where the phase pins t
to float32's resolution, and the t that agrees with every phase is kept. max_period itself is read
off the rows whose lowest frequencies have not yet turned (:func:`read_max_periods`). Each t is
then written with the fewest decimals that stay within the table's noise, and evenly spaced ones
as a range (:func:`timestep_range`).

>>> from pecli.schemes.timestep import timestep_embedding
>>> table = timestep_embedding([0.0, 17.75, 333.3, 998.39], 32, flip_sin_to_cos=False, freq_shift=1.0)
>>> [float(t) for t in round_timesteps(read_timesteps(table, flip_sin_to_cos=False, freq_shift=1.0), "float32")]
[0.0, 17.75, 333.3, 998.39]
>>> timestep_range(np.arange(0.0, 1000.0, 37.0))
(0, 1000, 37)
"""

from __future__ import annotations

import math

import numpy as np

from pecli.analysis.identify.sinusoids import sinusoidal_frequencies
from pecli.analysis.value_precision import FLOAT32_ANGLE_NOISE, arithmetic_tolerance, rounding_tolerance

__all__ = [
    "one_frequency",
    "read_max_periods",
    "read_timesteps",
    "round_timesteps",
    "timestep_aliases",
    "timestep_range",
]

#: the largest |sin² + cos² − 1| of a row's pairs
_UNIT_CIRCLE = 0.05
#: the most turns of the lowest frequency tried (t up to 2π·max(max_period, 1000))
_MAX_TURNS = 4096
#: t is sought up to 2π·max_period, and at least up to 2π·1000 (scale 2 at t = 999 is 1998, past 2π·100)
_LEAST_SPAN = 1000.0
#: max periods read beyond this are not kept (no frequency below 1e-9 is told from 0)
_LARGEST_PERIOD = 1e9


def _phases(table: np.ndarray, flip_sin_to_cos: bool) -> np.ndarray | None:
    """Each pair's phase in (−π, π], shape (rows, d // 2); None if the columns are not unit-circle pairs."""
    half = table.shape[1] // 2
    first, second = table[:, :half].astype(np.float64), table[:, half : 2 * half].astype(np.float64)
    cos, sin = (first, second) if flip_sin_to_cos else (second, first)
    if half < 1 or np.abs(cos**2 + sin**2 - 1.0).max() > _UNIT_CIRCLE:
        return None
    return np.arctan2(sin, cos)


def _wrapped(angles: np.ndarray) -> np.ndarray:
    return np.mod(angles + math.pi, 2 * math.pi) - math.pi


def _decimals(times: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """The fewest decimals (0…6, 7 for none) each t is written with within ``allowed``."""
    decimals = np.full(times.shape, 7)
    for count in range(6, -1, -1):
        decimals[np.abs(np.round(times, count) - times) <= allowed] = count
    return decimals


def _readings(
    table: np.ndarray, flip_sin_to_cos: bool, freq_shift: float, max_period: float, precision: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Every t the phases allow, each row's preferred one, and which others the table cannot tell from it.

    Returns ``(times, chosen, indistinct, near)``: ``times`` (rows, turns) the candidate t of each row (one per
    turn of the lowest frequency), ``chosen`` the index of the preferred one (see :func:`read_timesteps`),
    ``indistinct`` (rows, turns) the candidates whose phases are within the values' own rounding of the chosen
    one's, frequency by frequency (the chosen one included: an exact alias, as d = 4 at max period 10000, whose
    ω = 1 and 0.01 turn together every 200π), and ``near`` (rows) whether a t within the same turn (t ± 2π/ω_k)
    writes the row within that rounding too: the lowest frequencies turn too slowly to tell them apart.
    """
    half = table.shape[1] // 2
    freqs = sinusoidal_frequencies(table.shape[1], max_period, freq_shift)
    phases = None if freqs is None or half < 2 else _phases(table, flip_sin_to_cos)
    if phases is None or freqs is None:
        return None
    period = 2 * math.pi / freqs[-1]
    turns = min(_MAX_TURNS, max(0, math.ceil(2 * math.pi * max(max_period, _LEAST_SPAN) / period)))
    # (rows, turns): every t the lowest frequency allows, refined by the rising ones; negative t too (the
    # generator writes them, as diffusers does: its embedding takes any t), after every t >= 0 when tied
    times = np.mod(phases[:, -1], 2 * math.pi)[:, None] / freqs[-1] + period * np.arange(-turns - 1, turns + 1)
    for k in range(half - 2, -1, -1):
        times = times + _wrapped(phases[:, k, None] - times * freqs[k]) / freqs[k]
    each = np.abs(_wrapped(phases[:, None, :] - times[:, :, None] * freqs))  # (rows, turns, frequencies)
    errors = each.max(axis=2)
    rows = np.arange(len(times))
    # the noise at the best reading's t, for every candidate of its row: measured at each candidate's own t,
    # a far alias (t + 62832) would be allowed 60 times more, and would look rounder for it
    best = times[rows, errors.argmin(axis=1)][:, None]
    noise = rounding_tolerance(precision, scale=1.0) + FLOAT32_ANGLE_NOISE * np.abs(best)
    within = errors <= errors.min(axis=1, keepdims=True) + 2 * noise
    # exact aliases (d = 7, 1000: ω = 1, 0.1, 0.01 turn together every 200π, so 370.68146928 writes t = 999 to
    # 1e-8) are told apart by their roundness alone, at the values' own rounding (a t off by a float32
    # arithmetic's noise is round to no decimals): fewer decimals win only up to the count that a chance alias
    # lands on at most 5% of the time (2·noise·10^k per alias: 2 for 101 aliases within float32's 4.8e-7, 200.11
    # before 11.6144408 at d = 5; none in float16's 2e-3), then the closest, then the smallest t
    rounding = rounding_tolerance(precision, scale=1.0)
    telling = math.floor(-math.log10(40 * rounding * times.shape[1]))
    rounder = np.minimum(_decimals(times, np.full(times.shape, rounding)), max(0, min(7, telling + 1)))
    closest = errors <= 2 * errors.min(axis=1, keepdims=True) + rounding
    preference = np.where(within, 2 * rounder + ~closest, 99) * (times.shape[1] + 1) + np.argsort(
        np.argsort(_nonnegative_first(times), axis=1), axis=1
    )
    chosen = preference.argmin(axis=1)
    # told apart only by more than the values' rounding (a table rounded once from float64 is within a tenth
    # of the tolerance; measured over d 4…40 in float32, float16 and bfloat16) and float32 arithmetic's angle
    # noise at the chosen t, frequency by frequency: an alias moves the slow phases, which that noise barely touches
    allowed = (
        each[rows, chosen].max(axis=1)[:, None, None]
        + rounding / 4
        + 4 * FLOAT32_ANGLE_NOISE * np.abs(times[rows, chosen])[:, None, None] * freqs
    )
    indistinct = np.all(each <= allowed, axis=2)
    # the near aliases, which the lowest frequency's turns do not list: t + 2π/ω_k (k below the lowest) keeps
    # phase k and moves each other one by 2π·ω_j/ω_k; a move within the allowance at every frequency is a t the
    # table cannot tell from the chosen one (±2π at d = 4, shift 1, 10000 in bfloat16 moves ω_1's phase 6e-4)
    shifts = 2 * math.pi / freqs[:-1]
    moves = np.abs(_wrapped(shifts[:, None] * freqs))  # (shifts, frequencies)
    slack = allowed[:, 0, :] - each[rows, chosen].max(axis=1)[:, None]  # (rows, frequencies)
    near = np.all(moves[None, :, :] <= slack[:, None, :], axis=2).any(axis=1)
    return times, chosen, indistinct, near


def _nonnegative_first(times: np.ndarray) -> np.ndarray:
    """A key ordering every t >= 0 (least first) before every negative t (least |t| first)."""
    return np.abs(times) + (times < 0) * (np.abs(times).max(initial=0.0) + 1.0)


def read_timesteps(
    table: np.ndarray,
    *,
    flip_sin_to_cos: bool,
    freq_shift: float,
    max_period: float = 10000.0,
    precision: str = "float32",
    near: bool = False,
) -> np.ndarray | None:
    """The t of each row of a timestep table with these parameters (None if its columns are not such pairs,
    or if the table cannot tell some row's t from t ± 2π, unless ``near``: then the t preferred all the same).

    The lowest frequency fixes t modulo its period 2π/ω_low; with a shift of 0 that period is
    2π·max_period^((h−1)/h), below the timesteps a table holds at small d (2π·2000^(2/3) ≈ 997 at d = 7):
    each t + n·period up to 2π·max(max_period, 1000) is refined by the other frequencies, and the one that
    agrees with every phase is kept (of those within ``precision``'s noise of the best: the roundest, then
    the closest, then the smallest). Where the lowest frequency turns so slowly that t ± 2π writes the row
    within the values' rounding (d = 4, shift 1, max period 10000 in bfloat16: ±2π moves its phase 6e-4),
    the ω = 1 phase gives t modulo 2π only: no t is read (so no max period either: t × 10 at ten times the
    period fits as well). Exact aliases further off (t + 200π at d = 4, 10000) are :func:`timestep_aliases`.

    >>> from pecli.schemes.timestep import timestep_embedding
    >>> table = timestep_embedding([0.0, 250.0, 999.0], 7, max_period=2000.0)
    >>> read_timesteps(table, flip_sin_to_cos=True, freq_shift=0.0, max_period=2000.0).round(3).tolist()
    [0.0, 250.0, 999.0]
    >>> table = timestep_embedding([0.0, 250.0, 999.0], 4, flip_sin_to_cos=False, freq_shift=1.0, dtype="bfloat16")
    >>> read_timesteps(table, flip_sin_to_cos=False, freq_shift=1.0, precision="bfloat16") is None
    True
    """
    read = _readings(table, flip_sin_to_cos, freq_shift, max_period, precision)
    if read is None:
        return None
    times, chosen, _, unpinned = read
    return None if unpinned.any() and not near else times[np.arange(len(times)), chosen]


def timestep_aliases(
    table: np.ndarray,
    *,
    flip_sin_to_cos: bool,
    freq_shift: float,
    max_period: float = 10000.0,
    precision: str = "float32",
) -> np.ndarray | None:
    """The next t of each row that writes it within the values' rounding as well as :func:`read_timesteps`'
    (that one where there is none), or None when every row's t is the only one.

    d = 4 at max period 10000 (ω = 1, 0.01): t and t + 200π write the same row, so a table of t = 999 is
    read as its smallest alias, 370.68, and 999 is this one:

    >>> from pecli.schemes.timestep import timestep_embedding
    >>> table = timestep_embedding([0.0, 999.0], 4, dtype="float16")
    >>> read_timesteps(table, flip_sin_to_cos=True, freq_shift=0.0, precision="float16").round(2).tolist()
    [0.0, 370.68]
    >>> timestep_aliases(table, flip_sin_to_cos=True, freq_shift=0.0, precision="float16").round(2).tolist()
    [628.32, 999.0]
    """
    read = _readings(table, flip_sin_to_cos, freq_shift, max_period, precision)
    if read is None:
        return None
    times, chosen, indistinct, _ = read
    rows = np.arange(len(times))
    others = indistinct.copy()
    others[rows, chosen] = False
    if not others.any():
        return None
    # the smallest other, as the chosen one is the smallest that is roundest
    nearest = np.where(others, _nonnegative_first(times), np.inf).argmin(axis=1)
    return np.where(others.any(axis=1), times[rows, nearest], times[rows, chosen])


def one_frequency(table: np.ndarray) -> str | None:
    """Why no timesteps are read off ``table`` when its pairs turn at one frequency (d = 2 or 3); else None.

    >>> from pecli.schemes.timestep import timestep_embedding
    >>> one_frequency(timestep_embedding([0.0, 250.0, 999.0], 2))[:73]
    'd = 2 holds one frequency (ω = 1): a timestep row gives t only modulo 2π,'
    """
    if table.ndim != 2 or table.shape[1] // 2 != 1 or _phases(table, True) is None:
        return None
    return (
        f"d = {table.shape[1]} holds one frequency (ω = 1): a timestep row gives t only modulo 2π, and "
        "[cos | sin] at t is [sin | cos] at π/2 − t, so no timesteps are read"
    )


def read_max_periods(table: np.ndarray, *, flip_sin_to_cos: bool, freq_shift: float) -> list[float]:
    """The max_period read off each row whose two lowest frequencies have not turned past π (simplest first).

    Phases t·ω_k with ω_k = max_period^(−k/(h − S)): the lowest two give the ratio ρ = ω_k/ω_(k+1) to unwrap
    the next (a vernier up to ω_0 = 1, whose phase is t itself), and log ω_k = log(phase_k / t) then gives
    log(max_period) = −(h − S)/k · log ω_k, weighted by the angle each frequency turned (the furthest is the
    most precise). Each reading comes as its rounder forms first (5000 before 4999.9997): the caller keeps the
    first that writes the table.

    >>> from pecli.schemes.timestep import timestep_embedding
    >>> table = timestep_embedding([0.0, 3.0, 250.0], 16, max_period=5000.0)
    >>> read_max_periods(table, flip_sin_to_cos=True, freq_shift=0.0)[0]
    5000.0
    """
    half = table.shape[1] // 2
    phases = _phases(table, flip_sin_to_cos) if half >= 3 and half > freq_shift else None
    if phases is None:
        return []
    found: list[float] = []
    for row in phases:
        sign = 1.0 if row[-1] >= 0 else -1.0
        angles = sign * row[::-1]  # lowest frequency first
        if not 0 < angles[0] < angles[1] < math.pi:
            continue
        unwrapped = list(angles[:2])
        for phase in angles[2:]:
            predicted = unwrapped[-1] ** 2 / unwrapped[-2]  # the same ratio again
            unwrapped.append(predicted + (float(phase) - predicted + math.pi) % (2 * math.pi) - math.pi)
        read = np.array(unwrapped[::-1])  # ω_0 first: read[0] is t
        k = np.arange(1, half)
        if read[0] <= 0 or np.any(read[1:] <= 0):
            continue
        logs = -(half - freq_shift) / k * np.log(read[1:] / read[0])
        weights = (read[1:] * k) ** 2
        period = math.exp(float((weights * logs).sum() / weights.sum()))
        if 1.0 < period < _LARGEST_PERIOD:
            found.extend(_significant(period, digits) for digits in range(1, 8))
            found.append(period)
    return [period for period in dict.fromkeys(found) if period > 1.0]  # 1.3 to one digit is 1: no period


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def round_timesteps(times: np.ndarray, precision: str) -> np.ndarray:
    """Each t with the fewest decimals (0…6) within the noise of a ``precision`` table's phases."""
    tolerance = arithmetic_tolerance(len(times), precision, scale=1.0, positions=times)[:, 0]
    rounded = np.array(times, dtype=np.float64)
    for index, (time, allowed) in enumerate(zip(times, tolerance, strict=True)):
        for decimals in range(7):
            if abs(round(float(time), decimals) - time) <= allowed:
                rounded[index] = round(float(time), decimals) + 0.0  # never -0.0
                break
    return rounded


def _round_stop(last: float, step: float) -> float:
    """The roundest stop after ``last``: a multiple of the largest power of ten in (last, last + step]."""
    for power in range(15, -1, -1):
        unit = 10.0**power
        stop = (math.floor(last / unit) + 1) * unit
        if stop <= last + step:
            return stop
    return last + step


def timestep_range(times: np.ndarray) -> tuple[int, int, int] | None:
    """``(start, stop, step)`` when ``times`` are three or more evenly spaced integers, the stop a round
    number past the last; else None (the times are given one by one).

    >>> timestep_range(np.arange(0.0, 1000.0, 37.0)), timestep_range(np.array([0.5, 3.0]))
    ((0, 1000, 37), None)
    """
    times = np.asarray(times, dtype=np.float64)
    steps = np.diff(times)
    integral = bool(np.all(times == np.round(times)))
    if len(times) >= 3 and integral and steps[0] > 0 and np.all(steps == steps[0]):
        start, step = int(times[0]), int(steps[0])
        return start, int(_round_stop(float(times[-1]), step)), step
    return None
