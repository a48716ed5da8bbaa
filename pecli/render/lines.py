"""Dimension curves of a table against position, as an image file (``pecli plot --lines``).

>>> auto_dims(512)
(0, 128, 256, 382, 510)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pecli.errors import Message, ParameterError
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
) -> Message | None:
    """Draw columns ``dims`` of ``matrix`` as curves against position into ``path`` (``--lines``).

    ``dims`` are dimension indices of the original table; ``dims_from`` is the index of
    ``matrix``'s first column (after ``--cols``). NaN and ±inf leave gaps in the curves. The
    slowest curves are drawn on top.

    Returns:
        A note naming the dimensions that repeat faster than the image's pixels (they draw as a
        solid band), with the ``rows`` that would show their shape (a :class:`~pecli.errors.Message`:
        the CLI spells ``rows`` as its flag); else None.

    Example:
        >>> import os, tempfile, pecli
        >>> path = os.path.join(tempfile.mkdtemp(), "lines.png")
        >>> save_lines(pecli.encode("sinusoidal", 100, 16), path, dims=[0, 1, 4, 8], title="sinusoidal")
        >>> print(save_lines(pecli.encode("sinusoidal", 2048, 16), path, dims=[0, 8], title="sinusoidal"))
        dim 0 repeats faster than the image's pixels and draws as a solid band: rows=0:200 shows the shape
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
    # beside the curves, never on top of them
    figure.subplots_adjust(right=min(figure.subplotpars.right, 1 - 1.0 / figsize[0]))
    pixels = axes.get_position().width * figsize[0] * dpi
    positions = np.arange(matrix.shape[0]) + x_ticks_from
    curves = {dim: np.asarray(matrix[:, dim - dims_from], dtype=np.float64) for dim in dims}
    periods = {dim: _mean_period(values) for dim, values in curves.items()}
    # the slowest curves on top: a fast one drawn last would paint over every other
    order = sorted(dims, key=lambda dim: periods[dim])
    for dim, values in curves.items():
        axes.plot(positions, np.where(np.isfinite(values), values, np.nan), label=f"dim {dim}", linewidth=1,
                  zorder=2 + order.index(dim) / len(order))  # fmt: skip
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small", frameon=False)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    set_title(axes, title, figsize[0])
    save_figure(figure, path, dpi)
    # a period under 4 pixels draws as a solid band: say so, and which rows would show its shape
    pixel_positions = matrix.shape[0] / max(pixels, 1.0)
    blurred = [dim for dim in dims if periods[dim] < 4 * pixel_positions]
    if not blurred:
        return None
    # about 16 pixels per period of the fastest, rounded down to 1, 2 or 5 × 10^k rows
    wanted = max(8.0, min(periods[dim] for dim in blurred) * pixels / 16)
    magnitude = 10 ** math.floor(math.log10(wanted))
    shown = int(max(step * magnitude for step in (1, 2, 5) if step * magnitude <= wanted))
    names = ", ".join(str(dim) for dim in blurred)
    return Message(
        f"dim{'s' if len(blurred) > 1 else ''} {names} repeat{'' if len(blurred) > 1 else 's'} faster than the "
        f"image's pixels and draw{'' if len(blurred) > 1 else 's'} as a solid band: "
        f"{{rows={x_ticks_from}:{x_ticks_from + shown}}} shows the shape"
    )


def _mean_period(values: np.ndarray) -> float:
    """Positions per oscillation: twice the mean distance between sign changes about the mean (inf: none).

    >>> round(_mean_period(np.sin((np.arange(1000) + 0.5) * 2 * np.pi / 50)), -1), _mean_period(np.ones(5))
    (50.0, inf)
    """
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return float("inf")
    signs = np.signbit(finite - finite.mean())
    changes = int(np.count_nonzero(signs[1:] != signs[:-1]))
    return 2 * finite.size / changes if changes else float("inf")
