"""Dimension curves of a table against position, as an image file (``pecli plot --lines``).

>>> auto_dims(512)
(0, 128, 256, 382, 510)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pecli.errors import ParameterError
from pecli.render.image import image_format, new_figure, save_figure, set_title

__all__ = ["auto_dims", "save_lines"]


def auto_dims(columns: int, first: int = 0, count: int = 5) -> tuple[int, ...]:
    """Up to ``count`` even (sin) dimensions spread evenly over the table's pairs.

    Dimensions 0, 1, 4, 8 of a 512-wide sinusoidal table all have periods near 2π. Frequencies
    fall geometrically with the pair index, so pairs spread evenly have periods spread evenly in
    log: from the fastest dimension to the slowest.

    >>> auto_dims(512), auto_dims(16, first=100)
    ((0, 128, 256, 382, 510), (100, 104, 108, 110, 114))
    """
    pairs = max(columns // 2, 1)
    picked = np.unique(np.round(np.linspace(0, pairs - 1, min(count, pairs))).astype(int)) * 2
    return tuple(int(first + dim) for dim in picked if dim < columns)


def save_lines(
    matrix: np.ndarray,
    path: str,
    *,
    dims: Sequence[int],
    title: str,
    x_label: str = "Position",
    y_label: str = "Value",
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 6),
    x_ticks_from: int = 0,
    dims_from: int = 0,
) -> None:
    """Draw columns ``dims`` of ``matrix`` as curves against position into ``path`` (``--lines``).

    ``dims`` are dimension indices of the original table; ``dims_from`` is the index of
    ``matrix``'s first column (after ``--cols``). NaN and ±inf leave gaps in the curves.

    Example:
        >>> import os, tempfile, pecli
        >>> path = os.path.join(tempfile.mkdtemp(), "lines.png")
        >>> save_lines(pecli.encode("sinusoidal", 100, 16), path, dims=[0, 1, 4, 8], title="sinusoidal")
        >>> os.path.getsize(path) > 0
        True
    """
    matrix = np.asarray(matrix)
    image_format(path)
    columns = matrix.shape[1]
    if not dims:
        raise ParameterError("{dims} needs at least one dimension", hint="e.g. {dims=0,1,4,8}")
    for dim in dims:
        if not dims_from <= dim < dims_from + columns:
            raise ParameterError(
                f"{{dims}} dimension {dim} is outside the table's dimensions {dims_from}…{dims_from + columns - 1}",
                hint="pick dimensions within the table's columns",
            )
    figure, axes = new_figure(figsize, dpi)
    positions = np.arange(matrix.shape[0]) + x_ticks_from
    for dim in dims:
        values = np.asarray(matrix[:, dim - dims_from], dtype=np.float64)
        axes.plot(positions, np.where(np.isfinite(values), values, np.nan), label=f"dim {dim}", linewidth=1)
    # beside the curves, never on top of them
    figure.subplots_adjust(right=min(figure.subplotpars.right, 1 - 1.3 / figsize[0]))
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small", frameon=False)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    set_title(axes, title, figsize[0])
    save_figure(figure, path, dpi)
