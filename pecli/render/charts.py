"""Charts of the analysis commands: offset profiles (image and terminal) and heatmaps side by side.

Built on the same pieces as :mod:`pecli.render.image` (object-oriented matplotlib, block averaging,
atomic writes) and, for the terminal, plain text that any terminal shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from pecli.render.downsample import (
    AxisStructure,
    Downsampled,
    alternation_window,
    block_average,
    block_column_extremes,
    block_edges,
    block_extreme,
    column_extremes,
    column_structure,
    row_structure,
    sample_alternates,
    signed_extreme,
)
from pecli.render.image import (
    MASKED_COLOR,
    check_cmap,
    draw_cells,
    fix_layout,
    image_format,
    mark_spanless,
    save_figure,
)
from pecli.render.scale import ValueRange, color_limits, merge_ranges, spanless, value_range

#: a min … max band at most this fraction of the profile's range is drawn as its line alone
_INVISIBLE_SPREAD = 1e-3

__all__ = [
    "MOST_DIFFERENCE_ROWS",
    "profile_chart",
    "save_difference",
    "save_difference_chunks",
    "save_heatmaps",
    "save_profile",
]


def _canvas(figsize: tuple[float, float], dpi: float, panels: int = 1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # side-by-side panels need the constrained layout, or colorbars run into the next panel
    figure = Figure(figsize=figsize, dpi=dpi, layout="constrained" if panels > 1 else None)
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, panels, squeeze=False)[0]
    return figure, axes


def _save_laid_out(figure, path: str, dpi: float) -> None:
    """Save ``figure`` drawn once: its layout computed once, then fixed.

    With a layout engine still set, ``savefig`` draws the figure twice (a pass to lay it out, then
    the pass that renders), each running constrained layout. For a PNG the layout is computed here
    with the canvas's own renderer, the one that draws the PNG, so the picture is the same; an SVG
    or PDF is laid out with its own renderer's text metrics, so it keeps savefig's two passes.
    """
    layout = figure.get_layout_engine()
    if layout is not None and image_format(path) == "png":
        layout.execute(figure)
        fix_layout(figure)  # the panels keep the places this pass gave them
    save_figure(figure, path, dpi)


def save_profile(
    offsets: np.ndarray,
    mean: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    path: str,
    *,
    title: str,
    y_label: str,
    x_label: str = "Offset h = j − i",
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 5),
) -> None:
    """Draw the mean of a metric against the offset, with its min–max range shaded, into ``path``.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "profile.svg")
        >>> h = np.arange(10.0)
        >>> save_profile(h, np.cos(h), np.cos(h) - 0.1, np.cos(h) + 0.1, path, title="dot", y_label="dot")
        >>> os.path.getsize(path) > 0
        True
    """
    image_format(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    spread = float(np.nanmax(np.asarray(high) - np.asarray(low))) if len(offsets) else 0.0
    extent = float(np.nanmax(high) - np.nanmin(low)) if len(offsets) else 0.0
    if spread <= _INVISIBLE_SPREAD * max(extent, float(np.nanmax(np.abs(mean))) if len(offsets) else 0.0):
        # a band thinner than the line: the legend must not promise one the reader cannot find
        axes.plot(offsets, mean, linewidth=1.2, label="mean = min = max over positions (to 0.1% of the range)")
    else:
        axes.fill_between(offsets, low, high, alpha=0.3, linewidth=0, label="min … max over positions")
        axes.plot(offsets, mean, linewidth=1.2, label="mean over positions")
    # under the axes, never over the curve (a rising profile ran under a legend in the upper right)
    figure.legend(loc="outside lower center", ncols=2, fontsize="small", frameon=False)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    axes.set_title(title, fontsize="medium", parse_math=False)
    _save_laid_out(figure, path, dpi)


def save_heatmaps(
    matrices: Sequence[np.ndarray],
    path: str,
    *,
    titles: Sequence[str],
    x_label: str,
    y_label: str,
    shared: int = 0,
    largest: Sequence[int] = (),
    cmap: str = "RdBu",
    dpi: float = 100,
    height: float = 4.5,
) -> None:
    """Draw heatmaps side by side into ``path``, each with a colorbar.

    The first ``shared`` panels share their colour limits (symmetric around 0), so equal values
    look equal across them; the others get their own. A table larger than its panel is shown as
    block means, except the panels numbered in ``largest`` (a difference): each of their pixels is
    the block's value of the largest magnitude (:func:`~pecli.render.downsample.block_extreme`), so
    one differing cell among thousands keeps its full colour, and their title says so.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "diff.png")
        >>> a = np.eye(3)
        >>> save_heatmaps([a, a.T, a - a.T], path, titles=["A", "B", "A − B"], x_label="d", y_label="p", shared=2)
        >>> os.path.getsize(path) > 0
        True
    """
    image_format(path)
    figure, axes_row, figsize = _heatmap_canvas(len(matrices), dpi, height)
    joint = [value_range(m) for m in matrices[:shared]]
    shared_limits = _joint_limits(joint) if joint else None
    cells, limits, masked, spans = [], [], [], []
    for index, (matrix, axes) in enumerate(zip(matrices, axes_row, strict=True)):
        matrix = np.asarray(matrix, dtype=np.float64)
        seen = value_range(matrix)
        limits.append(shared_limits if index < shared and shared_limits else color_limits(seen))
        masked.append(seen.nonfinite)
        spans.append(merge_ranges(joint) if index < shared and joint else seen)
        rows, cols = _panel_pixels(axes, figsize, dpi)
        # blocks of one size, as pecli.render.image does: mixed sizes draw false stripes
        by_columns, by_rows = column_structure(matrix), row_structure(matrix)
        if index in largest:
            row_edges = block_edges(matrix.shape[0], rows, uniform=True, structure=by_rows)
            col_edges = block_edges(matrix.shape[1], cols, uniform=True, structure=by_columns)
            cells.append(block_extreme(matrix, row_edges, col_edges))
        else:
            cells.append(block_average(matrix, rows, cols, uniform=True, structure=by_columns, row_structure=by_rows))
    titles = _largest_titles(titles, cells, largest)
    _draw_heatmaps(figure, axes_row, cells, limits, path, titles=titles, x_label=x_label, y_label=y_label, spans=spans,
                   cmap=cmap, dpi=dpi, masked=masked)  # fmt: skip


def largest_note(title: str) -> str:
    """What each pixel of a panel of block extremes shows, under its title.

    >>> largest_note("A − B")
    'each pixel: the largest |A − B| of its block'
    """
    return f"each pixel: the largest |{title}| of its block"


def _largest_titles(titles: Sequence[str], cells: Sequence[Downsampled], largest: Sequence[int]) -> list[str]:
    """``titles``, those of the ``largest`` panels whose blocks hold more than one value noting :func:`largest_note`."""
    return [title + "\n" + largest_note(title) if index in largest and cells[index].shrunk else title
            for index, title in enumerate(titles)]  # fmt: skip


def _heatmap_canvas(panels: int, dpi: float, height: float):
    figsize = (4.2 * panels, height)
    figure, axes_row = _canvas(figsize, dpi, panels=panels)
    return figure, axes_row, figsize


def _panel_pixels(axes, figsize: tuple[float, float], dpi: float) -> tuple[int, int]:
    """The most cells (rows, columns) a panel shows: its pixels before the layout runs."""
    box = axes.get_position()
    return math.ceil(box.height * figsize[1] * dpi), math.ceil(box.width * figsize[0] * dpi)


def _joint_limits(ranges: Sequence[ValueRange]) -> tuple[float, float]:
    """One colour scale over panels of these value ranges (symmetric around 0)."""
    return color_limits(value_range(np.array([[r.low, r.high] for r in ranges], dtype=np.float64)))


def _draw_heatmaps(figure, axes_row, cells, limits, path: str, *, titles: Sequence[str], x_label: str,
                   y_label: str, cmap: str, dpi: float, masked: Sequence[int],
                   spans: Sequence[ValueRange]) -> None:  # fmt: skip
    """The panels, each colourbar over its ``spans`` value range (one that spans none says so, no ticks)."""
    colormap = _masking(cmap)
    for shrunk, (low, high), title, axes, count, span in zip(cells, limits, titles, axes_row, masked, spans,
                                                             strict=True):  # fmt: skip
        mesh = draw_cells(axes, shrunk, cmap=colormap, low=low, high=high, x_label=x_label, y_label=y_label)
        _compact_index_ticks(axes)
        mark_spanless(figure.colorbar(mesh, ax=axes), spanless(span), span.low)
        axes.set_title(title + _masked_caption(count), fontsize="small", parse_math=False)
    _save_laid_out(figure, path, dpi)


def _masking(cmap: str):
    """The colormap ``cmap`` with NaN/inf cells in :data:`~pecli.render.image.MASKED_COLOR`: matplotlib's default
    leaves them transparent, so they showed as white, RdBu's zero, and a NaN row read as "no difference"."""
    return check_cmap(cmap).with_extremes(bad=MASKED_COLOR)


