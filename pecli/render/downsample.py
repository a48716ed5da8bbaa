"""Block averaging: shrink a table to a grid of cells, each the mean of the values it covers.

Taking every n-th column would alias: a sinusoid whose period is shorter than the stride shows
up as a slow, false wave. The mean of a block instead tends to 0 for dimensions that oscillate
faster than a cell, which is what the eye should see.
"""

from __future__ import annotations

import itertools
import warnings
from typing import NamedTuple

import numpy as np

from pecli.schemes.catalog import find_scheme

__all__ = [
    "AxisStructure",
    "Downsampled",
    "block_average",
    "block_column_extremes",
    "block_edges",
    "block_extreme",
    "column_extremes",
    "column_structure",
    "lanczos_weights",
    "lowpass_average",
    "resample_columns",
    "row_structure",
    "signed_extreme",
]

#: Lanczos lobes each side of a kernel (PIL's LANCZOS and matplotlib's 'lanczos' use 3)
LANCZOS_LOBES = 3
#: the low-pass cut-off, in output pixels per period: a wave of at least 4 pixels keeps ~90% of its
#: amplitude, one of 3 half, one of 2.2 or less (near the pixel limit, where it would alias into
#: arcs and checkerboards) fades to its mean. PIL's own cut-off, 2 pixels, lets a 2.5-pixel wave
#: through at 80%: a moiré the eye takes for structure.
CUTOFF_PIXELS = 3.0
#: sub-rows per output pixel that a long table is block-averaged to before the low-pass filter
_OVERSAMPLE = 8


class Downsampled(NamedTuple):
    """A block-averaged table and, per axis, the ``n + 1`` edges of its blocks in input indices."""

    values: np.ndarray
    row_edges: np.ndarray
    col_edges: np.ndarray

    @property
    def shrunk(self) -> bool:
        """Whether any cell averages more than one input value."""
        return bool(np.any(np.diff(self.row_edges) > 1) or np.any(np.diff(self.col_edges) > 1))


class AxisStructure(NamedTuple):
    """What a block along one axis must not split: ``period`` indices that belong together (an
    interleaved sin/cos pair: 2), and ``segments`` equal parts (split sin | cos halves: 2)."""

    period: int = 1
    segments: int = 1


#: a table whose columns may be grouped anyhow
NO_STRUCTURE = AxisStructure()


def column_structure(matrix: np.ndarray, metadata: dict[str, str] | None = None) -> AxisStructure:
    """The column structure of a positional table: from its metadata, else from its values.

    pecli's metadata names the layout (interleaved pairs, split halves, sincos2d's four quarters,
    the timestep table's halves). Without it, a first row of 0, 1, 0, 1… or 0…0, 1…1 (sin and cos
    at position 0) tells pairs or halves, and columns that pair up show in the values: column j
    differs much less from column j + 2 than from j + 1 (sin_k, cos_k, sin_k+1…) for most j.

    >>> import pecli
    >>> column_structure(pecli.encode("sinusoidal", 256, 512))
    AxisStructure(period=2, segments=1)
    >>> column_structure(np.zeros((4, 8)), {"scheme": "sinusoidal", "layout": "split"})
    AxisStructure(period=1, segments=2)
    >>> column_structure(np.random.default_rng(0).normal(size=(64, 16)))
    AxisStructure(period=1, segments=1)
    """
    metadata = metadata or {}
    layout, described = metadata.get("layout"), find_scheme(metadata.get("scheme"))
    segments = described.column_segments if described else 1  # blocks the scheme always has
    if layout == "interleaved":
        return AxisStructure(period=2)
    if segments > 2:
        return AxisStructure(segments=segments)
    if layout in ("split", "half") or segments == 2:
        return AxisStructure(segments=2)
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[1] < 4 or matrix.shape[1] % 2:
        return NO_STRUCTURE
    first = np.asarray(matrix[0], dtype=np.float64)
    half = len(first) // 2
    if np.allclose(first[0::2], 0) and np.allclose(first[1::2], 1):
        return AxisStructure(period=2)
    if np.allclose(first[:half], first[0]) and np.allclose(first[half:], 1 - first[0]) and first[0] in (0, 1):
        return AxisStructure(segments=2)
    return AxisStructure(period=2) if _alternates(matrix) else NO_STRUCTURE


