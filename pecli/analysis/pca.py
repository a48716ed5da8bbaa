"""What a trained position table learned: its positions in the plane of their first principal components.

A learned table's rows, centred, are decomposed in float64 (the eigenvectors of their smaller Gram
matrix, built a block at a time); the first components' coordinates show the table's order (the curve,
or helix, a trained table draws through its positions) and, for a ViT's 2-D table, its grid. The
explained variance ratio says how much of the table those components hold.

>>> import numpy as np
>>> angles = np.linspace(0, np.pi, 50)
>>> table = np.stack([np.cos(angles), np.sin(angles), 0.01 * np.cos(7 * angles)], axis=1)
>>> result = position_pca(table, components=2)
>>> result.coordinates.shape, round(float(result.explained_variance_ratio.sum()), 3)
((50, 2), 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.errors import ParameterError

__all__ = ["PositionPCA", "position_pca"]


@dataclass(frozen=True)
class PositionPCA:
    """The positions' coordinates on the first principal components, and the share of variance each holds.

    ``coordinates`` is (positions, components), float64, the prefix tokens left out; ``grid`` (H, W)
    when the positions are a 2-D grid (row-major), else None.
    """

    coordinates: np.ndarray
    explained_variance_ratio: np.ndarray
    grid: tuple[int, int] | None = None
    prefix_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON document: the variance ratios, rounded once, and each position's coordinates.

        >>> line = np.outer(np.arange(4.0), [1.0, 2.0])  # 4 positions on a line: one component holds all
        >>> position_pca(line, components=1).as_dict()["explained_variance_ratio"]
        [1.0]
        """
        return {
            "positions": int(self.coordinates.shape[0]),
            "prefix_tokens": self.prefix_tokens,
            "grid": None if self.grid is None else list(self.grid),
            "explained_variance_ratio": [round(float(v), 6) for v in self.explained_variance_ratio],
            "coordinates": np.round(self.coordinates, 6).tolist(),
        }


def position_pca(table: np.ndarray, *, components: int = 2, grid: tuple[int, int] | None = None) -> PositionPCA:
    """The first ``components`` principal components of ``table``'s positions (rows), in float64.

    Args:
        table: (N, C) or (1, N, C), a learned position table.
        components: how many components to keep (at most the rank the table allows).
        grid: (H, W) when the positions are a ViT's grid; the N − H·W leading rows are prefix
            (class, register) tokens and are left out (at most ``MAX_PREFIX_TOKENS`` of them: a grid
            that leaves more is refused, not read as thousands of class tokens).

    Each component's sign is chosen so that its coordinate grows with the position on the whole
    (a correlation ≥ 0), so the picture does not flip between runs or libraries.
    """
    values = np.asarray(table)
    if values.ndim == 3 and values.shape[0] == 1:
        values = values[0]
    if values.ndim != 2 or not np.issubdtype(values.dtype, np.floating):
        raise ParameterError(
            f"a position table is (N, C) or (1, N, C) of floats, not shape {values.shape} {values.dtype}",
            hint="choose the position tensor with {key}",
        )
    prefix = 0 if grid is None else _prefix_tokens(values.shape[0], grid)
    rows = values[prefix:]
    if rows.shape[0] < 2 or components < 1 or components > min(rows.shape):
        raise ParameterError(
            f"cannot take {components} components of {rows.shape[0]} positions × {rows.shape[1]} channels",
            hint="a table of at least 2 positions, and at most min(positions, channels) components",
        )
    power, coordinates = _principal_components(rows, components)
    total = power.sum()
    ratio = power[:components] / total if total > 0 else np.zeros(components)
    order = np.arange(rows.shape[0], dtype=np.float64) - (rows.shape[0] - 1) / 2
    signs = np.where(order @ coordinates < 0, -1.0, 1.0)
    return PositionPCA(coordinates * signs, ratio, grid, prefix)


