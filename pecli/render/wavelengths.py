"""The picture of RoPE scaling: each frequency pair's wavelength against the original context.

An image (matplotlib, Agg, no pyplot) and a text chart of a
:class:`pecli.analysis.wavelengths.RopeWavelengths`: wavelength 2π/θ_i on a log axis against the pair
index, before and after the scaling, the original context length as a horizontal line, and the
bands a scaling treats alike (YaRN's ramp, Llama 3's frequency bands) shaded and labelled.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING

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
    before, after = np.log10(waves.wavelength_original), np.log10(waves.wavelength)
    levels = [before, after]
    context = None if waves.context_length is None else math.log10(waves.context_length)
    top = max(float(np.max(after)), float(np.max(before)), context or -math.inf)
    bottom = min(float(np.min(after)), float(np.min(before)), context if context is not None else math.inf)
    labels = (f"{10**top:.3g}", f"{10**bottom:.3g}")
    margin = max(len(label) for label in labels) + 2
    lines = [title if len(title) <= width else title[: width - 1] + "…"] if title else []
    # each band's name and description, wrapped (a number cut in half would misread)
    indent = " " * (margin + 1)
    legend = [line for band in waves.bands
              for line in textwrap.wrap(f"{band.name[0]} {band.name}: {band.description}", max(width, margin + 20),
                                        initial_indent=indent, subsequent_indent=indent + "  ")]  # fmt: skip
    rows = max(2, height - len(lines) - 2 - (1 + len(legend) if waves.bands else 0))
    # the context's label follows its row: the columns leave room for it within the width
    context_label = "" if context is None else f" context {waves.context_length}"
    columns = min(len(before), max(1, width - margin - 1 - len(context_label)))
    span = top - bottom if top > bottom else 1.0
    # each column shows the pairs of one block, at the block's mean log wavelength
    edges = np.linspace(0, len(before), columns + 1).astype(int)
    block_means = [np.add.reduceat(level, edges[:-1]) / np.diff(edges) for level in levels]

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
    last = str(len(before) - 1)
    axis = "0" + " " * max(1, columns - 1 - len(last)) + last
    axis = " " * (margin + 1) + axis
    fits = len(axis) + len("  pair i (log wavelength)") <= width
    lines.append(axis + ("  pair i (log wavelength)" if fits else "  pair i"))
    lines.extend(legend)
    return "\n".join(lines)
