"""What ``pecli distance`` computes and where it goes, checked before any table is read."""

from __future__ import annotations

from dataclasses import dataclass, field

from pecli.cli.drawing import DrawingStyle


@dataclass(frozen=True)
class DistanceRequest:
    """What to compute and where it goes, checked before any table is read."""

    metric: str
    positions: range  #: the input's positions the vectors are (after --rows)
    title: str
    output: str | None = None  #: -o PATH, or None for the terminal
    fmt: str | None = None  #: --format
    kind: str | None = None  #: None (terminal), "image" or "data": see :func:`pecli.cli.distance._output_kind`
    max_offset: int | None = None  #: --profile's last offset
    style: DrawingStyle = field(default_factory=DrawingStyle)  #: --cmap, --vmin/--vmax, --title, --dpi, --figsize…
    size: tuple[int | None, int | None] = (None, None)  #: --width/--height of the terminal chart
    forced: bool = False  #: --terminal: colour even into a pipe
    dtype: str = "float32"  #: --dtype of the matrix written as data
