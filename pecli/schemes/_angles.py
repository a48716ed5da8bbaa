"""The angle engine shared by every sin/cos scheme: frequencies, phasors, column layouts.

A sinusoidal table is ``exp(i·p·ω)`` for positions ``p`` and frequencies ``ω``, laid out as
columns. For integer positions the phasors are built by angle addition — exact float64 sin/cos
at the start of each block of rows, times a small table of ``exp(i·j·ω)`` for the offsets ``j``
inside a block — which is many times faster than a sin and a cos per element and stays at
float64 rounding level (about 1e-15 absolute), far below float32's resolution.

>>> import numpy as np
>>> z = integer_phasors(0, 3, np.array([1.0, 0.5]))
>>> bool(np.allclose(z, np.exp(1j * np.outer(np.arange(3), [1.0, 0.5]))))
True
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from pecli.dtypes import numpy_dtype, round_to
from pecli.errors import ParameterError

#: rows per angle-addition block: complex128 temporaries of about 512 KiB
_BLOCK_BYTES = 1 << 19


@dataclass
class AnglePlacement:
    """Where phasors are computed (a torch device, or None for numpy), and whether any were."""

    device: str | None
    used: bool = False


#: set inside :func:`angles_on`; None outside: numpy, nothing recorded
_PLACEMENT: ContextVar[AnglePlacement | None] = ContextVar("pecli_angle_placement", default=None)


@contextlib.contextmanager
def angles_on(device: str | None) -> Iterator[AnglePlacement]:
    """Compute every phasor inside the block with torch on ``device`` (float64), or numpy for None.

    The angles and their sin/cos are the only heavy step of the sin/cos schemes; the column
    layout and the single rounding stay in numpy, so a device changes where, not what, is computed.
    The placement yielded tells afterwards whether the block computed any phasors at all.

    >>> with angles_on(None) as placement:
    ...     position_phasors(np.array([0.5]), np.array([2.0])).round(6).tolist()
    [[(0.540302+0.841471j)]]
    >>> placement.used
    True
    """
    placement = AnglePlacement(device)
    token = _PLACEMENT.set(placement)
    try:
        yield placement
    finally:
        _PLACEMENT.reset(token)


def _device() -> str | None:
    placement = _PLACEMENT.get()
    return placement.device if placement is not None else None


def position_phasors(positions: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """``exp(i·p·ω)`` for any real positions ``p`` (rows; fractional timesteps too) and frequencies ``ω``, in float64.

    >>> position_phasors(np.array([0.0, np.pi]), np.array([1.0])).real.tolist()
    [[1.0], [-1.0]]
    """
    placement = _PLACEMENT.get()
    if placement is not None:
        placement.used = True
    if placement is not None and placement.device is not None:
        from pecli.torch import device_phasors

        return device_phasors(positions, freqs, placement.device)
    return np.exp(1j * np.outer(np.asarray(positions, dtype=np.float64), freqs))


def geometric_frequencies(dim: int, base: float, freq_shift: float | None) -> np.ndarray:
    """Frequencies of the sinusoidal family, in float64.

    ``freq_shift=None`` gives Vaswani's ``ω_k = base^(−2k/d)`` for ``k < ceil(d/2)``; a shift ``S``
    gives the tensor2tensor/diffusers form ``ω_i = base^(−i/(h − S))`` for ``i < h = d // 2``.

    >>> geometric_frequencies(4, 10000.0, None)
    array([1.  , 0.01])
    >>> geometric_frequencies(4, 10000.0, 1.0)
    array([1.e+00, 1.e-04])
    """
    if freq_shift is None:
        return np.exp(-math.log(base) * (2.0 * np.arange((dim + 1) // 2) / dim))
    half = dim // 2
    if half - freq_shift <= 0:
        raise ParameterError(
            f"freq shift {freq_shift:g} needs d // 2 > {freq_shift:g}, but d = {dim} gives d // 2 = {half} "
            "(the exponent would divide by zero or flip sign)",
            hint="use a larger d or --freq-shift 0, or drop --freq-shift",
        )
    return np.exp(-math.log(base) * (np.arange(half) / (half - freq_shift)))


def integer_phasors(start: int, stop: int, freqs: np.ndarray) -> np.ndarray:
    """``exp(i·p·ω)`` for integer positions ``start <= p < stop``, by blockwise angle addition."""
    count, n = stop - start, len(freqs)
    block = max(1, _BLOCK_BYTES // (16 * max(n, 1)))
    if count <= block or _device() is not None:
        return position_phasors(np.arange(start, stop, dtype=np.float64), freqs)
    offsets = np.exp(1j * np.outer(np.arange(block, dtype=np.float64), freqs))
    out = np.empty((count, n), dtype=np.complex128)
    for lo in range(0, count, block):
        hi = min(lo + block, count)
        first = np.exp(1j * (float(start + lo) * freqs))
        np.multiply(first, offsets[: hi - lo], out=out[lo:hi])
    return out


def sin_cos_table(phasors: np.ndarray, dim: int, dtype: str, *, layout: str, cos_first: bool) -> np.ndarray:
    """The ``(rows, dim)`` table of :func:`place_sin_cos`, rounded once from float64 to ``dtype``.

    >>> sin_cos_table(np.exp(1j * np.array([[0.0]])), 3, "float64", layout="split", cos_first=True).tolist()
    [[1.0, 0.0, 0.0]]
    """
    target = numpy_dtype(dtype)
    if target.name == "bfloat16":  # numpy cannot round float64 to bfloat16 in one step: round_to does
        table64 = np.empty((len(phasors), dim), dtype=np.float64)
        place_sin_cos(table64, phasors, layout=layout, cos_first=cos_first)
        return round_to(table64, dtype)
    table = np.empty((len(phasors), dim), dtype=target)
    place_sin_cos(table, phasors, layout=layout, cos_first=cos_first)
    return table


def place_sin_cos(out: np.ndarray, phasors: np.ndarray, *, layout: str, cos_first: bool) -> None:
    """Write sin and cos of the phasors' angles into ``out``'s columns, rounding once to its dtype.

    ``interleaved``: [first, second, first, second, …]; ``split``: [first … | second …], where
    first is sin (cos with ``cos_first``). Columns beyond the phasors are truncated (odd d in
    Vaswani's form) or zero-filled (odd d with a frequency shift).
    """
    first, second = (phasors.real, phasors.imag) if cos_first else (phasors.imag, phasors.real)
    place_pairs(out, first, second, layout=layout)


def place_pairs(out: np.ndarray, first: np.ndarray, second: np.ndarray, *, layout: str) -> None:
    """Place two (rows, n) arrays as column pairs of ``out``: ``interleaved`` or ``split`` (halves).

    RoPE's layouts are these placements of one angle table twice: HF Llama's cat(freqs, freqs)
    is ``split``, GPT-J/Meta's pairs are ``interleaved``.

    >>> out = np.empty((1, 4))
    >>> place_pairs(out, np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]), layout="interleaved")
    >>> out.tolist()
    [[1.0, 3.0, 2.0, 4.0]]
    """
    n, dim = first.shape[1], out.shape[1]
    used = min(2 * n, dim)
    if layout == "interleaved":
        out[:, 0:used:2] = first[:, : (used + 1) // 2]
        out[:, 1:used:2] = second[:, : used // 2]
    else:
        out[:, :n] = first
        out[:, n:used] = second[:, : used - n]
    out[:, used:] = 0
