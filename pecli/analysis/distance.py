"""How positions relate: the metric between every pair of position vectors, and its offset profile.

The len × len matrix is produced in blocks of rows, so a file can receive it without it ever
being in memory. The offset profile — for each offset h = j − i the mean, min and max of the
metric over all pairs at that offset — is accumulated from band tiles of the matrix
(``rows × (rows + max_offset)``), so it needs O(len · d) memory for any length.

Every metric here is symmetric (metric(x_i, x_j) = metric(x_j, x_i)), so the profile at −h is
the profile at h and only h ≥ 0 is computed. Distances are computed in float64 through the Gram
matrix (``|x|² + |y|² − 2 x·y`` for euclidean, as BLAS does it fast); the diagonal is set exactly
(distance 0, cosine 1), and the cosine of a zero vector with anything is 0.

>>> import numpy as np
>>> count = np.repeat(np.arange(3.0)[:, None], 4, axis=1)  # PE[p, :] = p, d = 4
>>> distance_matrix(count, "euclidean").tolist()  # |i − j| · sqrt(4)
[[0.0, 2.0, 4.0], [2.0, 0.0, 2.0], [4.0, 2.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pecli.errors import ParameterError, did_you_mean
from pecli.text import literal_repr

__all__ = [
    "METRICS",
    "OffsetProfile",
    "block_mean_matrix",
    "check_fits",
    "check_metric",
    "cosine_note",
    "distance_blocks",
    "distance_matrix",
    "offset_profile",
]

METRICS: tuple[str, ...] = ("dot", "cosine", "euclidean")

#: float64 working memory of one tile of the matrix
_TILE_BYTES = 32 << 20


def check_metric(metric: str) -> str:
    """``metric`` if pecli knows it, else a :class:`ParameterError` naming the valid ones.

    >>> check_metric("cosine")
    'cosine'
    """
    if metric not in METRICS:
        raise ParameterError(f"unknown metric {literal_repr(metric)}", hint=did_you_mean(metric, METRICS))
    return metric


def cosine_note(vectors: np.ndarray, metric: str) -> str | None:
    """For ``cosine``, a note when some rows are all zeros (no direction: their cosine is set to 0), else None.

    Read a block of rows at a time, so the check holds no copy of the table.

    >>> print(cosine_note(np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]), "cosine"))  # doctest: +ELLIPSIS
    2 positions (first 0) are all zeros: a zero vector has no direction, so its cosine with every ...
    >>> cosine_note(np.array([[0.0], [1.0]]), "dot") is None, cosine_note(np.array([[1.0]]), "cosine") is None
    (True, True)
    """
    if metric != "cosine" or vectors.ndim != 2:
        return None
    zero, first = 0, None
    step = max(1, (_TILE_BYTES // 8) // max(1, vectors.shape[1]))
    for start in range(0, len(vectors), step):
        rows = ~np.any(vectors[start : start + step] != 0, axis=1)
        if first is None and rows.any():
            first = start + int(np.argmax(rows))
        zero += int(np.count_nonzero(rows))
    if not zero:
        return None
    which = f"position {first} is" if zero == 1 else f"{zero} positions (first {first}) are"
    return f"{which} all zeros: a zero vector has no direction, so its cosine with every position is shown as 0"


class _Positions:
    """A table with its squared row norms, ready for tiles of the metric: rows widened to float64 as a tile
    reads them, so the table is never held a second time in float64 (a 256 MiB float32 table took 512 MiB more)."""

    def __init__(self, table: np.ndarray, *, widen: bool = False) -> None:
        """``widen``: hold the table in float64 once, for callers whose every tile reads all its rows."""
        table = np.asarray(table)
        if table.ndim != 2:
            raise ParameterError(f"expected a 2-D table (positions × dims), got shape {table.shape}")
        self.table = np.ascontiguousarray(table, dtype=np.float64) if widen else table
        self.dims = table.shape[1]
        step = max(1, _TILE_BYTES // (8 * max(self.dims, 1)))
        self.squared_norms = np.zeros(len(table))
        for start in range(0, len(table), step):
            block = self.rows(start, start + step)
            self.squared_norms[start : start + len(block)] = np.einsum("ij,ij->i", block, block)

    def __len__(self) -> int:
        return len(self.table)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` as a C-contiguous float64 array (a view of a float64 table, else a copy)."""
        return np.ascontiguousarray(self.table[start:stop], dtype=np.float64)

    def tile(self, metric: str, rows: range, columns: range) -> np.ndarray:
        """metric(x_i, x_j) for i in ``rows`` and j in ``columns`` (both contiguous), float64."""
        left, right = self.rows(rows.start, rows.stop), self.rows(columns.start, columns.stop)
        tile = left @ right.T
        left_sq = self.squared_norms[rows.start : rows.stop, None]
        right_sq = self.squared_norms[None, columns.start : columns.stop]
        if metric == "cosine":
            norms = np.sqrt(left_sq) * np.sqrt(right_sq)
            np.divide(tile, norms, out=tile, where=norms > 0)
            tile[np.broadcast_to(norms == 0, tile.shape)] = 0.0
            np.clip(tile, -1.0, 1.0, out=tile)
        elif metric == "euclidean":
            tile *= -2.0
            tile += left_sq
            tile += right_sq
            np.sqrt(np.maximum(tile, 0.0, out=tile), out=tile)
        # the diagonal by definition, free of the Gram trick's rounding
        first = max(rows.start, columns.start)
        last = min(rows.stop, columns.stop)
        if first < last and metric != "dot":
            same = np.arange(first, last)
            exact = 0.0 if metric == "euclidean" else (self.squared_norms[same] > 0).astype(np.float64)
            tile[same - rows.start, same - columns.start] = exact
        return tile

    def offset_pairs(self, metric: str, rows: range, offset: int) -> np.ndarray:
        """metric(x_i, x_{i+offset}) for i in ``rows`` (i + offset within the table), float64, as :meth:`tile`."""
        left = self.rows(rows.start, rows.stop)
        right = self.rows(rows.start + offset, rows.stop + offset)
        values = np.einsum("ij,ij->i", left, right)
        if metric == "dot":
            return values
        if offset == 0:  # the diagonal by definition, as in tile
            return 0.0 * values if metric == "euclidean" else (self.squared_norms[rows.start : rows.stop] > 0) * 1.0
        left_sq = self.squared_norms[rows.start : rows.stop]
        right_sq = self.squared_norms[rows.start + offset : rows.stop + offset]
        if metric == "cosine":
            norms = np.sqrt(left_sq) * np.sqrt(right_sq)
            np.divide(values, norms, out=values, where=norms > 0)
            values[norms == 0] = 0.0
            return np.clip(values, -1.0, 1.0, out=values)
        values *= -2.0
        values += left_sq
        values += right_sq
        return np.sqrt(np.maximum(values, 0.0, out=values), out=values)


