"""The sinusoidal family: Vaswani et al. (2017) and the layouts real code bases use."""

from __future__ import annotations

import math

import numpy as np

from pecli.dtypes import numpy_dtype, round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import fill_sin_cos, geometric_frequencies, pair_columns, place_pairs, place_sin_cos
from pecli.schemes.arithmetic import angle_sin_cos, check_arithmetic, exponential_frequencies32
from pecli.schemes.checks import choice, finite, finite_above, integer, positive_int, row_range

#: ``place_sin_cos`` is the family's column layout and ``pair_columns`` where it puts each pair, public for
#: code that reasons about layouts (identify)
__all__ = ["pair_columns", "place_sin_cos", "sinusoidal_table"]

#: float64 holds every integer up to 2^53 exactly; beyond, neighbouring positions collapse into one
_MAX_EXACT_POSITION = 2**53


def sinusoidal_table(
    length: int,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    cos_first: bool = False,
    freq_shift: float | None = None,
    offset: int = 0,
    padding_idx: int | None = None,
    amplitude: float = 1.0,
    pad_dim: bool = False,
    dtype: str = "float32",
    rows: range | None = None,
    out: np.ndarray | None = None,
    arithmetic: str | None = None,
) -> np.ndarray:
    """Sinusoidal position table of shape ``(length, dim)`` (rows ``rows`` only, if given).

    Args:
        length: number of positions (rows).
        dim: embedding dimension (columns); odd ``dim`` works.
        base: frequency base (10000 in the paper).
        layout: ``"interleaved"`` [sin, cos, sin, cos, …] or ``"split"`` [sin … | cos …].
        cos_first: cos before sin.
        freq_shift: ``None`` for Vaswani's ω_k = base^(−2k/d); ``S`` for ω_i = base^(−i/(h − S)),
            h = dim // 2 (S = 1: tensor2tensor, fairseq, diffusers; S = 0: guided-diffusion).
        offset: position of row 0.
        padding_idx: a row to zero, as fairseq's ``get_embedding`` (and HF FSMT, M2M100) zero
            the padding token's row of the full weight; ``None`` zeroes none.
        amplitude: multiply every value (x-transformers' ``ScaledSinusoidalEmbedding``: d^−0.5).
        pad_dim: an odd ``dim`` takes the frequencies of ``dim + 1`` and drops the last column
            (positional-encodings' ``PositionalEncoding1D``: channels ceil(d/2)·2, then ``[:, :d]``).
        dtype: ``float32``, ``float64``, ``float16`` or ``bfloat16``; angles are float64.
        rows: compute only these rows (for streaming large tables).
        out: an array of the result's shape and dtype to fill instead of allocating one
            (:func:`pecli.encode` checks it).
        arithmetic: ``float64`` (None): float64 angles rounded once; ``float32``: fairseq's and the PyTorch
            tutorial's float32 ``exp(arange · (−log(base) / n))``, positions, product and sin/cos;
            ``bfloat16``/``float16``: the same with the positions held in that dtype first.

    Returns:
        The table, rounded once from float64 to ``dtype``.

    Example:
        >>> sinusoidal_table(2, 4, dtype="float64")[1].round(10).tolist()
        [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004]
        >>> sinusoidal_table(2, 4, layout="split", freq_shift=1, dtype="float64")[1].round(10).tolist()
        [0.8414709848, 0.0001, 0.5403023059, 0.999999995]
        >>> sinusoidal_table(3, 2, padding_idx=1, amplitude=0.5, dtype="float64").round(6).tolist()
        [[0.0, 0.5], [0.0, 0.0], [0.454649, -0.208073]]
        >>> sinusoidal_table(2, 3, pad_dim=True, dtype="float64")[1].round(6).tolist()  # ω = 1, 0.01
        [0.841471, 0.540302, 0.01]
    """
    length = positive_int("length", length)
    dim = positive_int("dim", dim)
    base = finite_above("base", base, 1.0, example="10000")
    offset = integer("offset", offset)
    layout = choice("layout", layout, ("interleaved", "split"))
    if freq_shift is not None:
        freq_shift = finite("freq_shift", freq_shift, example="1")
    rows = row_range(rows, length, per_row=dim)
    if max(abs(offset), abs(offset + length - 1)) > _MAX_EXACT_POSITION:
        raise ParameterError(
            f"positions {offset}..{offset + length - 1} go beyond ±2^53, where float64 cannot tell them apart",
            hint="use a smaller {length}" if offset == 0 else "use a smaller {offset} or {length}",
        )
    if padding_idx is not None and not 0 <= integer("padding_idx", padding_idx) < length:
        raise ParameterError(
            f"{{padding_idx={padding_idx}}} is outside the table's rows 0..{length - 1}",
            hint="pass a row of the table, e.g. {padding_idx=1} (fairseq's pad), or drop {padding_idx}",
        )
    amplitude = finite("amplitude", amplitude, example="0.125")
    freqs = geometric_frequencies(dim + dim % 2 if pad_dim else dim, base, freq_shift)
    table = np.empty((len(rows), dim), dtype=numpy_dtype(dtype)) if out is None else out
    start, cos_first = offset + rows.start, bool(cos_first)
    arithmetic = check_arithmetic(arithmetic)
    if arithmetic != "float64":
        width = dim + dim % 2 if pad_dim else dim
        if freq_shift is None:  # the tutorial's exp(arange(0, d, 2) · (−log(base) / d))
            freqs32 = exponential_frequencies32(len(freqs), math.log(base), width, order="fairseq", step=2)
        else:
            # d = 1 has no frequency (only the padding column): its denominator, 0, is never used
            denominator = width // 2 - freq_shift if len(freqs) else 1.0
            freqs32 = exponential_frequencies32(len(freqs), math.log(base), denominator, order="fairseq")
        positions = np.arange(start, offset + rows.stop, dtype=np.float64)
        _, cos, sin = angle_sin_cos(positions, freqs32, arithmetic, scale=amplitude)
        wide = np.empty(table.shape)
        place_pairs(wide, cos if cos_first else sin, sin if cos_first else cos, layout=layout)
        table[...] = round_to(wide, dtype)
    elif amplitude == 1.0:
        fill_sin_cos(table, start, freqs, layout=layout, cos_first=cos_first)
    else:  # scale in float64, then round once
        exact = fill_sin_cos(np.empty(table.shape), start, freqs, layout=layout, cos_first=cos_first)
        table[...] = round_to(exact * amplitude, dtype)
    if padding_idx is not None and padding_idx in rows:
        table[padding_idx - rows.start] = 0
    return table
