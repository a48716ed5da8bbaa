"""Small multiples: several 2-D tables (ALiBi's heads, RoPE's cos and sin) in one figure and one colour scale.

The grid is chosen for the figure (:func:`panel_grid`: the largest panels, not always one row), the
axis labels are written once for the whole grid, and each panel's title is fitted to its panel
after layout (:func:`fit_panel_titles`): wrapped at its comma, then drawn smaller, until it is no
wider than the panel — titles never run into their neighbours, and are never cut.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from pecli.errors import Message
from pecli.render.downsample import column_structure, lowpass_average, row_structure
from pecli.render.image import (
    MASKED_COLOR,
    check_cmap,
    draw_cells,
    extend_arrows,
    fix_layout,
    image_format,
    index_locator,
    mark_spanless,
    new_figure,
    note_in_figure,
    save_figure,
)
from pecli.render.scale import ColorScale, value_range

__all__ = ["FAINT_SPAN", "faint_note", "fit_panel_titles", "panel_grid", "save_panels"]

#: inches a panel's title line and its tick labels take from the figure (for choosing the grid)
_ROW_OVERHEAD, _COLUMN_OVERHEAD = 0.45, 0.15
#: inches around the grid: the figure title and the x label, the y label and the colourbar
_FRAME = (1.5, 0.9)
#: a panel's own colourbar (``--scale per-panel``): the share of the panel's width it takes, and its gap
_OWN_BAR, _OWN_BAR_PAD = 0.08, 0.02
#: a grid whose panels are this share of the largest possible, with no empty cells, is preferred
_NEARLY = 0.85
#: panel title font sizes to try, in points, largest first
_TITLE_SIZES = (8.0, 7.0, 6.0)


#: a panel whose values span less than this fraction of the shared colour scale looks flat
FAINT_SPAN = 0.05


def panel_grid(count: int, figsize: tuple[float, float]) -> tuple[int, int]:
    """``(rows, columns)`` for ``count`` panels in a ``figsize`` figure: the largest panels that fit.

    A panel is as large as its shorter side; among grids whose panels are nearly as large as the
    largest (:data:`_NEARLY`), the one with the fewest empty cells, then the fewest rows.

    >>> panel_grid(2, (8, 6)), panel_grid(4, (5, 3.6)), panel_grid(4, (12, 3)), panel_grid(16, (8, 6))
    ((1, 2), (2, 2), (1, 4), (4, 4))
    >>> panel_grid(12, (5, 3.6)), panel_grid(16, (3, 8))
    ((2, 6), (8, 2))
    """
    width, height = figsize[0] - _FRAME[0], figsize[1] - _FRAME[1]

    def side(columns: int) -> float:
        rows = -(-count // columns)
        return min(width / columns - _COLUMN_OVERHEAD, height / rows - _ROW_OVERHEAD)

    largest = max(side(columns) for columns in range(1, count + 1))
    near = [columns for columns in range(1, count + 1) if side(columns) >= _NEARLY * largest]
    columns = min(near, key=lambda columns: (-(-count // columns) * columns - count, -(-count // columns)))
    return -(-count // columns), columns


def _title_candidates(title: str) -> list[str]:
    """The title as is, one line per comma-separated part (``head 3`` over ``slope 0.25``), then ever narrower.

    A part that is a word and a whole number (``head 12``) stays on one line.

    >>> _title_candidates("head 12, slope 0.007812")
    ['head 12, slope 0.007812', 'head 12\\nslope 0.007812', 'head 12\\nslope\\n0.007812']
    """
    glued = [re.sub(r"^(\S+) (?=\d+$)", "\\1\N{NO-BREAK SPACE}", part) for part in title.split(", ")]
    candidates = [title, "\n".join(glued)]
    for width in range(max(len(part) for part in glued) - 1, 0, -1):
        lines = [line for part in glued for line in textwrap.wrap(part, width, break_long_words=False)]
        if max(len(line) for line in lines) > width:  # no narrower wrap without breaking a word
            break
        candidates.append("\n".join(lines))
    return list(dict.fromkeys(text.replace("\N{NO-BREAK SPACE}", " ") for text in candidates))


def fit_panel_titles(
    figure: Any, panels: Sequence[Any], titles: Sequence[str], rooms: Sequence[float] | None = None
) -> bool:
    """Set each panel's title at the largest of :data:`_TITLE_SIZES` at which it fits its panel's width.

    Measured with the figure's renderer: first the title on one line, then wrapped at its commas,
    at each size in turn; a title too wide even then is wrapped at spaces. ``rooms`` are the widths
    in pixels to fit (the panels' own widths as they are placed now when None). False when some
    title is wider than its room even so (the narrowest wrap at the smallest size is set).
    """
    renderer = figure.canvas.get_renderer()
    if rooms is None:
        rooms = [axes.get_window_extent(renderer).width for axes in panels]
    fits = True
    for axes, title, room in zip(panels, titles, rooms, strict=True):
        candidates = _title_candidates(title)
        tries = [(text, size) for size in _TITLE_SIZES for text in candidates[:2]]
        tries += [(text, _TITLE_SIZES[-1]) for text in candidates[2:]]
        fitted = False
        for text, size in tries:
            label = axes.set_title(text, fontsize=size, parse_math=False)
            fitted = label.get_window_extent(renderer).width <= room
            if fitted:
                break
        fits = fits and fitted
    return fits


def save_panels(
    matrices: Sequence[np.ndarray],
    path: str,
    *,
    titles: Sequence[str],
    title: str,
    scale: ColorScale | Sequence[ColorScale],
    x_label: str = "Embedding Dimension",
    y_label: str = "Position",
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 6),
) -> list[str]:
    """Small multiples: one heatmap per 2-D table in a grid, all in one colour scale with one colourbar.

    ``scale`` is one :class:`~pecli.render.scale.ColorScale` for all the panels, or one per panel:
    then each panel has its own colourbar, and the figure says so.

    Tables of one shape share their axes: tick labels only on the outer panels, the axis labels
    once for the grid. Each panel is block-averaged to at most one cell per pixel of its own axes.

    Returns:
        The notes for stderr: that the tables were low-pass filtered for drawing; that panels
        span a sliver of the one colour scale (:func:`faint_note`, naming ``{scale=per-panel}``).

    Example:
        >>> import os, tempfile
        >>> from pecli.render.scale import color_scale
        >>> heads = np.stack([-np.abs(np.subtract.outer(np.arange(8.0), np.arange(8.0))) * m for m in (1, 0.5)])
        >>> path = os.path.join(tempfile.mkdtemp(), "heads.png")
        >>> save_panels(list(heads), path, titles=["head 0", "head 1"], title="alibi", scale=color_scale(heads))
        []
        >>> os.path.getsize(path) > 0
        True
    """
    image_format(path)
    new_figure(figsize, dpi)  # checks the size
    # a matrix may be computed when read (np.asarray: a head of a computed stack): one at a time, below
    matrices = [matrix if hasattr(matrix, "shape") else np.asarray(matrix) for matrix in matrices]
    scales = [scale] * len(matrices) if isinstance(scale, ColorScale) else list(scale)
    if len(scales) != len(matrices):
        raise ValueError(f"save_panels takes one colour scale or one per panel, got {len(scales)} for {len(matrices)}")
    labels = {"title": title, "x_label": x_label, "y_label": y_label}
    rows, columns = panel_grid(len(matrices), figsize)
    # titles that do not fit even wrapped and small: fewer panels per row, rather than overlap
    while True:
        figure, panels, fits = _panel_figure(matrices, titles, scales, labels, (rows, columns), figsize, dpi)
        if fits or columns == 1:
            break
        columns -= 1
        rows = -(-len(matrices) // columns)
    shrunk_any = False
    faint: list[int] = []
    for index, (axes, matrix, own) in enumerate(zip(panels, matrices, scales, strict=True)):
        colormap = check_cmap(own.cmap).with_extremes(bad=MASKED_COLOR)
        box = axes.get_window_extent()
        matrix = np.asarray(matrix)
        span = value_range(matrix)
        if isinstance(scale, ColorScale) and span.high - span.low < FAINT_SPAN * (own.high - own.low):
            faint.append(index)
        shrunk = lowpass_average(  # rows low-pass filtered: no arcs from waves near the pixel limit
            matrix,
            max(1, math.ceil(box.height)),
            max(1, math.ceil(box.width)),
            structure=column_structure(matrix),
            row_structure=row_structure(matrix),
        )
        shrunk_any |= shrunk.shrunk
        draw_cells(axes, shrunk, cmap=colormap, low=own.low, high=own.high, x_label="", y_label="")
    notes: list[str] = []
    if shrunk_any:
        notes.append("panels' rows low-pass filtered to their pixels (finer waves fade to their mean)")
        note_in_figure(figure, "rows low-pass filtered to the pixels")
    if not isinstance(scale, ColorScale):  # bottom left, clear of the x label and of the note at the right
        figure.text(0.005, 0.005, "each panel in its own colour scale", fontsize="x-small", color="0.35", va="bottom")
    elif faint and len(faint) < len(matrices):
        # one scale for all: a panel whose values span a sliver of it looks flat although it is not
        figure.text(0.005, 0.005, faint_note(len(faint)), fontsize="x-small", color="0.35", va="bottom")
        notes.append(faint_note(len(faint), fix=True))
    save_figure(figure, path, dpi)
    return notes


def faint_note(count: int, total: int | None = None, *, fix: bool = False) -> str:
    """What the figure says of ``count`` (of ``total``) panels that one colour scale draws nearly
    flat; with ``fix``, a :class:`~pecli.errors.Message` naming the parameter that gives each its own.

    >>> faint_note(4), faint_note(1, 4)
    ('4 panels span < 5% of the colour scale', '1 of 4 panels spans < 5% of the colour scale')
    >>> faint_note(2, fix=True).spelled(lambda name: "--" + name)
    '2 panels span < 5% of the colour scale: they look flat; each in its own: --scale per-panel'
    >>> faint_note(1, fix=True).spelled(lambda name: "--" + name)
    '1 panel spans < 5% of the colour scale: it looks flat; each in its own: --scale per-panel'
    """
    of = "" if total is None else f" of {total}"
    what = f"{count}{of} panel{'s' if count > 1 or of else ''} span{'s' if count == 1 else ''}"
    text = f"{what} < {FAINT_SPAN:.0%} of the colour scale"
    looks = "it looks" if count == 1 else "they look"
    return Message(text + f": {looks} flat; each in its own: {{scale=per-panel}}") if fix else text


def _colorbar(figure: Any, scale: ColorScale, axes: Any, **kwargs: Any) -> Any:
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    colormap = check_cmap(scale.cmap).with_extremes(bad=MASKED_COLOR)
    mappable = ScalarMappable(Normalize(scale.low, scale.high), colormap)
    bar = figure.colorbar(mappable, ax=axes, extend=extend_arrows(scale), **kwargs)
    mark_spanless(bar, scale.spanless, scale.flat if scale.flat is not None else float("nan"))
    return bar


def _panel_figure(
    matrices: Sequence[np.ndarray],
    titles: Sequence[str],
    scales: Sequence[ColorScale],
    labels: dict[str, str],
    grid_shape: tuple[int, int],
    figsize: tuple[float, float],
    dpi: float,
) -> tuple[Any, list[Any], bool]:
    """The figure laid out with empty panels; its panels, and whether every title fits its panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from pecli.render.titles import fit_title

    rows, columns = grid_shape
    layout = ConstrainedLayoutEngine()
    figure = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(figure)
    shared = len({matrix.shape for matrix in matrices}) == 1
    # not shared axes: draw_cells inverts each y axis, and inverting a shared one flips them all
    grid = figure.subplots(rows, columns, squeeze=False)
    panels = list(grid.flat[: len(matrices)])
    for axes in grid.flat[len(matrices) :]:
        axes.set_visible(False)
    if len(set(scales)) == 1:  # one colourbar for the grid
        _colorbar(figure, scales[0], grid.ravel().tolist()).set_label(scales[0].caption, fontsize="small")
    else:  # each panel its own, its limits on its ticks
        for axes, own in zip(panels, scales, strict=True):
            _colorbar(figure, own, axes, fraction=_OWN_BAR, pad=_OWN_BAR_PAD).ax.tick_params(labelsize="x-small")
    # constrained layout makes room for a third line, so a long title keeps its last parameters
    figure.suptitle(fit_title(labels["title"], 0.9 * figsize[0], max_lines=3), fontsize="medium", parse_math=False)
    figure.supxlabel(labels["x_label"], fontsize="medium")
    figure.supylabel(labels["y_label"], fontsize="medium")
    for index, (axes, matrix) in enumerate(zip(panels, matrices, strict=True)):
        # the frame as it will be drawn (limits, ticks), so that layout gives each panel its final size
        axes.set_xlim(-0.5, matrix.shape[1] - 0.5)
        axes.set_ylim(-0.5, matrix.shape[0] - 0.5)  # draw_cells turns it, position 0 at the top
        axes.xaxis.set_major_locator(index_locator())
        axes.yaxis.set_major_locator(index_locator())
        axes.tick_params(labelsize="small")
        if shared:
            below = index + columns < len(matrices)  # another panel under this one
            axes.tick_params(labelbottom=not below, labelleft=index % columns == 0)
    # one layout pass, with the titles already set: fitted first to the panels' width as the grid
    # geometry predicts it, then checked against the width layout gave them (laid out again only
    # when a title changed); then the layout is fixed, so that saving does not lay it out again
    predicted = ((figsize[0] - _FRAME[0]) / columns - _COLUMN_OVERHEAD) * dpi
    if len(set(scales)) > 1:  # each panel's own colourbar beside it takes its share of the width
        predicted *= 1 - _OWN_BAR - _OWN_BAR_PAD
    fits = fit_panel_titles(figure, panels, titles, [predicted] * len(panels))
    for _ in range(3):
        layout.execute(figure)
        laid_out = _title_looks(panels)
        fits = fit_panel_titles(figure, panels, titles)
        if _title_looks(panels) == laid_out:
            break
    else:  # still settling (titles on the edge of fitting): the layout of the titles as they stand
        layout.execute(figure)
    fix_layout(figure)
    return figure, panels, fits


def _title_looks(panels: Sequence[Any]) -> list[tuple[str, float]]:
    return [(axes.title.get_text(), axes.title.get_fontsize()) for axes in panels]