def _masked_caption(count: int) -> str:
    """A panel title's second line naming its grey cells, or nothing when it has none.

    >>> _masked_caption(0), _masked_caption(1), _masked_caption(65)
    ('', '\\ngrey: 1 NaN or ±inf value', '\\ngrey: 65 NaN or ±inf values')
    """
    return f"\ngrey: {count:,} NaN or ±inf value{'s' * (count != 1)}" if count else ""


#: indices from this many on are ticked in engineering notation (200k, 1M): a panel of a million columns
#: ticked 200000, 400000, … ran its labels together ("200000400000600000800000")
_ENGINEERING_FROM = 10_000


def _compact_index_ticks(axes) -> None:
    """Index axes reaching :data:`_ENGINEERING_FROM` ticked as 0, 250k, 500k, … (at most 5 ticks across), so
    their labels keep apart; smaller tables keep their ticks as they are.

    >>> from matplotlib.figure import Figure
    >>> axes = Figure().subplots()
    >>> _ = axes.set_xlim(-0.5, 999_999.5)
    >>> _compact_index_ticks(axes)
    >>> [axes.xaxis.get_major_formatter()(tick) for tick in axes.get_xticks() if 0 <= tick < 1e6]
    ['0', '200k', '400k', '600k', '800k']
    >>> _ = axes.set_ylim(63.5, -0.5)
    >>> type(axes.yaxis.get_major_formatter()).__name__
    'ScalarFormatter'
    """
    from matplotlib.ticker import EngFormatter, MaxNLocator

    for axis, limits in ((axes.xaxis, axes.get_xlim()), (axes.yaxis, axes.get_ylim())):
        if max(abs(limit) for limit in limits) < _ENGINEERING_FROM:
            continue
        axis.set_major_formatter(EngFormatter(sep=""))
        locator = axis.get_major_locator()
        if axis is axes.xaxis and isinstance(locator, MaxNLocator):  # whole indices, fewer of them across
            locator.set_params(nbins=5)


