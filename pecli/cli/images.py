"""The image files ``pecli plot`` writes (-o): where, at which size, and whether a heatmap or curves.

Loaded only when there is an image to write, not for a terminal heatmap.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageFile:
    """A figure to write (-o): where, and its size."""

    path: str
    dpi: float
    figsize: tuple[float, float]  #: inches

    @property
    def pixels(self) -> str:
        """``"800 × 600 px"``.

        >>> HeatmapImage("pe.png", 100.0, (8.0, 6.0)).pixels
        '800 × 600 px'
        """
        return f"{round(self.figsize[0] * self.dpi)} × {round(self.figsize[1] * self.dpi)} px"


@dataclass(frozen=True)
class HeatmapImage(ImageFile):
    """The table as a heatmap image."""


@dataclass(frozen=True)
class LinesImage(ImageFile):
    """Dimensions of the table as curves against position (--lines)."""

    dims: tuple[int, ...]
