"""The picture of what precision costs: a table's error in reduced arithmetic against float64.

An image (matplotlib, Agg, no pyplot) and a terminal view of a
:class:`pecli.analysis.precision.PrecisionErrors`: the |error| per position bin and column on a log
colour scale, and under it the largest |error| per position of each reduced arithmetic on a log
axis, positions on a log axis in both, the first position that aliases marked.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import numpy as np

from pecli.render.image import image_format, note_in_figure, save_figure, set_title

if TYPE_CHECKING:
    from pecli.analysis.precision import PrecisionErrors

__all__ = ["error_floor", "precision_chart", "save_precision"]

_COLORS = {"float32": "tab:blue", "bfloat16": "tab:red", "float16": "tab:orange"}
#: the heatmap's cells whose error is exactly 0 (none on a log scale): apart from magma's black, its lowest
EXACT_ZERO_COLOR = "#7fbf7f"


def error_floor(errors: PrecisionErrors) -> float:
    """The lowest |error| drawn: the smallest nonzero error seen (an exact 0 is drawn at it).

    >>> from pecli.analysis.precision import precision_errors
    >>> from pecli.schemes.spec import TableSpec
    >>> errors = precision_errors(TableSpec.resolve("rope", None, {}, length=64, dim=4), "float32")
    >>> 0 < error_floor(errors) < 1e-6
    True
    """
    values = errors.heatmap[np.isfinite(errors.heatmap) & (errors.heatmap > 0)]
    return float(values.min()) if values.size else 1e-12


def _alias_label(errors: PrecisionErrors) -> str:
    return f"{errors.arithmetic} positions alias from {errors.alias_position}"


def save_precision(
    errors: PrecisionErrors,
    path: str,
    *,
    title: str,
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 7),
) -> None:
    """Draw the error heatmap and the max error per position (each reduced arithmetic) into ``path``.

    Example:
        >>> import os, tempfile
        >>> from pecli.analysis.precision import precision_errors
        >>> from pecli.schemes.spec import TableSpec
        >>> path = os.path.join(tempfile.mkdtemp(), "precision.png")
        >>> spec = TableSpec.resolve("rope", None, {}, length=512, dim=16)
        >>> save_precision(precision_errors(spec, "bfloat16"), path, title="rope bfloat16")
        >>> os.path.getsize(path) > 0
        True
    """
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    image_format(path)
    figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    floor = error_floor(errors)
    # positions on a log axis start at 1: row 0's bin is drawn from 0.5
    edges = np.maximum(errors.bin_edges + errors.offset, 0.5).astype(float)
    # an exact 0 has no place on a log scale: drawn below it, in the colour the bar's "exact 0" end shows
    exact = errors.heatmap == 0
    cells = np.ma.masked_invalid(np.where(exact, floor / 10, np.maximum(errors.heatmap, floor))).T
    high = max(float(np.nanmax(errors.heatmap)) if np.isfinite(errors.heatmap).any() else floor, floor * 10)
    cmap = colormaps["magma"].with_extremes(under=EXACT_ZERO_COLOR)
    mesh = top.pcolormesh(edges, np.arange(errors.dim + 1) - 0.5, cells, cmap=cmap,
                          norm=LogNorm(vmin=floor, vmax=high), shading="flat", rasterized=True)  # fmt: skip
    # the bar beside the heatmap alone (the chart under it keeps its width, so the position axes line up)
    colourbar = figure.colorbar(mesh, cax=top.inset_axes((1.03, 0.0, 0.035, 1.0)),
                                extend="min" if exact.any() else "neither")  # fmt: skip
    colourbar.set_label(f"|{errors.arithmetic} − float64| (log scale)")
    if exact.any():
        colourbar.ax.text(0.5, -0.07, "exact 0", transform=colourbar.ax.transAxes, ha="center", va="top",
                          fontsize="small")  # fmt: skip
    top.set_xscale("log")
    top.set_ylabel("Column (dimension)")
    top.set_ylim(errors.dim - 0.5, -0.5)
    centres = np.sqrt(edges[:-1] * edges[1:])
    zeros_marked = False
    for order, (name, values) in enumerate(errors.bin_max.items()):
        chosen = name == errors.arithmetic
        color = _COLORS.get(name, "0.3")
        # an exact 0 is no point on the log axis: the curve breaks there, and a mark on the axis says so
        zero = np.asarray(values) == 0
        bottom.plot(centres, np.where(zero, np.nan, np.maximum(values, floor)), color=color,
                    linewidth=1.8 if chosen else 1.0, alpha=1.0 if chosen else 0.7,
                    label=f"{name} (max {errors.max_error[name]:.3g})")  # fmt: skip
        if zero.any():
            # each arithmetic's marks smaller than the last, so that marks at one position all show
            bottom.plot(centres[zero], np.zeros(int(zero.sum())), linestyle="none", marker="v", color=color,
                        markersize=max(9 - 2.5 * order, 3), clip_on=False,
                        transform=bottom.get_xaxis_transform())  # fmt: skip
            zeros_marked = True
    if zeros_marked:  # one legend entry for the marks of every arithmetic, in no arithmetic's colour
        bottom.plot([], [], linestyle="none", marker="v", color="0.3", label="exact 0 (no error) on the axis")
    alias = errors.alias_position
    if alias is not None and alias < errors.offset + errors.length:
        for axes in (top, bottom):
            axes.axvline(alias, color="tab:cyan", linestyle="--", linewidth=1)
        bottom.text(alias, 0.3, f" {_alias_label(errors)}", transform=bottom.get_xaxis_transform(),
                    va="center", fontsize="small", color="tab:cyan")  # fmt: skip
    bottom.set_yscale("log")
    bottom.set_xscale("log")
    bottom.set_xlim(edges[0], edges[-1])
    bottom.set_xlabel("Position (log scale)")
    bottom.set_ylabel("Max |error| over columns")
    bottom.grid(True, which="major", linewidth=0.3, alpha=0.5)
    bottom.legend(loc="upper left", fontsize="small")
    set_title(top, title, figsize[0])
    note = errors.sampling_note()
    if note is not None:
        note_in_figure(figure, note)
    save_figure(figure, path, dpi)


def precision_chart(errors: PrecisionErrors, *, width: int, height: int, color: str, title: str | None = None) -> str:
    """The terminal view: the heatmap of log10 |error| (columns across, position bins down), a line
    per reduced arithmetic with its largest error, and where positions alias.

    Example:
        >>> from pecli.analysis.precision import precision_errors
        >>> from pecli.schemes.spec import TableSpec
        >>> errors = precision_errors(TableSpec.resolve("rope", None, {}, length=512, dim=8), "bfloat16")
        >>> chart = precision_chart(errors, width=60, height=20, color="none")
        >>> "positions alias from 257" in chart, len(chart.splitlines()) <= 20
        (True, True)
    """
    from pecli.render.terminal import ascii_text, heatmap, heatmap_cells

    floor = error_floor(errors)
    summary = [
        # on a line of its own, wrapped, never cut: the legend's numbers are logarithms
        f"colour: log10 |{errors.arithmetic} − float64| (-3 = an error of 0.001)",
        "max |error| per arithmetic: " + ", ".join(f"{name} {value:.3g}" for name, value in errors.max_error.items()),
        _alias_label(errors) if errors.alias_position is not None else f"{errors.arithmetic}: no aliasing",
    ]
    note = errors.sampling_note()
    # the heatmap's rows: each the largest error over consecutive log-spaced bins, as many as the height
    # holds, the first and the last bin always among them (blocks of one size would leave out the
    # last bins, the highest positions, where the error is largest)
    rows = _merged_rows(errors, len(errors.heatmap))
    for _ in range(8):  # the mapping line's length depends on the rows, the rows on the room it leaves
        summary_lines = [line for text in [*summary, _mapping(errors, rows), *([note] if note else [])]
                         for line in textwrap.wrap(text, width, subsequent_indent="  ")]  # fmt: skip
        cell_rows = heatmap_cells(len(rows) - 1, width=width, height=max(6, height - len(summary_lines)),
                                  color=color, title=title)[0]  # fmt: skip
        if len(rows) - 1 <= cell_rows:
            break
        rows = _merged_rows(errors, cell_rows)
    merged = np.fmax.reduceat(errors.heatmap, rows[:-1], axis=0)
    logs = np.log10(np.maximum(merged, floor))
    low = float(np.log10(floor))
    # no error above the floor (one position, or every angle exact): a unit span, not vmin = vmax
    high = max(float(np.nanmax(logs)), low + 1.0)
    summary = summary_lines
    # rows are log-spaced position bins: label each by its first position (start, step) cannot say it,
    # so the caption names the bins and the summary the positions that matter
    chart = heatmap(
        logs,
        width=width,
        height=max(6, height - len(summary)),
        color=color,
        x_label="Column (dimension)",
        y_label="position bin (log-spaced)",
        title=title,
        vmin=low,
        vmax=high,
        cmap="magma",
    )
    text = "\n".join([chart, *summary])
    return ascii_text(text) if color == "ascii" else text


def _merged_rows(errors: PrecisionErrors, most: int) -> np.ndarray:
    """Bin indices where each of at most ``most`` heatmap rows starts, and the bin count: consecutive
    bins merged as evenly as they go, the first and the last bin kept."""
    bins = len(errors.heatmap)
    count = max(1, min(bins, most))
    return np.unique(np.round(np.linspace(0, bins, count + 1)).astype(np.int64))


def _mapping(errors: PrecisionErrors, rows: np.ndarray) -> str:
    """The positions the heatmap's rows start at (every 10th or 50th row, and the last one's range)."""
    edges = errors.bin_edges + errors.offset
    starts = edges[rows[:-1]]
    count = len(starts)
    step = 50 if count > 100 else 10
    merged = count < len(errors.heatmap)
    what = "the largest error over log-spaced position bins" if merged else "log-spaced position bins"
    labelled = [f"row {row} = p {int(starts[row])}" for row in range(0, count, step) if row < count - 1]
    labelled.append(f"row {count - 1} = p {int(starts[-1])}–{int(edges[-1]) - 1}")
    return f"rows are {what}: " + ", ".join(labelled)