def profile_chart(
    offsets: np.ndarray,
    mean: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    *,
    width: int,
    height: int,
    title: str | None = None,
    y_label: str = "",
) -> str:
    """A text chart of a profile: ``•`` the mean, ``│`` the min … max range over positions, offsets across.

    Each column covers a block of consecutive offsets, so the chart fits ``width`` × ``height``
    characters: ``•`` spans the block's means, ``│`` the block's minima to maxima beyond them (no
    ``│`` at all where the metric depends on the offset only).

    Example:
        >>> h = np.arange(5.0)
        >>> print(profile_chart(h, h, h, h, width=20, height=7))
         4 ┤    •
           ┤   •
           ┤  •
           ┤ •
         0 ┤•
           └─────
            0   4
    """
    labels = (f"{float(np.max(high)):.4g}", f"{float(np.min(low)):.4g}")
    margin = max(len(label) for label in labels) + 2
    lines = [title if len(title) <= width else title[: width - 1] + "…"] if title else []
    caption = f"  {y_label} against offset h" if y_label else ""
    # the caption beside the axis when it fits the width, else under it: never past the screen's edge
    under = bool(caption) and margin + 1 + min(len(offsets), max(1, width - margin - 1)) + len(caption) > width
    rows = max(2, height - len(lines) - 2 - under)
    edges = block_edges(len(offsets), max(1, width - margin - 1))
    starts = edges[:-1]
    mean_low, mean_high = np.minimum.reduceat(mean, starts), np.maximum.reduceat(mean, starts)
    column_low, column_high = np.minimum.reduceat(low, starts), np.maximum.reduceat(high, starts)
    top, bottom = float(np.max(column_high)), float(np.min(column_low))
    span = top - bottom if top > bottom else 1.0

    def row_of(value: np.ndarray) -> np.ndarray:
        return np.clip(np.rint((top - value) / span * (rows - 1)), 0, rows - 1).astype(int)

    grid = [[" "] * len(starts) for _ in range(rows)]
    spans = zip(row_of(column_low), row_of(column_high), row_of(mean_low), row_of(mean_high), strict=True)
    for column, (lowest, highest, mean_lowest, mean_highest) in enumerate(spans):
        for row in range(highest, lowest + 1):  # rows grow downwards: the highest value has the smallest row
            grid[row][column] = "•" if mean_highest <= row <= mean_lowest else "│"
    for row, cells in enumerate(grid):
        label = f"{top:.4g}" if row == 0 else f"{bottom:.4g}" if row == rows - 1 else ""
        lines.append(f"{label:>{margin - 1}} ┤" + "".join(cells).rstrip())
    lines.append(" " * margin + "└" + "─" * len(starts))
    first, last = str(int(offsets[0])), str(int(offsets[-1]))
    axis = first + " " * max(1, len(starts) - len(first) - len(last)) + last
    axis = " " * (margin + 1) + axis
    lines += [axis, caption.strip()[:width]] if under else [axis + caption]
    return "\n".join(lines)


