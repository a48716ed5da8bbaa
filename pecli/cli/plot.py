"""``pecli plot``: a table as a heatmap image (-o), as dimension curves (--lines), or in the terminal."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pecli.cli.drawing import (
    IMAGE_PANEL,
    MIN_HEIGHT,
    MIN_WIDTH,
    CmapOpt,
    ColorScaleOpt,
    DpiOpt,
    DrawingStyle,
    FigsizeOpt,
    HeightOpt,
    RobustOpt,
    ScaleOpt,
    TerminalHeatmap,
    TerminalOpt,
    TitleOpt,
    VmaxOpt,
    VminOpt,
    WidthOpt,
    XLabelOpt,
    YLabelOpt,
)
from pecli.cli.options import (
    DimOpt,
    DtypeOpt,
    KeyOpt,
    LayerTypeOpt,
    LenOpt,
    PresetOpt,
    ascii_int,
    complete_choices,
    flag_for,
    output_options,
    output_path,
    scheme_options,
)
from pecli.cli.output import Output
from pecli.cli.panels import SliceOpt, draw_panels
from pecli.errors import ParameterError
from pecli.text import literal, literal_repr

if TYPE_CHECKING:
    import numpy as np

    from pecli.cli.images import ImageFile
    from pecli.cli.inputs import InputTable, TableView
    from pecli.render.downsample import AxisStructure
    from pecli.render.scale import ColorScale

HELP = """Draw a table as a heatmap, in the terminal or as an image (-o).

INPUT is a .npy, .safetensors or .pt file, - for stdin (npy or safetensors bytes), or a scheme
or spec (rope:base=500000) with the generate options (an existing path wins over a scheme name). Large tables are
block-averaged to fit. Signed tables are drawn in RdBu centred on 0, non-negative ones in viridis;
when a few values would wash out the rest, the colour limits are the 99th percentile of |x| and a
note says so (--no-robust or --vmin/--vmax for the full range).

Examples:


  pecli plot sinusoidal --d 128 --len 50
  pecli plot pe.safetensors -o heatmap.png --title "Vaswani, d=512"
  pecli plot bert.safetensors --key embeddings.position_embeddings.weight
  pecli plot pe.npy --rows 0:128 --cols 0:64 --width 100 --height 40
  pecli plot pe.npy -o lines.png --lines 0,1,4,8
  pecli generate --d 64 --len 256 -o - | pecli plot -
