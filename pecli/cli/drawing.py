"""The drawing options of every command that draws a table (plot, distance), declared once.

A command lists the aliases (``cmap: CmapOpt = None``…) and hands their values to
:func:`drawing_style`, which checks them all before any table is read and returns one
:class:`DrawingStyle`; :func:`color_note` turns robust colour limits into the note the user reads.
What is drawn where the terminal is not, :mod:`pecli.cli.images` (``-o``) and
:mod:`pecli.cli.distance_request`, loads only with the commands that draw it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import complete_choices
from pecli.errors import ParameterError
from pecli.text import literal_repr

IMAGE_PANEL = "Image options (-o)"
TERMINAL_PANEL = "Terminal options"
DRAWING_PANEL = "Drawing options"
#: the smallest terminal heatmap that still has room for ticks and a legend
MIN_WIDTH, MIN_HEIGHT = 20, 8

CmapOpt = Annotated[
    Optional[str],
    typer.Option(
        "--cmap",
        help="Any matplotlib colormap (default: RdBu for signed data, viridis for non-negative data).",
        metavar="NAME",
        rich_help_panel=DRAWING_PANEL,
    ),
]
VminOpt = Annotated[Optional[float], typer.Option("--vmin", help="Lower colour limit.", rich_help_panel=DRAWING_PANEL)]
VmaxOpt = Annotated[Optional[float], typer.Option("--vmax", help="Upper colour limit.", rich_help_panel=DRAWING_PANEL)]
RobustOpt = Annotated[
    Optional[bool],
    typer.Option(
        "--robust/--no-robust",
        help="Colour limits at the 99th percentile of |x| (default: when a few values would wash out the rest).",
        show_default=False,
        rich_help_panel=DRAWING_PANEL,
    ),
]
#: --scale/--color-scale: the panels of one figure in one colour scale, or each in its own
PANEL_SCALES = ("shared", "per-panel")
ScaleOpt = Annotated[
    Optional[str],
    typer.Option(
        "--scale",
        help="Panels (RoPE's cos/sin, ALiBi's heads) in one colour scale (shared) or each in its own (per-panel); "
        "a number is timestep's angle scale.",
        metavar="shared|per-panel|X",
        show_default=False,
        autocompletion=complete_choices(PANEL_SCALES),
        rich_help_panel=DRAWING_PANEL,
    ),
]
ColorScaleOpt = Annotated[
    Optional[str],
    typer.Option(
        "--color-scale",
        help="shared or per-panel, as --scale (with --scale X, timestep's angle scale).",
        metavar="shared|per-panel",
        show_default=False,
        autocompletion=complete_choices(PANEL_SCALES),
        rich_help_panel=DRAWING_PANEL,
    ),
]
TitleOpt = Annotated[
    Optional[str],
    typer.Option(
        "--title", help="Title (default: the table's name and non-default parameters).", rich_help_panel=DRAWING_PANEL
    ),
]
XLabelOpt = Annotated[
    Optional[str], typer.Option("--xlabel", help="x axis label.", metavar="TEXT", rich_help_panel=DRAWING_PANEL)
]
YLabelOpt = Annotated[
    Optional[str], typer.Option("--ylabel", help="y axis label.", metavar="TEXT", rich_help_panel=DRAWING_PANEL)
]
DpiOpt = Annotated[
    Optional[float], typer.Option("--dpi", help="Pixels per inch (default 100).", rich_help_panel=IMAGE_PANEL)
]
FigsizeOpt = Annotated[
    Optional[str],
    typer.Option("--figsize", help="Width,height in inches (default 8,6).", metavar="W,H", rich_help_panel=IMAGE_PANEL),
]
TerminalOpt = Annotated[
    bool,
    typer.Option(
        "--terminal",
        help="Draw in the terminal, in colour, even with -o or a redirected stdout.",
        rich_help_panel=TERMINAL_PANEL,
    ),
]
WidthOpt = Annotated[
    Optional[int],
    typer.Option(
        "--width", help="Terminal heatmap width in columns (default: the terminal's).", rich_help_panel=TERMINAL_PANEL
    ),
]
HeightOpt = Annotated[
    Optional[int],
    typer.Option(
        "--height", help="Terminal heatmap height in lines (default: the terminal's).", rich_help_panel=TERMINAL_PANEL
    ),
]


@dataclass(frozen=True)
class DrawingStyle:
    """The checked drawing options: colours, labels, and the image's size (None: defaults)."""

    cmap: str | None = None
    vmin: float | None = None
    vmax: float | None = None
    robust: bool | None = None
    title: str | None = None
    x_label: str | None = None
    y_label: str | None = None
    dpi: float = 100.0
    figsize: tuple[float, float] | None = None
    panel_scale: str = "shared"  #: --scale: "shared" or "per-panel"


