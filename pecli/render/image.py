"""Image files of tables: heatmaps (pcolormesh), PNG, SVG or PDF (small multiples: :mod:`pecli.render.panels`).

matplotlib's object-oriented API only — a ``Figure`` with a ``FigureCanvasAgg``, never pyplot —
so nothing touches global state or a display. Heatmaps are shrunk to at most one cell per output
pixel first, rows low-pass filtered (:func:`pecli.render.downsample.lowpass_average`: no arcs or
checkerboards from waves near the pixel limit): a 65536 × 1024 table draws in about a second
instead of meshing 67 million quads. The mesh is rasterized, so SVG and PDF
files stay small. Files are written atomically (rendered to memory, then a temp file and
``os.replace``): a failure never leaves a partial image.
"""

from __future__ import annotations

import difflib
import io
import math
import os
from typing import Any

import numpy as np

from pecli.errors import ParameterError
from pecli.render.downsample import AxisStructure, Downsampled, column_structure, lowpass_average, row_structure
from pecli.render.scale import ColorScale, color_scale, value_range
from pecli.text import literal, literal_repr

__all__ = [
    "IMAGE_FORMATS",
    "MASKED_COLOR",
    "check_cmap",
    "draw_cells",
    "extend_arrows",
    "fix_layout",
    "image_format",
    "index_locator",
    "mark_spanless",
    "new_figure",
    "note_in_figure",
    "save_figure",
    "save_heatmap",
    "set_title",
    "shrink_note",
]

IMAGE_FORMATS: tuple[str, ...] = ("png", "svg", "pdf")
#: SVG and PDF draw every cell of a table up to this size (a larger one is averaged like a PNG)
FULL_RESOLUTION_CELLS = 1_000_000
#: masked (NaN/inf) cells: a mid grey, distinct from RdBu's white zero
MASKED_COLOR = "0.55"


def image_format(path: str) -> str:
    """The image format named by ``path``'s extension.

    >>> image_format("heatmap.PNG"), image_format("figs/pe.svg")
    ('png', 'svg')
    """
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension not in IMAGE_FORMATS:
        shown = f".{literal(extension)}" if extension else "(none)"
        raise ParameterError(
            f"cannot draw an image with extension {shown}: {literal_repr(path)}", hint="use .png, .svg or .pdf"
        )
    return extension


def check_cmap(name: str) -> Any:
    """The matplotlib colormap ``name``; an unknown name is an error suggesting close ones.

    >>> check_cmap("RdBu").name
    'RdBu'
    >>> try:
    ...     check_cmap("rdbu")
    ... except ParameterError as error:
    ...     print(error.hint.split("?")[0])
    did you mean 'RdBu', 'RdYlBu', 'RdBu_r', 'RdPu'
    """
    from matplotlib import colormaps

    if name in colormaps:
        return colormaps[name]
    names = sorted(colormaps)
    lowered = {candidate.lower(): candidate for candidate in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=4, cutoff=0.6)
    suggestion = f"did you mean {', '.join(repr(lowered[c]) for c in close)}? " if close else ""
    raise ParameterError(
        f"unknown colormap {literal_repr(name)}",
        hint=f"{suggestion}any matplotlib colormap name, e.g. RdBu, viridis, coolwarm",
    )