#: the most panels (heads, blocks) a figure of A, B and A − B draws, one row of three each
MOST_DIFFERENCE_ROWS = 32


def save_difference(a: np.ndarray, b: np.ndarray, path: str, *, labels: tuple[str, str], dpi: float = 100) -> None:
    """A, B and A − B into ``path``, in the form that shows the tables' values.

    A 2-D table: three heatmaps side by side (A and B in one colour scale). A table of one row or
    one column (a 1-D tensor): lines, A and B over each other above A − B, since a 1 × n heatmap
    hides the values in colours. A stack of tables (``(heads, L, L)``): one row of three heatmaps per
    table, at most :data:`MOST_DIFFERENCE_ROWS`, each row in its own scale (A and B in one, A − B in its
    own): the heads of an ALiBi bias differ in scale by up to 2^8.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "diff.png")
        >>> save_difference(np.sin(np.arange(50.0)), np.cos(np.arange(50.0)), path, labels=("a", "b"))
        >>> os.path.getsize(path) > 0
        True
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"A and B differ in shape: {a.shape} and {b.shape}")
    titles = [f"A: {labels[0]}", f"B: {labels[1]}", "A − B"]
    if a.ndim <= 1 or (a.ndim == 2 and 1 in a.shape):
        x_label = "Index" if a.ndim <= 1 else ("Embedding Dimension" if a.shape[0] == 1 else "Position")
        _save_difference_lines(a.reshape(-1), b.reshape(-1), path, titles=titles, x_label=x_label, dpi=dpi)
    elif a.ndim == 2:
        save_heatmaps([a, b, a - b], path, titles=titles, x_label="Embedding Dimension", y_label="Position",
                      shared=2, largest=(2,), dpi=dpi)  # fmt: skip
    else:
        stacked_a, stacked_b = a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:])
        if len(stacked_a) > MOST_DIFFERENCE_ROWS:
            raise ValueError(f"{len(stacked_a)} tables of {a.shape[-2]} × {a.shape[-1]}: more than "
                             f"{MOST_DIFFERENCE_ROWS} rows of panels")  # fmt: skip
        _save_difference_stack(stacked_a, stacked_b, path, titles=titles, dpi=dpi)


def _save_difference_lines(
    a: np.ndarray, b: np.ndarray, path: str, *, titles: Sequence[str], x_label: str, dpi: float
) -> None:
    image_format(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 6), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, sharex=True)
    index = np.arange(len(a))
    # B dashed over A: where they agree the two lines coincide and both stay visible
    top.plot(index, a, linewidth=1.2, label=titles[0])
    top.plot(index, b, linewidth=1.2, linestyle="--", label=titles[1])
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    top.set_ylabel("value")
    top.set_title(f"{titles[0]}  and  {titles[1]}", fontsize="small", parse_math=False)
    bottom.plot(index, a - b, linewidth=1.0, color="black")
    bottom.axhline(0.0, linewidth=0.5, color="grey")
    bottom.set_ylabel("A − B")
    bottom.set_xlabel(x_label)
    bottom.set_title(titles[2], fontsize="small", parse_math=False)
    for axes in (top, bottom):
        axes.grid(True, linewidth=0.3, alpha=0.5)
    _save_laid_out(figure, path, dpi)


def _stack_panel(count: int) -> float:
    """Inches of one panel of a stack of ``count`` rows of three."""
    return 2.6 if count <= 4 else 1.8


def _save_difference_stack(a: np.ndarray, b: np.ndarray, path: str, *, titles: Sequence[str], dpi: float) -> None:
    difference = a - b
    pixels = math.ceil(_stack_panel(len(a)) * dpi)
    panels = []
    for row in range(len(a)):
        # each head in its own scale (ALiBi's slopes differ by 2^8 between heads: one scale over all
        # of them draws the last heads blank), A and B in one, A − B in its own
        both = value_range(np.stack([a[row], b[row]]).reshape(2, -1))
        cells = [block_average(matrix, pixels, pixels, uniform=True) for matrix in (a[row], b[row])]
        cells.append(block_extreme(difference[row], cells[0].row_edges, cells[0].col_edges))  # A − B: largest |·|
        panels.append((both, value_range(difference[row]), cells))
    _draw_difference_stack(panels, path, titles=titles, dpi=dpi)


def _draw_difference_stack(panels, path: str, *, titles: Sequence[str], dpi: float) -> None:
    """Rows of A, B and A − B: ``panels`` holds, per row, the range of A and B, that of A − B, and the three cells."""
    image_format(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    count = len(panels)
    panel = _stack_panel(count)
    figsize = (3 * panel + 2.0, count * panel + 0.6)
    figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    grid = figure.subplots(count, 3, squeeze=False)
    colormap = _masking("RdBu")
    # NaN/inf of A and B together (their one range counts them), of A − B: named under the first row's titles
    masked = [sum(both.nonfinite for both, _, _ in panels), sum(difference.nonfinite for _, difference, _ in panels)]
    captions = [_masked_caption(masked[0]).replace("\ngrey:", "\ngrey (A and B):"), "", _masked_caption(masked[1])]
    # the A − B cells are block extremes (:func:`block_extreme`): said where a block holds more than one value
    titles = _largest_titles(titles, [panels[0][2][0], panels[0][2][1], panels[0][2][2]], (2,))
    for row, (both, difference, cells) in enumerate(panels):
        limits = [color_limits(both), color_limits(both), color_limits(difference)]
        meshes = []
        for column, shrunk in enumerate(cells):
            axes = grid[row, column]
            low, high = limits[column]
            meshes.append(draw_cells(axes, shrunk, cmap=colormap, low=low, high=high,
                                     x_label="key j" if row == count - 1 else "", y_label=""))  # fmt: skip
            _compact_index_ticks(axes)
            axes.set_ylabel(f"{row}\nquery i" if column == 0 else "", fontsize="small")
            axes.tick_params(labelsize="x-small")
            if row == 0:
                axes.set_title(titles[column] + captions[column], fontsize="small", parse_math=False)
        for mesh, columns, span in ((meshes[0], [grid[row, 0], grid[row, 1]], both), (meshes[2], [grid[row, 2]],
                                                                                    difference)):  # fmt: skip
            bar = figure.colorbar(mesh, ax=columns, shrink=0.9, pad=0.01)
            bar.ax.tick_params(labelsize="x-small")
            mark_spanless(bar, spanless(span), span.low)  # a head whose A − B is all 0: "all 0", no scale
    _save_laid_out(figure, path, dpi)


def save_difference_chunks(
    chunk_pairs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]],
    shape: Sequence[int],
    path: str,
    *,
    labels: tuple[str, str],
    dpi: float = 100,
) -> None:
    """:func:`save_difference` of two tables of ``shape`` given as matching row chunks, never held whole.

    ``chunk_pairs()`` yields (rows of A, the same rows of B) in order (a ``(heads, L, L')`` stack: its
    heads' rows one after another); chunks may be overwritten once the next is asked for. The panels
    are the same block means as :func:`save_difference` draws, summed chunk by chunk: memory in
    proportion to the figure's cells, not the tables. A 2-D table is read twice (its value ranges and
    the rows that show its structure, then the block sums), a stack once. A table of one row or one
    column is drawn as lines of all its values, so its values are held (as :func:`save_difference`).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "diff.png")
        >>> a = np.sin(np.arange(4000.0)).reshape(400, 10)
        >>> save_difference_chunks(lambda: ((a[i : i + 64], a[i : i + 64] + 1) for i in range(0, 400, 64)),
        ...                        a.shape, path, labels=("a", "b"))
        >>> os.path.getsize(path) > 0
        True
    """
    shape = tuple(int(n) for n in shape)
    if len(shape) < 2 or (len(shape) == 2 and 1 in shape):
        pairs = [(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)) for a, b in chunk_pairs()]
        a, b = (np.concatenate([pair[side] for pair in pairs]).reshape(shape) for side in (0, 1))
        save_difference(a, b, path, labels=labels, dpi=dpi)
        return
    titles = [f"A: {labels[0]}", f"B: {labels[1]}", "A − B"]
    if len(shape) == 2:
        _save_difference_chunks_2d(chunk_pairs, shape, path, titles=titles, dpi=dpi)
        return
    heads, rows, cols = math.prod(shape[:-2]), shape[-2], shape[-1]
    if heads > MOST_DIFFERENCE_ROWS:
        raise ValueError(f"{heads} tables of {rows} × {cols}: more than {MOST_DIFFERENCE_ROWS} rows of panels")
    pixels = math.ceil(_stack_panel(heads) * dpi)
    row_edges, col_edges = block_edges(rows, pixels, uniform=True), block_edges(cols, pixels, uniform=True)
    sums = [[_BlockSums(head * rows, row_edges, col_edges), _BlockSums(head * rows, row_edges, col_edges),
             _BlockExtremes(head * rows, row_edges, col_edges)] for head in range(heads)]  # fmt: skip
    ranges = [[_EMPTY_RANGE] * 2 for _ in range(heads)]
    for start, tables in _float64_chunks(chunk_pairs):
        stop = start + len(tables[0])
        for head in range(start // rows, (stop - 1) // rows + 1):
            part = slice(max(head * rows, start) - start, min((head + 1) * rows, stop) - start)
            pieces = [table[part] for table in tables]
            ranges[head] = [_merged(ranges[head][0], *pieces[:2]), _merged(ranges[head][1], pieces[2])]
            for block_sums, piece in zip(sums[head], pieces, strict=True):
                block_sums.add(piece, start + part.start)
    panels = [(both, diff, [block_sums.cells() for block_sums in head_sums])
              for (both, diff), head_sums in zip(ranges, sums, strict=True)]  # fmt: skip
    _draw_difference_stack(panels, path, titles=titles, dpi=dpi)


_EMPTY_RANGE = ValueRange(float("nan"), float("nan"), 0)


def _merged(known: ValueRange, *tables: np.ndarray) -> ValueRange:
    """``known`` widened by the finite range of ``tables``."""
    low, high, nonfinite = known
    for table in tables:
        seen = value_range(table)
        if np.isfinite(seen.low):
            low = seen.low if not np.isfinite(low) else min(low, seen.low)
            high = seen.high if not np.isfinite(high) else max(high, seen.high)
        nonfinite += seen.nonfinite
    return ValueRange(low, high, nonfinite)


def _float64_chunks(chunk_pairs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]):
    """(first row, [A, B, A − B]) per chunk, in float64 as :func:`save_difference` computes them."""
    start = 0
    for a, b in chunk_pairs():
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        yield start, [a, b, a - b]
        start += len(a)


class _BlockSums:
    """The block means of :func:`~pecli.render.downsample.block_average` (non-finite values left out),
    summed from row chunks: rows ``offset + row_edges`` of the chunks' rows, columns ``col_edges``."""

    def __init__(self, offset: int, row_edges: np.ndarray, col_edges: np.ndarray) -> None:
        self.offset, self.row_edges, self.col_edges = offset, row_edges, col_edges
        self.col_sizes = np.diff(col_edges).astype(np.float64)
        self.sums = np.zeros((len(row_edges) - 1, len(col_edges) - 1))
        self.counts = np.zeros_like(self.sums)

    def add(self, rows: np.ndarray, start: int) -> None:
        """Add ``rows``, the chunks' rows from ``start`` on (within this table's)."""
        edges = self.row_edges + self.offset
        stop = start + len(rows)
        first = max(int(np.searchsorted(edges, start, side="right")) - 1, 0)
        for block in range(first, len(edges) - 1):
            low, high = int(edges[block]), int(edges[block + 1])
            if low >= stop:
                break
            part = rows[max(low, start) - start : min(high, stop) - start]
            if len(part):
                self._gather(block, part)

    def _gather(self, block: int, part: np.ndarray) -> None:
        """Add ``part``, rows of row block ``block``."""
        total = np.asarray(np.sum(part, axis=0, dtype=np.float64))
        if np.isfinite(total).all():  # every value in the part is finite
            self.sums[block] += self._columns(total)
            self.counts[block] += self.col_sizes * len(part)
            return
        finite = np.isfinite(part)
        self.sums[block] += self._columns(np.where(finite, part, 0).sum(axis=0, dtype=np.float64))
        self.counts[block] += self._columns(finite.sum(axis=0, dtype=np.float64))

    def _columns(self, values: np.ndarray) -> np.ndarray:
        if len(self.col_edges) - 1 == values.shape[-1]:
            return values
        return np.add.reduceat(values, self.col_edges[:-1], axis=-1)

    def cells(self) -> Downsampled:
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(self.counts > 0, self.sums / self.counts, np.nan)
        return Downsampled(values, self.row_edges, self.col_edges)