#: below this many offsets, offset_profile walks the band offset by offset (row tiles would be tiny)
_NARROW_BAND = 32


def check_fits(table: np.ndarray, metric: str, dtype: str) -> None:
    """Refuse, before any is written, a matrix of ``metric`` whose values ``dtype`` cannot hold (float32's largest
    is 3.4e38: the distance of rows near it, or the dot product of rows near 1e19, is not).

    The rows' norms bound every value (|x·y| ≤ |x||y|, |x − y| ≤ |x| + |y|), so a table within the bound costs
    one pass over its rows; past it, the matrix is computed once, tile by tile, for its largest value.

    >>> check_fits(np.array([[1e19, 0.0], [0.0, 1e19]]), "euclidean", "float32")  # 1.4e19 fits
    >>> try:
    ...     check_fits(np.array([[1e19, 0.0], [2e19, 0.0]]), "dot", "float32")
    ... except ParameterError as error:
    ...     print(error.message)
    the dot values reach 4e+38, past float32's largest (3.403e+38)
    """
    check_metric(metric)
    if metric == "cosine":  # within [-1, 1]
        return
    largest = float(np.finfo(dtype).max)
    with np.errstate(over="ignore", invalid="ignore"):
        positions = _Positions(table)
        if not len(positions):
            return
        top = float(positions.squared_norms.max())
        bound = top if metric == "dot" else 2.0 * np.sqrt(top)
        if np.isfinite(bound) and bound <= largest:
            return
        peak = 0.0
        step = max(1, _TILE_BYTES // (8 * len(positions)))
        for start in range(0, len(positions), step):
            tile = positions.tile(metric, range(start, min(start + step, len(positions))), range(len(positions)))
            peak = max(peak, float(np.max(np.abs(tile))))
            if not np.isfinite(peak):
                break
    if not np.isfinite(peak):
        raise ParameterError(
            f"the {metric} values of the table's rows exceed float64's largest (1.8e+308), which pecli computes in",
            hint="give a table of smaller values",
        )
    if peak > largest:
        raise ParameterError(
            f"the {metric} values reach {peak:.4g}, past {dtype}'s largest ({largest:.4g})",
            hint="{dtype=float64} holds them" if dtype != "float64" else "give a table of smaller values",
        )


def distance_blocks(
    table: np.ndarray, metric: str, *, dtype: str = "float32", block_bytes: int = _TILE_BYTES
) -> Iterator[np.ndarray]:
    """Yield the len × len matrix of ``metric`` between ``table``'s rows, as consecutive row blocks.

    Example:
        >>> import numpy as np
        >>> blocks = list(distance_blocks(np.eye(3), "dot", block_bytes=48))
        >>> [b.shape for b in blocks], np.vstack(blocks).tolist()[1]
        ([(2, 3), (1, 3)], [0.0, 1.0, 0.0])
    """
    check_metric(metric)
    positions = _Positions(table, widen=True)  # every block reads every row: widened once, not per block
    length = len(positions)
    step = max(1, block_bytes // (8 * max(length, 1)))
    for start in range(0, length, step):
        rows = range(start, min(start + step, length))
        yield positions.tile(metric, rows, range(length)).astype(dtype)


def distance_matrix(table: np.ndarray, metric: str, *, dtype: str = "float64") -> np.ndarray:
    """The whole len × len matrix of ``metric`` between ``table``'s rows (callers check the memory).

    Example:
        >>> import numpy as np
        >>> distance_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), "cosine").round(4).tolist()
        [[1.0, 0.7071, 0.0], [0.7071, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    length = np.asarray(table).shape[0]
    matrix = np.empty((length, length), dtype=dtype)
    start = 0
    for block in distance_blocks(table, metric, dtype=dtype):
        matrix[start : start + len(block)] = block
        start += len(block)
    return matrix


def block_mean_matrix(table: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray, metric: str) -> np.ndarray:
    """The len × len matrix of ``metric`` averaged over blocks, in O(len · d) without building it.

    Block ``(a, b)`` covers rows ``row_edges[a]:row_edges[a + 1]`` and columns
    ``col_edges[b]:col_edges[b + 1]``. The mean of x_i · x_j over a block is the dot product of the
    blocks' mean vectors, so ``dot`` and ``cosine`` (rows normalised first; a zero row stays zero,
    as its cosine is 0) are exact block means. A mean of distances cannot come from mean vectors
    (the mean of a square root is not the root of a mean), so ``euclidean`` gives the root of each
    block's mean *squared* distance, |x|² + |y|² − 2 x·y averaged: the RMS distance, which is at
    least the mean distance and equals it where a block's distances are all alike.

    Example:
        >>> import pecli
        >>> table = pecli.encode("sinusoidal", 6, 4, dtype="float64")
        >>> edges = np.array([0, 3, 6])
        >>> means = block_mean_matrix(table, edges, edges, "dot")
        >>> bool(np.allclose(means[0, 1], distance_matrix(table, "dot")[:3, 3:].mean()))
        True
    """
    check_metric(metric)
    table = np.asarray(table)
    if table.ndim != 2:
        raise ParameterError(f"expected a 2-D table (positions × dims), got shape {table.shape}")
    normalise = metric == "cosine"
    row_means, row_squares = _block_means(table, row_edges, normalise=normalise)
    col_means, col_squares = _block_means(table, col_edges, normalise=normalise)
    products = row_means @ col_means.T
    if metric == "dot":
        return products
    if metric == "cosine":
        return np.clip(products, -1.0, 1.0, out=products)
    squared = row_squares[:, None] + col_squares[None, :] - 2.0 * products
    return np.sqrt(np.maximum(squared, 0.0, out=squared), out=squared)


#: rows converted to float64 at a time by :func:`_block_means`
_CHUNK_ROWS = 4096


def _block_means(table: np.ndarray, edges: np.ndarray, *, normalise: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per block of rows: the mean row and the mean squared norm, in float64 (a few rows at a time)."""
    sums = np.zeros((len(edges) - 1, table.shape[1]))
    squares = np.zeros(len(edges) - 1)
    for block in range(len(edges) - 1):
        for start in range(int(edges[block]), int(edges[block + 1]), _CHUNK_ROWS):
            rows = np.asarray(table[start : min(start + _CHUNK_ROWS, int(edges[block + 1]))], dtype=np.float64)
            norms = np.einsum("ij,ij->i", rows, rows)
            if normalise:
                scale = np.sqrt(norms)
                rows = np.divide(rows, scale[:, None], out=np.zeros_like(rows), where=scale[:, None] > 0)
                norms = (norms > 0).astype(np.float64)
            sums[block] += rows.sum(axis=0)
            squares[block] += norms.sum()
    sizes = np.maximum(np.diff(edges), 1).astype(np.float64)
    return sums / sizes[:, None], squares / sizes


@dataclass(frozen=True)
class OffsetProfile:
    """The metric as a function of the offset h = j − i: mean, min and max over the pairs at h."""

    metric: str
    offsets: np.ndarray  #: 0, 1, …, max_offset
    mean: np.ndarray
    min: np.ndarray
    max: np.ndarray
    count: np.ndarray  #: pairs at each offset: len − h

    @property
    def spread(self) -> np.ndarray:
        """max − min at each offset: 0 where the metric depends on the offset only."""
        return self.max - self.min

    def to_json(self) -> dict:
        """A JSON-ready dict (lists of floats)."""
        return {
            "metric": self.metric,
            "offsets": self.offsets.tolist(),
            "mean": self.mean.tolist(),
            "min": self.min.tolist(),
            "max": self.max.tolist(),
            "count": self.count.tolist(),
        }


def offset_profile(
    table: np.ndarray, metric: str, *, max_offset: int | None = None, tile_bytes: int = _TILE_BYTES
) -> OffsetProfile:
    """Mean, min and max of ``metric``(x_i, x_{i+h}) over i, for h = 0 … ``max_offset`` (default len − 1).

    Only the band 0 <= j − i <= max_offset of the matrix is computed, one tile of rows at a time,
    so memory stays O(len · d + tile_bytes) and time O(len · max_offset · d).

    Example:
        >>> import pecli
        >>> profile = offset_profile(pecli.encode("sinusoidal", 64, 16, dtype="float64"), "dot", max_offset=3)
        >>> profile.mean.round(4).tolist(), float(profile.spread.max()) < 1e-12
        ([8.0, 7.4852, 6.3683, 5.5431], True)
    """
    check_metric(metric)
    positions = _Positions(table)
    length = len(positions)
    if length == 0:
        raise ParameterError("the table has no positions", hint="give a table with at least one row")
    if max_offset is None:
        max_offset = length - 1
    if max_offset < 0:
        raise ParameterError(f"{{max_offset}} must be >= 0, got {max_offset}", hint="e.g. {max_offset=1024}")
    max_offset = min(max_offset, length - 1)
    width = max_offset + 1
    # a tile of `step` rows spans step + max_offset columns, of which max_offset + 1 per row are used:
    # about max_offset rows per tile wastes at most half, within the memory budget and 1024 rows
    step = int(max(1, min(1024, max(32, width), tile_bytes // (8 * (width + 64)))))
    total = np.zeros(width)
    low = np.full(width, np.inf)
    high = np.full(width, -np.inf)
    if width < _NARROW_BAND:  # a narrow band: each offset's pairs over blocks of rows (few, large BLAS-free passes)
        block = max(1, tile_bytes // (8 * max(positions.dims, 1)))
        for offset in range(width):
            for start in range(0, length - offset, block):
                values = positions.offset_pairs(metric, range(start, min(start + block, length - offset)), offset)
                total[offset] += values.sum()
                low[offset] = min(low[offset], values.min())
                high[offset] = max(high[offset], values.max())
        offsets = np.arange(width)
        count = length - offsets
        return OffsetProfile(metric, offsets, total / count, low, high, count)
    for start in range(0, length, step):
        rows = range(start, min(start + step, length))
        columns = range(start, min(rows.stop + max_offset, length))
        # tile column c is position start + c; only the last tiles reach past the table's end (NaN there)
        tile = positions.tile(metric, rows, columns)
        complete = tile.shape[1] == len(rows) + max_offset
        if not complete:
            padded = np.full((len(rows), len(rows) + max_offset), np.nan)
            padded[:, : len(columns)] = tile
            tile = padded
        # band[r, h] = tile[r, r + h]: the pair (start + r, start + r + h), a view, no copy
        band = as_strided(tile, shape=(len(rows), width), strides=(tile.strides[0] + tile.strides[1], tile.strides[1]))
        if complete:
            total += band.sum(axis=0)
            np.minimum(low, band.min(axis=0), out=low)
            np.maximum(high, band.max(axis=0), out=high)
        else:
            total += np.nansum(band, axis=0)
            np.fmin(low, np.fmin.reduce(band, axis=0), out=low)
            np.fmax(high, np.fmax.reduce(band, axis=0), out=high)
    offsets = np.arange(width)
    count = length - offsets
    return OffsetProfile(metric, offsets, total / count, low, high, count)
