"""``pecli plot``: a table as a heatmap image (-o), as dimension curves (--lines), or in the terminal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import (
    DimOpt,
    DtypeOpt,
    KeyOpt,
    LenOpt,
    PresetOpt,
    ascii_float,
    ascii_int,
    output_options,
    scheme_options,
)
from pecli.cli.output import Output

HELP = """Draw a table as a heatmap: an image file with -o, else right in the terminal.

INPUT is a .npy, .safetensors or .pt file, - for stdin (npy or safetensors bytes), or a scheme
with the generate options (an existing path wins over a scheme name). Large tables are
block-averaged to fit; colours are RdBu, symmetric around 0 unless --vmin/--vmax say otherwise.

Examples:


  pecli plot sinusoidal --d 128 --len 50
  pecli plot pe.safetensors -o heatmap.png --title "Vaswani, d=512"
  pecli plot bert.safetensors --key embeddings.position_embeddings.weight
  pecli plot pe.npy --rows 0:128 --cols 0:64 --width 100 --height 40
  pecli plot pe.npy -o lines.png --lines 0,1,4,8
  pecli generate --d 64 --len 256 -o - | pecli plot -
"""

X_LABEL, Y_LABEL = "Embedding Dimension", "Position"
#: the smallest terminal heatmap that still has room for ticks and a legend
MIN_WIDTH, MIN_HEIGHT = 20, 8
_IMAGE_PANEL = "Image options (-o)"
_TERMINAL_PANEL = "Terminal options"


@dataclass(frozen=True)
class ImageFile:
    """A figure to write (-o): where, and its size."""

    path: str
    dpi: float
    figsize: tuple[float, float]  #: inches

    @property
    def pixels(self) -> str:
        """``"800 × 600 px"``.

        >>> HeatmapImage("pe.png", 100.0, (8.0, 6.0), "RdBu").pixels
        '800 × 600 px'
        """
        return f"{round(self.figsize[0] * self.dpi)} × {round(self.figsize[1] * self.dpi)} px"


@dataclass(frozen=True)
class HeatmapImage(ImageFile):
    """The table as a heatmap image, in a matplotlib colormap."""

    cmap: str


@dataclass(frozen=True)
class LinesImage(ImageFile):
    """Dimensions of the table as curves against position (--lines)."""

    dims: tuple[int, ...]


@dataclass(frozen=True)
class TerminalHeatmap:
    """The heatmap drawn on stdout: its size in cells, and whether --terminal forces it (and colour)."""

    width: int
    height: int
    forced: bool


def register(app: typer.Typer) -> None:
    app.command("plot", help=HELP)(plot)


@scheme_options
@output_options
def plot(
    source: Annotated[
        str, typer.Argument(metavar="INPUT", help="A table file, - for stdin, or a scheme name.", show_default=False)
    ],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="Image file: .png, .svg or .pdf.", metavar="PATH"),
    ] = None,
    key: KeyOpt = None,
    rows: Annotated[Optional[str], typer.Option("--rows", help="Positions to draw, A:B.", metavar="A:B")] = None,
    cols: Annotated[Optional[str], typer.Option("--cols", help="Dimensions to draw, A:B.", metavar="A:B")] = None,
    vmin: Annotated[Optional[float], typer.Option("--vmin", help="Lower colour limit (default -max|x|).")] = None,
    vmax: Annotated[Optional[float], typer.Option("--vmax", help="Upper colour limit (default max|x|).")] = None,
    title: Annotated[
        Optional[str], typer.Option("--title", help="Title (default: scheme and parameters, or file name).")
    ] = None,
    cmap: Annotated[
        Optional[str],
        typer.Option("--cmap", help="Any matplotlib colormap (default RdBu).", rich_help_panel=_IMAGE_PANEL),
    ] = None,
    dpi: Annotated[
        Optional[float], typer.Option("--dpi", help="Pixels per inch (default 100).", rich_help_panel=_IMAGE_PANEL)
    ] = None,
    figsize: Annotated[
        Optional[str],
        typer.Option(
            "--figsize", help="Width,height in inches (default 8,6).", metavar="W,H", rich_help_panel=_IMAGE_PANEL
        ),
    ] = None,
    lines: Annotated[
        Optional[str],
        typer.Option(
            "--lines",
            help="Draw these dimensions as curves against position instead, e.g. 0,1,4,8.",
            metavar="I,J,…",
            rich_help_panel=_IMAGE_PANEL,
        ),
    ] = None,
    terminal: Annotated[
        bool,
        typer.Option(
            "--terminal",
            help="Draw in the terminal, in colour, even with -o or a redirected stdout.",
            rich_help_panel=_TERMINAL_PANEL,
        ),
    ] = False,
    width: Annotated[
        Optional[int],
        typer.Option(
            "--width",
            help="Terminal heatmap width in columns (default: the terminal's).",
            rich_help_panel=_TERMINAL_PANEL,
        ),
    ] = None,
    height: Annotated[
        Optional[int],
        typer.Option(
            "--height",
            help="Terminal heatmap height in lines (default: the terminal's).",
            rich_help_panel=_TERMINAL_PANEL,
        ),
    ] = None,
    view: Annotated[
        Optional[str],
        typer.Option(
            "--view",
            help="wavelength: RoPE's wavelength per frequency pair before and after --scaling (--json: the numbers).",
            metavar="VIEW",
        ),
    ] = None,
    d: DimOpt = None,
    length: LenOpt = None,
    dtype: DtypeOpt = "float32",
    preset: PresetOpt = None,
    *,
    out: Output,
    scheme_params: dict[str, Any] | None = None,
) -> None:
    from pecli.cli.wavelength import check_view, plot_wavelengths

    heatmap_only = {"--key": key, "--rows": rows, "--cols": cols, "--vmin": vmin, "--vmax": vmax, "--cmap": cmap,
                    "--lines": lines, "--width": width, "--height": height}  # fmt: skip
    check_view(view, json_output=out.json_output, unused=heatmap_only)
    if view is not None:
        plot_wavelengths(out, source, output=output, title=title, preset=preset, scheme_params=scheme_params or {},
                         length=length, dim=d)  # fmt: skip
        return
    from pecli.cli.relative import plot_bias_heads
    from pecli.cli.relative_input import relative_input

    relative = relative_input(source, preset=preset, scheme_params=dict(scheme_params or {}), length=length, dim=d,
                              qk=None)  # fmt: skip
    if relative is not None and plot_bias_heads(out, relative, output=output, title=title, unused=heatmap_only):
        return
    from pecli.render.scale import ValueRange, color_limits, value_range

    draw_terminal = output is None or terminal
    image = _image_settings(output, cmap=cmap, dpi=dpi, figsize=figsize, lines=lines, limits=(vmin, vmax))
    screen = _terminal_heatmap(out, width, height, forced=terminal) if draw_terminal else None
    if vmin is not None and vmax is not None:  # check them before reading a possibly large table
        color_limits(ValueRange(0.0, 0.0, 0), vmin, vmax)
    if not draw_terminal and (width is not None or height is not None):
        from pecli.errors import ParameterError

        raise ParameterError("--width/--height size the terminal heatmap", hint="drop them, or add --terminal")

    from pecli.cli.inputs import load_input, table_view

    table = load_input(
        out, source, key=key, preset=preset, scheme_params=scheme_params, length=length, dim=d, dtype=dtype
    )
    view = table_view(table, rows=rows, cols=cols)
    for note in view.notes:
        out.note(note)
    data = value_range(view.values)
    # resolved once here, so the renderers need not scan a large table again
    vmin, vmax = color_limits(data, vmin, vmax)
    if data.nonfinite:
        plural = "s" if data.nonfinite != 1 else ""
        out.warn(f"{data.nonfinite} NaN/inf value{plural} drawn as masked cells")
    heading = title if title is not None else table.label

    if image is not None:
        _save_image(out, view, image, heading, vmin=vmin, vmax=vmax)
    if screen is not None:
        from pecli.render.terminal import color_mode, heatmap

        text = heatmap(
            view.values,
            width=screen.width,
            height=screen.height,
            color=color_mode(out, force_terminal=screen.forced, no_color=not out.color),
            x_label=X_LABEL,
            y_label=Y_LABEL,
            title=heading,
            vmin=vmin,
            vmax=vmax,
            x_ticks_from=view.col_start,
            y_ticks_from=view.row_start,
        )
        out.data(text)


def _image_settings(
    output: str | None,
    *,
    cmap: str | None,
    dpi: float | None,
    figsize: str | None,
    lines: str | None,
    limits: tuple[float | None, float | None],
) -> ImageFile | None:
    """Check every image option before any table is read; None when there is no image to write."""
    from pecli.errors import ParameterError

    if output is None:
        given = [
            flag
            for flag, value in (("--cmap", cmap), ("--dpi", dpi), ("--figsize", figsize), ("--lines", lines))
            if value is not None
        ]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise ParameterError(f"{', '.join(given)} {verb} only to image output", hint="add -o heatmap.png")
        return None
    if output == "-":
        raise ParameterError("pecli plot writes images to files, not stdout", hint="give -o heatmap.png")
    from pecli.io import check_output_path
    from pecli.render.image import check_cmap, image_format

    check_output_path(output)
    image_format(output)
    size = (8.0, 6.0) if figsize is None else _parse_figsize(figsize)
    resolution = 100.0 if dpi is None else dpi
    _check_pixels(size, resolution)
    if lines is not None:
        dims = _parse_dims(lines)
        given = [
            flag
            for flag, value in (("--cmap", cmap), ("--vmin", limits[0]), ("--vmax", limits[1]))
            if value is not None
        ]
        if given:
            raise ParameterError(f"{', '.join(given)} colour the heatmap, but --lines draws curves", hint="drop them")
        return LinesImage(output, resolution, size, dims)
    check_cmap(cmap or "RdBu")
    return HeatmapImage(output, resolution, size, cmap or "RdBu")


#: the smallest --dpi whose 10-point text is still a pixel high (FreeType fails below), and image sides in pixels
_MIN_DPI, _MIN_SIDE, _MAX_SIDE = 8.0, 16, 20000


def _check_pixels(figsize: tuple[float, float], dpi: float) -> None:
    """Refuse a resolution text cannot be drawn at, and images under 16 or over 20000 pixels a side.

    >>> _check_pixels((8, 6), 100)
    >>> _check_pixels((20000, 1), 1)
    Traceback (most recent call last):
    pecli.errors.ParameterError: --dpi 1 is too low to draw text (use at least --dpi 8)
    """
    from pecli.errors import ParameterError

    if not 0 < dpi < float("inf"):
        raise ParameterError(f"--dpi must be a positive number, got {dpi}", hint="e.g. --dpi 100 --figsize 8,6")
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


def _parse_figsize(text: str) -> tuple[float, float]:
    """``W,H`` in inches.

    >>> _parse_figsize("8,6"), _parse_figsize("4.5, 3")
    ((8.0, 6.0), (4.5, 3.0))
    """
    from pecli.errors import ParameterError

    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        width, height = (ascii_float(part) for part in parts)
    except ValueError:
        raise ParameterError(f"--figsize takes W,H in inches, got {text!r}", hint="e.g. --figsize 8,6") from None
    if not (0 < width < float("inf") and 0 < height < float("inf")):
        raise ParameterError(f"--figsize needs two positive sizes, got {text!r}", hint="e.g. --figsize 8,6")
    return width, height


def _parse_dims(text: str) -> tuple[int, ...]:
    """``--lines 0,1,4,8`` as dimension indices.

    >>> _parse_dims("0,1, 4,8")
    (0, 1, 4, 8)
    """
    from pecli.errors import ParameterError

    try:
        dims = tuple(ascii_int(part) for part in text.split(","))
    except ValueError:
        raise ParameterError(
            f"--lines takes comma-separated dimension indices, got {text!r}", hint="e.g. --lines 0,1,4,8"
        ) from None
    if any(dim < 0 for dim in dims):
        raise ParameterError(f"--lines takes dimensions from 0, got {text!r}", hint="e.g. --lines 0,1,4,8")
    return dims


def _terminal_heatmap(out: Output, width: int | None, height: int | None, *, forced: bool) -> TerminalHeatmap:
    """The terminal heatmap's size: ``--width``/``--height`` (checked), else the terminal's."""
    from pecli.errors import ParameterError

    for flag, value, least in (("--width", width, MIN_WIDTH), ("--height", height, MIN_HEIGHT)):
        if value is not None and value < least:
            raise ParameterError(f"{flag} must be at least {least}, got {value}", hint=f"e.g. {flag} {least * 4}")
    columns, terminal_lines = out.terminal_size()
    # one line is left for the shell prompt that follows
    return TerminalHeatmap(max(width or columns, MIN_WIDTH), max(height or terminal_lines - 1, MIN_HEIGHT), forced)


def _save_image(
    out: Output, view: Any, image: ImageFile, heading: str, *, vmin: float | None, vmax: float | None
) -> None:
    from pecli.render.image import save_heatmap, save_lines

    # a title is drawn as written: "$…$" from a file or --title is no mathtext (500 nested braces overflowed it)
    common = {"title": heading.replace("$", r"\$"), "dpi": image.dpi, "figsize": image.figsize}
    if isinstance(image, LinesImage):
        save_lines(
            view.values,
            image.path,
            dims=image.dims,
            x_ticks_from=view.row_start,
            dims_from=view.col_start,
            **common,
        )
    elif isinstance(image, HeatmapImage):
        note = save_heatmap(
            view.values,
            image.path,
            cmap=image.cmap,
            vmin=vmin,
            vmax=vmax,
            x_ticks_from=view.col_start,
            y_ticks_from=view.row_start,
            **common,
        )
        if note:
            out.note(note)
    out.note(f"wrote {image.path} ({image.pixels})")
