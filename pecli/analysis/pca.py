"""What a trained position table learned: its positions in the plane of their first principal components.

A learned table's rows, centred, are decomposed by SVD in float64; the first components' coordinates
show the table's order (the curve, or helix, a trained table draws through its positions) and, for
a ViT's 2-D table, its grid. The explained variance ratio says how much of the table those
components hold.

>>> import numpy as np
>>> angles = np.linspace(0, np.pi, 50)
>>> table = np.stack([np.cos(angles), np.sin(angles), 0.01 * np.cos(7 * angles)], axis=1)
>>> result = position_pca(table, components=2)
>>> result.coordinates.shape, round(float(result.explained_variance_ratio.sum()), 3)
((50, 2), 1.0)
"""

from __future__ import annotations

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
    """The first ``components`` principal components of ``table``'s positions (rows), by SVD in float64.

    Args:
        table: (N, C) or (1, N, C), a learned position table.
        components: how many components to keep (at most the rank the table allows).
        grid: (H, W) when the positions are a ViT's grid; the N − H·W leading rows are prefix
            (class, register) tokens and are left out.

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
    prefix = 0
    if grid is not None:
        prefix = values.shape[0] - grid[0] * grid[1]
        if prefix < 0:
            raise ParameterError(
                f"the grid {grid[0]}x{grid[1]} holds {grid[0] * grid[1]} positions, the table has {values.shape[0]}",
                hint="give the grid it was trained on as {grid} HxW",
            )
    rows = values[prefix:].astype(np.float64)
    if rows.shape[0] < 2 or components < 1 or components > min(rows.shape):
        raise ParameterError(
            f"cannot take {components} components of {rows.shape[0]} positions × {rows.shape[1]} channels",
            hint="a table of at least 2 positions, and at most min(positions, channels) components",
        )
    centred = rows - rows.mean(axis=0)
    left, singular, _ = np.linalg.svd(centred, full_matrices=False)
    power = singular**2
    total = power.sum()
    ratio = power[:components] / total if total > 0 else np.zeros(components)
    coordinates = left[:, :components] * singular[:components]
    order = np.arange(rows.shape[0], dtype=np.float64) - (rows.shape[0] - 1) / 2
    signs = np.where(order @ coordinates < 0, -1.0, 1.0)
    return PositionPCA(coordinates * signs, ratio, grid, prefix)
