"""Grid schemes for image patches: 2-D sin-cos (ViT, MAE, timm, diffusers) and CoordConv channels."""

from __future__ import annotations

import numpy as np

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import geometric_frequencies, place_sin_cos, position_phasors
from pecli.schemes.checks import choice, finite, finite_above, grid_shape, leading_rows, positive_int, row_range

__all__ = ["coordconv_table", "sincos2d_row_positions", "sincos2d_table"]

_SINCOS2D_LAYOUTS = ("by-axis", "by-function", "by-axis-h-first", "interleaved")


def _grid_tokens(
    length: int | None, grid: object, leading: int, rows: range | None, dim: int
) -> tuple[int, int, range]:
    """(H, W, the token rows to compute) for a grid, checking ``length`` against H·W + leading zero rows."""
    height, width = grid_shape(grid)
    tokens = height * width + leading
    if length is not None and length != tokens:
        raise ParameterError(
            f"{{length={length}}} does not match {{grid={height},{width}}} ({tokens} tokens)", hint="drop {length}"
        )
    return height, width, row_range(rows, tokens, per_row=dim, hint="use a smaller {grid} or {dim}")


def _grid_coordinates(rows: range, width: int, leading: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Row-major (h, w) indices of the patch tokens among ``rows``, and how many zero rows lead them."""
    first = max(rows.start, leading)
    lead = first - rows.start
    patch = np.arange(first - leading, rows.stop - leading)
    return (patch // width).astype(np.float64), (patch % width).astype(np.float64), lead


def sincos2d_table(
    length: int | None,
    dim: int,
    *,
    grid: object,
    cls_token: bool = False,
    extra_tokens: int | None = None,
    base: float = 10000.0,
    layout: str = "by-axis",
    base_size: float | None = None,
    interpolation_scale: float = 1.0,
    freq_shift: float | None = None,
    reverse_coord: bool = False,
    pos_embed_max_size: int | None = None,
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """2-D sin-cos embedding of an H × W grid, tokens row-major: shape (H·W (+1 cls), d), d divisible by 4.

    Each axis gets d/4 frequencies ω_k = base^(−k/(d/4)) (MAE's ``1/10000**(k/(d/4))``, timm's
    ``freq_bands``). The ``interleaved`` layout takes any d: ⌈d/4⌉ frequencies per axis, the last
    columns of the 4·⌈d/4⌉ dropped (positional-encodings' ``PositionalEncoding2D``).

    Args:
        length: H·W (+ the leading zero rows of ``cls_token``), or None.
        dim: embedding dimension, a multiple of 4.
        grid: ``"H,W"`` or (H, W).
        cls_token: a leading zero row (MAE's and diffusers' ``cls_token``).
        extra_tokens: with ``cls_token``, this many leading zero rows instead of one (diffusers'
            ``get_2d_sincos_pos_embed(cls_token=True, extra_tokens=N)``, where 0 adds none).
        base: frequency base (``temperature`` in timm).
        layout: ``by-axis`` [sin w | cos w | sin h | cos h] (MAE and diffusers, whose
            meshgrid(w, h) puts w in the first half), ``by-function`` [sin h | sin w | cos h | cos w]
            (timm's build_sincos2d_pos_embed), ``by-axis-h-first`` [sin h | cos h | sin w | cos w]
            (timm's ``interleave_sin_cos=True``) or ``interleaved`` [sin h₀, cos h₀, sin h₁, … |
            sin w₀, cos w₀, …] (positional-encodings' ``get_emb`` per axis, x the first axis).
        base_size: diffusers' scaling: positions i / (H / base_size) (per axis); None: plain i.
        interpolation_scale: diffusers: positions are divided by it.
        freq_shift: ``None`` for ω_k = base^(−k/(d/4)); ``S`` for base^(−k/(d/4 − S))
            (vit-pytorch's ``posemb_sincos_2d``: S = 1).
        reverse_coord: timm's ``reverse_coord``: the table of the W × H grid (ndgrid(W, H)), so
            tokens run down the columns of H × W and the first coordinate is the column.
        pos_embed_max_size: diffusers' ``PatchEmbed(pos_embed_max_size=M)`` (SD3): the table of
            an M × M grid (``base_size`` scaling by M), cropped to the centred H × W window
            (``cropped_pos_embed``: top (M − H) // 2, left (M − W) // 2).
        dtype: output dtype. rows: compute only these tokens.

    Example:
        >>> sincos2d_table(None, 4, grid="1,2", dtype="float64").round(6).tolist()
        [[0.0, 1.0, 0.0, 1.0], [0.841471, 0.540302, 0.0, 1.0]]
    """
    dim = positive_int("dim", dim)
    layout = choice("layout", layout, _SINCOS2D_LAYOUTS)
    if dim % 4 and layout != "interleaved":
        raise ParameterError(
            f"sincos2d needs {{dim}} divisible by 4 (sin and cos of each of 2 axes), got {dim}",
            hint=f"use {{dim={dim + 4 - dim % 4}}} or {{layout=interleaved}}",
        )
    base = finite_above("base", base, 1.0, example="10000")
    h, w, lead, rows = _sincos2d_coordinates(
        length, dim, grid, cls_token, extra_tokens, base_size, interpolation_scale, reverse_coord,
        pos_embed_max_size, rows,
    )  # fmt: skip
    if freq_shift is not None:
        freq_shift = finite("freq_shift", freq_shift, example="1")
    per_axis = -(-dim // 4)  # positional-encodings pads d up to a multiple of 4
    if freq_shift is not None and per_axis - freq_shift <= 0:  # said of the d given, not of one axis's half
        raise ParameterError(
            f"{{freq_shift={freq_shift:g}}} needs each axis's d/4 frequencies to exceed it, but {{dim={dim}}} "
            f"gives {per_axis} (the exponent would divide by zero or flip sign)",
            hint="use a larger {dim} or {freq_shift=0}, or drop {freq_shift}",
        )
    freqs = geometric_frequencies(2 * per_axis, base, freq_shift)
    table = np.zeros((len(rows), 4 * per_axis), dtype=np.float64)
    patches = table[lead:]
    half = 2 * per_axis
    if layout == "by-function":
        both = np.concatenate([position_phasors(h, freqs), position_phasors(w, freqs)], axis=1)
        place_sin_cos(patches, both, layout="split", cos_first=False)
    else:
        first, second = (w, h) if layout == "by-axis" else (h, w)
        pairs = "interleaved" if layout == "interleaved" else "split"
        place_sin_cos(patches[:, :half], position_phasors(first, freqs), layout=pairs, cos_first=False)
        place_sin_cos(patches[:, half:], position_phasors(second, freqs), layout=pairs, cos_first=False)
    return round_to(table[:, :dim], dtype)


def _sincos2d_coordinates(
    length: int | None, dim: int, grid: object, cls_token: bool, extra_tokens: int | None,
    base_size: float | None, interpolation_scale: float, reverse_coord: bool, pos_embed_max_size: int | None,
    rows: range | None,
) -> tuple[np.ndarray, np.ndarray, int, range]:  # fmt: skip
    """The (h, w) coordinates of sincos2d's patch tokens among ``rows``, the leading zero rows, the rows."""
    scale = finite_above("interpolation_scale", interpolation_scale, 0.0, example="1")
    leading = leading_rows(cls_token, extra_tokens)
    height, width, rows = _grid_tokens(length, grid, leading, rows, dim)
    side = None if pos_embed_max_size is None else _max_size(pos_embed_max_size, height, width)
    if reverse_coord:  # timm: feat_shape[::-1], "stack W, H instead of H, W"
        height, width = width, height
    h, w, lead = _grid_coordinates(rows, width, leading)
    if side is not None:
        h, w = h + (side - height) // 2, w + (side - width) // 2
        height = width = side
    if base_size is not None:
        # diffusers' get_2d_sincos_pos_embed: arange(H) / (H / base_size) / interpolation_scale
        size = finite_above("base_size", base_size, 0.0, example="16")
        h, w = h / (height / size), w / (width / size)
    return h / scale, w / scale, lead, rows


def sincos2d_row_positions(
    length: int | None,
    dim: int,
    *,
    grid: object,
    cls_token: bool = False,
    extra_tokens: int | None = None,
    base_size: float | None = None,
    interpolation_scale: float = 1.0,
    reverse_coord: bool = False,
    pos_embed_max_size: int | None = None,
    **_: object,
) -> np.ndarray:
    """Each token's largest coordinate max(h, w) (0 for the leading zero rows): its angles are at most that·ω.

    diffusers' ``base_size``, ``interpolation_scale`` and ``pos_embed_max_size`` move the coordinates
    off the token's index (a 3 × 3 grid with base size 64 reaches 42.7), and float32 noise is the
    coordinate's, not the row number's.

    >>> sincos2d_row_positions(None, 4, grid="2,3", cls_token=True, base_size=6.0).tolist()
    [0.0, 0.0, 2.0, 4.0, 3.0, 3.0, 4.0]
    """
    h, w, lead, _rows = _sincos2d_coordinates(
        length, dim, grid, cls_token, extra_tokens, base_size, interpolation_scale, reverse_coord,
        pos_embed_max_size, None,
    )  # fmt: skip
    return np.concatenate([np.zeros(lead), np.maximum(np.abs(h), np.abs(w))])


def _max_size(pos_embed_max_size: object, height: int, width: int) -> int:
    """diffusers' ``pos_embed_max_size``, checked to hold the grid (``cropped_pos_embed`` refuses a larger one)."""
    side = positive_int("pos_embed_max_size", pos_embed_max_size)
    if max(height, width) > side:
        raise ParameterError(
            f"{{grid={height},{width}}} does not fit in {{pos_embed_max_size={side}}} (the table is cropped from "
            f"a {side} × {side} grid)",
            hint=f"use {{pos_embed_max_size={max(height, width)}}} or more",
        )
    return side


def _unit_coordinate(index: np.ndarray, divisor: int) -> np.ndarray | float:
    """``2·index/divisor − 1``; a zero divisor (a side of 1) gives 0 where the references divide by zero."""
    return 2.0 * index / divisor - 1.0 if divisor > 0 else 0.0


def coordconv_table(
    length: int | None,
    dim: int = 2,
    *,
    grid: object,
    layout: str = "mkocabas",
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """CoordConv's coordinate channels for an H × W grid, tokens row-major: (H·W, 2) or (H·W, 3).

    ``layout="mkocabas"`` (the PyTorch port, mkocabas/CoordConv-pytorch ``AddCoords``): column 0
    is the row coordinate 2i/(H−1) − 1, column 1 the column coordinate 2j/(W−1) − 1, and
    ``dim=3`` adds the radius √((x − 0.5)² + (y − 0.5)²). ``layout="uber"`` (uber-research/CoordConv
    ``CoordConv.py``, ``AddCoords``): column 0 is ``xx`` = 2j/(H−1) − 1, along the second axis
    but divided by the first side, column 1 ``yy`` = 2i/(W−1) − 1, and the radius √(xx² + yy²).
    A side of length 1 has the coordinate 0 (the references divide by zero there).

    Example:
        >>> coordconv_table(None, 3, grid="2,3", dtype="float64")[:, :2].tolist()
        [[-1.0, -1.0], [-1.0, 0.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 0.0], [1.0, 1.0]]
        >>> coordconv_table(None, 3, grid="3,3", layout="uber", dtype="float64")[5].round(6).tolist()
        [1.0, 0.0, 1.0]
    """
    dim = positive_int("dim", dim)
    layout = choice("layout", layout, ("mkocabas", "uber"))
    if dim not in (2, 3):
        raise ParameterError(
            f"coordconv has 2 channels (row, column) or 3 (with the radius), got {{dim={dim}}}",
            hint="use {dim=2} or {dim=3}",
        )
    height, width, rows = _grid_tokens(length, grid, 0, rows, dim)
    i, j, _ = _grid_coordinates(rows, width, 0)
    table = np.empty((len(rows), dim), dtype=np.float64)
    if layout == "uber":
        table[:, 0] = _unit_coordinate(j, height - 1)
        table[:, 1] = _unit_coordinate(i, width - 1)
        centre = 0.0
    else:
        table[:, 0] = _unit_coordinate(i, height - 1)
        table[:, 1] = _unit_coordinate(j, width - 1)
        centre = 0.5
    if dim == 3:
        table[:, 2] = np.sqrt((table[:, 0] - centre) ** 2 + (table[:, 1] - centre) ** 2)
    return round_to(table, dtype)
