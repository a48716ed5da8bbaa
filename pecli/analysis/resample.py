"""Resampling learned position tables: a 2-D grid to another grid, a 1-D table to another length.

Computed in float64 as one weight matrix per axis (torch's ``interpolate`` is separable: the 2-D
result is ``Wh @ grid @ Ww.T`` per channel) and rounded once to the table's dtype. Each weight
matrix reproduces ``torch.nn.functional.interpolate`` with ``align_corners=False``:

* ``bicubic``: Keys' cubic convolution with a = −0.75, the four taps clamped at the edges;
* ``bilinear`` / ``linear``: source ``scale·(i + ½) − ½`` clamped at 0;
* ``nearest``: source ``floor(i·scale)`` as torch computes it: the product in the table's ``opmath``
  (float64 for a float64 table, float32 for any other; ``index_float64``), floored as a float32;
* ``area``: ``adaptive_avg_pool``'s cells ``[floor(i·n/m), ceil((i+1)·n/m))``;
* antialias (bicubic, bilinear): the filter stretched by the scale when shrinking, its taps cut at
  the edges and renormalised (Pillow's resampling; torch's bicubic filter here has a = −0.5).

Conventions name what libraries call (:data:`CONVENTIONS`); :func:`resample_grid` and
:func:`resample_length` work on arrays, so a checkpoint copy can call them on one tensor.

>>> import numpy as np
>>> table = np.arange(1 + 4, dtype=np.float32).reshape(5, 1)  # one class token, a 2 × 2 grid
>>> resample_grid(table, (1, 4), prefix_tokens=1, method="nearest").ravel().tolist()
[0.0, 1.0, 1.0, 2.0, 2.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = [
    "CONVENTIONS",
    "GRID_METHODS",
    "LENGTH_METHODS",
    "MAX_PREFIX_TOKENS",
    "Convention",
    "axis_weights",
    "check_stored_target",
    "grid_layout",
    "resample_grid",
    "resample_length",
]

GRID_METHODS = ("bicubic", "bilinear", "nearest", "area")
#: float64 values in one block of channels resampled together (8 MiB): the working memory of a grid
_BLOCK_VALUES = 1 << 20
LENGTH_METHODS = ("linear", "tile", "nearest")


@dataclass(frozen=True)
class Convention:
    """How a library resamples a ViT's table: its method, antialias, and its sampling grid's offset.

    ``scale_offset``: None when the library passes the target ``size`` to ``interpolate``; a number
    when it passes ``scale_factor = (target + offset) / source`` instead, which moves the samples.
    """

    name: str
    method: str
    antialias: bool
    prefix_tokens: int
    source: str
    scale_offset: float | None = None


#: the conventions users name, each citing the code it reproduces
CONVENTIONS: dict[str, Convention] = {
    convention.name: convention
    for convention in (
        # timm 1.0.31, timm/layers/pos_embed.py, resample_abs_pos_embed (defaults; num_prefix_tokens=1)
        Convention("timm", "bicubic", True, 1, "timm resample_abs_pos_embed"),
        # transformers, models/vit/modeling_vit.py, ViTEmbeddings.interpolate_pos_encoding: size=, no antialias
        Convention("hf", "bicubic", False, 1, "transformers ViTEmbeddings.interpolate_pos_encoding"),
        # facebookresearch/dinov2, dinov2/models/vision_transformer.py, interpolate_pos_encoding:
        # scale_factor=(target + 0.1) / M (interpolate_offset=0.1, interpolate_antialias=False)
        Convention("dinov2-original", "bicubic", False, 1, "DINOv2 interpolate_pos_encoding", scale_offset=0.1),
    )
}


def _cubic(x: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter ``a``."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x <= 1, near, np.where(x < 2, far, 0.0))


def axis_weights(source: int, target: int, method: str, *, antialias: bool = False,
                 scale: float | None = None, index_float64: bool = False) -> np.ndarray:  # fmt: skip
    """The (target, source) float64 matrix that resamples one axis as torch's ``interpolate`` does.

    ``scale`` is source/target as torch derives it from a ``scale_factor`` (1 / scale_factor);
    None: ``source / target``, as for ``size=``. ``index_float64``: nearest's ``i · scale`` in float64
    (then floored as a float32), as torch computes it for a float64 tensor (float32 for any other).
    The matrix is dense: :func:`resample_length` and :func:`resample_grid` build it a block of target
    rows at a time, over the sources they read.

    >>> axis_weights(2, 4, "bilinear").tolist()
    [[1.0, 0.0], [0.75, 0.25], [0.25, 0.75], [0.0, 1.0]]
    >>> axis_weights(4, 2, "area").tolist()
    [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]]
    >>> [int(axis_weights(87, 339, "nearest", index_float64=wide)[113].argmax()) for wide in (False, True)]
    [28, 29]
    """
    weights = np.zeros((target, source))
    rows = np.arange(target)
    for columns, values in _taps(source, target, method, antialias, scale, 0, target, index_float64):
        np.add.at(weights, (rows, columns), values)  # in torch's order: a clipped tap adds to its neighbour
    return weights


def _taps(source: int, target: int, method: str, antialias: bool, scale: float | None,
          start: int, stop: int, index_float64: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Target rows ``start:stop`` of :func:`axis_weights` as taps: (source index, weight) per row.

    An interpolation reads a band of a few sources per target (about source/target of them when
    shrinking), so the taps cost what the result does, never target × source.
    """
    scale = source / target if scale is None else scale
    rows = np.arange(start, stop)
    if method == "nearest":
        # torch: min(floorf(i * scale), source - 1), the product in its opmath type (float64 for a float64
        # tensor, else float32) and floorf's argument float32 whatever the type
        if index_float64:
            product = (rows * np.float64(scale)).astype(np.float32)
        else:
            product = rows.astype(np.float32) * np.float32(scale)
        index = np.floor(product).astype(np.int64)
        if target == source:
            index = rows
        elif target == 2 * source:
            index = rows >> 1
        entries = [(np.minimum(index, source - 1), np.ones(len(rows)))]
    elif method == "area":  # adaptive_avg_pool: always from the sizes
        first, last = (rows * source) // target, -((-(rows + 1) * source) // target)
        width = int((last - first).max(initial=1))
        entries = [
            (np.where(first + k < last, first + k, first), np.where(first + k < last, 1.0 / (last - first), 0.0))
            for k in range(width)
        ]
    elif method not in ("bicubic", "bilinear", "linear"):
        raise ParameterError(f"unknown {{method}} {literal_repr(method)}", hint=f"one of {', '.join(GRID_METHODS)}")
    elif antialias:
        return _antialias_block(source, method, scale, rows)
    else:
        centre = scale * (rows + 0.5) - 0.5
        if method == "bicubic":
            first = np.floor(centre).astype(np.int64)
            t = centre - first
            entries = [(np.clip(first + tap, 0, source - 1), _cubic(t - tap, -0.75)) for tap in range(-1, 3)]
        else:
            centre = np.maximum(centre, 0.0)
            first = np.floor(centre).astype(np.int64)
            t = centre - first
            entries = [(first, 1.0 - t), (first + (first < source - 1), t)]
    return entries