def new_figure(figsize: tuple[float, float], dpi: float) -> tuple[Any, Any]:
    """A matplotlib ``(figure, axes)`` on the Agg canvas, after checking the size; pair with :func:`save_figure`.

    >>> figure, axes = new_figure((4, 3), 50)
    >>> figure.get_size_inches().tolist(), float(figure.dpi)
    ([4.0, 3.0], 50.0)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    for what, value in (("{dpi}", dpi), ("{figsize} width", figsize[0]), ("{figsize} height", figsize[1])):
        if not (np.isfinite(value) and value > 0):
            raise ParameterError(f"{what} must be a positive number, got {value}", hint="e.g. {dpi=100} {figsize=8,6}")
    if figsize[0] * dpi > 20000 or figsize[1] * dpi > 20000:
        raise ParameterError(
            f"an image of {figsize[0] * dpi:.0f} × {figsize[1] * dpi:.0f} pixels is too large",
            hint="use a smaller {figsize} or {dpi} (at most 20000 pixels a side)",
        )
    # matplotlib's default subplot margins: a layout engine ("constrained") costs an extra ~0.3 s draw
    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    # margins of at least the inches tick labels, axis labels and a two-line title take (small
    # figures would cut them); at 8 × 6 in these are matplotlib's defaults
    width, height = figsize
    figure.subplots_adjust(
        left=max(0.125, 0.75 / width), bottom=max(0.11, 0.6 / height), top=min(0.88, 1 - 0.6 / height)
    )
    return figure, figure.add_subplot()


def heatmap_pixels(figsize: tuple[float, float], dpi: float) -> tuple[int, int]:
    """The pixel rows and columns of the axes :func:`save_heatmap` draws in a ``figsize`` × ``dpi`` figure.

    A matrix given as block cells (:class:`~pecli.render.downsample.Downsampled`) should have at most
    these: more cells than pixels alias into moiré, and the figure's note would name a false resolution.

    >>> heatmap_pixels((7, 6), 100)
    (462, 435)
    """
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    figure, axes = new_figure(figsize, dpi)
    figure.colorbar(ScalarMappable(Normalize(0.0, 1.0), "viridis"), ax=axes)
    return _axes_pixels(axes, figsize, dpi)


def _axes_pixels(axes: Any, figsize: tuple[float, float], dpi: float) -> tuple[int, int]:
    box = axes.get_position()
    return math.ceil(box.height * figsize[1] * dpi), math.ceil(box.width * figsize[0] * dpi)


def fix_layout(figure: Any) -> None:
    """No layout engine from here on: the panels keep the places the last layout pass gave them, and
    ``savefig`` draws the figure once (with an engine set it draws a pass to lay it out first)."""
    import matplotlib

    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        figure.set_layout_engine(None)


def save_figure(figure: Any, path: str, dpi: float) -> None:
    """Render ``figure`` in the format ``path``'s extension names, then write it atomically."""
    from pecli.io.atomic import atomic_file

    fmt = image_format(path)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=dpi, metadata=None)
    with atomic_file(path) as handle:
        handle.write(buffer.getbuffer())


