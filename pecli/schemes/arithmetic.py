"""Arithmetic as a parameter: a sin/cos table as a library computes it in reduced precision.

``float64`` (the default) is pecli's own table: angles and sin/cos in float64, rounded once to
the output dtype. The others reproduce a library's order of operations:

- ``float32``: the frequencies computed in float32 in the library's own formula (transformers'
  ``1.0 / base ** (arange(0, d, 2).float() / d)``, diffusers' ``exp(-log(P)·arange / (h − S))``),
  the positions as float32, their product in float32, cos and sin of that float32 angle, scaled
  in float32 (transformers' ``attention_scaling``, diffusers' ``scale``).
- ``bfloat16`` / ``float16``: the same, with the positions held in that dtype first, as
  ``position_ids.to(torch.bfloat16)`` (huggingface/transformers#29285: position 15962 becomes
  15936) or diffusers' ``timesteps.half()`` hold them: neighbouring positions alias.

The results are float64 arrays holding the reduced-precision values exactly, so the output
dtype's rounding happens once afterwards.

>>> held(np.array([15962.0, 0.1]), "bfloat16").tolist()
[15936.0, 0.10009765625]
>>> angle_sin_cos(np.array([1.0]), np.array([0.5]), "float64")[2].tolist()
[[0.479425538604203]]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pecli.dtypes import held_values, largest_value
from pecli.errors import ParameterError
from pecli.schemes.checks import choice

__all__ = [
    "ARITHMETICS",
    "angle_sin_cos",
    "check_arithmetic",
    "exponential_frequencies32",
    "held",
    "held_positions",
    "inverse_power_frequencies32",
]

#: the arithmetics a table can be computed in; float64 is pecli's own (round once at the end)
ARITHMETICS = ("float64", "float32", "bfloat16", "float16")


def check_arithmetic(arithmetic: str | None) -> str:
    """The arithmetic's name (None: float64), or a :class:`ParameterError` naming the valid ones.

    >>> check_arithmetic(None), check_arithmetic("bfloat16")
    ('float64', 'bfloat16')
    """
    return "float64" if arithmetic is None else choice("arithmetic", arithmetic, ARITHMETICS)


def held(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` rounded once to ``dtype`` and given back as float64 (each value exactly as that dtype holds it).

    >>> held(np.array([1 / 3]), "float32").tolist()
    [0.3333333432674408]
    """
    return held_values(values, dtype)


def held_positions(positions: np.ndarray, arithmetic: str) -> np.ndarray:
    """The positions as the arithmetic holds them: float32 (exact to 2^24) or bfloat16/float16 (the bug).

    >>> held_positions(np.array([255.0, 257.0, 258.0]), "bfloat16").tolist()
    [255.0, 256.0, 258.0]
    """
    positions = np.asarray(positions, dtype=np.float64)
    if arithmetic == "float64":
        return positions
    return held(positions, arithmetic)


def angle_sin_cos(
    positions: np.ndarray, freqs32: np.ndarray, arithmetic: str, *, scale: float = 1.0, product_scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(angles, cos, sin)`` (rows, len(freqs)) in float32 arithmetic from positions held in ``arithmetic``.

    The angle is ``float32(float32(p)·ω)`` (times ``product_scale`` in float32, diffusers' ``scale``); cos
    and sin are those of the float32 angle rounded to float32, times ``scale`` in float32
    (transformers' ``attention_scaling``). ``float64`` gives the exact float64 values instead.

    >>> angles, cos, sin = angle_sin_cos(np.array([3.0]), np.array([0.1]), "float32")
    >>> angles.tolist(), round(float(cos[0, 0]), 6)
    ([[0.30000001192092896]], 0.955337)
    """
    positions = held_positions(positions, arithmetic)
    freqs32 = np.asarray(freqs32, dtype=np.float64)
    from pecli.memory import check_fits_in_memory

    # the three results are all it holds: each is rounded in place, a block of rows at a time
    check_fits_in_memory(3 * len(positions) * len(freqs32) * 8, what=f"{arithmetic} angles, cos and sin")
    if arithmetic == "float64":
        angles = np.outer(positions, freqs32)
        angles *= product_scale
        cos, sin = np.cos(angles), np.sin(angles)
        cos *= scale
        sin *= scale
        return angles, cos, sin
    angles = np.outer(held(positions, "float32"), held(freqs32, "float32"))
    _hold_in_place(angles, lambda block: held(block, "float32"))
    if product_scale != 1.0:
        factor = held(np.array(product_scale), "float32")
        _hold_in_place(angles, lambda block: held(block * factor, "float32"))
    cos, sin = np.cos(angles), np.sin(angles)
    scaling = held(np.array(scale), "float32")
    for values in (cos, sin):
        _hold_in_place(values, lambda block: held(block, "float32"))
        if scale != 1.0:
            _hold_in_place(values, lambda block: held(block * scaling, "float32"))
    return angles, cos, sin


#: elements rounded at a time by :func:`_hold_in_place` (its temporaries: a few MiB)
_HOLD_BLOCK = 1 << 18


def _hold_in_place(values: np.ndarray, rounded: Callable[[np.ndarray], np.ndarray]) -> None:
    """``values[...] = rounded(values)``, a block of rows at a time: the same values, no whole-array temporaries."""
    rows_per_block = max(1, _HOLD_BLOCK // max(1, values.shape[1]))
    for top in range(0, values.shape[0], rows_per_block):
        block = values[top : top + rows_per_block]
        block[...] = rounded(block)


def inverse_power_frequencies32(dim: int, base: float) -> np.ndarray:
    """transformers' float32 ``1.0 / base ** (arange(0, dim, 2).float() / dim)``, as float64.

    >>> inverse_power_frequencies32(4, 10000.0).tolist()
    [1.0, 0.009999999776482582]
    """
    if not abs(base) <= largest_value("float32"):  # float32(base) would be inf (numpy warns, then every value is)
        raise ParameterError(
            f"float32 arithmetic cannot hold {{base}} {base:g} (float32's largest value is 3.4e+38)",
            hint="use a {base} below 3.4e38, or {arithmetic=float64}",
        )
    exponents = held(np.arange(0, dim, 2, dtype=np.float64) / np.float64(np.float32(dim)), "float32")
    powers = held(np.float64(np.float32(base)) ** exponents, "float32")
    return held(1.0 / powers, "float32")


def exponential_frequencies32(
    count: int, log_base: float, denominator: float, *, order: str, step: int = 1
) -> np.ndarray:
    """A library's float32 ``exp(−log(base)·k / denominator)`` for ``k < count``, as float64.

    ``order="diffusers"``: ``exp((−log(P) · arange) / (h − S))`` (get_timestep_embedding);
    ``order="fairseq"``: ``exp(arange · (−log(base) / denominator))`` (fairseq, the PyTorch tutorial,
    tensor2tensor's ``inv_timescales``); ``step=2`` takes ``k = 0, 2, 4…`` (the tutorial's ``arange(0, d, 2)``).

    >>> import math
    >>> exponential_frequencies32(2, math.log(10000.0), 1.0, order="fairseq").tolist()
    [1.0, 9.99999901978299e-05]
    """
    k = np.arange(0, step * count, step, dtype=np.float64)
    if order == "diffusers":
        exponents = held(held(k * np.float64(np.float32(-log_base)), "float32") / np.float32(denominator), "float32")
    else:
        exponents = held(k * np.float64(np.float32(-log_base / denominator)), "float32")
    return held(np.exp(exponents), "float32")