def _antialias_block(source: int, method: str, scale: float, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """torch's ``_upsample_{bilinear,bicubic}2d_aa``: Pillow's filter, stretched by ``scale`` when shrinking."""
    taps = 4 if method == "bicubic" else 2
    stretch = max(scale, 1.0)
    support = taps / 2 * stretch
    kernels = []
    for row in rows.tolist():
        centre = scale * (row + 0.5)
        start = max(int(centre - support + 0.5), 0)
        stop = min(int(centre + support + 0.5), source)
        x = (np.arange(start, stop) - centre + 0.5) / stretch
        kernel = _cubic(x, -0.5) if method == "bicubic" else np.maximum(0.0, 1.0 - np.abs(x))
        total = kernel.sum()
        kernels.append((start, kernel / total if total != 0 else kernel))
    width = max((len(kernel) for _, kernel in kernels), default=0)
    firsts = np.array([first for first, _ in kernels], dtype=np.int64)
    weights = np.zeros((len(kernels), width))
    for index, (_, kernel) in enumerate(kernels):
        weights[index, : len(kernel)] = kernel
    # a row's unused taps weigh 0 on its first source
    return [(np.where(weights[:, k] != 0, firsts + k, firsts), weights[:, k]) for k in range(width)]


def _resample_axis(values: np.ndarray, target: int, method: str, *, antialias: bool = False,
                   scale: float | None = None, index_float64: bool = False) -> np.ndarray:  # fmt: skip
    """``axis_weights(len(values), target, …) @ values``, tap by tap over blocks of target rows.

    Memory: the (target, …) result and one block's gathered sources; time: taps × result.
    """
    source = len(values)
    flat = values.reshape(source, -1)
    result = np.zeros((target, flat.shape[1]))
    step = max(1, _BLOCK_VALUES // max(1, flat.shape[1]))
    for start in range(0, target, step):
        stop = min(target, start + step)
        for columns, weights in _taps(source, target, method, antialias, scale, start, stop, index_float64):
            result[start:stop] += weights[:, None] * flat[columns]
    return result.reshape(target, *values.shape[1:])


def grid_layout(shape: tuple[int, ...], prefix_tokens: int = 0) -> str:
    """How a table holds its positions: ``"tokens"`` ((N, C) or (1, N, C)) or ``"channels"`` ((C, H, W)).

    >>> grid_layout((197, 768)), grid_layout((1, 197, 768)), grid_layout((768, 14, 14))
    ('tokens', 'tokens', 'channels')
    """
    if len(shape) == 2 or (len(shape) == 3 and shape[0] == 1):
        return "tokens"
    if len(shape) == 3 and prefix_tokens == 0:
        return "channels"
    raise _not_a_table(shape)


def _not_a_table(shape: tuple[int, ...]) -> ParameterError:
    what = f"of shape {' × '.join(map(str, shape))}" if shape else "(a single value, shape ())"
    return ParameterError(
        f"a {len(shape)}-D tensor {what} is not a position table",
        hint="give an (N, C), (1, N, C) or (C, H, W) tensor; {key} chooses it",
    )


def _check_table(table: np.ndarray) -> None:
    if not np.issubdtype(table.dtype, np.floating) and table.dtype.name != "bfloat16":
        raise ParameterError(
            f"an integer or boolean tensor ({table.dtype.name}) is not a position table",
            hint="give the float position embedding; {key} chooses it",
        )
    # a block of rows at a time: a whole-table mask would cost a byte per value
    flat = table.reshape(-1)
    count = sum(int(len(flat[start : start + _BLOCK_VALUES]) - np.isfinite(flat[start : start + _BLOCK_VALUES]).sum())
                for start in range(0, len(flat), _BLOCK_VALUES))  # fmt: skip
    if count:
        finite = np.isfinite(table)
        where = tuple(int(index) for index in np.argwhere(~finite)[0])
        raise ParameterError(
            f"the table holds {count:,} value{'s' if count > 1 else ''} that {'are' if count > 1 else 'is'} not "
            f"finite (first {float(table[where])} at index {list(where)}): resampling would spread them",
            hint="give a table of finite values; {key} chooses the tensor",
        )


def _split_tokens(table: np.ndarray, prefix_tokens: int, rows_name: str) -> tuple[np.ndarray, np.ndarray]:
    rows = table.reshape(table.shape[-2], table.shape[-1])
    if prefix_tokens < 0:
        raise ParameterError(f"{{{rows_name}}} must be >= 0, got {prefix_tokens}", hint=f"e.g. {{{rows_name}}} 1")
    if not prefix_tokens < len(rows):
        raise ParameterError(
            f"{{{rows_name}}} {prefix_tokens} leaves no positions of the table's {len(rows)} rows",
            hint=f"give {{{rows_name}}} between 0 and {len(rows) - 1}",
        )
    return rows[:prefix_tokens], rows[prefix_tokens:]


#: the most leading tokens (a class token and registers) a table plausibly holds before its grid: a
#: non-square table is checked for 1 to this many, and PCA refuses a grid that leaves more
MAX_PREFIX_TOKENS = 8


def source_grid(count: int, given: tuple[int, int] | None, prefix_tokens: int = 0) -> tuple[int, int]:
    """The grid a table's ``count`` positions (after ``prefix_tokens``) fill: ``given`` (checked), else the square one.

    >>> source_grid(196, None), source_grid(24, (4, 6))
    ((14, 14), (4, 6))
    """
    if given is not None:
        if given[0] * given[1] != count:
            raise ParameterError(
                f"the grid {given[0]}x{given[1]} holds {given[0] * given[1]} positions, the table has {count}",
                hint="give the grid it was trained on as {from_grid} HxW, and its class tokens as {prefix_tokens}",
            )
        return given
    side = math.isqrt(count)
    if side * side != count:
        rows = count + prefix_tokens
        # a class token and a few registers before a square grid: ViT's (1, 197, C) is 1 + 14 × 14
        fits = [(k, math.isqrt(rows - k)) for k in range(1, min(MAX_PREFIX_TOKENS, rows - 1) + 1)
                if k != prefix_tokens and math.isqrt(rows - k) ** 2 == rows - k]  # fmt: skip
        if fits:
            ways = " or ".join(f"{rows} = {k} + {n}×{n}" for k, n in fits)
            raise ParameterError(
                f"the table's {count} positions are not a square grid, but {ways}",
                hint=f"give {{prefix_tokens}} {' or '.join(str(k) for k, _ in fits)} for its leading class/register "
                "tokens, or its grid as {from_grid} HxW",
            )
        raise ParameterError(
            f"the table's {count} positions are not a square grid",
            hint="give its grid as {from_grid} HxW, or the leading class tokens as {prefix_tokens}",
        )
    return side, side


def check_target(shape: tuple[int, ...], itemsize: int) -> None:
    """Refuse, before any work, a target of no positions or one larger than the memory available."""
    from pecli.memory import check_fits_in_memory

    if any(size <= 0 for size in shape):
        raise ParameterError(f"the target {' × '.join(map(str, shape))} has no positions", hint="give sizes >= 1")
    # the float64 result and its rounded copy
    check_fits_in_memory(math.prod(shape) * (8 + itemsize), what="resampled table", hint="ask for a smaller target")


def check_stored_target(shape: tuple[int, ...], dtype: str, *, grid: tuple[int, int] | None = None,
                        prefix_tokens: int = 0, length: int | None = None) -> None:  # fmt: skip
    """Refuse, from a tensor's header alone (before its data is read), a target larger than the memory available.

    ``shape`` and ``dtype`` as the file declares them; ``grid`` or ``length`` as :func:`resample_grid` and
    :func:`resample_length` take them. A shape that is no table is left to those functions to refuse.

    >>> check_stored_target((197, 768), "float32", grid=(24, 24), prefix_tokens=1)
    >>> try:
    ...     check_stored_target((512, 768), "float32", length=10**15)
    ... except ParameterError as error:
    ...     print(error.message.split(",")[0])
    the resampled table would take 8.0 EiB
    """
    try:
        itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
    except TypeError:  # not a numeric dtype: refused as no table once read
        return
    tokens = len(shape) == 2 or (len(shape) == 3 and shape[0] == 1)
    if length is not None and length > 0 and tokens:
        check_target((length, shape[-1]), itemsize)
    elif grid is not None and tokens and min(grid) > 0:
        check_target((prefix_tokens + grid[0] * grid[1], shape[-1]), itemsize)
    elif grid is not None and len(shape) == 3 and prefix_tokens == 0 and min(grid) > 0:
        check_target((shape[0], *grid), itemsize)


def resample_grid(
    table: np.ndarray,
    grid: tuple[int, int],
    *,
    from_grid: tuple[int, int] | None = None,
    prefix_tokens: int = 0,
    method: str = "bicubic",
    antialias: bool = False,
    scale_offset: float | None = None,
    dtype: str | None = None,
) -> np.ndarray:
    """``table``'s positions resampled from their grid to ``grid`` (H, W); its prefix tokens kept, its layout too.

    Args:
        table: (N, C) or (1, N, C) with ``prefix_tokens`` leading rows, or a (C, H, W) grid.
        grid: the target (H, W).
        from_grid: the table's grid; None: the square one its positions fill.
        method: bicubic, bilinear, nearest or area.
        antialias: torch's ``antialias=True`` (bicubic and bilinear only).
        scale_offset: sample as ``interpolate(scale_factor=(H + offset) / h, …)`` does (DINOv2); a
            target equal to the table's grid keeps the table as it is, as DINOv2 does.
        dtype: the result's dtype name (default: the table's); computed in float64, rounded once.

    Example:
        >>> table = np.array([[9.0], [0.0], [1.0], [2.0], [3.0]])  # a class token and a 2 × 2 grid
        >>> resample_grid(table, (2, 4), prefix_tokens=1, method="bilinear")[:, 0].tolist()
        [9.0, 0.0, 0.25, 0.75, 1.0, 2.0, 2.25, 2.75, 3.0]
    """
    _check_table(table)
    if method not in GRID_METHODS:
        raise ParameterError(
            f"unknown {{method}} {literal_repr(method)} for a grid", hint=f"one of {', '.join(GRID_METHODS)}"
        )
    if antialias and method not in ("bicubic", "bilinear"):
        raise ParameterError(f"{{antialias}} applies to bicubic and bilinear, not {method}", hint="drop it")
    layout = grid_layout(table.shape, prefix_tokens)
    if min(grid) <= 0:
        raise ParameterError(
            f"the target grid {grid[0]}x{grid[1]} has no positions", hint="give {grid} HxW of sizes >= 1"
        )
    dtype = dtype or table.dtype.name
    if layout == "channels":
        prefix, positions = table[:0, 0, 0].reshape(0, table.shape[0]), None
        source = (table.shape[1], table.shape[2])
        if from_grid is not None:
            source_grid(source[0] * source[1], from_grid)
            if tuple(from_grid) != source:
                raise ParameterError(f"the table is a {source[0]}x{source[1]} grid, not {from_grid[0]}x{from_grid[1]}",
                                     hint="drop {from_grid}")  # fmt: skip
        values = np.asarray(table).transpose(1, 2, 0)  # (H, W, C): a view; each channel block widened in turn
    else:
        prefix, positions = _split_tokens(table, prefix_tokens, "prefix_tokens")
        source = source_grid(len(positions), from_grid, len(prefix))
        values = np.asarray(positions).reshape(*source, -1)
    channels = values.shape[-1]
    check_target((grid[0] * grid[1] + len(prefix), channels), np.dtype(table.dtype).itemsize)
    scales: list[float | None] = [None, None]
    # torch samples at 1 / scale_factor = source / (target + offset); DINOv2 returns a table at its own
    # grid as it is (npatch == N and w == h), where the offset would still move the samples
    if scale_offset is not None and tuple(grid) != tuple(source):
        scales = [source[0] / (grid[0] + scale_offset), source[1] / (grid[1] + scale_offset)]
    from pecli.dtypes import numpy_dtype, round_to

    if layout == "channels":
        out = np.empty((channels, *grid), dtype=numpy_dtype(dtype))
        target = out.transpose(1, 2, 0)  # (H, W, C) views of the result, filled a block of channels at a time
    else:
        out = np.empty((len(prefix) + grid[0] * grid[1], channels), dtype=numpy_dtype(dtype))
        out[: len(prefix)] = round_to(np.asarray(prefix, dtype=np.float64), dtype)
        target = out[len(prefix) :].reshape(*grid, channels)
    wide = np.dtype(table.dtype) == np.float64  # torch's nearest index in the tensor's opmath type
    # channels a block at a time, so the float64 working copies stay a few MiB whatever the table
    step = max(1, _BLOCK_VALUES // max(grid[0] * grid[1], source[0] * source[1]))
    for first in range(0, channels, step):
        block = np.asarray(values[..., first : first + step], dtype=np.float64)
        width = block.shape[-1]
        # two banded matrix products, a block of target rows at a time: (H, h) · (h, w·c), then (W, w) · (w, H·c)
        result = _resample_axis(block, grid[0], method, antialias=antialias, scale=scales[0], index_float64=wide)
        result = _resample_axis(result.transpose(1, 0, 2), grid[1], method, antialias=antialias, scale=scales[1],
                                index_float64=wide)  # fmt: skip
        target[..., first : first + width] = round_to(result.reshape(grid[1], grid[0], width).transpose(1, 0, 2), dtype)
    return out if layout == "channels" else out.reshape((1,) * (table.ndim - 2) + out.shape)


def resample_length(
    table: np.ndarray, length: int, *, method: str = "linear", keep_rows: int = 0, dtype: str | None = None
) -> np.ndarray:
    """``table``'s positions resampled to ``length`` rows, its first ``keep_rows`` kept as they are.

    ``linear`` and ``nearest`` are torch's ``interpolate`` (``align_corners=False``) along the
    positions; ``tile`` copies the rows after the kept ones again and again, as the Longformer
    conversion recipe does (RoBERTa's two reserved rows kept, its 512 repeated to 4096).
    ``length`` counts every row, the kept ones included.

    Example:
        >>> table = np.array([[7.0], [0.0], [1.0], [2.0]])
        >>> resample_length(table, 8, method="tile", keep_rows=1)[:, 0].tolist()
        [7.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0]
        >>> resample_length(table[1:], 6, method="linear")[:, 0].tolist()
        [0.0, 0.25, 0.75, 1.25, 1.75, 2.0]
    """
    _check_table(table)
    if table.ndim not in (2, 3) or (table.ndim == 3 and table.shape[0] != 1):
        raise _not_a_table(table.shape)
    if method not in LENGTH_METHODS:
        raise ParameterError(
            f"unknown {{method}} {literal_repr(method)} for a length", hint=f"one of {', '.join(LENGTH_METHODS)}"
        )
    kept, positions = _split_tokens(table, keep_rows, "keep_rows")
    if length <= keep_rows:
        raise ParameterError(f"{{length}} {length} leaves no positions after the {keep_rows} kept rows",
                             hint=f"give {{length}} above {keep_rows}")  # fmt: skip
    check_target((length, positions.shape[1]), np.dtype(table.dtype).itemsize)
    from pecli.dtypes import numpy_dtype, round_to

    dtype = dtype or table.dtype.name
    count, channels = length - keep_rows, positions.shape[1]
    out = np.empty((length, channels), dtype=numpy_dtype(dtype))
    out[:keep_rows] = round_to(np.asarray(kept, dtype=np.float64), dtype)
    wide = np.dtype(table.dtype) == np.float64  # torch's nearest index in the tensor's opmath type
    # channels a block at a time: the float64 working copies stay a few MiB, never the table's size in float64
    step = max(1, _BLOCK_VALUES // max(count, len(positions)))
    for first in range(0, channels, step):
        values = np.asarray(positions[:, first : first + step], dtype=np.float64)
        if method == "tile":
            result = values[np.arange(count) % len(values)]
        else:
            result = _resample_axis(values, count, "bilinear" if method == "linear" else method, index_float64=wide)
        out[keep_rows:, first : first + values.shape[1]] = round_to(result, dtype)
    return out.reshape((1,) * (table.ndim - 2) + out.shape)