def save_heatmap(
    matrix: np.ndarray | Downsampled,
    path: str,
    *,
    title: str,
    x_label: str = "Embedding Dimension",
    y_label: str = "Position",
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    robust: bool | None = None,
    scale: ColorScale | None = None,
    structure: AxisStructure | None = None,
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 6),
    x_ticks_from: int = 0,
    y_ticks_from: int = 0,
    row_values: tuple[float, float] = (0.0, 1.0),
    drawn_limits: bool = False,
) -> str | None:
    """Draw ``matrix`` (rows = positions) as a pcolormesh heatmap with a colorbar into ``path``.

    Position 0 is at the top, as in the terminal heatmap. Colours come from
    :func:`pecli.render.scale.color_scale` (diverging around 0 for signed data, sequential for
    non-negative data, robust limits when outliers would wash the rest out), and the colourbar
    says which; NaN and ±inf are drawn masked (grey). The image is ``figsize × dpi`` pixels.

    Args:
        matrix: a 2-D array; or its cells already averaged (a
            :class:`~pecli.render.downsample.Downsampled`, about one cell per pixel), drawn as given.
        path: the image file; the extension (.png, .svg, .pdf) picks the format.
        title: the figure title, e.g. the scheme and its parameters.
        x_label, y_label: axis labels.
        cmap: any matplotlib colormap name (default: RdBu for signed data, viridis for non-negative).
        vmin, vmax: colour limits.
        robust: percentile limits (True), the full range (False), or whichever shows the data (None).
        scale: colours already chosen (:func:`~pecli.render.scale.color_scale`); then ``cmap``,
            ``vmin``, ``vmax`` and ``robust`` are not used.
        structure: what a block of columns must not split (sin/cos pairs, halves); default
            :func:`~pecli.render.downsample.column_structure` of the values.
        dpi, figsize: pixels per inch and the size in inches.
        x_ticks_from, y_ticks_from: the index of the first column and row (after ``--cols/--rows``).
        row_values: ``(start, step)``: row ``i`` sits at ``start + step × i`` on the y axis (timesteps).
        drawn_limits: the colour limits may come from the drawn cells where those averaged to fit the pixels
            span less than half the limits (``scale`` was not the reader's --vmin/--vmax); the note then gives
            the values' own range. Without ``scale``, ``vmin``, ``vmax`` or ``robust=True``, they may anyway.

    Returns:
        A note when the table was filtered or averaged to fit the pixels (also written in the figure), else None.

    Example:
        >>> import tempfile, pecli
        >>> path = os.path.join(tempfile.mkdtemp(), "pe.png")
        >>> save_heatmap(pecli.encode("sinusoidal", 2000, 64), path, title="sinusoidal", figsize=(4, 3))
        'rows low-pass filtered to 181 pixels (2000 rows; finer waves fade to their mean)'
    """
    figure, note = heatmap_figure(
        matrix, title=title, x_label=x_label, y_label=y_label, cmap=cmap, vmin=vmin, vmax=vmax, robust=robust,
        scale=scale, structure=structure, dpi=dpi, figsize=figsize, x_ticks_from=x_ticks_from,
        y_ticks_from=y_ticks_from, row_values=row_values, vector=image_format(path) in ("svg", "pdf"),
        drawn_limits=drawn_limits,
    )  # fmt: skip
    save_figure(figure, path, dpi)
    return note


def heatmap_figure(
    matrix: np.ndarray | Downsampled,
    *,
    vector: bool = False,
    title: str,
    x_label: str = "Embedding Dimension",
    y_label: str = "Position",
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    robust: bool | None = None,
    scale: ColorScale | None = None,
    structure: AxisStructure | None = None,
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 6),
    x_ticks_from: int = 0,
    y_ticks_from: int = 0,
    row_values: tuple[float, float] = (0.0, 1.0),
    drawn_limits: bool = False,
) -> tuple[Any, str | None]:
    """The heatmap :func:`save_heatmap` saves, as a matplotlib Figure, and its note (or None).

    ``vector``: the figure is for SVG or PDF (every cell drawn at the table's resolution when it
    fits). The other arguments are :func:`save_heatmap`'s.

    >>> import pecli
    >>> figure, note = heatmap_figure(pecli.encode("sinusoidal", 64, 16), title="sinusoidal", figsize=(4, 3))
    >>> figure.get_axes()[0].get_title(), note
    ('sinusoidal', None)
    """
    given_cells = matrix if isinstance(matrix, Downsampled) else None
    values = given_cells.values if given_cells is not None else np.asarray(matrix)
    # limits that may come from the drawn cells: none the reader gave
    chosen = drawn_limits or (scale is None and vmin is None and vmax is None and robust is not True)
    if scale is None:
        scale = color_scale(values, vmin=vmin, vmax=vmax, robust=robust, cmap=cmap)
    low, high = scale.low, scale.high
    colormap = check_cmap(scale.cmap).with_extremes(bad=MASKED_COLOR)
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    figure, axes = new_figure(figsize, dpi)
    rows, cols = (
        (int(given_cells.row_edges[-1]), int(given_cells.col_edges[-1])) if given_cells is not None else values.shape
    )
    # the colorbar first: it takes its space from the axes, whose final size then caps the cells
    colorbar = figure.colorbar(ScalarMappable(Normalize(low, high), colormap), ax=axes, extend=extend_arrows(scale))
    colorbar.set_label(scale.caption, fontsize="small")
    mark_spanless(colorbar, scale.spanless, scale.flat if scale.flat is not None else float("nan"))
    # an axis that fits the image's pixels is drawn as is; a longer one is averaged in blocks of
    # one size, to at most one cell per pixel of the axes
    # at most one cell per pixel of the axes: thinner cells alias into moiré (interleaved sin/cos
    # columns would beat against the pixel grid)
    limits = list(_axes_pixels(axes, figsize, dpi))
    # vector output is for publication: every cell, as an image embedded at the table's own resolution
    full = vector and given_cells is None and rows * cols <= FULL_RESOLUTION_CELLS
    if full:
        limits = [rows, cols]
    if given_cells is not None:
        shrunk = given_cells
    else:
        structure = column_structure(values) if structure is None else structure
        shrunk = lowpass_average(values, *limits, structure=structure, row_structure=row_structure(values))
    draw_cells(
        axes,
        shrunk,
        cmap=colormap,
        low=low,
        high=high,
        x_label=x_label,
        y_label=y_label,
        x_from=x_ticks_from,
        y_from=y_ticks_from,
        row_values=row_values,
        full_resolution=full,
    )
    set_title(axes, title, figsize[0])
    note = shrink_note(rows, cols, shrunk, filtered=given_cells is None)
    drawn = _drawn_scale(scale, shrunk) if chosen and note else None
    if drawn is not None:  # the averages span a small part of the values' range: colours for what is drawn
        axes.collections[0].set_clim(drawn.low, drawn.high) if axes.collections else axes.images[0].set_clim(
            drawn.low, drawn.high)  # fmt: skip
        colorbar.mappable.set_clim(drawn.low, drawn.high)
        colorbar.set_label(drawn.caption.replace("value", "block mean", 1), fontsize="small")
        seen = value_range(values)
        note = f"{note}; colours span the drawn means, the values {seen.low:.4g} … {seen.high:.4g}"
    masked = value_range(values).nonfinite  # two passes over finite data; the grey must be named in the figure
    grey = f"grey: {masked:,} NaN or ±inf {'cell' if given_cells is not None else 'value'}{'s' * (masked > 1)}"
    shown = ", ".join(text for text in (note, grey if masked else None) if text)
    if shown:
        note_in_figure(figure, shown)
    return figure, note