def _prefix_tokens(count: int, grid: tuple[int, int]) -> int:
    """The leading (class, register) rows of a table of ``count`` rows before its ``grid``: 0 to
    :data:`~pecli.analysis.resample.MAX_PREFIX_TOKENS`; a grid that leaves more, or too few rows, is refused.

    >>> _prefix_tokens(197, (14, 14))
    1
    >>> _prefix_tokens(2048, (3, 3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: the grid 3x3 holds 9 positions, but the table has 2048 rows: its 2039 leading rows ...
    """
    from pecli.analysis.resample import MAX_PREFIX_TOKENS

    cells = grid[0] * grid[1]
    prefix = count - cells
    if 0 <= prefix <= MAX_PREFIX_TOKENS:
        return prefix
    squares = [(k, math.isqrt(count - k)) for k in range(min(MAX_PREFIX_TOKENS, count - 1) + 1)]
    fits = [f"{n}x{n}" for k, n in squares if n * n == count - k]
    example = f", e.g. {{grid}} {fits[0]}" if fits else ""
    problem = f"the grid {grid[0]}x{grid[1]} holds {cells} positions, but the table has {count} rows"
    if prefix > 0:
        problem += (
            f": its {prefix} leading rows would be class/register tokens, and a table has at most {MAX_PREFIX_TOKENS}"
        )
    raise ParameterError(
        problem,
        hint=f"give the grid it was trained on as {{grid}} HxW, H×W equal to the rows or up to {MAX_PREFIX_TOKENS} "
        f"fewer for class/register tokens{example}",
    )


#: float64 values in one block of the table (8 MiB): the table is read, centred and multiplied a block at a time
_BLOCK_VALUES = 1 << 20


def _principal_components(rows: np.ndarray, components: int) -> tuple[np.ndarray, np.ndarray]:
    """Every component's variance (the squared singular values, largest first) and the positions'
    coordinates on the first ``components``, from the smaller Gram matrix of the centred table.

    The table (N, C) is read in blocks of rows (or, when C > N, of columns) and never held in float64
    whole: the memory is the min(N, C)² Gram matrix, the N × components coordinates and one block —
    an SVD of the whole table took its float64 copy, its centred copy and an N × min(N, C) factor.

    >>> table = np.outer(np.arange(5.0), [3.0, 4.0])  # 5 positions on a line of slope (3, 4)
    >>> power, coordinates = _principal_components(table, 1)
    >>> np.round(power, 6).tolist(), np.round(np.abs(coordinates[:, 0]), 6).tolist()
    ([250.0, 0.0], [10.0, 5.0, 0.0, 5.0, 10.0])
    """
    from pecli.memory import check_fits_in_memory

    count, channels = rows.shape
    small = min(count, channels)
    check_fits_in_memory(8 * (small * small + count * components), what="principal components' Gram matrix")
    mean = np.zeros(channels)
    step = max(1, _BLOCK_VALUES // max(channels, 1))
    for start in range(0, count, step):
        mean += rows[start : start + step].sum(axis=0, dtype=np.float64)
    mean /= count
    if channels <= count:
        gram = np.zeros((channels, channels))
        for start in range(0, count, step):
            block = rows[start : start + step].astype(np.float64) - mean
            gram += block.T @ block
        values, vectors = np.linalg.eigh(gram)
        power = np.clip(values[::-1], 0.0, None)
        axes = vectors[:, ::-1][:, :components]
        coordinates = np.empty((count, components))
        for start in range(0, count, step):
            coordinates[start : start + step] = (rows[start : start + step].astype(np.float64) - mean) @ axes
        return power, coordinates
    gram = np.zeros((count, count))
    width = max(1, _BLOCK_VALUES // max(count, 1))
    for start in range(0, channels, width):
        block = rows[:, start : start + width].astype(np.float64) - mean[start : start + width]
        gram += block @ block.T
    values, vectors = np.linalg.eigh(gram)
    power = np.clip(values[::-1], 0.0, None)
    coordinates = vectors[:, ::-1][:, :components] * np.sqrt(power[:components])
    return power, coordinates