def row_structure(matrix: np.ndarray) -> AxisStructure:
    """Pairs of rows that belong together: rows that alternate (j is closer to j + 2 than to j + 1).

    >>> row_structure(np.tile([[1.0], [-1.0]], (8, 4))), row_structure(np.outer(np.arange(16.0), np.ones(4)))
    (AxisStructure(period=2, segments=1), AxisStructure(period=1, segments=1))
    """
    matrix = np.asarray(matrix)
    return AxisStructure(period=2) if matrix.ndim == 2 and _alternates(matrix, axis=0) else NO_STRUCTURE


#: how many positions j :func:`_alternates` compares with j + 1 and j + 2 at most
_TRIPLES = 256


def _alternates(matrix: np.ndarray, axis: int = 1) -> bool:
    """Whether, for most columns j (rows with ``axis=0``), column j + 2 is much closer to j than column j + 1 is.

    The other axis is sampled (256 lines) in the table's own layout: a transposed copy of a
    2048 × 512 table took 15 ms of a terminal plot's start. Along ``axis``, at most
    :data:`_TRIPLES` evenly spaced j are compared (each with its j + 1 and j + 2): all 2046 of a
    2048-row table took 14 ms, for a majority that a few hundred samples decide as well.

    >>> table = np.tile([[0.0], [5.0], [0.1], [5.1]], (4096, 8))  # rows j and j + 2 alike
    >>> _alternates(table, axis=0), _alternates(np.cumsum(table, axis=0), axis=0)
    (True, False)
    """
    size = matrix.shape[axis]
    if size < 4 or size % 2:
        return False
    step = max(1, matrix.shape[1 - axis] // 256)
    window = alternation_window(size)
    picked = matrix[window, ::step] if axis == 0 else matrix[::step, window].T  # lines along axis 0
    return sample_alternates(np.asarray(picked, dtype=np.float64))


def alternation_window(size: int) -> np.ndarray:
    """The lines :func:`_alternates` reads along an axis of ``size``: at most :data:`_TRIPLES` evenly spaced j,
    then their j + 1, then their j + 2 (``size`` ≥ 3).

    >>> alternation_window(6).tolist()
    [0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5]
    """
    count = min(_TRIPLES, size - 2)
    lines = (np.arange(count, dtype=np.int64) * (size - 2)) // count
    return np.concatenate([lines, lines + 1, lines + 2])


def sample_alternates(picked: np.ndarray) -> bool:
    """Whether the lines of ``picked`` (float64, those :func:`alternation_window` names, in its order) alternate:
    for most j, line j + 2 is much closer to line j than line j + 1 is.

    >>> rows = np.tile([[0.0], [5.0]], (4, 3))  # 8 rows: j and j + 2 alike
    >>> sample_alternates(rows[alternation_window(8)]), sample_alternates(np.cumsum(rows, 0)[alternation_window(8)])
    (True, False)
    """
    sample = picked.reshape(3, len(picked) // 3, -1)
    mean = np.mean if np.isfinite(sample).all() else np.nanmean  # equal sums when nothing is NaN
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        next_line = mean(np.abs(sample[1] - sample[0]), axis=1)
        line_after = mean(np.abs(sample[2] - sample[0]), axis=1)
        return bool(np.mean(line_after < 0.5 * next_line) > 0.5)


def block_edges(
    size: int,
    blocks: int,
    *,
    uniform: bool = False,
    structure: AxisStructure = NO_STRUCTURE,
    even: bool = False,
) -> np.ndarray:
    """Integer edges splitting ``range(size)`` into at most ``blocks`` consecutive blocks.

    By default exactly ``min(blocks, size)`` near-equal blocks (sizes differ by at most one:
    what a terminal needs to fill its width). With ``uniform``, blocks of one size (the last of
    each segment may be shorter): near 1:1 ratios then never mix single columns with pairs, which
    in an interleaved sin/cos table shows as false stripes. A uniform block is a multiple of
    ``structure.period`` and never straddles one of its ``segments`` (it divides a segment where
    a size up to twice as large does). With ``even`` (a terminal, whose cells are all one size) the
    block size is, among sizes up to a quarter larger, the one whose last block falls least short
    of the others; that shorter last block is still drawn (the edges always end at ``size``: no
    value is left out).

    >>> block_edges(10, 4).tolist(), block_edges(10, 4, uniform=True).tolist()
    ([0, 2, 5, 7, 10], [0, 3, 6, 9, 10])
    >>> block_edges(3, 8).tolist()  # never more blocks than values
    [0, 1, 2, 3]
    >>> block_edges(12, 4, uniform=True, structure=AxisStructure(period=2)).tolist()  # pairs stay whole
    [0, 4, 8, 12]
    >>> block_edges(20, 4, uniform=True, structure=AxisStructure(segments=2)).tolist()  # halves stay apart
    [0, 5, 10, 15, 20]
    >>> block_edges(32, 3, uniform=True, even=True).tolist()  # 11, 11, 10 (not 14, 14 and 4 more)
    [0, 11, 22, 32]
    """
    blocks = max(1, min(int(blocks), int(size)))
    if not uniform:
        return (np.arange(blocks + 1, dtype=np.int64) * size) // blocks
    step = -(-int(size) // blocks)
    segments = structure.segments if structure.segments > 1 and size % structure.segments == 0 else 1
    segment = size // segments
    period = structure.period if structure.period > 1 and segment % structure.period == 0 else 1
    if step > 1:
        candidates = [s for s in range(step, 2 * step + 1) if s % period == 0]
        dividing = [s for s in candidates if segment % s == 0] if segments > 1 else []
        if dividing:
            step = dividing[0]
        elif even:  # the last block nearest the others' size (a divisor: all one size)
            step = min(candidates[: max(1, len(candidates) // 4 + 1)], key=lambda s: (-segment % s, s))
        else:
            step = candidates[0]
    step = min(step, segment)
    starts = np.arange(0, size, dtype=np.int64).reshape(segments, segment)[:, ::step].reshape(-1)
    return np.append(starts, np.int64(size))


def lanczos_weights(
    centres: np.ndarray, targets: np.ndarray, spacing: float, *, cutoff: float = CUTOFF_PIXELS / 2
) -> np.ndarray:
    """Weights (``len(targets)`` × ``len(centres)``, each row summing to 1) of a Lanczos low-pass
    filter sampled at ``centres`` for outputs at ``targets``, ``spacing`` input units apart.

    The kernel is ``sinc(x) · sinc(x / 3)`` for ``|x| < 3``, with ``x`` the distance in units of
    ``cutoff × spacing``: ``cutoff`` 1 is PIL's ``Image.resize(…, LANCZOS)`` (cut-off at 2 output
    pixels a period); the default 1.5 cuts off at :data:`CUTOFF_PIXELS`. Rows are normalised, so
    near the ends (fewer samples) a constant stays constant.

    >>> w = lanczos_weights(np.arange(8.0) + 0.5, np.array([2.0, 6.0]), 4.0, cutoff=1.0)
    >>> w.shape, np.allclose(w.sum(axis=1), 1.0)
    ((2, 8), True)
    """
    width = cutoff * spacing
    x = (np.asarray(centres, dtype=np.float64)[None, :] - np.asarray(targets, dtype=np.float64)[:, None]) / width
    weights = np.sinc(x) * np.sinc(x / LANCZOS_LOBES) * (np.abs(x) < LANCZOS_LOBES)
    return weights / weights.sum(axis=1, keepdims=True)


def lowpass_average(
    matrix: np.ndarray,
    max_rows: int,
    max_cols: int,
    *,
    structure: AxisStructure = NO_STRUCTURE,
    row_structure: AxisStructure = NO_STRUCTURE,
) -> Downsampled:
    """Shrink ``matrix`` to at most ``max_rows`` × ``max_cols`` cells, low-pass filtering the rows.

    Block means alone are a box filter: a wave whose period is 2–6 output pixels passes at
    60–90% and, sampled once a pixel, beats into arcs and checkerboards that are not in the data.
    Here the rows (positions, where the table is a sampled signal) are block-averaged to
    :data:`_OVERSAMPLE` sub-rows a pixel, then filtered by a Lanczos kernel cutting off at
    :data:`CUTOFF_PIXELS` output pixels a period (:func:`lanczos_weights`) and sampled at each
    pixel's centre, as an image library resamples (a wave it cannot show fades to its mean).
    Columns (dimensions, each its own signal) are block-averaged as :func:`block_average` does,
    respecting ``structure``. A table with no more rows than ``max_rows`` is block-averaged only.
    Non-finite values are left out (a cell with less than half its kernel's weight on finite values is NaN).

    >>> rows = np.arange(8192.0)[:, None]
    >>> table = np.hstack([np.sin(2 * np.pi * rows / 36), np.sin(2 * np.pi * rows / 2048)])  # 2 and 114 pixels a period
    >>> cells = lowpass_average(table, 456, 2)
    >>> cells.values.shape, bool(cells.values[:, 0].std() < 0.05), bool(cells.values[:, 1].std() > 0.69)
    ((456, 2), True, True)
    """
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"lowpass_average takes a 2-D table, got shape {matrix.shape}")
    rows = matrix.shape[0]
    max_rows = max(1, int(max_rows))
    if rows <= max_rows:
        return block_average(matrix, max_rows, max_cols, uniform=True, structure=structure, row_structure=row_structure)
    fine = block_average(
        matrix, max_rows * _OVERSAMPLE, max_cols, uniform=True, structure=structure, row_structure=row_structure
    )
    row_edges = block_edges(rows, max_rows)
    spacing = rows / (len(row_edges) - 1)
    targets = (row_edges[:-1] + row_edges[1:]) / 2.0
    centres = (fine.row_edges[:-1] + fine.row_edges[1:]) / 2.0
    # each sub-row weighs as many input rows as it averages (a short last block, less)
    weights = lanczos_weights(centres, targets, spacing) * np.diff(fine.row_edges)[None, :]
    finite = np.isfinite(fine.values)
    values = np.where(finite, fine.values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if finite.all():
            filtered = (weights @ values) / weights.sum(axis=1, keepdims=True)
        else:
            covered = weights @ finite.astype(np.float64)
            filtered = (weights @ values) / covered
            # less than half the kernel's weight on finite values: too little to say (NaN)
            filtered = np.where(covered > 0.5 * weights.sum(axis=1, keepdims=True), filtered, np.nan)
    return Downsampled(filtered, row_edges, fine.col_edges)


def _sum_columns(values: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    if len(col_edges) - 1 == values.shape[-1]:
        return values
    return np.add.reduceat(values, col_edges[:-1], axis=-1)


def block_average(
    matrix: np.ndarray,
    max_rows: int,
    max_cols: int,
    *,
    uniform: bool = False,
    structure: AxisStructure = NO_STRUCTURE,
    row_structure: AxisStructure = NO_STRUCTURE,
    even: bool = False,
) -> Downsampled:
    """Average ``matrix`` (2-D) over blocks so that it has at most ``max_rows`` × ``max_cols`` cells.

    Blocks come from :func:`block_edges` (``uniform``: all of one size, else near-equal; column
    blocks respect ``structure``, row blocks ``row_structure``; ``even``: a terminal's blocks, the
    last one as near the others' size as a size up to a quarter larger makes it).
    Non-finite values (NaN, ±inf) are left out of the means; a block with no finite value is NaN.
    A table already small enough comes back unchanged (as float64). Sums run in float64, one
    block of rows at a time, so a float32 table is never copied whole.

    >>> checkerboard = np.tile([1.0, -1.0], (4, 8))  # columns alternate +1, -1
    >>> block_average(checkerboard, 2, 4).values.tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    >>> block_average(np.array([[1.0, np.nan, 3.0, 5.0]]), 1, 2).values.tolist()
    [[1.0, 4.0]]
    """
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"block_average takes a 2-D table, got shape {matrix.shape}")
    rows, cols = matrix.shape
    row_edges = block_edges(rows, max_rows, uniform=uniform, structure=row_structure, even=even)
    col_edges = block_edges(cols, max_cols, uniform=uniform, structure=structure, even=even)
    col_sizes = np.diff(col_edges).astype(np.float64)
    values = np.empty((len(row_edges) - 1, len(col_edges) - 1))
    row_sums = np.empty(cols)
    for block, (first, last) in enumerate(itertools.pairwise(row_edges)):
        rows_block = matrix[first:last]
        # summing a contiguous block along axis 0 is numpy's fast path (reduceat on axis 0 is ~20x slower)
        np.sum(rows_block, axis=0, dtype=np.float64, out=row_sums)
        if np.isfinite(row_sums).all():  # a finite float64 sum means every value in the block is finite
            values[block] = _sum_columns(row_sums, col_edges) / (col_sizes * (last - first))
            continue
        finite = np.isfinite(rows_block)
        sums = _sum_columns(np.where(finite, rows_block, 0).sum(axis=0, dtype=np.float64), col_edges)
        counts = _sum_columns(finite.sum(axis=0, dtype=np.float64), col_edges)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[block] = np.where(counts > 0, sums / counts, np.nan)
    return Downsampled(values, row_edges, col_edges)


def signed_extreme(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Per cell, the one of ``high`` (a block's largest value) and ``low`` (its smallest) of the larger
    magnitude, sign kept (``high`` on a tie); NaN where both are NaN (a block with no finite value).

    >>> signed_extreme(np.array([0.5, 0.1, np.nan]), np.array([-0.2, -0.3, np.nan])).tolist()
    [0.5, -0.3, nan]
    """
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(high) >= np.abs(low), high, low)


def block_extreme(matrix: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray) -> Downsampled:
    """Per block of ``matrix`` (2-D, blocks given by their edges, as :func:`block_average` returns them),
    the signed value of the entry of the largest magnitude: a difference of one cell in a block of
    thousands stays at its full size, where the block's mean divides it by the block's size.

    Non-finite values (NaN, ±inf) are left out, as in :func:`block_average`; a block with no finite
    value is NaN.

    >>> table = np.zeros((4, 8))
    >>> table[1, 5] = -0.5
    >>> block_extreme(table, np.array([0, 2, 4]), np.array([0, 4, 8])).values.tolist()
    [[0.0, -0.5], [0.0, 0.0]]
    """
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"block_extreme takes a 2-D table, got shape {matrix.shape}")
    row_edges, col_edges = np.asarray(row_edges), np.asarray(col_edges)
    values = np.empty((len(row_edges) - 1, len(col_edges) - 1))
    for block, (first, last) in enumerate(itertools.pairwise(row_edges)):
        high, low = column_extremes(matrix[int(first) : int(last)])
        values[block] = signed_extreme(*block_column_extremes(high, low, col_edges))
    return Downsampled(values, row_edges, col_edges)


def column_extremes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest and smallest finite value of each column of ``rows`` (float64; NaN for a column with none)."""
    rows = np.asarray(rows, dtype=np.float64)
    if not np.isfinite(rows).all():
        rows = np.where(np.isfinite(rows), rows, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # fmax/fmin of NaN with NaN is NaN, quietly
        return np.fmax.reduce(rows, axis=0), np.fmin.reduce(rows, axis=0)


def block_column_extremes(high: np.ndarray, low: np.ndarray, col_edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns' largest and smallest values (:func:`column_extremes`) reduced over the column blocks ``col_edges``."""
    if len(col_edges) - 1 == high.shape[-1]:
        return high, low
    starts = np.asarray(col_edges[:-1], dtype=np.intp)
    return np.fmax.reduceat(high, starts, axis=-1), np.fmin.reduceat(low, starts, axis=-1)


def _area_weights(size: int, cells: int) -> np.ndarray:
    """``(cells, size)``: the share of each of ``size`` unit intervals in each of ``cells`` equal cells.

    >>> _area_weights(3, 2).round(3).tolist()
    [[0.667, 0.333, 0.0], [0.0, 0.333, 0.667]]
    """
    edges = np.arange(cells + 1, dtype=np.float64) * size / cells
    starts, stops = np.arange(size, dtype=np.float64), np.arange(1, size + 1, dtype=np.float64)
    overlap = np.minimum(stops, edges[1:, None]) - np.maximum(starts, edges[:-1, None])
    return np.clip(overlap, 0.0, None) / (size / cells)


def resample_columns(values: np.ndarray, cells: int, structure: AxisStructure = NO_STRUCTURE) -> Downsampled | None:
    """``values``' columns averaged by area into as many of ``cells`` columns as its structure allows.

    For a table a little wider than the room (64 columns in 55 cells), where whole blocks of one
    size would halve it: each cell is the area-weighted mean of the columns (or parts of columns)
    it covers. An interleaved table's sin and cos columns are resampled apart and stay interleaved
    (a cell never mixes sin with cos), and split halves stay apart. Rows are left as they are; the
    column edges are fractional input indices. None where the structure leaves no room or the
    columns already fit.

    >>> pairs = np.tile([1.0, -1.0], (2, 4))  # sin, cos, sin, cos…: 8 columns into 6 cells
    >>> shrunk = resample_columns(pairs, 6, AxisStructure(period=2))
    >>> shrunk.values[0].tolist(), shrunk.col_edges.round(2).tolist()  # no cell mixes +1 with -1
    ([1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [0.0, 1.33, 2.67, 4.0, 5.33, 6.67, 8.0])
    >>> resample_columns(np.arange(4.0)[None], 3).values.round(3).tolist()  # cell 1 is half of 1, half of 2
    [[0.25, 1.5, 2.75]]
    """
    values = np.asarray(values, dtype=np.float64)
    rows, cols = values.shape
    segments = structure.segments if structure.segments > 1 and cols % structure.segments == 0 else 1
    period = structure.period if structure.period > 1 and (cols // segments) % structure.period == 0 else 1
    units = cols // (segments * period)  # columns of one phase in one segment
    per_unit = cells // (segments * period)
    if cols <= cells or per_unit < 1:
        return None
    weights = _area_weights(units, per_unit)
    finite = np.isfinite(values)
    clean = np.where(finite, values, 0.0)
    parts, edges = [], []
    for segment in range(segments):
        block = slice(segment * units * period, (segment + 1) * units * period)
        phases = []
        for phase in range(period):
            columns = clean[:, block][:, phase::period]
            counts = finite[:, block][:, phase::period] @ weights.T
            with np.errstate(invalid="ignore", divide="ignore"):
                phases.append(np.where(counts > 0, (columns @ weights.T) / counts, np.nan))
        parts.append(np.stack(phases, axis=-1).reshape(rows, per_unit * period))
        start, step = segment * units * period, units * period / per_unit
        edges += [start + step * (j + q / period) for j in range(per_unit) for q in range(period)]
    edges.append(float(cols))
    return Downsampled(np.concatenate(parts, axis=1), np.arange(rows + 1, dtype=np.int64), np.asarray(edges))
