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
    bound_label: str = "RoFormer bound B(h) ≥ |s(h)| (right axis)",
    dpi: float = 100,
    figsize: tuple[float, float] = (8, 5),
) -> None:
    """Draw each curve against the offset into ``path``; ``bound`` as a dashed line on its own right axis.

    The bound has an axis of its own because RoFormer's is tens of times the score near h = 0: on
    one axis the score would be a flat line at the bottom.
    """
    image_format(path)
    figure, axes = new_figure(figsize, dpi)
    labelled = len(curves) <= _MOST_LABELLED
    lines = [axes.plot(offsets, curve, linewidth=1.1, label=label)[0] for label, curve in curves.items()]
    if not labelled:
        lines = []
    top = axes
    if bound is not None:
        # room for the right axis' tick labels and its label, which the default margins cut off
        figure.subplots_adjust(right=min(figure.subplotpars.right, 1 - 0.75 / figsize[0]))
        right = top = axes.twinx()
        lines += right.plot(offsets, bound, "--", color="tab:red", linewidth=1, label=bound_label)
        right.set_ylabel("B(h)", color="tab:red")
        right.set_ylim(bottom=0)
    axes.set_xlim(float(offsets[0]), float(offsets[-1]) if len(offsets) > 1 else float(offsets[0]) + 1)
    if lines:
        # on the axes drawn last (a twin's curves would cover it), where it hides the fewest points
        top.legend(handles=lines, loc="best", fontsize="small")
    axes.set_xlabel("Offset h = m − n (query − key position)")
    axes.set_ylabel(y_label)
    set_title(axes, title, figsize[0])
    save_figure(figure, path, dpi)
