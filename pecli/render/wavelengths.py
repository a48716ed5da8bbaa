"""The picture of RoPE scaling: each frequency pair's wavelength against the original context.

An image (matplotlib, Agg, no pyplot) and a text chart of a
:class:`pecli.analysis.wavelengths.RopeWavelengths`: wavelength 2π/θ_i on a log axis against the pair
index, before and after the scaling, the original context length as a horizontal line, and the
bands a scaling treats alike (YaRN's ramp, Llama 3's frequency bands) shaded and labelled.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.render.image import image_format, new_figure, save_figure, set_title

if TYPE_CHECKING:
    from pecli.analysis.wavelengths import RopeWavelengths

__all__ = ["save_wavelengths", "wavelength_chart"]

_BAND_COLORS = ("tab:green", "tab:orange", "tab:purple")


def save_wavelengths(
    waves: RopeWavelengths,
    path: str,
    *,
    title: str,
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 5),
) -> None:
    """Draw wavelength against pair index (log scale), before and after scaling, into ``path``.

    Example:
        >>> import os, tempfile
        >>> from pecli.analysis.wavelengths import rope_wavelengths
        >>> path = os.path.join(tempfile.mkdtemp(), "waves.png")
        >>> waves = rope_wavelengths(64, scaling="yarn", factor=4.0, original_max_position=2048)
        >>> save_wavelengths(waves, path, title="rope yarn ×4")
        >>> os.path.getsize(path) > 0
        True
    """
    image_format(path)
    figure, axes = new_figure(figsize, dpi)
    pairs = np.arange(len(waves.inv_freq))
    for band, color in zip(waves.bands, _BAND_COLORS, strict=False):
        axes.axvspan(band.start - 0.5, band.stop - 0.5, color=color, alpha=0.12, linewidth=0)
        axes.text(
            (band.start + band.stop - 1) / 2, 0.98, band.name, transform=axes.get_xaxis_transform(),
            ha="center", va="top", fontsize="small", color=color,
        )  # fmt: skip
    axes.plot(pairs, waves.wavelength_original, "o", markersize=3, color="0.5", label="before scaling")
    if waves.scaling != "none":
        axes.plot(pairs, waves.wavelength, ".-", markersize=4, linewidth=1, label=f"after {waves.scaling} scaling")
    if waves.context_length is not None:
        axes.axhline(waves.context_length, color="tab:red", linestyle="--", linewidth=1)
        axes.text(0, waves.context_length, f" original context {waves.context_length}", va="bottom",
                  fontsize="small", color="tab:red")  # fmt: skip
    axes.set_yscale("log")
    # headroom for the band names: above the longest wavelength, never over a point
    low, high = axes.get_ylim()
    if waves.bands:
        axes.set_ylim(low, high * (high / low) ** 0.15)
    axes.set_xlabel("Frequency pair i")
    axes.set_ylabel(r"Wavelength $2\pi/\theta_i$ (positions)")
    axes.legend(loc="lower right", fontsize="small")
    set_title(axes, title, figsize[0])
    save_figure(figure, path, dpi)


#: the fewest rows the chart's plot keeps when the band legend is shortened to fit the height
_MIN_ROWS = 4


def _band_legends(bands: Any, width: int, indent: str) -> list[list[str]]:
    """The band legend's lines, most said first: name and description (wrapped, never cutting a
    number in half), then the description only where it fits on the line, then the names alone.

    >>> from pecli.analysis.wavelengths import rope_wavelengths
    >>> bands = rope_wavelengths(64, scaling="llama3", factor=8, original_max_position=8192).bands
    >>> [len(legend) for legend in _band_legends(bands, 60, " " * 11)]
    [4, 3, 1]
    >>> _band_legends(bands, 60, "")[-1]
    ['h high frequency  b blended  l low frequency']
    """
    if not bands:
        return [[]]
    if len(indent) + 20 > width:  # a narrow chart: the legend starts at the left edge, not under the plot
        indent = ""
    room = max(width, 1)
    entries = [f"{band.name[0]} {band.name}: {band.description}" for band in bands]
    full = [line for entry in entries
            for line in textwrap.wrap(entry, room, initial_indent=indent, subsequent_indent=indent + "  ")]  # fmt: skip
    names = [f"{band.name[0]} {band.name}" for band in bands]
    # too long for the line: its first clause ("kept", before the formula), else the name alone
    short = [f"{name}: {band.description.split(':')[0]}" for name, band in zip(names, bands, strict=True)]
    each = [
        indent + next((text for text in candidates if len(indent + text) <= room), candidates[-1])
        for candidates in zip(entries, short, names, strict=True)
    ]
    joined = textwrap.wrap("  ".join(names), room, initial_indent=indent, subsequent_indent=indent)
    return [full, each, joined]


#: pairs whose log wavelengths the text chart holds at once (the extremes' pass)
_CHART_SPAN = 1 << 20


def _spans(count: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + _CHART_SPAN, count)) for lo in range(0, count, _CHART_SPAN)] or [(0, 0)]


def _log_wavelengths(waves: RopeWavelengths, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """log10 of pairs ``lo:hi``'s wavelengths before and after scaling (the same values as the whole arrays')."""
    return (np.log10(2 * math.pi / waves.inv_freq_original[lo:hi]), np.log10(2 * math.pi / waves.inv_freq[lo:hi]))


def wavelength_chart(waves: RopeWavelengths, *, width: int, height: int, title: str | None = None) -> str:
    """A text chart: ``·`` the wavelength before scaling, ``•`` after (``•`` alone where equal), log rows.

    The original context is a row of ``╌``; a strip under the axis marks each pair's band by the
    first letter of its name, with the names in a legend.

    Example:
        >>> from pecli.analysis.wavelengths import rope_wavelengths
        >>> print(wavelength_chart(rope_wavelengths(16, length=100), width=30, height=8))
         1.99e+04 ┤      •
                  ┤     •
                  ┤    •
                  ┤╌╌╌•╌╌╌ context 100
                  ┤ ••
             6.28 ┤•
                  └───────
                   0     7  pair i
    """
    pairs = len(waves.inv_freq)
    context = None if waves.context_length is None else math.log10(waves.context_length)
    # the extremes of log wavelength, a block of pairs at a time (d may be huge: no whole-length copies)
    top, bottom = context or -math.inf, context if context is not None else math.inf
    for lo, hi in _spans(pairs):
        for level in _log_wavelengths(waves, lo, hi):
            top, bottom = max(top, float(np.max(level))), min(bottom, float(np.min(level)))
    labels = (f"{10**top:.3g}", f"{10**bottom:.3g}")
    margin = max(len(label) for label in labels) + 2
    lines = [title if len(title) <= width else title[: width - 1] + "…"] if title else []
    # the band legend: the most it can say while the plot keeps _MIN_ROWS rows within the height
    legends = _band_legends(waves.bands, width, " " * (margin + 1))
    frame = len(lines) + 2 + (1 if waves.bands else 0)  # title; the axis and its labels; the band strip
    legend = next((text for text in legends if height - frame - len(text) >= _MIN_ROWS), legends[-1])
    rows = max(2, height - frame - len(legend))
    # the context's label follows its row: the columns leave room for it within the width
    context_label = "" if context is None else f" context {waves.context_length}"
    if width - margin - 2 < len(context_label):  # a narrow chart: the label would push its row past the width
        context_label = ""
    columns = min(pairs, max(1, width - margin - 1 - len(context_label)))
    span = top - bottom if top > bottom else 1.0
    # each column shows the pairs of one block, at the block's mean log wavelength (one block in memory)
    edges = np.linspace(0, pairs, columns + 1).astype(int)
    sums = np.array([[float(np.add.reduceat(level, [0])[0]) for level in _log_wavelengths(waves, lo, hi)]
                     for lo, hi in itertools.pairwise(edges.tolist())])  # fmt: skip
    block_means = [sums[:, side] / np.diff(edges) for side in (0, 1)]

    def row_of(value: float) -> int:
        return int(np.clip(round((top - value) / span * (rows - 1)), 0, rows - 1))

    grid = [[" "] * columns for _ in range(rows)]
    if context is not None:
        grid[row_of(context)] = ["╌"] * columns
    for column in range(columns):
        grid[row_of(block_means[0][column])][column] = "·"
        grid[row_of(block_means[1][column])][column] = "•"
    for row, cells in enumerate(grid):
        label = labels[0] if row == 0 else labels[1] if row == rows - 1 else ""
        text = "".join(cells).rstrip()
        if context is not None and row == row_of(context):
            text += context_label
        lines.append(f"{label:>{margin - 1}} ┤" + text)
    lines.append(" " * margin + "└" + "─" * columns)
    if waves.bands:
        marks = [" "] * columns
        for column in range(columns):
            pair = edges[column]
            band = next((b for b in waves.bands if b.start <= pair < b.stop), None)
            marks[column] = band.name[0] if band else " "
        lines.append(" " * (margin + 1) + "".join(marks))
    last = str(pairs - 1)
    axis = "0" + " " * max(1, columns - 1 - len(last)) + last
    axis = " " * (margin + 1) + axis
    name = next((text for text in ("  pair i (log wavelength)", "  pair i") if len(axis) + len(text) <= width), "")
    lines.append(axis + name)
    lines.extend(legend)
    return "\n".join(lines)