def split_scale(
    scale: str | None, color_scale: str | None, scheme_params: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """``--scale``/``--color-scale`` as the panels' colour scale and the scheme's parameters.

    ``shared`` or ``per-panel`` picks how the panels are coloured; a number is the ``timestep``
    scheme's own ``--scale`` (its angle scale), handed on to the scheme.

    >>> split_scale("per-panel", None, {})
    ('per-panel', {})
    >>> split_scale("1000", "per-panel", {"d": 8})
    ('per-panel', {'d': 8, 'scale': 1000.0})
    """
    from pecli.cli.options import ascii_float

    params = dict(scheme_params or {})
    if color_scale is not None and color_scale not in PANEL_SCALES:
        raise ParameterError(
            f"--color-scale takes shared or per-panel, got {literal_repr(color_scale)}",
            hint="e.g. --color-scale per-panel",
        )
    chosen = color_scale
    if scale in PANEL_SCALES:
        if color_scale is not None and color_scale != scale:
            raise ParameterError(f"--scale {scale} and --color-scale {color_scale} disagree", hint="give one of them")
        chosen = scale
    elif scale is not None:
        try:
            params["scale"] = ascii_float(scale)
        except ValueError:
            raise ParameterError(
                f"--scale takes shared, per-panel or a number (timestep's angle scale), got {literal_repr(scale)}",
                hint="e.g. --scale per-panel",
            ) from None
    return chosen or "shared", params


def drawing_style(
    *,
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    robust: bool | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    dpi: float | None = None,
    figsize: str | None = None,
    panel_scale: str = "shared",
) -> DrawingStyle:
    """Check the drawing options (before any table is read) and gather them.

    >>> drawing_style(cmap="viridis", figsize="4,3").figsize
    (4.0, 3.0)
    """
    from pecli.render.scale import ValueRange, color_limits

    if vmin is not None and vmax is not None:
        color_limits(ValueRange(0.0, 0.0, 0), vmin, vmax)
    if robust and vmin is not None and vmax is not None:
        raise ParameterError("--robust chooses the colour limits, but --vmin and --vmax set them", hint="drop one")
    if cmap is not None:
        from pecli.render.image import check_cmap

        check_cmap(cmap)
    if dpi is not None and not (0 < dpi < float("inf")):
        raise ParameterError(f"--dpi must be a positive number, got {dpi:g}", hint="e.g. --dpi 100")
    if panel_scale not in PANEL_SCALES:
        raise ParameterError(
            f"--scale takes shared or per-panel, got {literal_repr(panel_scale)}", hint="e.g. --scale per-panel"
        )
    size = None if figsize is None else parse_figsize(figsize)
    resolution = 100.0 if dpi is None else dpi
    check_pixels(size or (8.0, 6.0), resolution)
    return DrawingStyle(cmap, vmin, vmax, robust, title, xlabel, ylabel, resolution, size, panel_scale)


#: the smallest --dpi whose 10-point text is still a pixel high (FreeType fails below), and image sides in pixels
_MIN_DPI, _MIN_SIDE, _MAX_SIDE = 8.0, 16, 20000


def check_pixels(figsize: tuple[float, float], dpi: float) -> None:
    """Refuse a resolution text cannot be drawn at, and images under 16 or over 20000 pixels a side.

    >>> check_pixels((8, 6), 100)
    >>> check_pixels((20000, 1), 1)
    Traceback (most recent call last):
    pecli.errors.ParameterError: --dpi 1 is too low to draw text (use at least --dpi 8)
    """

    if dpi < _MIN_DPI:
        raise ParameterError(f"--dpi {dpi:g} is too low to draw text", hint=f"use at least --dpi {_MIN_DPI:g}")
    width, height = figsize[0] * dpi, figsize[1] * dpi
    if not (min(width, height) >= _MIN_SIDE and max(width, height) <= _MAX_SIDE):
        verdict = "too large" if max(width, height) > _MAX_SIDE else "too small"
        raise ParameterError(
            f"an image of {width:.0f} × {height:.0f} pixels (--figsize {figsize[0]:g},{figsize[1]:g} at --dpi {dpi:g}) "
            f"is {verdict}",
            hint=f"keep each side between {_MIN_SIDE} and {_MAX_SIDE} pixels, e.g. --figsize 8,6 --dpi 100",
        )


def parse_figsize(text: str) -> tuple[float, float]:
    """``W,H`` in inches.

    >>> parse_figsize("8,6"), parse_figsize("4.5, 3")
    ((8.0, 6.0), (4.5, 3.0))
    """
    from pecli.cli.options import ascii_float

    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        width, height = (ascii_float(part) for part in parts)
    except ValueError:
        raise ParameterError(
            f"--figsize takes W,H in inches, got {literal_repr(text)}", hint="e.g. --figsize 8,6"
        ) from None
    if not (0 < width < float("inf") and 0 < height < float("inf")):
        raise ParameterError(f"--figsize needs two positive sizes, got {literal_repr(text)}", hint="e.g. --figsize 8,6")
    return width, height


def check_terminal_size(width: int | None, height: int | None) -> None:
    """``--width``/``--height`` leave room for ticks and a legend."""

    for flag, value, least in (("--width", width, MIN_WIDTH), ("--height", height, MIN_HEIGHT)):
        if value is not None and value < least:
            raise ParameterError(f"{flag} must be at least {least}, got {value}", hint=f"e.g. {flag} {least * 4}")


def color_note(scale: Any) -> str | None:
    """The one-line note for robust colour limits (a :class:`pecli.render.scale.ColorScale`), else None: the limits
    drawn, where each came from (a percentile, --vmin/--vmax, the values' extent), and what lies beyond them.

    >>> from pecli.render.scale import ColorScale
    >>> both = ColorScale(-0.08, 0.08, "RdBu", True, True, 0.01, (-1.87, 1.87), origins=("percentile", "percentile"))
    >>> print(color_note(both)[:82])
    colour limits ±0.08 (99th percentile of |x|; 1% of values lie beyond, up to ±1.87)
    >>> print(color_note(both._replace(high=0.5, origins=("percentile", "given")))[:82])
    colour limits -0.08 (99th percentile of |x|, negated) … 0.5 (--vmax); 1% of values
    """
    if not scale.robust:
        return None
    from pecli.render.scale import ROBUST_PERCENTILE

    of = "|x|" if scale.diverging else "x"
    share = f"{scale.clipped:.2%}".replace(".00%", "%")
    given = [flag for flag, origin in zip(("--vmin", "--vmax"), scale.origins, strict=True) if origin == "given"]
    missing = [flag for flag in ("--vmin", "--vmax") if flag not in given]
    hint = f"--no-robust or {'/'.join(missing)} for the full range"
    if scale.diverging:
        reach = f"up to ±{scale.full[1]:.3g}"
    else:
        beyond = [(f"down to {scale.full[0]:.3g}", scale.full[0] < scale.low),
                  (f"up to {scale.full[1]:.3g}", scale.full[1] > scale.high)]  # fmt: skip
        reach = " and ".join(text for text, cut in beyond if cut)
    top = f"{ROBUST_PERCENTILE:g}th percentile of {of}"
    if scale.origins == ("percentile", "percentile") and scale.centred:
        return f"colour limits ±{scale.high:.3g} ({top}; {share} of values lie beyond, {reach}): {hint}"
    # a sequential map's lower percentile is of values all <= 0 (their mirror's upper one)
    bottom = f"{top}, negated" if scale.diverging else f"{100 - ROBUST_PERCENTILE:g}st percentile of x"
    sources = {
        "given": ("--vmin", "--vmax"),
        "percentile": (bottom, top),
        "extent": ("the smallest value", "the largest value"),
    }
    limits = [
        f"{value:.3g} ({sources[origin][side]})"
        for side, (value, origin) in enumerate(zip((scale.low, scale.high), scale.origins, strict=True))
    ]
    return f"colour limits {limits[0]} … {limits[1]}; {share} of values lie beyond, {reach}: {hint}"


@dataclass(frozen=True)
class TerminalHeatmap:
    """The heatmap drawn on stdout: its size in cells, and whether --terminal forces it (and colour)."""

    width: int
    height: int
    forced: bool