class _BlockExtremes(_BlockSums):
    """The block extremes of :func:`~pecli.render.downsample.block_extreme` (the signed value of the largest
    magnitude, non-finite values left out), gathered from row chunks as :class:`_BlockSums` gathers means."""

    def __init__(self, offset: int, row_edges: np.ndarray, col_edges: np.ndarray) -> None:
        super().__init__(offset, row_edges, col_edges)
        self.high = np.full((len(row_edges) - 1, len(col_edges) - 1), np.nan)  # each block's largest value so far
        self.low = self.high.copy()  # and its smallest

    def _gather(self, block: int, part: np.ndarray) -> None:
        high, low = block_column_extremes(*column_extremes(part), self.col_edges)
        self.high[block] = np.fmax(self.high[block], high)
        self.low[block] = np.fmin(self.low[block], low)

    def cells(self) -> Downsampled:
        return Downsampled(signed_extreme(self.high, self.low), self.row_edges, self.col_edges)


def _structure_rows(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The rows :func:`~pecli.render.downsample.column_structure` reads (every ``step``-th: the same
    answer as the whole table's), the rows j, j + 1, j + 2 that :func:`~pecli.render.downsample.row_structure`
    compares, and the column step it reads them at (as its ``_alternates``)."""
    column_rows = np.arange(0, rows, max(1, rows // 256), dtype=np.int64)
    window = alternation_window(rows) if rows >= 3 else np.zeros(0, dtype=np.int64)
    return column_rows, window, max(1, cols // 256)


def _column_lines(kept_rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Of the ``kept_rows`` rows :func:`_structure_rows` samples for the column structure, the ones and the columns
    :func:`~pecli.render.downsample.column_structure` compares (every step-th row, at the columns j, j + 1, j + 2
    of its alternation window): with the first row whole, all that it reads (not the sampled rows × every column:
    64 rows of 10^6 columns were 1.5 GB for the three panels)."""
    if cols < 4 or cols % 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.arange(0, kept_rows, max(1, kept_rows // 256), dtype=np.int64), alternation_window(cols)


def _columns_structure(first_row: np.ndarray, lines: np.ndarray) -> AxisStructure:
    """:func:`~pecli.render.downsample.column_structure` (no metadata) of the sampled rows, from their first
    row whole and ``lines``, their columns as :func:`_column_lines` picks them: the same tests, on the same values.

    >>> import pecli
    >>> table = pecli.encode("sinusoidal", 64, 32)
    >>> rows, columns = _column_lines(len(table), table.shape[1])
    >>> _columns_structure(table[0], table[rows][:, columns]) == column_structure(table)
    True
    """
    cols = len(first_row)
    if cols < 4 or cols % 2:
        return AxisStructure()
    first, half = np.asarray(first_row, dtype=np.float64), cols // 2
    if np.allclose(first[0::2], 0) and np.allclose(first[1::2], 1):
        return AxisStructure(period=2)
    if np.allclose(first[:half], first[0]) and np.allclose(first[half:], 1 - first[0]) and first[0] in (0, 1):
        return AxisStructure(segments=2)
    return AxisStructure(period=2) if sample_alternates(np.asarray(lines, dtype=np.float64).T) else AxisStructure()


def _rows_alternate(rows: int, sample: np.ndarray) -> AxisStructure:
    """:func:`~pecli.render.downsample.row_structure` of a table of ``rows`` rows from its rows j, j + 1,
    j + 2 (``sample``, as :func:`_structure_rows` picks them): the same test, on the same values."""
    if rows < 4 or rows % 2:
        return AxisStructure()
    return AxisStructure(period=2) if sample_alternates(sample) else AxisStructure()


def _save_difference_chunks_2d(chunk_pairs, shape: tuple[int, ...], path: str, *, titles: Sequence[str],
                               dpi: float) -> None:  # fmt: skip
    rows, cols = shape
    column_rows, triple_rows, col_step = _structure_rows(rows, cols)
    line_rows, line_columns = _column_lines(len(column_rows), cols)
    wanted_column, wanted_triple = set(column_rows[line_rows].tolist()), set(triple_rows.tolist())
    ranges = [_EMPTY_RANGE] * 3
    first_rows: list[np.ndarray] = [np.zeros(0), np.zeros(0), np.zeros(0)]
    kept: list[dict[int, np.ndarray]] = [{}, {}, {}]
    kept_triples: list[dict[int, np.ndarray]] = [{}, {}, {}]
    for start, tables in _float64_chunks(chunk_pairs):  # pass 1: value ranges, the rows that show structure
        ranges = [_merged(known, table) for known, table in zip(ranges, tables, strict=True)]
        for row in range(start, start + len(tables[0])):
            for index, table in enumerate(tables):
                if row == 0:
                    first_rows[index] = table[0].copy()
                if row in wanted_column:
                    kept[index][row] = table[row - start, line_columns]
                if row in wanted_triple:
                    kept_triples[index][row] = table[row - start, ::col_step].copy()
    figure, axes_row, figsize = _heatmap_canvas(3, dpi, 4.5)
    shared = _joint_limits(ranges[:2])
    limits = [shared, shared, color_limits(ranges[2])]
    sums = []
    for index, axes in enumerate(axes_row):
        lines = np.stack([kept[index][row] for row in column_rows[line_rows].tolist()]) if len(line_rows) else None
        triples = np.stack([kept_triples[index][row] for row in triple_rows.tolist()]) if len(triple_rows) else None
        by_rows = _rows_alternate(rows, triples) if triples is not None else AxisStructure()
        max_rows, max_cols = _panel_pixels(axes, figsize, dpi)
        row_edges = block_edges(rows, max_rows, uniform=True, structure=by_rows)
        by_columns = _columns_structure(first_rows[index], lines) if lines is not None else AxisStructure()
        col_edges = block_edges(cols, max_cols, uniform=True, structure=by_columns)
        sums.append((_BlockExtremes if index == 2 else _BlockSums)(0, row_edges, col_edges))
    del kept, kept_triples, first_rows
    for start, tables in _float64_chunks(chunk_pairs):  # pass 2: the block sums
        for block_sums, table in zip(sums, tables, strict=True):
            block_sums.add(table, start)
    cells = [block_sums.cells() for block_sums in sums]
    titles = _largest_titles(titles, cells, (2,))
    both = merge_ranges(ranges[:2])
    _draw_heatmaps(figure, axes_row, cells, limits, path, titles=titles,
                   x_label="Embedding Dimension", y_label="Position", cmap="RdBu", dpi=dpi,
                   masked=[seen.nonfinite for seen in ranges], spans=[both, both, ranges[2]])  # fmt: skip
