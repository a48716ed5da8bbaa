"""The picture of a trained position table: its positions in the plane of their first two principal components.

A 1-D table is drawn as a curve through its positions in order, each point coloured by its position
(a colourbar of position); a 2-D (ViT) grid as its points coloured by row, with the grid's rows and
columns drawn as lines, so a table that learned its grid shows a (bent) lattice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pecli.render.image import new_figure, save_figure, set_title

if TYPE_CHECKING:
    from pecli.analysis.pca import PositionPCA

__all__ = ["save_pca"]


def save_pca(
    result: PositionPCA, path: str, *, title: str, dpi: float = 100, figsize: tuple[float, float] = (7, 6)
) -> None:
    """Draw ``result``'s first two components into ``path`` (.png, .svg or .pdf).

    Example:
        >>> import os, tempfile
        >>> from pecli.analysis.pca import position_pca
        >>> path = os.path.join(tempfile.mkdtemp(), "pca.png")
        >>> table = np.random.default_rng(0).standard_normal((20, 8))
        >>> save_pca(position_pca(table), path, title="noise")
        >>> os.path.getsize(path) > 0
        True
    """
    figure, axes = new_figure(figsize, dpi)
    points = result.coordinates
    x, y = points[:, 0], points[:, 1]
    if result.grid is None:
        axes.plot(x, y, color="0.5", linewidth=0.4, alpha=0.35, zorder=1)  # the order, faint: it may cross itself often
        colour = np.arange(len(points))
        label = "position"
    else:
        height, width = result.grid
        lattice = points[:, :2].reshape(height, width, 2)
        for row in lattice:
            axes.plot(row[:, 0], row[:, 1], color="0.55", linewidth=0.5, zorder=1)
        for column in lattice.transpose(1, 0, 2):
            axes.plot(column[:, 0], column[:, 1], color="0.8", linewidth=0.5, zorder=1)
        colour = np.repeat(np.arange(height), width)
        label = "row"
    size = max(4.0, min(30.0, 4000.0 / len(points)))
    dots = axes.scatter(x, y, c=colour, cmap="viridis", s=size, zorder=2, linewidths=0)
    colourbar = figure.colorbar(dots, ax=axes)
    colourbar.set_label(label)
    ratio = result.explained_variance_ratio
    axes.set_xlabel(f"PC1 ({100 * ratio[0]:.1f}% of variance)")
    axes.set_ylabel(f"PC2 ({100 * ratio[1]:.1f}% of variance)")
    axes.set_aspect("equal", adjustable="datalim")
    axes.grid(True, linewidth=0.3, alpha=0.5)
    set_title(axes, title, figsize[0])
    save_figure(figure, path, dpi)
