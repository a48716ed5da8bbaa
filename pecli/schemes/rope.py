"""Rotary position embedding (RoPE): cos/sin tables and the rotation.

The frequencies and the context scalings (HF ``rope_type``s) live in
:mod:`pecli.schemes.rope_scaling`, re-exported here.

>>> rope_frequencies(4).tolist()
[1.0, 0.01]
>>> inv_freq = rope_frequencies(128, scaling="dynamic", factor=2.0, original_max_position=2048, length=4096)
>>> round(float(inv_freq[1] ** (-128 / 2)), 4)  # the dynamic-NTK base
30527.7367
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import integer_phasors, place_pairs, position_phasors
from pecli.schemes.arithmetic import angle_sin_cos, check_arithmetic, held, inverse_power_frequencies32
from pecli.schemes.checks import choice, even_dim, finite_above, integer, positive_int, row_range
from pecli.schemes.rope_scaling import (
    SCALING_PARAMETERS,
    SCALINGS,
    rope_attention_factor,
    rope_frequencies,
    scaling_parameters,
)
from pecli.text import literal_repr

#: ``position_phasors`` (exp(i·p·θ) at any positions) is public for code that rotates queries and keys (analysis)
__all__ = [
    "FREQS_DTYPES",
    "SCALINGS",
    "apply_rotary",
    "position_phasors",
    "rope_attention_factor",
    "rope_frequencies",
    "rope_metadata",
    "rope_table",
    "rotary_dim",
]


#: the dtypes an engine may hold RoPE's inverse frequencies in (``freqs_dtype``; None: exact)
FREQS_DTYPES = ("float32", "bfloat16", "float16")


def _fraction(partial_rotary_factor: float) -> float:
    factor = finite_above("partial_rotary_factor", partial_rotary_factor, 0.0, example="0.5")
    if factor > 1:
        raise ParameterError(
            f"{{partial_rotary_factor}} must be at most 1, got {literal_repr(factor)}",
            hint="pass e.g. {partial_rotary_factor=0.5}",
        )
    return factor


def rotary_dim(dim: int, partial_rotary_factor: float = 1.0) -> int:
    """The rotated columns of a head of ``dim``: HF's ``int(head_dim · partial_rotary_factor)`` (even).

    >>> rotary_dim(128, 0.5), rotary_dim(80, 0.4)
    (64, 32)
    """
    dim = positive_int("dim", dim)
    factor = _fraction(partial_rotary_factor)
    rotated = int(dim * factor)
    if rotated < 2 or rotated % 2:
        raise ParameterError(
            f"{{partial_rotary_factor={factor:g}}} rotates {rotated} of {dim} columns; RoPE needs an even number ≥ 2",
            hint="pick a factor that makes dim·factor even",
        )
    return rotated


def _rotation(dim: int, partial_rotary_factor: float, width: int | None, scaling: str) -> tuple[int, int]:
    """(R, columns): the width transformers computes the frequencies over and the columns they turn.

    ``width`` None is ``int(dim · partial_rotary_factor)`` (even); an odd ``width`` R gives
    ⌈R/2⌉ frequencies over R that turn 2⌈R/2⌉ columns, as transformers' ``arange(0, R, 2) / R``.

    >>> _rotation(42, 1.0, 21, "none"), _rotation(40, 0.5, None, "none")
    ((21, 22), (20, 20))
    """
    if width is None:
        rotated = rotary_dim(dim, partial_rotary_factor)
        return rotated, rotated
    width = positive_int("rotary_dim", width)
    if scaling == "proportional":
        raise ParameterError(
            "{rotary_dim} does not apply to {scaling=proportional}, which turns frequencies of the whole head",
            hint="use {partial_rotary_factor} with proportional",
        )
    if partial_rotary_factor != 1.0 and int(dim * _fraction(partial_rotary_factor)) != width:
        raise ParameterError(
            f"{{rotary_dim={width}}} contradicts {{partial_rotary_factor={partial_rotary_factor:g}}}, which rotates "
            f"int({dim}·{partial_rotary_factor:g}) = {int(dim * partial_rotary_factor)} columns",
            hint="give one of {rotary_dim} and {partial_rotary_factor}",
        )
    columns = width + width % 2
    if width < 2 or columns > dim:
        raise ParameterError(
            f"{{rotary_dim={width}}} turns {columns} columns ({(width + 1) // 2} frequencies over {width}); "
            f"a head of {{dim={dim}}} " + ("cannot hold them" if width >= 2 else "needs at least 2"),
            hint=f"use 2 ≤ {{rotary_dim}} ≤ {dim}",
        )
    return width, columns


def rope_table(
    length: int,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "half",
    part: str = "cos",
    scaling: str = "none",
    offset: int = 0,
    partial_rotary_factor: float = 1.0,
    dtype: str = "float32",
    rows: range | None = None,
    arithmetic: str | None = None,
    rotary_dim: int | None = None,
    freqs_dtype: str | None = None,
    **scaling_params: Any,
) -> np.ndarray:
    """One (length, d) RoPE table: ``cos``, ``sin`` or the ``angle`` θ = p·inv_freq, in ``layout``'s columns.

    Args:
        length: number of positions.
        dim: head dimension (even).
        base: θ base (10000; Llama 3 uses 500000).
        layout: ``half`` (HF Llama: cat(freqs, freqs), rotate_half) or ``interleaved``
            (GPT-J, Meta llama, rotary-embedding-torch: pairs of adjacent columns).
        part: ``cos``, ``sin`` or ``angle``.
        scaling: ``none``, ``linear``, ``dynamic``, ``yarn``, ``llama3``, ``longrope`` or ``proportional``, with its
            parameters (``factor``, ``original_max_position``, ``beta_fast``…; see :data:`SCALINGS`).
        offset: position of row 0 (rows for positions 10^6… need no 10^6-row table); dynamic NTK
            and LongRoPE see ``offset + length`` positions, as HF's ``max(position_ids) + 1``.
        partial_rotary_factor: rotate only the first ``int(dim · factor)`` columns (GPT-NeoX,
            Phi, GLM); those equal HF's cos/sin, the rest hold the identity (cos 1, sin 0, angle 0)
            that HF's pass-through columns get. With ``scaling="proportional"`` (HF's, Gemma 4)
            the first ``int(factor · dim // 2)`` frequencies of the whole head turn, the rest are 0.
        dtype: output dtype; float64 angles, rounded once.
        rows: compute only these positions.
        rotary_dim: the width R transformers computes the frequencies over, ``base^(−2i/R)`` for
            i < ⌈R/2⌉, turning the first 2⌈R/2⌉ columns (the rest pass through); None is
            ``int(dim · partial_rotary_factor)``. An odd R is what transformers does with an odd
            ``int(head_dim · partial_rotary_factor)`` (GLM-4 MoE: 21 → 22 columns); the default,
            linear, dynamic, llama3 and longrope (⌈R/2⌉ factors) scalings take it, YaRN does not.
        arithmetic: ``float64`` (None) computes in float64 and rounds once; ``float32`` as transformers'
            rotary modules do (float32 ``inv_freq``, positions, product, cos/sin, times the attention
            factor); ``bfloat16``/``float16`` hold the positions in that dtype first (``position_ids``
            in bfloat16, huggingface/transformers#29285). See :mod:`pecli.schemes.arithmetic`.
        freqs_dtype: hold the inverse frequencies in ``float32``, ``bfloat16`` or ``float16`` (None: exact):
            the float32 ``inv_freq`` an engine computes, rounded to nearest even as torch's ``.half()`` /
            ``.bfloat16()`` does (diffusers' ``freqs_dtype``); every angle p·θ then drifts with p.

    Example:
        >>> rope_table(2, 4, part="sin", dtype="float64")[1].round(6).tolist()
        [0.841471, 0.01, 0.841471, 0.01]
        >>> rope_table(2, 4, part="sin", layout="interleaved", dtype="float64")[1].round(6).tolist()
        [0.841471, 0.841471, 0.01, 0.01]
        >>> rope_table(1, 4, part="cos", offset=1, partial_rotary_factor=0.5, dtype="float64")[0].round(6).tolist()
        [0.540302, 0.540302, 1.0, 1.0]
        >>> rope_table(1, 4, part="cos", offset=1, rotary_dim=3, dtype="float64")[0].round(6).tolist()
        [0.540302, 0.999998, 0.540302, 0.999998]
        >>> rope_table(1, 4, part="angle", offset=1000, freqs_dtype="float16", dtype="float64")[0].tolist()
        [1000.0, 10.00213623046875, 1000.0, 10.00213623046875]
    """
    length = positive_int("length", length)
    layout = choice("layout", layout, ("half", "interleaved"))
    part = choice("part", part, ("cos", "sin", "angle"))
    offset = integer("offset", offset)
    dim = positive_int("dim", dim)
    if rotary_dim is None:  # with rotary_dim, the columns past its 2⌈R/2⌉ pass through, an odd head too
        dim = even_dim("rope", dim, "it rotates pairs of columns")
    proportional = scaling == "proportional" and rotary_dim is None
    width, rotated = (dim, dim) if proportional else _rotation(dim, partial_rotary_factor, rotary_dim, scaling)
    inv_freq = rope_frequencies(
        width, base=base, scaling=scaling, length=offset + length, odd=width != rotated, **scaling_params
    )
    if freqs_dtype is not None:  # the engine's float32 inv_freq, rounded once more to its dtype (torch's .half())
        freqs_dtype = choice("freqs_dtype", freqs_dtype, FREQS_DTYPES)
        inv_freq = held(_frequencies32(inv_freq, width, base, scaling, scaling_params), freqs_dtype)
    if proportional:  # HF: int(p·d // 2) frequencies of the whole head, then zero frequencies
        inv_freq[int(_fraction(partial_rotary_factor) * dim // 2) :] = 0.0
    rows = row_range(rows, length, per_row=dim)
    placement = "split" if layout == "half" else "interleaved"
    table = np.empty((len(rows), dim), dtype=np.float64)
    start, stop = offset + rows.start, offset + rows.stop
    arithmetic = check_arithmetic(arithmetic)
    if arithmetic != "float64":
        held_freqs = freqs_dtype is not None  # already the engine's float32 frequencies, rounded
        inv_freq32 = inv_freq if held_freqs else _frequencies32(inv_freq, width, base, scaling, scaling_params)
        factor = 1.0
        if scaling_params.get("apply_attention_factor"):
            factor = rope_attention_factor(scaling, **scaling_parameters(scaling, scaling_params))
        angles, cos, sin = angle_sin_cos(np.arange(start, stop, dtype=np.float64), inv_freq32, arithmetic, scale=factor)
        values = {"angle": angles, "cos": cos, "sin": sin}[part]
        del angles, cos, sin  # only the part placed stays alive
        place_pairs(table[:, :rotated], values, values, layout=placement)
        del values
    elif part == "angle":
        angles = np.outer(np.arange(start, stop, dtype=np.float64), inv_freq)
        place_pairs(table[:, :rotated], angles, angles, layout=placement)
        del angles
    else:
        phasors = integer_phasors(start, stop, inv_freq)
        values = phasors.real if part == "cos" else phasors.imag
        place_pairs(table[:, :rotated], values, values, layout=placement)
        del phasors, values  # the complex phasors are twice the placed part: not kept through the rounding
        if scaling_params.get("apply_attention_factor"):
            table[:, :rotated] *= rope_attention_factor(scaling, **scaling_parameters(scaling, scaling_params))
    table[:, rotated:] = 1.0 if part == "cos" else 0.0
    return round_to(table, dtype)


def _frequencies32(
    inv_freq: np.ndarray, rotated: int, base: float, scaling: str, scaling_params: dict[str, Any]
) -> np.ndarray:
    """The float32 ``inv_freq`` of transformers: its own formula for the default and linear scalings,
    the float64 frequencies rounded to float32 for the others (within a float32 step of HF's)."""
    if scaling == "none":
        return inverse_power_frequencies32(rotated, base)
    if scaling == "linear":
        factor = held(np.array(scaling_parameters(scaling, scaling_params)["factor"]), "float32")
        return held(inverse_power_frequencies32(rotated, base) / factor, "float32")
    if scaling == "llama3":
        return _llama3_frequencies32(rotated, base, scaling_parameters(scaling, scaling_params))
    return held(inv_freq, "float32")


def _llama3_frequencies32(rotated: int, base: float, used: dict[str, Any]) -> np.ndarray:
    """transformers' ``_compute_llama3_parameters`` step by step in float32 (``a / t`` is ``t.reciprocal() * a``)."""
    f32 = np.float32
    inv_freq = inverse_power_frequencies32(rotated, base).astype(f32)
    factor, low, high, old = (
        f32(used[k]) for k in ("factor", "low_freq_factor", "high_freq_factor", "original_max_position")
    )
    wavelen = (f32(1) / inv_freq) * f32(2 * math.pi)
    low_wavelen = f32(used["original_max_position"] / used["low_freq_factor"])
    high_wavelen = f32(used["original_max_position"] / used["high_freq_factor"])
    scaled = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = ((f32(1) / wavelen) * old - low) / (high - low)
    smoothed = (f32(1) - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, scaled).astype(np.float64)


def rope_metadata(
    length: int,
    dim: int,
    *,
    base: float = 10000.0,
    scaling: str = "none",
    offset: int = 0,
    partial_rotary_factor: float = 1.0,
    **params: Any,
) -> dict[str, str]:
    """Derived values a RoPE file records: YaRN's and LongRoPE's attention factor, what the scaling used.

    Dynamic NTK records its effective base, Llama 3 its low/high frequency factors, LongRoPE
    which factor list the positions chose; a partial rotation records the rotated columns.

    >>> rope_metadata(4096, 128, scaling="yarn", factor=4.0, original_max_position=2048)["attention_factor"]
    '1.138629436111989'
    >>> rope_metadata(8, 128, scaling="llama3", factor=8.0, original_max_position=8192)["high_freq_factor"]
    '4.0'
    """
    scaling_params = {name: params.get(name) for name in SCALING_PARAMETERS}
    used = scaling_parameters(scaling, scaling_params)
    meta = {}
    if scaling in ("yarn", "longrope"):  # recorded as the parameter: reading the file back gives the same table
        meta["attention_factor"] = repr(rope_attention_factor(scaling, **used))
    if scaling == "dynamic":
        width = params.get("rotary_dim") or dim  # an odd rotary_dim: the frequencies over it, as the table's
        inv_freq = rope_frequencies(
            width, base=base, scaling=scaling, length=offset + length, odd=width % 2 == 1, **scaling_params
        )
        if len(inv_freq) > 1:  # one pair turns at frequency 1 whatever the base: none to record
            meta["effective_base"] = repr(float(inv_freq[1] ** (-width / 2)))
    if scaling == "llama3":
        meta.update(low_freq_factor=repr(used["low_freq_factor"]), high_freq_factor=repr(used["high_freq_factor"]))
    if scaling == "longrope":
        meta["longrope_factors"] = "long" if offset + length > used["original_max_position"] else "short"
    if partial_rotary_factor != 1.0 and scaling != "proportional" and params.get("rotary_dim") is None:
        meta["rotary_dim"] = str(rotary_dim(dim, partial_rotary_factor))
    return meta


def apply_rotary(x: Any, cos: Any, sin: Any, layout: str = "half") -> Any:
    """Rotate ``x`` (…, len, d) by RoPE tables ``cos`` and ``sin`` (len, d): ``x·cos + rotate(x)·sin``.

    ``half`` rotates (x_i, x_{i+d/2}) as HF Llama's ``rotate_half`` does; ``interleaved`` rotates
    (x_{2i}, x_{2i+1}) as GPT-J and Meta's llama do. Works on numpy arrays and torch tensors alike.

    Example:
        >>> cos, sin = rope_table(2, 4, part="cos", dtype="float64"), rope_table(2, 4, part="sin", dtype="float64")
        >>> apply_rotary(np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]), cos, sin)[1].round(10).tolist()
        [-1.9841106486, 1.9599006675, 2.4623779024, 4.0197996683]
    """
    layout = choice("layout", layout, ("half", "interleaved"))
    for name, value in (("x", x), ("cos", cos), ("sin", sin)):
        if not hasattr(value, "shape"):
            raise ParameterError(f"{name} must be a numpy array or a torch tensor, got {type(value).__name__}",
                                 hint=f"pass np.asarray({name})")  # fmt: skip
    _check_rotary_shapes(tuple(x.shape), tuple(cos.shape), tuple(sin.shape), layout)
    rotated = x * 0
    if layout == "half":
        half = x.shape[-1] // 2
        rotated[..., :half] = -x[..., half:]
        rotated[..., half:] = x[..., :half]
    else:
        rotated[..., 0::2] = -x[..., 1::2]
        rotated[..., 1::2] = x[..., 0::2]
    return x * cos + rotated * sin


def _check_rotary_shapes(x: tuple[int, ...], cos: tuple[int, ...], sin: tuple[int, ...], layout: str) -> None:
    """A ParameterError saying which shapes :func:`apply_rotary` expects, before numpy's broadcast error."""
    if cos != sin:
        raise ParameterError(f"cos has shape {cos} but sin {sin}", hint="pass the two parts of one RoPE table")
    if len(x) < 1 or len(cos) < 1:
        raise ParameterError(f"x (shape {x}) and cos/sin (shape {cos}) need a last axis d", hint="x is (…, len, d)")
    if x[-1] != cos[-1]:
        raise ParameterError(
            f"x's last axis is {x[-1]} but the table's d is {cos[-1]} (x {x}, cos/sin {cos})",
            hint="x is (…, len, d) and cos/sin (len, d) with the same d",
        )
    if x[-1] % 2:  # pairs of columns: an odd d has one left over (half: numpy's broadcast error)
        raise ParameterError(f"a rotation needs an even d (it turns pairs of columns), got {x[-1]}",
                             hint="pass the rotary columns only, an even number")  # fmt: skip
    if len(cos) >= 2 and (len(x) < 2 or x[-2] != cos[-2]) and cos[-2] != 1:
        got = f"x's sequence axis is {x[-2]}" if len(x) >= 2 else f"x has no sequence axis (shape {x})"
        raise ParameterError(
            f"{got} but the table holds {cos[-2]} positions (x {x}, cos/sin {cos})",
            hint="x is (…, len, d): slice the table to x's positions, cos[:len]",
        )
    try:
        np.broadcast_shapes(x, cos)
    except ValueError:
        raise ParameterError(
            f"x of shape {x} and cos/sin of shape {cos} do not broadcast",
            hint="x is (…, len, d) and cos/sin (len, d) or (…, len, d)",
        ) from None