def _drawn_scale(scale: ColorScale, shrunk: Downsampled) -> ColorScale | None:
    """Limits from the drawn cells (block means) where the values' own limits reach :data:`WASHOUT_RATIO` times
    further than any cell (a 2 × 100000 random table: means within ±0.3 in limits of ±4.7, a blank picture).

    >>> cells = Downsampled(np.array([[0.3, -0.2]]), np.array([0, 2]), np.array([0, 50000, 100000]))
    >>> _drawn_scale(color_scale(np.array([[-4.7, 4.7]])), cells)[:2]
    (-0.3, 0.3)
    """
    from pecli.render.scale import WASHOUT_RATIO, color_limits

    seen = value_range(shrunk.values)
    if scale.flat is not None or not np.isfinite(seen.low) or seen.low == seen.high:
        return None
    if scale.diverging:
        low, high = color_limits(seen)
        if WASHOUT_RATIO * high > scale.high:
            return None
    else:
        low, high = seen.low, seen.high
        if WASHOUT_RATIO * (high - low) > scale.high - scale.low:
            return None
    return scale._replace(low=low, high=high, robust=False, clipped=0.0)


def shrink_note(rows: int, cols: int, shrunk: Downsampled, *, filtered: bool = True) -> str | None:
    """What drawing did to a ``rows`` × ``cols`` table to fit the pixels: rows low-pass filtered
    (``filtered``, :func:`~pecli.render.downsample.lowpass_average`) or averaged, columns averaged.

    >>> cells = lowpass_average(np.zeros((8192, 128)), 456, 496)
    >>> shrink_note(8192, 128, cells)
    'rows low-pass filtered to 456 pixels (8192 rows; finer waves fade to their mean)'
    >>> shrink_note(8192, 1024, lowpass_average(np.zeros((8192, 1024)), 456, 496), filtered=False)
    'rows averaged to 456 pixels (8192 rows), columns averaged to 342 (1024)'
    >>> shrink_note(100, 64, lowpass_average(np.zeros((100, 64)), 456, 496)) is None
    True
    """
    shown_rows, shown_cols = shrunk.values.shape
    parts = []
    if shown_rows < rows:
        how = "low-pass filtered" if filtered else "averaged"
        tail = "; finer waves fade to their mean" if filtered else ""
        parts.append(f"rows {how} to {shown_rows} pixels ({rows} rows{tail})")
    if shown_cols < cols:
        parts.append(f"columns averaged to {shown_cols} ({cols})")
    return ", ".join(parts) or None