"""


def _views() -> tuple[str, ...]:
    from pecli.cli.wavelength import VIEWS

    return VIEWS


def register(app: typer.Typer) -> None:
    app.command("plot", help=HELP)(plot)


@scheme_options
@output_options
def plot(
    source: Annotated[
        str,
        typer.Argument(
            metavar="INPUT",
            help="A table file, - for stdin, or a scheme or spec (rope:base=500000).",
            show_default=False,
        ),
    ],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="Image file: .png, .svg or .pdf.", metavar="PATH", callback=output_path),
    ] = None,
    key: KeyOpt = None,
    rows: Annotated[Optional[str], typer.Option("--rows", help="Positions to draw, A:B.", metavar="A:B")] = None,
    cols: Annotated[Optional[str], typer.Option("--cols", help="Dimensions to draw, A:B.", metavar="A:B")] = None,
    vmin: VminOpt = None,
    vmax: VmaxOpt = None,
    robust: RobustOpt = None,
    title: TitleOpt = None,
    xlabel: XLabelOpt = None,
    ylabel: YLabelOpt = None,
    cmap: CmapOpt = None,
    dpi: DpiOpt = None,
    figsize: FigsizeOpt = None,
    lines: Annotated[
        Optional[str],
        typer.Option(
            "--lines",
            help="Draw these dimensions as curves against position instead, e.g. 0,1,4,8 (auto: log-spaced).",
            metavar="I,J,…",
            rich_help_panel=IMAGE_PANEL,
        ),
    ] = None,
    view: Annotated[
        Optional[str],
        typer.Option(
            "--view",
            help="wavelength: RoPE's wavelength per frequency pair before and after --scaling; pca: a trained "
            "table's positions on their first two principal components; precision: the error of a rope, sinusoidal or "
            "timestep table computed in --arithmetic (default bfloat16) against float64, by position and column, "
            "where positions alias, and float32/bfloat16/float16 side by side (--json: the numbers).",
            metavar="VIEW",
            autocompletion=complete_choices(_views),
        ),
    ] = None,
    terminal: TerminalOpt = False,
    width: WidthOpt = None,
    height: HeightOpt = None,
    slice_index: SliceOpt = None,
    scale_name: ScaleOpt = None,
    color_scale_name: ColorScaleOpt = None,
    d: DimOpt = None,
    length: LenOpt = None,
    dtype: DtypeOpt = "float32",
    preset: PresetOpt = None,
    layer_type: LayerTypeOpt = None,
    *,
    out: Output,
    scheme_params: dict[str, Any] | None = None,
) -> None:
    from pecli.cli.drawing import split_scale
    from pecli.cli.wavelength import check_view, plot_wavelengths

    panels, scheme_params = split_scale(scale_name, color_scale_name, scheme_params)
    heatmap_only = {"--key": key, "--rows": rows, "--cols": cols, "--vmin": vmin, "--vmax": vmax, "--cmap": cmap,
                    "--robust/--no-robust": robust, "--xlabel": xlabel, "--ylabel": ylabel, "--lines": lines,
                    "--slice": slice_index, "--layer-type": layer_type,
                    "--scale": None if panels == "shared" else panels}  # fmt: skip
    grid = None
    if view == "pca":
        heatmap_only.pop("--key")  # pca reads a table file's tensor
        # --grid (a scheme's H,W elsewhere) says the file's positions are a ViT grid
        grid = (scheme_params or {}).pop("grid", None)
    check_view(view, json_output=out.json_output, unused=heatmap_only)
    from pecli.cli.inputs import key_for_scheme, scheme_input, stdin_file_params

    # a spec (rope:base=500000) is its scheme with its parameters as options, for every view
    source, preset, scheme_params = scheme_input(source, preset=preset, scheme_params=scheme_params, length=length,
                                                 dim=d, dtype=dtype)  # fmt: skip
    key, scheme_params = key_for_scheme(source, key, stdin_file_params(out, scheme_params))
    from pecli.cli.common import check_not_input
    from pecli.cli.drawing import check_terminal_size, color_note, drawing_style

    check_not_input(output, [source])  # every view: the figure never replaces the table it draws

    style = drawing_style(
        cmap=cmap, vmin=vmin, vmax=vmax, robust=robust, title=title, xlabel=xlabel, ylabel=ylabel, dpi=dpi,
        figsize=figsize, panel_scale=panels,
    )  # fmt: skip
    if view is not None:
        if output is None and (dpi is not None or figsize is not None):
            raise ParameterError("--dpi, --figsize size the image", hint="add -o wavelengths.png")
        if view == "pca":
            from pecli.cli.pca_view import plot_pca

            if width is not None or height is not None or terminal:
                raise ParameterError(
                    "--view pca draws an image", hint="drop --width/--height/--terminal; add -o pca.png"
                )
            plot_pca(out, source, output=output, key=key, grid=grid, title=title, dpi=style.dpi,
                     figsize=style.figsize or (7.0, 6.0))  # fmt: skip
            return
        check_terminal_size(width, height)
        if output is not None and not terminal and (width is not None or height is not None):
            raise ParameterError("--width/--height size the terminal chart", hint="drop them, or drop -o")
        if view == "precision":
            from pecli.cli.precision_view import plot_precision

            plot_precision(out, source, output=output, title=title, preset=preset, scheme_params=scheme_params or {},
                           length=length, dim=d, terminal=terminal, dpi=style.dpi,
                           figsize=style.figsize or (8.0, 7.0), size=(width, height))  # fmt: skip
            return
        plot_wavelengths(out, source, output=output, title=title, preset=preset, scheme_params=scheme_params or {},
                         length=length, dim=d, dpi=style.dpi, figsize=style.figsize or (8.0, 5.0),
                         size=(width, height))  # fmt: skip
        return
    from pecli.render.downsample import column_structure
    from pecli.render.scale import color_scale, value_range
    from pecli.render.titles import table_axes

    draw_terminal = output is None or terminal
    image = _image_settings(output, style, given={"--cmap": cmap, "--dpi": dpi, "--figsize": figsize}, lines=lines)
    check_terminal_size(width, height)
    screen = _terminal_heatmap(out, width, height, forced=terminal) if draw_terminal else None
    if not draw_terminal and (width is not None or height is not None):
        raise ParameterError("--width/--height size the terminal heatmap", hint="drop them, or add --terminal")

    if screen is not None and image is None and lines is rows is cols is key is None:
        from pecli.cli.relative_plot import draw_relative_cells

        drawn_cells = draw_relative_cells(out, source, screen, style, preset=preset, scheme_params=scheme_params,
                                          length=length, dim=d, dtype=dtype, slice_index=slice_index)  # fmt: skip
        if drawn_cells:
            return
    from pecli.cli.inputs import load_input, load_row_window, table_view
    from pecli.cli.panels import load_parts, split_slices

    # a few rows of a long 2-D table: only those rows are computed (or read from the file)
    tables = None
    if rows is not None and slice_index is None and layer_type is None:
        tables = load_row_window(out, source, key=key, preset=preset, scheme_params=scheme_params, length=length,
                                 dim=d, dtype=dtype)  # fmt: skip
    if tables is None:
        tables = load_parts(out, source, key=key, preset=preset, scheme_params=scheme_params, length=length, dim=d,
                            dtype=dtype, layer_type=layer_type)  # fmt: skip
    shape: tuple[int, ...] = ()  # a 3-D file's, whose slices are the panels
    if tables is not None and slice_index is not None:  # several 2-D tables (rope's cos and sin): no slices
        raise ParameterError(
            f"--slice picks a slice of a 3-D table, but {literal_repr(source)} gives {len(tables)} 2-D tables:"
            f" {literal(', '.join(table.label for table in tables))}",
            hint="drop --slice; --part or --key picks one table",
        )
    if tables is None:
        from pecli.cli.panels import MAX_PANELS

        # a computed stack of heads: only the heads drawn are computed, each when it is drawn (--slice I: head I)
        drawn = MAX_PANELS if slice_index is None else sys.maxsize
        table = load_input(out, source, key=key, preset=preset, scheme_params=scheme_params, length=length, dim=d,
                           dtype=dtype, first_slices=drawn, layer_type=layer_type)  # fmt: skip
        tables = split_slices(table, slice_index)
        shape = tuple(table.array.shape)
    if len(tables) > 1:
        if lines is not None:
            raise ParameterError("--lines draws one table", hint="pick one with --key or --slice")
        draw_panels(out, tables, style, image, screen, rows=rows, cols=cols, source=source, shape=shape)
        return
    (table,) = tables
    shown = table_view(table, rows=rows, cols=cols)
    for note in shown.notes:
        out.note(note)
    data = value_range(shown.values)
    # resolved once here, so the renderers need not scan a large table again
    scale = color_scale(shown.values, vmin=vmin, vmax=vmax, robust=robust, cmap=cmap, data=data)
    if data.nonfinite:
        plural = "s" if data.nonfinite != 1 else ""
        out.warn(f"{data.nonfinite} NaN/inf value{plural} drawn as masked cells")
    if lines is None and color_note(scale):  # curves (--lines) have no colour limits
        out.note(str(color_note(scale)))
    heading = title if title is not None else _title(table)
    axes = table_axes(table.metadata, symmetric=_is_symmetric(shown.values) if rows is cols is None else False,
                      shape=shape)  # fmt: skip
    x_label, y_label = xlabel or axes.x_label, ylabel or axes.y_label
    # the file's layout holds for its own columns; a --cols slice is judged from its values
    structure = column_structure(shown.values, table.metadata if cols is None else None)

    if image is not None:
        _save_image(
            out,
            shown,
            image,
            heading,
            scale=scale,
            structure=structure,
            x_label=x_label,
            y_label=y_label,
            row_values=(axes.row_start, axes.row_step),
            drawn_limits=vmin is None and vmax is None and robust is not True,
        )
    if screen is not None:
        from pecli.render.terminal import color_mode, heatmap

        text = heatmap(
            shown.values,
            width=screen.width,
            height=screen.height,
            color=color_mode(out, force_terminal=screen.forced, no_color=not out.color),
            x_label=x_label,
            y_label=y_label,
            title=heading,
            # a table of one value: no limits, so the legend says the value rather than the span around it
            vmin=scale.low if scale.flat is None else None,
            vmax=scale.high if scale.flat is None else None,
            cmap=scale.cmap,
            structure=structure,
            x_ticks_from=shown.col_start,
            y_ticks_from=shown.row_start,
            row_values=(axes.row_start, axes.row_step),
        )
        out.data(text)


def _title(table: InputTable) -> str:
    """The table's name and the parameters that differ from its scheme's defaults (and the file it is in)."""
    from pecli.cli.inputs import is_file_input
    from pecli.render.titles import table_title

    described = table_title(table.metadata)
    if not is_file_input(table.source):
        return described or table.label
    where = table.label.rsplit(" — ", 1)[-1]  # the file name and key
    return f"{described} — {where}" if described else where


def _image_settings(
    output: str | None, style: DrawingStyle, *, given: dict[str, Any], lines: str | None
) -> ImageFile | None:
    """Check every image option before any table is read; None when there is no image to write."""

    if output is None:
        flags = [flag for flag, value in (*given.items(), ("--lines", lines)) if value is not None]
        flags = [flag for flag in flags if flag != "--cmap"]  # the terminal draws colormaps too
        if flags:
            verb = "applies" if len(flags) == 1 else "apply"
            raise ParameterError(f"{', '.join(flags)} {verb} only to image output", hint="add -o heatmap.png")
        return None
    if output == "-":
        raise ParameterError("pecli plot writes images to files, not stdout", hint="give -o heatmap.png")
    from pecli.cli.images import HeatmapImage, LinesImage
    from pecli.io import check_output_path
    from pecli.render.image import image_format

    check_output_path(output)
    image_format(output)
    size = style.figsize or (8.0, 6.0)
    if lines is not None:
        dims = _parse_dims(lines)
        colouring = [
            flag
            for flag, value in (("--cmap", style.cmap), ("--vmin", style.vmin), ("--vmax", style.vmax))
            if value is not None
        ]
        if colouring:
            verb = "colours" if len(colouring) == 1 else "colour"
            raise ParameterError(
                f"{', '.join(colouring)} {verb} the heatmap; --lines draws curves",
                hint="drop it" if len(colouring) == 1 else "drop them",
            )
        return LinesImage(output, style.dpi, size, dims)
    return HeatmapImage(output, style.dpi, size)


def _parse_dims(text: str) -> tuple[int, ...]:
    """``--lines 0,1,4,8`` as dimension indices; ``auto`` as none (chosen from the table).

    >>> _parse_dims("0,1, 4,8"), _parse_dims("auto")
    ((0, 1, 4, 8), ())
    """

    if text.strip() == "auto":
        return ()
    try:
        dims = tuple(ascii_int(part) for part in text.split(","))
    except ValueError:
        raise ParameterError(
            f"--lines takes comma-separated dimension indices, got {literal_repr(text)}", hint="e.g. --lines 0,1,4,8"
        ) from None
    if any(dim < 0 for dim in dims):
        raise ParameterError(f"--lines takes dimensions from 0, got {literal_repr(text)}", hint="e.g. --lines 0,1,4,8")
    return dims


def _terminal_heatmap(out: Output, width: int | None, height: int | None, *, forced: bool) -> TerminalHeatmap:
    """The terminal heatmap's size: ``--width``/``--height`` (checked), else the terminal's."""
    columns, terminal_lines = out.terminal_size()
    # one line is left for the shell prompt that follows
    return TerminalHeatmap(max(width or columns, MIN_WIDTH), max(height or terminal_lines - 1, MIN_HEIGHT), forced)


def _save_image(
    out: Output,
    view: TableView,
    image: ImageFile,
    heading: str,
    *,
    scale: ColorScale,
    structure: AxisStructure,
    x_label: str,
    y_label: str,
    row_values: tuple[float, float],
    drawn_limits: bool = False,
) -> None:
    from pecli.cli.images import HeatmapImage, LinesImage
    from pecli.render.image import save_heatmap
    from pecli.render.lines import auto_dims, save_lines

    # titles are drawn as plain text (render.image.set_title): "$…$" from a file or --title is no mathtext
    if isinstance(image, LinesImage):
        lines_note = save_lines(
            view.values,
            image.path,
            dims=image.dims or auto_dims(view.values.shape[1], view.col_start),
            x_ticks_from=view.row_start,
            dims_from=view.col_start,
            x_label=y_label,  # the rows run along the x axis here
            title=heading,
            dpi=image.dpi,
            figsize=image.figsize,
        )
        if lines_note:
            out.note(lines_note.spelled(flag_for))  # the core names the parameter (rows), the CLI its flag (--rows)
    elif isinstance(image, HeatmapImage):
        note = save_heatmap(
            view.values,
            image.path,
            scale=scale,
            drawn_limits=drawn_limits,
            structure=structure,
            x_label=x_label,
            y_label=y_label,
            row_values=row_values,
            x_ticks_from=view.col_start,
            y_ticks_from=view.row_start,
            title=heading,
            dpi=image.dpi,
            figsize=image.figsize,
        )
        if note:
            out.note(note)
    out.note(f"wrote {image.path} ({image.pixels})")


def _is_symmetric(values: np.ndarray) -> bool:
    """Whether a 2-D table is square and equal to its transpose (a distance or similarity matrix).

    >>> import numpy as np
    >>> _is_symmetric(np.array([[0.0, 1.0], [1.0, 0.0]])), _is_symmetric(np.eye(2, 3))
    (True, False)
    """
    import numpy as np

    return values.ndim == 2 and values.shape[0] == values.shape[1] > 1 and bool(np.array_equal(values, values.T))
