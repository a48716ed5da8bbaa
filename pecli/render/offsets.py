"""Curves against the offset h = m − n: a rotary score and its decay bound, or one bias per head.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "curves.png")
>>> h = np.arange(50)
>>> save_offset_curves(h, {"score": np.cos(h / 8)}, path, title="t", y_label="s(h)", bound=np.ones(50))
>>> os.path.getsize(path) > 0
True
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pecli.render.image import image_format, new_figure, save_figure, set_title

__all__ = ["save_offset_curves"]

#: above this many curves the legend would hide the figure: the colour bar of the heads says which is which
_MOST_LABELLED = 8


def save_offset_curves(
    offsets: np.ndarray,
    curves: Mapping[str, np.ndarray],
    path: str,
    *,
    title: str,
    y_label: str,
    bound: np.ndarray | None = None,
    bound_label: str = "RoFormer bound B(h) ≥ |s(h)|",
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 5),
) -> None:
    """Draw each curve against the offset into ``path``; with ``bound``, a second panel below holds
    each curve's magnitude and the bound (dashed) on one logarithmic axis.

    The bound is in the score's units but tens of times the score near h = 0: on the curves' own
    linear axis the score would be a flat line at the bottom, and on an axis of its own (a twin) the
    bound ran below the score it bounds. On one log axis both show, the bound above ``|s(h)|``.
    """
    image_format(path)
    figure, axes = new_figure(figsize, dpi)
    labelled = len(curves) <= _MOST_LABELLED
    bottom = axes
    if bound is not None:
        figure.delaxes(axes)
        figure.set_layout_engine("constrained")  # room for the legend under the axes
        axes, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    lines = [axes.plot(offsets, curve, linewidth=1.1, label=label)[0] for label, curve in curves.items()]
    if not labelled:
        lines = []
    if bound is not None:
        magnitudes = []
        for line, curve in zip(axes.get_lines(), curves.values(), strict=True):
            size = np.abs(np.asarray(curve, dtype=np.float64))
            # a score of exactly 0 has no logarithm: left as a gap
            magnitudes += bottom.plot(offsets, np.where(size > 0, size, np.nan), linewidth=1.1, color=line.get_color(),
                                      label=f"|{y_label if len(curves) == 1 else line.get_label()}|")  # fmt: skip
        drawn = bottom.plot(offsets, bound, "--", color="tab:red", linewidth=1, label=bound_label)
        bottom.set_yscale("log")
        bottom.set_ylabel("magnitude (log)")
        if labelled:  # under the axes, never over a curve (small figures left no free corner)
            figure.legend(handles=[*lines, *magnitudes, *drawn], loc="outside lower center", ncols=3,
                          fontsize="small", frameon=False)  # fmt: skip
    axes.set_xlim(float(offsets[0]), float(offsets[-1]) if len(offsets) > 1 else float(offsets[0]) + 1)
    if lines and bound is None:
        axes.legend(handles=lines, loc="best", fontsize="small")
    bottom.set_xlabel("Offset h = m − n (query − key position)")
    axes.set_ylabel(y_label)
    set_title(axes, title, figsize[0])
    save_figure(figure, path, dpi)