def note_in_figure(figure: Any, note: str) -> None:
    """``note`` in small grey text at the figure's bottom right corner: the image says how it was drawn.

    A note wider than the figure is set smaller until it fits (a small figure cut it at both edges).

    >>> figure, _ = new_figure((3.6, 2.7), 100)
    >>> note_in_figure(figure, "rows low-pass filtered to 173 pixels (256 rows; finer waves fade to their mean)")
    >>> text = figure.texts[-1]
    >>> bool(text.get_window_extent(figure.canvas.get_renderer()).width <= figure.bbox.width)
    True
    """
    text = figure.text(0.995, 0.005, note, fontsize="x-small", color="0.35", ha="right", va="bottom", parse_math=False)
    room = 0.985 * figure.bbox.width
    for _ in range(4):  # text width is not quite proportional to the font size: settle in a few steps
        width = text.get_window_extent(figure.canvas.get_renderer()).width
        if width <= room:
            break
        text.set_fontsize(text.get_fontsize() * room / width * 0.98)


def set_title(axes: Any, title: str, width_inches: float) -> None:
    """The title wrapped to the figure's width, as plain text: ``$`` or ``_`` in a file name is no mathtext."""
    from pecli.render.titles import fit_title

    # centred over the axes, which sit left of the figure's centre: 0.8 of its width stays inside
    axes.set_title(fit_title(title, 0.8 * width_inches), fontsize="medium", parse_math=False)


def mark_spanless(colorbar: Any, text: str | None, value: float = float("nan")) -> None:
    """A colourbar over values that span no range (``text``: :func:`pecli.render.scale.spanless`'s "all 0",
    "all NaN or ±inf"): no ticks of a scale that is none; the bar filled with ``value``'s colour, ``text`` its one
    tick label.

    Example:
        >>> from matplotlib.figure import Figure
        >>> from matplotlib.cm import ScalarMappable
        >>> from matplotlib.colors import Normalize
        >>> figure = Figure()
        >>> bar = figure.colorbar(ScalarMappable(Normalize(-1, 1), "RdBu"), ax=figure.add_subplot())
        >>> mark_spanless(bar, "all 0", 0.0)
        >>> bar.get_ticks().tolist(), [t.get_text() for t in bar.ax.get_yticklabels()]
        ([0.0], ['all 0'])
    """
    if text is None:
        return
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    colour = colorbar.mappable.to_rgba(value) if np.isfinite(value) else to_rgba(MASKED_COLOR)
    bar = colorbar.ax
    # the one colour drawn, under the outline (spines are at 2.5)
    bar.add_patch(Rectangle((0, 0), 1, 1, transform=bar.transAxes, facecolor=colour, edgecolor="none", zorder=2))
    # the text as the bar's one tick label, at its middle: the layout keeps the bar's caption clear of it
    norm = colorbar.mappable.norm
    colorbar.set_ticks([(norm.vmin + norm.vmax) / 2], labels=[text])
    bar.minorticks_off()
    vertical = colorbar.orientation == "vertical"
    axis = bar.yaxis if vertical else bar.xaxis
    axis.set_tick_params(length=0, rotation=90 if vertical else 0)
    for label in axis.get_ticklabels():
        label.set_verticalalignment("center")


