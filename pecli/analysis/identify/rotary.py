"""RoPE read off a table: its layout, part, base and scaling, from the frequency profile of its columns.

A RoPE cos, sin or angle table repeats each frequency in two columns (``half``: the two halves;
``interleaved``: adjacent columns), so a table without that repetition is no RoPE table. Each
frequency ω_k is read from its column at the row where its angle is about one radian (well
conditioned for arccos and arcsin); the ratio ω_1/ω_0 gives the base whatever the scaling
(HF's linear scaling divides every frequency, YaRN and Llama 3 keep the highest ones). Scalings
are tried on a grid of round factors and original context lengths (powers of two), and kept
when their profile (:func:`pecli.schemes.rope.rope_frequencies`) agrees with the one read.

>>> import pecli
>>> table = pecli.encode("rope", 64, 16, part="cos", base=500000.0, layout="interleaved")
>>> rope_layouts(table)
['interleaved']
>>> [round(float(w), 6) for w in frequency_profile(table[:, 0::2], "cos")[0][:2]]
[1.0, 0.193923]
>>> first = next(rope_candidates(table, (500000.0,)))
>>> first
{'layout': 'interleaved', 'part': 'cos', 'base': 500000.0}
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from pecli.analysis.value_precision import rounding_tolerance, value_precision
from pecli.errors import PecliError
from pecli.schemes.rope import rope_frequencies, rope_table

__all__ = ["frequency_profile", "rope_candidates", "rope_layouts", "section_bases"]

#: scaling factors tried (HF configs use 2, 4, 8 (Llama 3.1), 16, 32 (YaRN), 40 (DeepSeek-V2), 64)
_FACTORS: tuple[float, ...] = (2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0)
#: original context lengths tried: powers of two from 16 to 128Ki (Llama 3.1: 8192)
_ORIGINAL: tuple[int, ...] = tuple(2**n for n in range(4, 18))
#: the largest angle disagreement (radians, at the row each frequency was read at) for a scaling
#: of a float16 or bfloat16 table to be screened (a float32 one: 1e-3)
_PROFILE_TOLERANCE = 0.1
#: positions below this are integers bfloat16 holds exactly
_BFLOAT16_EXACT = 257
#: the relative distance of a round base from the base read off the table, for scaled candidates
_NEAR_BASE = 0.05
#: a plain base of at most this many significant digits (2e6, 1.69e6) is a simpler reading than any scaling of a
#: round base (a base, a factor and an original length at least); one of more digits (dynamic NTK's effective
#: base, 141234.6) is not
_PLAIN_DIGITS = 3


def rope_layouts(table: np.ndarray) -> list[str]:
    """The RoPE layouts whose repeated columns ``table`` shows: ``half`` and/or ``interleaved``."""
    dim = table.shape[1]
    if dim % 2 or dim < 4:
        return []
    table = table[:: max(1, len(table) // 256)]  # a few hundred rows spread over the table tell
    scale = float(np.abs(table).max()) or 1.0
    pairs = {"half": (table[:, : dim // 2], table[:, dim // 2 :]), "interleaved": (table[:, 0::2], table[:, 1::2])}
    return [name for name, (first, second) in pairs.items() if np.abs(first - second).max() <= 1e-6 * scale]


def frequency_profile(columns: np.ndarray, part: str) -> tuple[np.ndarray, float, np.ndarray] | None:
    """The frequencies ω_k that the (length, d/2) ``columns`` of a RoPE ``part`` show, its amplitude,
    and the row each frequency was read at (its angle's error is the reading's, divided by that row).

    None when the columns cannot be that part (a cos table starts at its amplitude, sin and angle at 0).
    """
    length = len(columns)
    if length < 2:
        return None
    first = columns[0].astype(np.float64)
    rows = np.ones(columns.shape[1], dtype=int)
    if part == "angle":
        rates = columns[1].astype(np.float64)
        amplitude = 1.0
        if np.abs(first).max() > 1e-6:
            return None
    else:
        amplitude = float(np.median(first)) if part == "cos" else 1.0
        if (part == "cos" and not 0.5 < amplitude < 2.0) or (part == "sin" and np.abs(first).max() > 1e-6):
            return None
        inverse = np.arccos if part == "cos" else np.arcsin
        # each frequency is read at the first row where its angle passes 1 radian (cos) or 0.5 (sin):
        # well conditioned, and short of π (cos) or π/2 (sin), where the inverse would fold
        rows = np.maximum(_first_reached(columns, amplitude, part), 1)
        picked = columns[rows, np.arange(columns.shape[1])].astype(np.float64)
        rates = inverse(np.clip(picked / amplitude, -1.0, 1.0)) / rows
    # a frequency too low to turn the angle within the table reads as 0 (cos rounds to 1): d = 4's second one
    # in a short float16 or bfloat16 table of base 10⁶; the base is then bounded, not read (regenerating decides)
    if (rates >= 0).all() and rates[0] > 0 and rates.max() <= 1.01:
        return rates, amplitude, rows
    return None


def _first_reached(columns: np.ndarray, amplitude: float, part: str) -> np.ndarray:
    """Each column's first row whose value, over ``amplitude``, is past cos 1 (``cos``: at most) or sin 0.5
    (``sin``: at least); the last row where it never is.

    Read a block of rows at a time, each block twice the last and over the columns not yet reached only:
    a long table's high frequencies turn in its first rows, and its lowest by row 1/ω, so the rows past
    the slowest column's turn are never read (a 65536-row RoPE table of base 10⁴ turns by row ~10⁴).
    """
    length, count = columns.shape
    threshold = math.cos(1.0) if part == "cos" else math.sin(0.5)
    found = np.full(count, length - 1)
    pending = np.arange(count)
    start, block = 0, 64
    while pending.size and start < length:
        stop = min(start + block, length)
        rows = columns[start:stop]
        values = (rows if pending.size == count else rows[:, pending]).astype(np.float64)
        values /= amplitude  # (the clip to ±1 moves no value across either threshold)
        reached = values <= threshold if part == "cos" else values >= threshold
        hit = reached.any(axis=0)
        found[pending[hit]] = start + reached[:, hit].argmax(axis=0)
        pending = pending[~hit]
        start, block = stop, 2 * block
    return found


def _refined_rates(
    columns: np.ndarray, profile: tuple[np.ndarray, float, np.ndarray], part: str
) -> tuple[np.ndarray, np.ndarray]:
    """The frequencies of :func:`frequency_profile` read again at rows ever further down the table, and those rows.

    A frequency read where its angle passes one radian is good to (value rounding) / (that row): a bfloat16 table
    of base 123456 reads as 123600, off by a tenth of a radian at row 1024 (it matched nothing). Each frequency's
    angle is predicted at a row up to four times further, where it is known to within a radian, and read there
    (the branch of arccos or arcsin nearest the prediction), at the row nearest the prediction where the value
    reads the angle best (cos near 0, sin near 0); then again, until the table's last row.
    """
    read, amplitude, read_rows = profile
    rates, rows = np.asarray(read, dtype=np.float64), np.asarray(read_rows, dtype=np.float64)
    if part not in ("cos", "sin") or len(columns) < 3:
        return rates, rows
    last = len(columns) - 1
    # the angle a value reads to at its best row: a few roundings of the values' precision, over the amplitude
    noise = 4.0 * rounding_tolerance(value_precision(columns[: min(len(columns), 256)]), scale=1.0, roundings=1.0)
    error = noise / np.maximum(rows, 1.0)  # each frequency's error (radians per row)
    index = np.arange(columns.shape[1])
    offset = math.pi / 2 if part == "cos" else 0.0  # where the value reads the angle best
    for _ in range(40):
        reach = np.minimum(np.floor(0.25 / np.maximum(error, 1e-300)), float(last))  # the angle known to 1/4 rad
        active = (reach > 2 * rows) & (rates > 0)
        if not active.any():
            break
        turns = np.round((rates * reach - offset) / math.pi)
        target = np.where(rates > 0, (offset + turns * math.pi) / np.maximum(rates, 1e-300), reach)
        row = np.clip(np.round(np.minimum(target, reach)), 1, last).astype(int)
        row = np.where(active, row, rows.astype(int))
        predicted = rates * row
        value = np.clip(columns[row, index].astype(np.float64) / amplitude, -1.0, 1.0)
        principal = np.arccos(value) if part == "cos" else np.arcsin(value)
        # every angle with this value: ±a + 2πn (cos), a + 2πn or π − a + 2πn (sin); the one nearest the prediction
        branches = (principal, -principal) if part == "cos" else (principal, math.pi - principal)
        best = np.full(len(rates), np.inf)
        angle = predicted.copy()
        for branch in branches:
            candidate = branch + 2 * math.pi * np.round((predicted - branch) / (2 * math.pi))
            closer = np.abs(candidate - predicted) < best
            best = np.where(closer, np.abs(candidate - predicted), best)
            angle = np.where(closer, candidate, angle)
        moved = active & (best < 0.5)  # within the prediction's reach: the branch is the right one
        rates = np.where(moved, angle / np.maximum(row, 1), rates)
        error = np.where(moved, noise / np.maximum(row, 1), error)
        rows = np.where(moved, row.astype(np.float64), rows)
        if not moved.any():
            break
    return rates, rows


#: the most values (rows × columns × bases tried) :func:`_closest_plain_base` regenerates
_PLAIN_FIT_BUDGET = 1 << 23


def _closest_plain_base(
    columns: np.ndarray, part: str, amplitude: float, dim: int, read: float, bases: tuple[float, ...] = ()
) -> float | None:
    """The plain base of fewest digits, near ``read``, whose frequencies regenerate ``columns`` (a RoPE ``part``) as
    closely as any base near it: searched on a grid of bases 2 % either side, then a finer one. Frequencies read at
    the first rows are good to a percent in bfloat16 (base 123456 read as 123962, one rounding off in some entries,
    where a dynamic scaling of base 1000 writes the table bit for bit and won); the table itself tells more."""
    length = min(len(columns), 512)
    if length * columns.shape[1] * 2 * 101 > _PLAIN_FIT_BUDGET:
        return None
    half = columns.shape[1]

    def error(base: float) -> float:
        return _rope_error(columns, part, amplitude, base ** (-2.0 * np.arange(half) / dim))

    # half a unit in the last place of values just under the largest (a cos table's below 1): a value rounded once
    floor = rounding_tolerance(value_precision(columns), scale=float(np.abs(columns).max()) or 1.0, roundings=0.25)
    if any(error(base) <= floor for base in _near(read, bases)):  # a round base writes it already: no search
        return None
    center, width = read, 0.02
    for _ in range(2):
        tried = center * np.exp(np.linspace(-width, width, 101))
        errors = np.array([error(float(base)) for base in tried])
        center, width = float(tried[int(errors.argmin())]), 2 * width / 100
    least = error(center)
    bound = max(least * (1 + 1e-9), floor)
    return next((base for base in (_significant(center, d) for d in range(2, 16)) if error(base) <= bound), center)


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def _near(read: float, bases: tuple[float, ...]) -> list[float]:
    return [base for base in bases if abs(base / read - 1.0) < _NEAR_BASE]


def _digits(value: float) -> int:
    """The significant digits ``value`` is written with (2e6: 1, 123456.7: 7)."""
    return next((digits for digits in range(1, 17) if _significant(value, digits) == value), 17)


def _fits(read: float) -> list[float]:
    return list(dict.fromkeys([*(_significant(read, digits) for digits in range(2, 8)), read]))


def _fitted_base(
    rates: np.ndarray,
    rows: np.ndarray,
    dim: int,
    *,
    least_angle: float = 0.5,
    rounded: bool = False,
    first: int = 0,
) -> float | None:
    """The base of unscaled frequencies ``base^(−2k/d)`` fitted to every frequency read past ``least_angle``
    (radians, at the rows read), in log ω_k. Exact frequencies: log ω_k is read to (angle noise) / (its angle),
    so the frequencies that turned furthest weigh most (500001 reads as 500000.99; the ratio ω_1/ω_0 alone
    gives 500001.6). Frequencies held in a half type (``rounded``): each is off by its rounding, the same
    relative error at every k, so every one weighs alike (a bfloat16 table of d=30 read from its first
    frequencies alone gives 9514 for 10000). ``rates`` are ω_first, ω_first+1, … (an M-RoPE section's)."""
    index = np.arange(len(rates)) + first
    angles = rates * rows
    usable = (index > 0) & (angles > least_angle) & (rates > 0)
    if not usable.any():
        return None
    slope, logs = -2.0 * index[usable] / dim, np.log(rates[usable])
    weights = np.ones_like(slope) if rounded else angles[usable] ** 2
    logarithm = float((weights * slope * logs).sum() / (weights * slope * slope).sum())
    return math.exp(logarithm) if 0.0 < logarithm < math.log(1e12) else None


def section_bases(steps: np.ndarray, part: str, first: int, dim: int) -> list[float]:
    """The round bases (2 and 3 significant digits) of the RoPE frequencies ``base^(−2k/d)``, k = ``first``, … that
    the (steps, count) ``steps`` of a ``part`` show: one axis of an M-RoPE table (Qwen2-VL's sections split the 1-D
    RoPE's frequencies), its tokens 0, 1, … along that axis with the other coordinates at 0. Empty when none reads.

    >>> import pecli
    >>> table = pecli.encode("rope2d", None, 64, grid="8,8", sections="8,12,12", base=100.0, part="cos")
    >>> section_bases(table[::8, 8:20], "cos", 8, 64)  # tokens (h, 0): the h section, frequencies 8 to 19
    [100.0]
    >>> section_bases(table[:8, 20:32], "cos", 20, 64)  # (0, w): ω_20 = 0.056 turns 0.4 radians by w = 7, too few
    []
    """
    profile = frequency_profile(steps, part)
    if profile is None:
        return []
    rates, _, rows = profile
    read = _fitted_base(rates, rows, dim, least_angle=_least_angle(part), first=first)
    return [] if read is None else list(dict.fromkeys(_significant(read, digits) for digits in (3, 2)))


def _agrees(
    rates: np.ndarray,
    rows: np.ndarray,
    dim: int,
    length: int,
    tolerance: float,
    base: float,
    scaling: str,
    **params: Any,
) -> bool:
    """The scaling's frequencies within ``tolerance`` (radians) of the angles read, at the rows read."""
    try:
        expected = rope_frequencies(dim, base=base, scaling=scaling, length=length, **params)
    except PecliError:
        return False
    return float((np.abs(expected - rates) * rows).max()) <= tolerance


def _residual(rates: np.ndarray, rows: np.ndarray, dim: int, length: int, base: float) -> float:
    """The largest angle (radians, at the rows read) between unscaled frequencies of ``base`` and the ones read
    that turned past half a radian."""
    try:
        expected = rope_frequencies(dim, base=base, length=length)
    except PecliError:
        return math.inf
    turned = rates * rows > 0.5  # a small angle read from its cosine is ill conditioned (3e-8 / sin θ)
    return float((np.abs(expected - rates) * rows)[turned].max()) if turned.any() else math.inf


def _closer_fitted(
    rates: np.ndarray,
    rows: np.ndarray,
    dim: int,
    length: int,
    tolerance: float,
    near: list[float],
    fitted: list[float],
) -> float | None:
    """The fitted base (fewest digits) that reads 8× closer than every round base near it (or, with none
    near, than the fitted base of fewest digits that agrees: 123457 for 123456.7), if any."""
    residuals = [(_residual(rates, rows, dim, length, base), base) for base in fitted]
    agreeing = [residual for residual, _ in residuals if residual <= tolerance]
    if not agreeing:
        return None
    round_residual = min(_residual(rates, rows, dim, length, base) for base in near) if near else agreeing[0]
    if round_residual > tolerance or round_residual <= 1e-4 * tolerance:  # no round base, or one within reading noise
        return None
    least = min(residual for residual, _ in residuals)
    if 8 * least >= round_residual:
        return None
    return next(base for residual, base in residuals if residual <= 2 * least + 1e-4 * tolerance)


def _scalings(
    rates: np.ndarray,
    amplitude: float,
    rows: np.ndarray,
    dim: int,
    length: int,
    bases: tuple[float, ...],
    tolerance: float,
    refined: float | None = None,
) -> Iterator[dict]:
    """Scaling parameters (round ones first) whose frequency profile agrees with ``rates``; ``refined``: the base
    fitted to frequencies read further down the table (:func:`_refined_rates`), tried with the plain bases read."""
    # no base reads off a second frequency that never turned: the round bases whose frequencies agree stand
    read_base = float((rates[1] / rates[0]) ** (-dim / 2)) if rates[1] > 0 else math.inf
    near = [base for base in bases if abs(base / read_base - 1.0) < _NEAR_BASE]
    read = [] if math.isinf(read_base) else [*(_significant(read_base, digits) for digits in range(2, 8)), read_base]
    fitted = list(dict.fromkeys(read))
    # the base fitted to every frequency, to full precision as it reads (rope base 500001, 12345.6)
    whole = _fitted_base(rates, rows, dim)
    if whole is not None:
        fitted = list(dict.fromkeys([*fitted, *(_significant(whole, digits) for digits in range(2, 10)), whole]))
    round_bases = list(dict.fromkeys([*near, *bases]))
    # a base read to full precision whose frequencies fit far closer than the nearest round base's (500001
    # against 500000: 2e-6 radians at the rows read, against float32's 1e-7) comes first: both are within
    # float32 arithmetic's noise, where the first tried would win. With no round base near, a scaling of a round
    # base (dynamic NTK's effective base) is tried first, and the closest fit stands for the plain bases read
    closest = _closer_fitted(rates, rows, dim, length, tolerance, near, fitted)
    if closest is not None and near:
        yield {"base": closest}
    for base in round_bases:
        if _agrees(rates, rows, dim, length, tolerance, base, "none"):
            yield {"base": base}
    # with no round base near, a plain base of few digits read off the table (2e6) comes before the scalings of a
    # round base that write the same frequencies within the reading (d = 4's yarn factor 2 of 500000)
    for base in [] if near or closest is not None else fitted:
        if _digits(base) <= _PLAIN_DIGITS and _agrees(rates, rows, dim, length, tolerance, base, "none"):
            yield {"base": base}
    # scaled: HF's factors are > 1; YaRN's attention factor 0.1·ln(factor) + 1 is the cos amplitude
    # linear's factor is 1/ω_0 (rotary-embedding-torch's interpolate_factor 1.2345): 3 to 5 significant digits
    read_factors = [*(_significant(1.0 / rates[0], digits) for digits in (3, 4, 5))]
    read_factors.append(_significant(math.exp((amplitude - 1.0) / 0.1), 3))
    factors = [factor for factor in dict.fromkeys([*_FACTORS, *read_factors]) if factor > 1.0]
    attention = {"apply_attention_factor": True} if abs(amplitude - 1.0) > 1e-3 else {}
    resolved = rates * (length - 1) > 0.5  # frequencies whose angle turns enough to be read well
    # d = 4 has one frequency besides ω_0 = 1, which YaRN (unless its attention factor sets the amplitude) and
    # Llama 3 keep: any such reading changes ω_1 alone, and the plain base read off ω_1 writes it as well
    ramps = dim > 4 or bool(attention)
    unlikely: list[dict] = []  # dynamic readings of an original context length no model has
    # a base read off the table, to 2…7 significant digits (gpt-oss's 150000), when no round base is near
    for base in round_bases if near else list(dict.fromkeys([*round_bases, *fitted])):
        if _agrees(rates, rows, dim, length, tolerance, base, "none"):
            # the plain RoPE of this base: a scaling that changes none of its frequencies here (llama3's
            # factor 2 leaves base 500's short wavelengths alone) is not what the table shows
            if base not in round_bases:
                yield {"base": base if closest is None else closest}
            continue
        # a scaling only lowers frequencies, each by at most its factor
        ratio = rates[resolved] / base ** (-2.0 * np.flatnonzero(resolved) / dim)
        if not ratio.size or ratio.max() > 1.0 + tolerance:  # no frequency turns enough to bound a scaling
            continue
        for factor in (factor for factor in factors if factor * ratio.min() >= 1.0 - tolerance):
            if _agrees(rates, rows, dim, length, tolerance, base, "linear", factor=factor):
                yield {"base": base, "scaling": "linear", "factor": factor}
            for original in _ORIGINAL if ramps else ():
                common = {"factor": factor, "original_max_position": original}
                llama3 = {**common, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
                # HF's truncate (the ramp's ends rounded outwards), or gpt-oss's truncate false
                for truncate in ({}, {"truncate": False}):
                    if _agrees(rates, rows, dim, length, tolerance, base, "yarn", **common, **attention, **truncate):
                        yield {"base": base, "scaling": "yarn", **common, **attention, **truncate}
                if _agrees(rates, rows, dim, length, tolerance, base, "llama3", **llama3):
                    yield {"base": base, "scaling": "llama3", **llama3}
        # dynamic NTK: the effective base b·(f·L/L0 − f + 1)^(d/(d−2)) read off the table, from a round b
        growth = (read_base / base) ** ((dim - 2) / dim)
        for factor in factors:
            original = factor * length / (growth + factor - 1.0)
            if 1 <= round(original) < length and abs(original - round(original)) < 1e-2 * original:
                common = {"factor": factor, "original_max_position": round(original)}
                if _agrees(rates, rows, dim, length, tolerance, base, "dynamic", **common):
                    # an original context no model has (factor 40 of base 1000 from 6 positions: any plain base
                    # solves for one) is a later reading than the plain base read off the table
                    found = {"base": base, "scaling": "dynamic", **common}
                    if round(original) in _ORIGINAL:
                        yield found
                    else:
                        unlikely.append(found)
    for base in fitted:
        if _agrees(rates, rows, dim, length, tolerance, base, "none"):
            yield {"base": base if closest is None else closest}
    # the plain base that regenerates the table closest (:func:`_closest_plain_base`), before a dynamic scaling
    # of an original context no model has: any plain base solves for one
    if refined is not None and _agrees(rates, rows, dim, length, tolerance, refined, "none"):
        yield {"base": refined}
    yield from unlikely


def _rope_error(columns: np.ndarray, part: str, amplitude: float, freqs: np.ndarray) -> float:
    """The largest |error| of the (length, d/2) ``columns`` against the RoPE ``part`` of ``freqs`` (float64),
    over every row of a short table, the first and last 256 of a long one: how exactly the reading regenerates."""
    length = len(columns)
    positions = np.arange(length) if length <= 512 else np.r_[0:256, length - 256 : length]
    angles = positions[:, None] * freqs[None, : columns.shape[1]]
    expected = angles if part == "angle" else amplitude * np.cos(angles) if part == "cos" else np.sin(angles)
    return float(np.abs(columns[positions].astype(np.float64) - expected).max())


def _exact_error(columns: np.ndarray, part: str, amplitude: float, dim: int, length: int, params: dict) -> float:
    """:func:`_rope_error` of a reading of exact (float64) frequencies, scaled or not."""
    rest = {key: value for key, value in params.items() if key not in ("base", "scaling")}
    try:
        freqs = rope_frequencies(dim, base=params["base"], scaling=params.get("scaling", "none"), length=length, **rest)
    except PecliError:
        return math.inf
    return _rope_error(columns, part, amplitude if params.get("apply_attention_factor") else 1.0, freqs)


def _least_angle(part: str) -> float:
    """The least angle (radians) at which a frequency reads well from ``part``: a small angle read from its
    cosine is ill conditioned; an angle table holds each angle itself, and a sine reads a small one well."""
    return 0.5 if part == "cos" else 0.0


def _rounded_frequencies(
    columns: np.ndarray,
    profile: tuple[np.ndarray, float, np.ndarray],
    dim: int,
    length: int,
    bases: list[float],
    tolerance: float,
    part: str,
) -> Iterator[tuple[dict, float]]:
    """Unscaled frequencies held in float16 or bfloat16 (an engine's ``inv_freq.half()``, diffusers'
    ``freqs_dtype``) at the bases given, each with its error (:func:`_rope_error`): kept where their
    profile agrees and they regenerate ``columns`` more exactly than the exact frequencies of that base."""
    rates, _, rows = profile
    turned = rates * rows > _least_angle(part)
    for base in bases:
        exact = None
        for freqs_dtype in ("float16", "bfloat16"):
            try:  # row 1 of the angle table holds each frequency, rounded as the engine holds it
                held = rope_table(2, dim, part="angle", base=base, freqs_dtype=freqs_dtype, dtype="float64")[1]
            except PecliError:
                continue
            held = held[: dim // 2]
            if turned.any() and float((np.abs(held - rates) * rows)[turned].max()) > tolerance:
                continue
            error = _rope_error(columns, part, 1.0, held)
            if exact is None:
                exact = _exact_error(columns, part, 1.0, dim, length, {"base": base})
            if error < exact:
                yield {"base": base, "freqs_dtype": freqs_dtype}, error


def _ordered(
    columns: np.ndarray,
    profile: tuple[np.ndarray, float, np.ndarray],
    dim: int,
    length: int,
    bases: tuple[float, ...],
    tolerance: float,
    part: str,
) -> list[dict]:
    """The readings of ``columns`` as ``part``: exact frequencies (:func:`_scalings`, round ones first) and
    ones held in a half type, the kind that regenerates the table more exactly first (a refitted base
    explains the rounding of a few frequencies nearly as well: d=6 holds 3). Within the table's own
    rounding both regenerate it alike: the exact reading first, unless only the half-type one has a round base."""
    rates, amplitude, rows = profile
    refined_rates, refined_rows = _refined_rates(columns, profile, part)
    refined = _fitted_base(refined_rates, refined_rows, dim) if (refined_rows > rows).any() else None
    start = refined or _fitted_base(rates, rows, dim)
    if part != "angle" and start is not None:  # read closer against the table itself
        refined = _closest_plain_base(columns, part, amplitude, dim, start, bases)
    exact = list(_scalings(rates, amplitude, rows, dim, length, bases, tolerance, refined))
    found = [params["base"] for params in exact]
    # frequencies held in a half type: at the bases read (rounded ω_1/ω_0 reads the base to ~d·2^-12),
    # the round ones near them and the one fitted to every frequency
    read = _fitted_base(rates, rows, dim, least_angle=_least_angle(part), rounded=True)
    tried = [*found, *bases] if read is None else [*_near(read, bases), *found, *_fits(read)]
    rounded = list(_rounded_frequencies(columns, profile, dim, length, list(dict.fromkeys(tried)), tolerance, part))
    if not rounded:
        return exact
    readings = [params for params, _ in rounded]
    if not exact:
        return readings
    # the table's own rounding, at its largest value: its values' precision (a bfloat16 table widened to float32
    # is rounded as bfloat16; float32's floor let a half-type twin at 998000 beat base 1e6 by 1e-5)
    floor = rounding_tolerance(value_precision(columns), scale=float(np.abs(columns).max()), roundings=1.0)
    best_rounded = min(rounded, key=lambda item: max(item[1], floor))
    errors = [max(_exact_error(columns, part, amplitude, dim, length, params), floor) for params in exact]
    least_exact = min(errors)
    least_rounded = max(best_rounded[1], floor)
    round_only = best_rounded[0]["base"] in bases and exact[errors.index(least_exact)]["base"] not in bases
    if least_rounded < least_exact or (least_rounded == least_exact and round_only):
        return [best_rounded[0], *(params for params in readings if params is not best_rounded[0]), *exact]
    return [*exact, *readings]


def _one_frequency(table: np.ndarray, tolerance: float) -> Iterator[dict[str, Any]]:
    """The RoPE part of d = 2 that ``table`` shows: its one frequency is base⁰ = 1 whatever the base, so both
    columns hold cos p, sin p or p, and the base is the scheme's default (any other writes it alike)."""
    if np.abs(table[:, 0] - table[:, 1]).max() > 1e-6 * (float(np.abs(table).max()) or 1.0):
        return
    for part in ("cos", "sin", "angle"):
        profile = frequency_profile(table[:, :1], part)
        if profile is not None and abs(float(profile[0][0]) - 1.0) * float(profile[2][0]) <= tolerance:
            yield {"layout": "half", "part": part}
            return


def rope_candidates(table: np.ndarray, bases: tuple[float, ...]) -> Iterator[dict[str, Any]]:
    """RoPE parameters (layout, part, base, scaling…) that ``table``'s columns agree with, simplest first."""
    length, dim = table.shape
    # the phase (radians, at the last row) a profile read from float32 values is good to; coarser values read worse
    tolerance = _PROFILE_TOLERANCE if value_precision(table) in ("float16", "bfloat16") else 1e-3
    if dim == 2:
        yield from _one_frequency(table, tolerance)
        return
    for layout in rope_layouts(table):
        columns = table[:, : dim // 2] if layout == "half" else table[:, 0::2]
        for part in ("cos", "sin", "angle"):
            # positions held in bfloat16 alias past 256 (huggingface/transformers#29285): a profile that
            # agrees with no scaling over the whole table is read again from the rows before that
            for rows in (columns, columns[:_BFLOAT16_EXACT]) if length > _BFLOAT16_EXACT else (columns,):
                profile = frequency_profile(rows, part)
                if profile is None:
                    continue
                readings = _ordered(rows, profile, dim, length, bases, tolerance, part)
                for params in readings:
                    yield {"layout": layout, "part": part, **params}
                if readings:
                    break
