"""Diffusion timestep rows at arbitrary t, read back from their phases.

A row ``[cos(t·ω) | sin(t·ω)]`` (or [sin | cos]) fixes t·ω_k modulo 2π for every frequency. The
lowest frequency (ω ≈ 1/max_period) gives t itself for t < 2π·max_period; each higher frequency
then refines it by the wrapped difference of its phase, down to ω_0 = 1, where the phase pins t
to float32's resolution. Each t is then written with the fewest decimals that stay within the
table's noise, and evenly spaced ones as a range (:func:`timestep_range`).

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

from pecli.analysis.compare import arithmetic_tolerance
from pecli.analysis.identify.sinusoids import sinusoidal_frequencies

__all__ = ["read_timesteps", "round_timesteps", "timestep_range"]

#: the largest |sin² + cos² − 1| of a row's pairs
_UNIT_CIRCLE = 0.05


def read_timesteps(
    table: np.ndarray, *, flip_sin_to_cos: bool, freq_shift: float, max_period: float = 10000.0
) -> np.ndarray | None:
    """The t of each row of a timestep table with these parameters (None if its columns are not such pairs)."""
    dim = table.shape[1]
    half = dim // 2
    freqs = sinusoidal_frequencies(dim, max_period, freq_shift)
    if freqs is None or half < 2:
        return None
    first, second = table[:, :half].astype(np.float64), table[:, half : 2 * half].astype(np.float64)
    cos, sin = (first, second) if flip_sin_to_cos else (second, first)
    if np.abs(cos**2 + sin**2 - 1.0).max() > _UNIT_CIRCLE:
        return None
    phases = np.arctan2(sin, cos)
    times = np.mod(phases[:, -1], 2 * math.pi) / freqs[-1]
    for k in range(half - 2, -1, -1):  # rising frequencies refine t
        wrapped = np.mod(phases[:, k] - times * freqs[k] + math.pi, 2 * math.pi) - math.pi
        times = times + wrapped / freqs[k]
    return times


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