def extend_arrows(scale: ColorScale) -> str:
    """Colourbar arrows at the ends that robust limits cut off."""
    if not scale.robust:
        return "neither"
    below, above = scale.full[0] < scale.low and scale.diverging, scale.full[1] > scale.high
    return {(True, True): "both", (True, False): "min", (False, True): "max"}.get((below, above), "neither")


def index_locator() -> Any:
    """Ticks at whole indices, 1, 2 or 5 × 10^k apart (matplotlib's own steps; not 0, 60, 120, …).

    A view holding one whole index (a one-row table) is ticked at it alone: matplotlib's integer
    locator wants two and fell back to −0.4, −0.2, … on a 1-D tensor's single row.

    >>> index_locator().tick_values(-0.5, 0.5).tolist()
    [0.0]
    """
    from matplotlib.ticker import MaxNLocator

    class WholeIndices(MaxNLocator):
        def tick_values(self, vmin: float, vmax: float) -> Any:
            low, high = sorted((vmin, vmax))
            if math.floor(high) - math.ceil(low) < 1:  # at most one whole index in view: tick it alone
                return np.arange(math.ceil(low), math.floor(high) + 1, dtype=float)
            return super().tick_values(vmin, vmax)

    return WholeIndices(nbins="auto", steps=[1, 2, 5, 10], integer=True, min_n_ticks=2)


def draw_cells(
    axes: Any,
    shrunk: Any,
    *,
    cmap: Any,
    low: float,
    high: float,
    x_label: str,
    y_label: str,
    x_from: int = 0,
    y_from: int = 0,
    row_values: tuple[float, float] = (0.0, 1.0),
    full_resolution: bool = False,
) -> Any:
    """Draw block-averaged cells as a rasterized pcolormesh, position 0 at the top; returns the mesh.

    ``shrunk`` is a :func:`~pecli.render.downsample.block_average` result; NaN/inf cells are masked.
    Cell ``i`` spans ``i - 0.5 … i + 0.5``, so the tick labelled ``i`` sits on its centre (as in
    ``imshow``) and ticks are whole indices. Row ``i`` sits at ``row_values[0] + row_values[1] × i``
    on the y axis. With ``full_resolution`` (cells of one value each) an image with no
    interpolation: SVG and PDF then embed it at the table's own resolution, whatever the dpi.
    """
    x_edges = shrunk.col_edges + x_from - 0.5
    y_edges = row_values[0] + row_values[1] * (shrunk.row_edges + y_from - 0.5)
    if full_resolution:
        mesh = axes.imshow(
            np.ma.masked_invalid(shrunk.values),
            cmap=cmap,
            vmin=low,
            vmax=high,
            interpolation="none",
            aspect="auto",
            extent=(x_edges[0], x_edges[-1], y_edges[-1], y_edges[0]),
            origin="upper",
        )
    else:
        mesh = axes.pcolormesh(
            x_edges,
            y_edges,
            np.ma.masked_invalid(shrunk.values),
            cmap=cmap,
            vmin=low,
            vmax=high,
            shading="flat",
            rasterized=True,
        )
        axes.invert_yaxis()
    # column indices are whole numbers (a 2-column table is not ticked 0.25, 0.5, …); so are rows
    # unless they stand for timesteps with a fractional step
    axes.xaxis.set_major_locator(index_locator())
    if float(row_values[0]).is_integer() and float(row_values[1]).is_integer():
        axes.yaxis.set_major_locator(index_locator())
    if row_values != (0.0, 1.0):
        # rows that stand for timesteps: ticks from the first row's value to the last's (a row's band
        # reaches half a step beyond, where a tick would name a timestep no row has, e.g. −100)
        from matplotlib.ticker import FixedLocator

        first, last = sorted(row_values[0] + row_values[1] * (y_from + np.array([0, shrunk.row_edges[-1] - 1])))
        ticks = axes.yaxis.get_major_locator().tick_values(first, last)
        axes.yaxis.set_major_locator(FixedLocator([tick for tick in ticks if first - 1e-9 <= tick <= last + 1e-9]))
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    return mesh
