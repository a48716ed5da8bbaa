"""The terminal heatmap: numpy and string building only (no matplotlib, rich or torch imports).

Each character cell shows two table rows with the upper half block '▀': its foreground colour is
the upper row, its background the lower one. Colours follow a matplotlib colormap (RdBu for
signed tables, viridis for non-negative ones), in 24-bit "truecolor", xterm 256-colour palette
entries chosen to keep the map's order (:func:`ordered_xterm`), or, without colour, one row per
line drawn with the character ramp :data:`RAMP`. Large tables are block-averaged first
(:func:`pecli.render.downsample.block_average`), never strided.

>>> import numpy as np
>>> print(heatmap(np.array([[-1.0, 0.0, 1.0]]), width=40, height=8, color="none",
...               x_label="Embedding Dimension", y_label="Position"))
Position ↓  Embedding Dimension →
   0 2
  ┌┬─┬
0 ┤ +@
   [ .:-=+*#%@] -1 … 1   1 × 3
   values -1 … 1
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from pecli.render.downsample import (
    AxisStructure,
    Downsampled,
    block_average,
    block_edges,
    column_structure,
    resample_columns,
    row_structure,
)
from pecli.render.palette import LUT_SIZE, RDBU, VIRIDIS, colormap_lut, ordered_xterm, rdbu_lut, xterm_order
from pecli.render.scale import ValueRange, color_scale, merge_ranges, value_range

__all__ = [
    "COLOR_MODES",
    "RAMP",
    "RDBU",
    "VIRIDIS",
    "color_mode",
    "colormap_lut",
    "frame_lines",
    "grid_layout",
    "heatmap",
    "heatmap_stack",
    "ordered_xterm",
    "rdbu_lut",
    "stack_layout",
]

#: the character ramp for output without colour, lowest value first
RAMP = " .:-=+*#%@"
#: whole column blocks of one size are kept while they fill this share of the width; else the columns
#: are averaged by area to fill it (for tables up to this many times wider than the room)
_FILLED, _RESAMPLE_MOST = 0.75, 8
#: "ascii": no colour, and the frame drawn in ASCII too, for a stdout whose encoding lacks the box characters
COLOR_MODES = ("truecolor", "256", "none", "ascii")
#: the view's characters as a stdout that can only encode ASCII gets them (one character for one, so the
#: lines keep their width)
_ASCII = str.maketrans({
    "─": "-", "┬": "+", "┌": "+", "┤": "+", "│": "|", "↓": "v", "→": ">", "…": "~", "×": "x", "−": "-",
    "▀": "#", "▄": "#", "≈": "~", "—": "-", "–": "-", "≤": "<", "≥": ">", "·": ".", "•": "*", "╌": "-",
    "└": "+", "┘": "+", "├": "+", "┴": "+", "┼": "+", "β": "b", "≲": "<", "≳": ">", "÷": "/",
})  # fmt: skip
#: characters :func:`heatmap` may draw: a stdout that cannot encode them gets the "ascii" mode
_DRAWN = "▀▄─┬┌┤│↓→…×"
_UPPER_HALF, _LOWER_HALF = "▀", "▄"
_RESET = "\x1b[0m"
_DEFAULT_BACKGROUND = "\x1b[49m"
_MASKED_CHAR = "?"
#: lines around the plot: the axis caption, the tick labels, the tick marks, the legend and the value line
_FRAME_LINES = 5


def frame_lines(*, title: bool, header: bool = True, legend: bool = True, values: bool = True) -> int:
    """Lines :func:`heatmap` draws around the cells: the title, the header (axis caption and two tick
    lines), the colour legend and the value line.

    >>> frame_lines(title=True), frame_lines(title=True, header=False, legend=False, values=False)
    (6, 1)
    """
    return int(title) + 3 * int(header) + int(legend) + int(values)


@functools.lru_cache(maxsize=4)
def _sgr_codes(color: str, cmap: str = "RdBu") -> tuple[list[str], list[str]]:
    """Foreground and background escape sequences for each of the LUT_SIZE colours."""
    lut = colormap_lut(cmap)
    if color == "truecolor":
        fg = [f"\x1b[38;2;{r};{g};{b}m" for r, g, b in lut.tolist()]
        bg = [f"\x1b[48;2;{r};{g};{b}m" for r, g, b in lut.tolist()]
    else:
        indices = xterm_order(cmap)
        fg = [f"\x1b[38;5;{n}m" for n in indices]
        bg = [f"\x1b[48;5;{n}m" for n in indices]
    return fg, bg


def color_mode(
    output: Any, force_terminal: bool = False, no_color: bool = False, environ: Mapping[str, str] | None = None
) -> str:
    """ "truecolor", "256", "none" or "ascii" for a heatmap written to ``output``'s stdout.

    "ascii" (no colour, the frame in ASCII: ``v``, ``-``, ``|``, ``+``) when the stdout's encoding
    cannot hold the half blocks and box characters (``PYTHONIOENCODING=ascii``). No colour with
    ``--no-color``, ``NO_COLOR`` (https://no-color.org), ``TERM=dumb``, or a stdout that is not a
    terminal (unless ``force_terminal``, i.e. ``--terminal``). Otherwise 24-bit colour when
    ``COLORTERM`` says ``truecolor`` or ``24bit``, and the xterm 256-colour palette for any other
    terminal (what ``TERM=xterm-256color``, ``screen-256color``, ``tmux-256color`` offer).

    Args:
        output: an object with a ``stdout_is_terminal`` attribute, such as :class:`pecli.cli.output.Output`.
        force_terminal: draw colours even when stdout is not a terminal.
        no_color: the ``--no-color`` flag.
        environ: the environment to read (default ``os.environ``).

    Example:
        >>> from types import SimpleNamespace
        >>> tty = SimpleNamespace(stdout_is_terminal=True)
        >>> color_mode(tty, environ={"TERM": "xterm-256color", "COLORTERM": "truecolor"})
        'truecolor'
        >>> color_mode(tty, environ={"TERM": "xterm-256color"}), color_mode(tty, environ={"TERM": "dumb"})
        ('256', 'none')
        >>> color_mode(SimpleNamespace(stdout_is_terminal=False), environ={"COLORTERM": "24bit"})
        'none'
        >>> color_mode(SimpleNamespace(stdout_is_terminal=True, stdout=SimpleNamespace(encoding="ascii")), environ={})
        'ascii'
    """
    environ = os.environ if environ is None else environ
    if not _can_encode(getattr(getattr(output, "stdout", None), "encoding", None)):
        return "ascii"
    if no_color or "NO_COLOR" in environ or environ.get("TERM") == "dumb":
        return "none"
    if not (force_terminal or getattr(output, "stdout_is_terminal", False)):
        return "none"
    if environ.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return "truecolor"
    return "256"


def _can_encode(encoding: str | None) -> bool:
    """Whether a stream in ``encoding`` (None: a text buffer, any) takes every character a heatmap draws."""
    if not isinstance(encoding, str):
        return True
    try:
        _DRAWN.encode(encoding)
    except (UnicodeError, LookupError):
        return False
    return True


def ascii_text(text: str) -> str:
    """``text`` with the view's characters in ASCII (``↓`` → ``v``, ``─`` → ``-``, ``…`` → ``~``), one for one.

    >>> ascii_text("Position ↓  Dimension →  8 × 16")
    'Position v  Dimension >  8 x 16'
    """
    return text.translate(_ASCII)


def _format_value(value: float) -> str:
    text = f"{value:.4g}"
    return "0" if text == "-0" else text


def _nice_step(span: int, most: int) -> int:
    """The smallest 1, 2 or 5 × 10^k integer step giving at most ``most`` ticks over ``span`` indices."""
    raw = max(span / max(most, 1), 1.0)
    magnitude = 10 ** math.floor(math.log10(raw))
    # 10 × magnitude always exceeds raw, so a step is always found
    return int(next(factor * magnitude for factor in (1, 2, 5, 10) if factor * magnitude >= raw))


def _ticks(edges: np.ndarray, start: int, most: int) -> list[tuple[int, int]]:
    """(cell, label) pairs: round indices ``start + k·step`` and the display cell that holds each."""
    span = int(edges[-1])
    step = _nice_step(span, most)
    first = -(-start // step) * step
    return [
        (int(np.searchsorted(edges, value - start, side="right")) - 1, value)
        for value in range(first, start + span, step)
    ]


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _row_label(index: int, row_values: tuple[float, float]) -> str:
    """The label of row ``index``: the index itself, or ``start + step × index`` (a timestep, say)."""
    if row_values == (0.0, 1.0):
        return str(index)
    return _format_value(row_values[0] + row_values[1] * index)


def _row_label_width(rows: int, y_ticks_from: int, row_values: tuple[float, float]) -> int:
    ends = (y_ticks_from, y_ticks_from + rows - 1)
    return max(len(str(ends[1])), *(len(_row_label(end, row_values)) for end in ends))


def heatmap_cells(
    rows: int,
    *,
    width: int,
    height: int,
    color: str,
    title: str | None,
    y_ticks_from: int = 0,
    row_values: tuple[float, float] = (0.0, 1.0),
    header: bool = True,
    legend: bool = True,
    values: bool = True,
) -> tuple[int, int]:
    """The most cell rows and columns :func:`heatmap` draws for a table of ``rows`` rows.

    >>> heatmap_cells(1000, width=80, height=24, color="truecolor", title="t")
    (36, 75)
    """
    margin = _row_label_width(rows, y_ticks_from, row_values) + 2
    plot_lines = max(height - frame_lines(title=bool(title), header=header, legend=legend, values=values), 1)
    return plot_lines * (1 if color in ("none", "ascii") else 2), max(width - margin, 1)


def heatmap(
    matrix: np.ndarray | Downsampled,
    *,
    width: int,
    height: int,
    color: str,
    x_label: str,
    y_label: str,
    title: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str | None = None,
    structure: AxisStructure | None = None,
    x_ticks_from: int = 0,
    y_ticks_from: int = 0,
    row_values: tuple[float, float] = (0.0, 1.0),
    header: bool = True,
    legend: bool = True,
    values: bool = True,
    values_range: ValueRange | None = None,
    whole: ValueRange | None = None,
) -> str:
    """Draw a 2-D table as a text block of at most ``width`` columns and ``height`` lines.

    The block holds the title, the axis caption, dimension ticks along the top, position ticks
    down the side, the heatmap, a colour legend with the colour limits, and the finite value
    range. Colour limits default to symmetric around 0 (:func:`pecli.render.scale.color_limits`);
    NaN and ±inf are masked (blank in colour, ``?`` without). The table is block-averaged to fit.

    Args:
        matrix: a 2-D array, rows = positions; or its cells already averaged (a
            :class:`~pecli.render.downsample.Downsampled` on blocks of one size, at most
            :func:`heatmap_cells`), drawn as given. Blocks are all of one size but for a shorter
            last one (averaged over the rows or columns it has: none is left out) and never split
            a sin/cos pair or half (``structure``, default :func:`~pecli.render.downsample.column_structure`).
        width, height: the size of the whole text block in character cells.
        color: "truecolor", "256" or "none" (see :func:`color_mode`).
        x_label, y_label: axis names, e.g. "Embedding Dimension" and "Position".
        title: a first line, e.g. the scheme and its parameters.
        vmin, vmax: colour limits.
        structure: what a block of columns must not split (pairs, halves), when the caller knows.
        cmap: the colormap (default: RdBu for signed data, viridis for non-negative data; see
            :func:`pecli.render.scale.color_scale`); RdBu and viridis are built in, others come from matplotlib.
        x_ticks_from, y_ticks_from: the index of the first column and row (after ``--cols/--rows``).
        row_values: ``(start, step)``: row ``i`` is labelled ``start + step × i`` (timesteps).
        header, legend, values: draw the axis caption and column ticks, the colour legend, and the
            value line (panels stacked in one scale draw the header once and the legend once).
        values_range: the range the value line states (panels in one scale: all of them), default
            this table's.
        whole: the range of the whole table's values, where ``matrix`` is its cells averaged already
            and the caller knows that range exactly (a Toeplitz bias, from its offset curve): the value
            line states it as the values, not the cells' narrower range.

    Returns:
        The text, lines joined by newlines, without a final newline.

    Example:
        >>> text = heatmap(np.eye(4) - 0.5, width=40, height=12, color="truecolor", x_label="x", y_label="y")
        >>> text.count("▀"), "\\x1b[38;2;5;48;97m" in text  # 2 lines of 4 cells; 0.5 is RdBu's darkest blue
        (8, True)
    """
    if color not in COLOR_MODES:
        raise ValueError(f"color must be one of {COLOR_MODES}, got {color!r}")
    given = matrix if isinstance(matrix, Downsampled) else None
    source = given.values if given is not None else np.asarray(matrix)
    if source.ndim != 2 or 0 in source.shape:
        raise ValueError(f"heatmap takes a non-empty 2-D table, got shape {source.shape}")
    data = value_range(source)
    scale = color_scale(source, vmin=vmin, vmax=vmax, cmap=cmap, data=data)
    low, high, cmap, flat = scale.low, scale.high, scale.cmap, scale.flat

    rows, cols = (int(given.row_edges[-1]), int(given.col_edges[-1])) if given is not None else source.shape
    label_width = _row_label_width(rows, y_ticks_from, row_values)
    margin = label_width + 2
    rows_per_line = 1 if color in ("none", "ascii") else 2
    # blocks of one size, so every cell means the same thing (near-equal blocks that mix single
    # columns with pairs draw stripes that are not in the data), but for a last one as near their
    # size as it goes: every row and column is drawn, none left out
    grid = heatmap_cells(
        rows, width=width, height=height, color=color, title=title, y_ticks_from=y_ticks_from, row_values=row_values,
        header=header, legend=legend, values=values,
    )  # fmt: skip
    if given is None:
        structure = column_structure(source) if structure is None else structure
        rows_alike = row_structure(source)
        whole_blocks = block_average(
            source, *grid, uniform=True, structure=structure, row_structure=rows_alike, even=True
        )
        shrunk = whole_blocks
        if cols > grid[1] and len(whole_blocks.col_edges) - 1 < _FILLED * grid[1] and cols <= _RESAMPLE_MOST * grid[1]:
            # blocks of one size would leave much of the width empty (64 columns in 60: 32 blocks of 2)
            rows_only = block_average(source, grid[0], cols, uniform=True, row_structure=rows_alike, even=True)
            resampled = resample_columns(rows_only.values, grid[1], structure)
            if resampled is not None and resampled.values.shape[1] > len(whole_blocks.col_edges) - 1:
                shrunk = Downsampled(resampled.values, rows_only.row_edges, resampled.col_edges)
    else:
        shrunk = given
    cells = shrunk.values
    shown_rows, shown_cols = cells.shape

    lines: list[str] = []
    if title:
        lines.append(_truncate(title, width))
    if header:
        lines.append(_truncate(f"{y_label} ↓  {x_label} →", width))

    x_label_width = len(str(x_ticks_from + cols - 1))
    x_ticks = _ticks(shrunk.col_edges, x_ticks_from, -(-shown_cols // (x_label_width + 1)))
    tick_labels = [" "] * shown_cols
    tick_marks = ["─"] * shown_cols
    free_from = 0
    for cell, value in x_ticks:
        text = str(value)
        if cell < free_from or cell + len(text) > shown_cols:
            continue
        tick_labels[cell : cell + len(text)] = text
        tick_marks[cell] = "┬"
        free_from = cell + len(text) + 1
    if header:
        lines.append(" " * margin + "".join(tick_labels).rstrip())
        lines.append(" " * (margin - 1) + "┌" + "".join(tick_marks))

    # colour indices as matplotlib's Normalize + Colormap compute them; -1 marks a masked cell
    with np.errstate(invalid="ignore"):
        scaled = np.clip((cells - low) / (high - low) * LUT_SIZE, 0, LUT_SIZE - 1)
    indices = np.where(np.isfinite(cells), np.nan_to_num(scaled), -1).astype(np.int64)

    text_lines = math.ceil(shown_rows / rows_per_line)
    line_of_row = np.arange(shown_rows) // rows_per_line
    y_labels: dict[int, str] = {}
    for cell, value in _ticks(shrunk.row_edges, y_ticks_from, max(text_lines // 4, 1)):
        line = int(line_of_row[cell])
        if all(abs(line - other) > 1 for other in y_labels):
            y_labels[line] = _row_label(value, row_values)
    body = _ramp_lines(indices) if color in ("none", "ascii") else _color_lines(indices, *_sgr_codes(color, cmap))
    for line, text in enumerate(body):
        axis = f"{y_labels[line]:>{label_width}} ┤" if line in y_labels else " " * label_width + " │"
        lines.append(axis + text)

    room = width - margin
    legend_text, legend_width = _legend(color, cmap, low, high, room=room, flat=flat)
    area_means = not np.array_equal(shrunk.col_edges, np.round(shrunk.col_edges))
    means = "area means" if area_means else "block means"  # area: columns averaged by area to fill the width
    shape = f"   {rows} × {cols}" + (f" → {shown_rows} × {shown_cols} {means}" if shrunk.shrunk else "")
    # a view that averages always says so: beside the legend, else first on the value line, else (no
    # value line: a stacked panel) beside a shorter colour bar, in fewer words if need be
    said = not shrunk.shrunk or not legend
    if legend:
        if shrunk.shrunk and not values and legend_width + len(shape) > room:
            shape = _fit_note(color, cmap, low, high, flat, room, [shape, f"  {means}", "  means"], legend_width)
            legend_text, legend_width = _legend(color, cmap, low, high, room=max(room - len(shape), 1), flat=flat)
        fits = legend_width + len(shape) <= room
        said = said or fits
        lines.append(" " * margin + legend_text + (shape if fits else ""))
    if not values:
        return _finish(lines, color)
    stated = whole or (data if values_range is None else values_range)
    value_text = (
        # cells averaged before they came here (a long distance matrix) range less far than its values
        # (named once: after "… block means of …" on this line, "range")
        f"{('block means' if said else 'range') if given is not None and given.shrunk and whole is None else 'values'} "
        f"{_format_value(stated.low)} … "
        f"{_format_value(stated.high)}"
        if np.isfinite(stated.low)
        else ""
    )
    masked = f"{stated.nonfinite} NaN/inf masked" if stated.nonfinite else ""
    averaged = ""
    if not said:  # in fewer words when the value line cannot go on to a second line
        wordings = [f"{shown_rows} × {shown_cols} {what} of {rows} × {cols}" for what in (means, "means")]
        fitting = [text for text in wordings if len(f"{text}; {value_text}") <= room]
        averaged = wordings[0] if len(lines) + 1 < height else (fitting or [means])[0]
    parts = [part for part in (averaged, value_text, masked) if part]
    # the parts on as many lines as the height leaves (at least one), the last one shortened
    footer = [""]
    for part in parts:
        joined = f"{footer[-1]}; {part}" if footer[-1] else part
        if len(joined) <= room or not footer[-1] or len(lines) + len(footer) >= height:
            footer[-1] = joined
        else:
            footer.append(part)
    lines.extend(" " * margin + _truncate(text, room) for text in footer)
    return _finish(lines, color)


def _finish(lines: list[str], color: str) -> str:
    text = "\n".join(lines)
    return ascii_text(text) if color == "ascii" else text


def _ramp_lines(indices: np.ndarray) -> list[str]:
    ramp = np.array([*RAMP, _MASKED_CHAR])
    steps = np.where(indices >= 0, indices * len(RAMP) // LUT_SIZE, len(RAMP))
    return ["".join(row) for row in ramp[steps].tolist()]


def _color_lines(indices: np.ndarray, fg: list[str], bg: list[str]) -> list[str]:
    if indices.shape[0] % 2:
        indices = np.vstack([indices, np.full((1, indices.shape[1]), -1)])
    lines = []
    for upper_row, lower_row in zip(indices[0::2].tolist(), indices[1::2].tolist(), strict=True):
        parts: list[str] = []
        current_fg = current_bg = None
        for upper, lower in zip(upper_row, lower_row, strict=True):
            if upper >= 0:  # '▀': foreground = upper row, background = lower row (or the terminal's)
                char, want_fg, want_bg = _UPPER_HALF, fg[upper], bg[lower] if lower >= 0 else _DEFAULT_BACKGROUND
            elif lower >= 0:
                char, want_fg, want_bg = _LOWER_HALF, fg[lower], _DEFAULT_BACKGROUND
            else:
                char, want_fg, want_bg = " ", current_fg, _DEFAULT_BACKGROUND
            if want_fg != current_fg:
                parts.append(want_fg)
                current_fg = want_fg
            if want_bg != current_bg:
                parts.append(want_bg)
                current_bg = want_bg
            parts.append(char)
        parts.append(_RESET)
        lines.append("".join(parts))
    return lines


def _fit_note(
    color: str, cmap: str, low: float, high: float, flat: float | None, room: int, wordings: list[str], full: int
) -> str:
    """The first of ``wordings`` (of the averaging note) that fits in ``room`` beside the whole legend
    (``full`` cells) or beside a colour bar of 8 or more cells and its limits; else the last."""
    ends = len(_format_value(low)) + len(_format_value(high)) + 2
    for note in wordings:
        if full + len(note) <= room:
            return note
        if color not in ("none", "ascii") and flat is None and room - len(note) >= ends + 8:
            return note
    return wordings[-1]


def _legend(color: str, cmap: str, low: float, high: float, *, room: int, flat: float | None = None) -> tuple[str, int]:
    """The colour scale from ``low`` to ``high`` in at most ``room`` cells, and its width on screen.

    A gradient of up to 24 cells in colour; the character ramp without. A table of one value
    (``flat``) gets that value's colour and "every one" it, not the span that only gives the map a width.

    >>> _legend("none", "viridis", 3.0, 4.0, room=40, flat=3.0)
    ('[ ] every one 3', 15)
    """
    ends = _format_value(low), _format_value(high)
    if flat is not None:
        index = int(np.clip((flat - low) / (high - low) * LUT_SIZE, 0, LUT_SIZE - 1))
        said = f"every one {_format_value(flat + 0.0)}"
        if color in ("none", "ascii"):
            text = _truncate(f"[{RAMP[index * len(RAMP) // LUT_SIZE]}] {said}", room)
            return text, len(text)
        said = _truncate(said, max(room - 3, 1))
        return f"{_sgr_codes(color, cmap)[1][index]}  {_RESET} {said}", 3 + len(said)
    if color in ("none", "ascii"):
        text = _truncate(f"[{RAMP}] {ends[0]} … {ends[1]}", room)
        return text, len(text)
    _, bg = _sgr_codes(color, cmap)
    steps = max(min(24, room - len(ends[0]) - len(ends[1]) - 2), 2)
    gradient = "".join(bg[round(i * (LUT_SIZE - 1) / (steps - 1))] + " " for i in range(steps))
    text = f"{ends[0]} {gradient}{_RESET} {ends[1]}"
    width = len(ends[0]) + steps + len(ends[1]) + 2
    if width > room:  # too narrow for the limits: the gradient alone
        cells = max(room, 1)
        text = "".join(bg[round(i * (LUT_SIZE - 1) / max(cells - 1, 1))] + " " for i in range(cells)) + _RESET
        width = cells
    return text, width


#: the fewest text lines of cells a stacked panel gets; panels that would get fewer are left out
MIN_PANEL_LINES = 2


def _stack_body(shown: int, height: int, shared: bool) -> int:
    fixed, per_panel = (5, 1) if shared else (3, 2)  # header (+ legend and values once); title (+ its legend)
    return max(MIN_PANEL_LINES, (height - fixed - shown * per_panel) // shown)


def stack_layout(count: int, height: int, *, shared: bool) -> tuple[int, int]:
    """How many of ``count`` stacked panels fit in ``height`` lines, and the ``height`` to give
    :func:`heatmap_cells` for one of them (with a title, header and legend: the most cells any gets).

    >>> stack_layout(8, 12, shared=True), stack_layout(2, 20, shared=True)
    ((2, 8), (2, 12))
    """
    fixed, per_panel = (5, 1) if shared else (3, 2)
    shown = max(1, min(count, (height - fixed) // (per_panel + MIN_PANEL_LINES)))
    return shown, _stack_body(shown, height, shared) + frame_lines(title=True)


#: spaces between panels side by side
PANEL_GAP = 3
#: the narrowest a panel side by side with others is drawn (its title, legend and shape note need the room)
MIN_PANEL_WIDTH = 44
_ESCAPE = re.compile("\x1b\\[[0-9;]*m")


class GridLayout(NamedTuple):
    """Panels of a stack in a grid: how many are ``shown``, how many side by side (``across``), and one
    panel's ``width`` and ``height`` (for :func:`heatmap_cells`, with a title, header and legend)."""

    shown: int
    across: int
    width: int
    height: int


def grid_layout(
    count: int,
    *,
    width: int,
    height: int,
    shared: bool,
    rows: int,
    cols: int,
    color: str = "truecolor",
    y_ticks_from: int = 0,
) -> GridLayout:
    """How :func:`heatmap_stack` lays out ``count`` panels of ``rows`` × ``cols`` in ``width`` × ``height``.

    A panel keeps at least half the lines its cells would need to be square (at most the lines
    that leave room for two panels one under the other, never fewer than :data:`MIN_PANEL_LINES`):
    8 heads of a 64 × 64 bias stacked in 40 lines got 3 lines each, and the diagonal read as bands.
    Panels go one under another while they all fit so; else side by side where the width holds
    more than one at every column a cell (each at least :data:`MIN_PANEL_WIDTH` wide), in rows of
    such panels. Panels that do not fit are left out (the count says so).

    >>> grid_layout(8, width=80, height=38, shared=True, rows=64, cols=64)
    GridLayout(shown=3, across=1, width=80, height=16)
    >>> grid_layout(8, width=200, height=38, shared=True, rows=64, cols=64)
    GridLayout(shown=6, across=2, width=68, height=16)
    >>> grid_layout(8, width=40, height=12, shared=True, rows=8, cols=4).shown  # small panels: all
    2
    """
    margin = _row_label_width(rows, y_ticks_from, (0.0, 1.0)) + 2
    fixed, per_panel = (5, 1) if shared else (3, 2)
    two = (height - fixed) // 2 - per_panel  # the most lines a panel may ask for: two always fit, as they did
    per_line = 1 if color in ("none", "ascii") else 2

    def least(panel_width: int) -> int:
        cell_cols = max(1, min(cols, panel_width - margin))
        # square cells: a text line is about twice as tall as a column is wide (in colour: two rows of cells)
        square = math.ceil(min(rows, cell_cols * rows / max(cols, 1)) / 2)
        return max(MIN_PANEL_LINES, min(math.ceil(square / 2), two))

    def drawn(panel_rows: int) -> int:
        body = _stack_body(panel_rows, height, shared)
        return len(block_edges(rows, body * per_line, uniform=True, even=True)) - 1

    def fitting(most: int, fewest: int) -> int:
        lines = max(1, min(most, (height - fixed) // (per_panel + fewest)))
        # one more row of panels while each still draws as many rows of cells (blocks of one size seldom
        # fill the lines they are given: 64 rows in 30 cells are drawn as 16 blocks of 4)
        while lines < most and (height - fixed) // (lines + 1) - per_panel >= MIN_PANEL_LINES \
                and drawn(lines + 1) == drawn(lines):  # fmt: skip
            lines += 1
        return lines

    def layout(shown: int, across: int, panel_width: int, panel_rows: int) -> GridLayout:
        return GridLayout(shown, across, panel_width, _stack_body(panel_rows, height, shared) + frame_lines(title=True))

    stacked = fitting(count, least(width))
    natural = max(margin + cols, MIN_PANEL_WIDTH)
    across = max(1, min(count, (width + PANEL_GAP) // (natural + PANEL_GAP)))
    if stacked >= count or across == 1:  # one under another, as a stack always was, while that shows them all
        return layout(min(count, stacked), 1, width, stacked)
    # no wider than its cells need: panels side by side sit together, not a screen's width apart
    panel_width = min((width - PANEL_GAP * (across - 1)) // across, natural)
    lines = fitting(-(-count // across), least(panel_width))
    return layout(min(count, lines * across), across, panel_width, lines)


def _visible_width(line: str) -> int:
    return len(_ESCAPE.sub("", line))


def _side_by_side(panels: list[str], width: int) -> str:
    """Text blocks side by side, each padded to ``width`` columns, :data:`PANEL_GAP` apart (short ones: blank lines)."""
    split = [panel.split("\n") for panel in panels]
    tall = max(len(lines) for lines in split)
    out = []
    for index in range(tall):
        parts = [lines[index] if index < len(lines) else "" for lines in split]
        padded = [part + " " * (width - _visible_width(part)) for part in parts[:-1]] + [parts[-1]]
        out.append((" " * PANEL_GAP).join(padded).rstrip(" "))
    return "\n".join(out)


def heatmap_stack(
    matrices: list[np.ndarray | Downsampled],
    titles: list[str],
    *,
    width: int,
    height: int,
    color: str,
    scales: list[tuple[float, float, str]],
    x_label: str,
    y_label: str,
    x_ticks_from: int = 0,
    y_ticks_from: int = 0,
    structure: AxisStructure | None = None,
    whole: ValueRange | None = None,
) -> tuple[str, int]:
    """Panels in ``width`` × ``height`` cells, side by side where they fit (:func:`grid_layout`), then one
    row of them under another; and how many of them fit.

    ``scales`` holds one ``(vmin, vmax, cmap)`` for every panel (one scale), or one per panel (each its
    own scale, each with its own legend). One scale draws the axis caption and column ticks once,
    over the first panel, and the legend once, under the last; each panel has a title line. Panels
    that would get fewer than :data:`MIN_PANEL_LINES` lines of cells are left out (the count says so).
    ``structure``: what a block of columns must not split (RoPE's halves, from the tables' metadata;
    default: judged from each panel's values, which cannot tell a cos panel's halves). ``whole``: the
    range of all the panels' values where they come as cells averaged already (see :func:`heatmap`).

    >>> heads = [np.outer(np.arange(8.0), np.ones(4)) * -m for m in (1.0, 0.5, 0.25)]
    >>> text, shown = heatmap_stack(heads, ["head 0", "head 1", "head 2"], width=40, height=12, color="none",
    ...                             scales=[(-7.0, 0.0, "viridis")], x_label="n", y_label="m")
    >>> shown, len(text.splitlines()) <= 12
    (2, True)
    """
    shared = len(scales) == 1
    first_table = matrices[0]
    rows, cols = (
        (int(first_table.row_edges[-1]), int(first_table.col_edges[-1]))
        if isinstance(first_table, Downsampled)
        else np.shape(first_table)
    )
    layout = grid_layout(len(matrices), width=width, height=height, shared=shared, rows=rows, cols=cols,
                         color=color, y_ticks_from=y_ticks_from)  # fmt: skip
    shown, across = layout.shown, layout.across
    grid_rows = -(-shown // across)
    body = layout.height - frame_lines(title=True)
    blocks = []
    # one scale: the value line under the last panel states the range of every panel drawn
    joined = (
        merge_ranges([value_range(m.values if isinstance(m, Downsampled) else m) for m in matrices[:shown]])
        if shared
        else None
    )
    for grid_row in range(grid_rows):
        panels = []
        for index in range(grid_row * across, min(shown, (grid_row + 1) * across)):
            # the header over the first row of panels, the legend under the last (each its own scale: under each)
            header, last_row = grid_row == 0, grid_row == grid_rows - 1
            legend, values = last_row or not shared, index == shown - 1 and shared
            low, high, cmap = scales[0 if shared else index]
            lines = body + frame_lines(title=True, header=header, legend=legend, values=values)
            panels.append(
                heatmap(matrices[index], width=layout.width, height=lines, color=color, x_label=x_label,
                        y_label=y_label, title=titles[index], vmin=low, vmax=high, cmap=cmap,
                        x_ticks_from=x_ticks_from, y_ticks_from=y_ticks_from, header=header, legend=legend,
                        values=values, values_range=joined, structure=structure, whole=whole if values else None)
            )  # fmt: skip
        blocks.append(_side_by_side(panels, layout.width))
    return "\n".join(blocks), shown
