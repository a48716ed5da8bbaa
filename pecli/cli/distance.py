"""``pecli distance``: the metric between every pair of positions, or its profile over offsets."""

from __future__ import annotations

import dataclasses
import os
from typing import Annotated, Any, Optional

import typer

from pecli.cli.common import chart_size, write_data
from pecli.cli.distance_request import DistanceRequest
from pecli.cli.drawing import (
    CmapOpt,
    ColorScaleOpt,
    DpiOpt,
    FigsizeOpt,
    HeightOpt,
    RobustOpt,
    ScaleOpt,
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
    FormatOpt,
    KeyOpt,
    LayerTypeOpt,
    LenOpt,
    PresetOpt,
    complete_choices,
    output_options,
    output_path,
    scheme_options,
)
from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

HELP = """Distances between positions: a len × len matrix, or its profile.

INPUT is a table file, - (stdin), or a scheme or spec (rope:base=500000) with the generate options. Without -o, draw the
matrix as a terminal heatmap; -o FILE.png|svg|pdf draws a figure; -o FILE.npy|safetensors|csv|tsv
or -o - writes the matrix itself (streamed in row blocks, so it never has to fit in memory).
The heatmap and figure of a long table show block means computed from block-mean vectors, in
O(len × d), never the matrix (euclidean: the RMS distance per cell).

--profile gives, for each offset h = j − i, the mean, min and max of the metric over all pairs
at that offset (the metrics are symmetric, so h ≥ 0): a chart, a figure with -o FILE.png, the
columns offset, mean, min, max with -o FILE.npy|csv|-, or numbers with --json. It never builds the
matrix; on tables longer than 16384 positions it stops at offset 1024 unless --max-offset says
otherwise. For the sinusoidal table the dot product depends on |h| only and decays with it.

Examples:


  pecli distance sinusoidal --d 128 --len 256
  pecli distance pe.npy --metric cosine -o dist.png
  pecli distance sinusoidal --d 512 --len 200000 --profile --metric euclidean --json
  pecli distance fairseq.safetensors --rows 0:512 -o dist.npy
"""

#: above this many positions, --profile stops at offset DEFAULT_MAX_OFFSET unless told otherwise
LONG_TABLE = 16384
DEFAULT_MAX_OFFSET = 1024


def _metrics() -> tuple[str, ...]:
    from pecli.analysis.distance import METRICS

    return METRICS


def _qk_modes() -> tuple[str, ...]:
    from pecli.analysis.relative import QK_MODES

    return QK_MODES


def register(app: typer.Typer) -> None:
    app.command("distance", help=HELP)(distance)


@scheme_options
@output_options
def distance(
    source: Annotated[
        str, typer.Argument(metavar="INPUT", help="A table file, - (stdin), or a scheme or spec (rope:base=500000).")
    ],
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help="dot, cosine or euclidean (a row of zeros has cosine 0 with every row, with a note).",
            metavar="METRIC",
            autocompletion=complete_choices(_metrics),
        ),
    ] = "dot",
    rows: Annotated[
        Optional[str],
        typer.Option(
            "--rows", help="Only positions A..B−1 (both axes; Python slice rules), e.g. 0:512.", metavar="A:B"
        ),
    ] = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="The metric as a function of the offset h = j − i.")
    ] = False,
    max_offset: Annotated[
        Optional[int],
        typer.Option(
            "--max-offset", help="Last offset of --profile (default: all; 1024 past 16384 positions).", metavar="H"
        ),
    ] = None,
    output: Annotated[
        Optional[str],
        typer.Option(
            "-o",
            "--output",
            help="Figure (.png, .svg, .pdf), data (.npy, .safetensors, .csv, .tsv) or -.",
            metavar="PATH",
            callback=output_path,
        ),
    ] = None,
    qk: Annotated[
        Optional[str],
        typer.Option(
            "--qk",
            help="rope: the query and key scored: ones (RoFormer's decay) or random (--seed S).",
            metavar="QK",
            autocompletion=complete_choices(_qk_modes),
        ),
    ] = None,
    dtype: Annotated[
        Optional[str],
        typer.Option(
            "--dtype",
            help="The matrix written with -o FILE.npy|safetensors|csv|tsv or -: float32 (default) or float64.",
            metavar="DTYPE",
            autocompletion=complete_choices(lambda: MATRIX_DTYPES),
        ),
    ] = None,
    fmt: FormatOpt = None,
    key: KeyOpt = None,
    cmap: CmapOpt = None,
    vmin: VminOpt = None,
    vmax: VmaxOpt = None,
    robust: RobustOpt = None,
    title: TitleOpt = None,
    xlabel: XLabelOpt = None,
    ylabel: YLabelOpt = None,
    dpi: DpiOpt = None,
    figsize: FigsizeOpt = None,
    terminal: TerminalOpt = False,
    width: WidthOpt = None,
    height: HeightOpt = None,
    scale_name: ScaleOpt = None,
    color_scale_name: ColorScaleOpt = None,
    d: DimOpt = None,
    length: LenOpt = None,
    preset: PresetOpt = None,
    layer_type: LayerTypeOpt = None,
    *,
    out: Output,
    scheme_params: dict[str, Any] | None = None,
) -> None:
    from pecli.cli.drawing import check_terminal_size, drawing_style, split_scale

    panels, scheme_params = split_scale(scale_name, color_scale_name, scheme_params)
    style = drawing_style(
        cmap=cmap, vmin=vmin, vmax=vmax, robust=robust, title=title, xlabel=xlabel, ylabel=ylabel, dpi=dpi,
        figsize=figsize, panel_scale=panels,
    )  # fmt: skip
    check_terminal_size(width, height)
    from pecli.analysis.distance import check_metric
    from pecli.cli.inputs import (
        key_for_scheme,
        load_input,
        load_row_window,
        scheme_input,
        stdin_file_params,
        table_view,
    )
    from pecli.cli.relative import relative_distance
    from pecli.cli.relative_input import relative_input
    from pecli.sources import check_layer_type

    check_metric(metric)
    if max_offset is not None and not profile:
        raise ParameterError("--max-offset applies to --profile", hint="add --profile, or drop --max-offset")
    if max_offset is not None and max_offset < 0:
        raise ParameterError(f"--max-offset must be >= 0, got {max_offset}", hint="e.g. --max-offset 1024")
    if out.json_output and output is not None:
        raise ParameterError("--json prints the result; it cannot go with -o", hint="use one of them")
    kind = _output_kind(out, output, fmt, source)
    _check_dtype(dtype, kind, profile)
    # a spec (rope:base=500000) is its scheme with its parameters as options
    source, preset, scheme_params = scheme_input(source, preset=preset, scheme_params=scheme_params, length=length,
                                                 dim=d)  # fmt: skip
    key, scheme_params = key_for_scheme(source, key, stdin_file_params(out, scheme_params))
    check_layer_type(source, layer_type)  # a model's config's option: refused for a file or scheme at once
    relative = relative_input(source, preset=preset, scheme_params=scheme_params or {}, length=length, dim=d, qk=qk,
                              layer_type=layer_type)  # fmt: skip
    if relative is not None:
        request = DistanceRequest(metric, range(relative.length), relative.label, output, fmt, kind, max_offset,
                                  style=style, size=(width, height), forced=terminal)  # fmt: skip
        unused = {"--rows": rows, "--key": key, "--metric": None if metric == "dot" else metric, "--dtype": dtype}
        relative_distance(out, relative, request, profile=profile, unused=unused)
        return
    # positions A..B−1 of a long 2-D table: only those rows are computed (or read from the file)
    windows = None
    if rows is not None and layer_type is None:
        windows = load_row_window(out, source, key=key, preset=preset, scheme_params=scheme_params, length=length,
                                  dim=d)  # fmt: skip
    table = windows[0] if windows is not None and len(windows) == 1 else None
    if table is None:
        table = load_input(out, source, key=key, preset=preset, scheme_params=scheme_params, length=length, dim=d,
                           layer_type=layer_type)  # fmt: skip
    view = table_view(table, rows=rows)  # 2-D (squeezed with a note), positions A..B−1 of --rows
    for note in view.notes:
        out.note(note)
    vectors = view.values
    from pecli.analysis.distance import cosine_note

    zero_note = cosine_note(vectors, metric)
    if zero_note is not None:
        out.note(zero_note)
    positions = range(view.row_start, view.row_start + len(vectors))
    from pecli.render.titles import table_title

    name = table_title(table.metadata) or table.label  # a scheme's non-default parameters only
    title = f"{metric} — {name}" + (f", positions {positions.start}..{positions.stop - 1}" if rows else "")
    request = DistanceRequest(
        metric, positions, style.title or title, output, fmt, kind, max_offset, style, (width, height), terminal,
        dtype or "float32",
    )  # fmt: skip
    if profile:
        _profile(out, vectors, request)
    else:
        _matrix(out, vectors, request)


#: the dtypes --dtype writes the matrix as
MATRIX_DTYPES = ("float32", "float64")


def _check_dtype(dtype: str | None, kind: str | None, profile: bool) -> None:
    """--dtype: one of MATRIX_DTYPES, for a matrix written as data (a figure, a chart and --json show float64)."""
    if dtype is None:
        return
    if dtype not in MATRIX_DTYPES:
        raise ParameterError(
            f"unknown --dtype {literal_repr(dtype)} for the matrix", hint=f"one of {', '.join(MATRIX_DTYPES)}"
        )
    if profile:  # the cause named: -o FILE.npy may be given already
        raise ParameterError("--dtype applies to the matrix, not --profile's offsets", hint="drop --dtype")
    if kind != "data":
        raise ParameterError(
            "--dtype applies to the matrix written with -o FILE.npy|safetensors|csv|tsv or -o -", hint="drop --dtype"
        )


def _output_kind(out: Output, output: str | None, fmt: str | None, source: str) -> str | None:
    """None (terminal), "image", or "data"; checks the path (a new one, not ``source``) before any work."""
    if output is None:
        if fmt is not None:
            raise ParameterError("--format needs an output", hint="add -o FILE or -o -")
        return None
    from pecli.cli.common import check_output
    from pecli.io import format_for

    check_output(out, output, [source])
    extension = os.path.splitext(output)[1].lstrip(".").lower()
    if fmt is None and extension in ("png", "svg", "pdf"):
        return "image"
    format_for(output, fmt)
    return "data"


#: memory a matrix cell takes on its way to --json: a Python float in a list, and its JSON text (measured: 142)
_JSON_BYTES_PER_CELL = 160


def _matrix(out: Output, vectors: Any, request: DistanceRequest) -> None:
    from pecli.analysis.distance import distance_blocks, distance_matrix
    from pecli.report import Deferred

    count, metric, positions = len(vectors), request.metric, request.positions
    meta = {"metric": metric, "positions": f"{positions.start}:{positions.stop}"}
    if request.kind == "data":
        from pecli.analysis.distance import check_fits
        from pecli.io import Tensor

        dtype = request.dtype
        check_fits(vectors, metric, dtype)  # before a byte is written: a value past float32's largest is refused
        # row blocks straight to the file: the matrix is never in memory
        matrix_blocks = Tensor((count, count), dtype, lambda: distance_blocks(vectors, metric, dtype=dtype))
        write_data(out, request, "distance", matrix_blocks, meta)
        return
    if request.kind == "image":
        from pecli.render.image import heatmap_pixels

        pixels = heatmap_pixels(request.style.figsize or _FIGSIZE, request.style.dpi)
        if count > min(pixels):
            cells, figure = _block_means(vectors, metric, *pixels), _block_mean_request(request)
        else:
            _check_matrix_fits(count)
            cells, figure = distance_matrix(vectors, metric), request
        note = _save_matrix_figure(str(request.output), cells, figure)
        out.note(f"wrote {request.output}" + (f" ({note})" if note else ""))
        return

    def listed() -> dict[str, Any]:
        _check_matrix_fits(count, json_bytes=_JSON_BYTES_PER_CELL)
        matrix = distance_matrix(vectors, metric)
        return {"metric": metric, "positions": [positions.start, positions.stop], "matrix": matrix.tolist()}

    def drawn() -> list[str]:
        cells = _terminal_cells(out, vectors, request)
        if cells is not None:
            return [_terminal_heatmap(out, cells, _block_mean_request(request))]
        _check_matrix_fits(count)
        return [_terminal_heatmap(out, distance_matrix(vectors, metric), request)]

    out.show(Deferred(listed, drawn))


def _check_matrix_fits(count: int, *, json_bytes: int = 0) -> None:
    """Refuse a count × count matrix (and its JSON, ``json_bytes`` a cell) that would not fit in memory."""
    from pecli.memory import check_fits_in_memory

    check_fits_in_memory(
        count * count * (8 + json_bytes),  # float64 cells
        what=f"{count} × {count} distance matrix" + (" as JSON" if json_bytes else ""),
        hint="use --rows A:B for part of it, --profile for the offset profile, or -o FILE.npy, which streams",
    )


def _profile(out: Output, vectors: Any, request: DistanceRequest) -> None:
    from pecli.analysis.distance import offset_profile

    max_offset = request.max_offset
    if max_offset is None and len(vectors) > LONG_TABLE:
        max_offset = DEFAULT_MAX_OFFSET
        out.note(f"profile of offsets 0..{max_offset} of {len(vectors) - 1} (--max-offset sets the last one)")
    result = offset_profile(vectors, request.metric, max_offset=max_offset)
    last = len(vectors) - 1
    if len(result.offsets) and int(result.offsets[-1]) < last and request.style.title is None:
        # the chart's x axis ends where the profile stops: the figure says it is not the whole table
        request = dataclasses.replace(request, title=f"{request.title}, offsets 0..{int(result.offsets[-1])} of {last}")
    if request.kind == "data":
        import numpy as np

        columns = np.column_stack([result.offsets, result.mean, result.min, result.max]).astype(np.float64)
        meta = {"metric": request.metric, "columns": "offset,mean,min,max"}
        from pecli.io import Tensor

        write_data(out, request, "profile", Tensor.from_array(columns), meta)
    elif request.kind == "image":
        _save_profile_figure(str(request.output), result, request)
        out.note(f"wrote {request.output}")
    else:
        from pecli.report import Deferred

        positions = [request.positions.start, request.positions.stop]
        out.show(
            Deferred(
                lambda: {**result.to_json(), "positions": positions}, lambda: [_terminal_profile(out, result, request)]
            )
        )


# -- rendering: one small function each, over pecli.render ------------------------------------

#: colour limits per metric where none are given: cosines lie in [−1, 1]; the others follow the data
#: (distances are >= 0, so they get a sequential map; see pecli.render.scale.color_scale)
_LIMITS = {"cosine": (-1.0, 1.0)}


#: the matrix figure's size in inches (its block cells: one per pixel of its axes, pecli.render.image.heatmap_pixels)
_FIGSIZE = (7.0, 6.0)


def _colors(request: DistanceRequest, matrix: Any) -> Any:
    """The colour scale of a distance matrix (or its block cells): the drawing options, else the metric's."""
    from pecli.render.scale import color_scale

    style = request.style
    low, high = _LIMITS.get(request.metric, (None, None)) if style.vmin is None and style.vmax is None else (None, None)
    values = getattr(matrix, "values", matrix)  # a Downsampled's cells, or the matrix
    return color_scale(
        values,
        vmin=style.vmin if low is None else low,
        vmax=style.vmax if high is None else high,
        robust=style.robust,
        cmap=style.cmap,
    )


def _block_means(vectors: Any, metric: str, max_rows: int, max_cols: int) -> Any:
    """The matrix's cells as block means of ``max_rows`` × ``max_cols`` uniform blocks, never building it."""
    from pecli.analysis.distance import block_mean_matrix
    from pecli.render.downsample import Downsampled, block_edges

    row_edges = block_edges(len(vectors), max_rows, uniform=True)
    col_edges = block_edges(len(vectors), max_cols, uniform=True)
    return Downsampled(block_mean_matrix(vectors, row_edges, col_edges, metric), row_edges, col_edges)


def _terminal_cells(out: Output, vectors: Any, request: DistanceRequest) -> Any:
    """Block means at the terminal heatmap's resolution, or None when every position gets its own cell."""
    from pecli.render.terminal import color_mode, heatmap_cells

    width, height = chart_size(out, request)
    grid = heatmap_cells(
        len(vectors),
        width=width,
        height=height,
        color=color_mode(out, force_terminal=request.forced, no_color=not out.color),
        title=request.title,
        y_ticks_from=request.positions.start,
    )
    if len(vectors) <= min(grid):
        return None
    return _block_means(vectors, request.metric, *grid)


def _block_mean_request(request: DistanceRequest) -> DistanceRequest:
    """Euclidean block cells are RMS distances: the mean of distances does not follow from mean vectors."""
    if request.metric != "euclidean":
        return request
    return dataclasses.replace(request, title=request.title + " (RMS per cell)")


def _terminal_heatmap(out: Output, matrix: Any, request: DistanceRequest) -> str:
    from pecli.render.terminal import color_mode, heatmap

    width, height = chart_size(out, request)
    scale = _colors(request, matrix)
    return heatmap(
        matrix,
        width=width,
        height=height,
        color=color_mode(out, force_terminal=request.forced, no_color=not out.color),
        x_label=request.style.x_label or "Position",
        y_label=request.style.y_label or "Position",
        title=request.title,
        vmin=scale.low,
        vmax=scale.high,
        cmap=scale.cmap,
        x_ticks_from=request.positions.start,
        y_ticks_from=request.positions.start,
    )


def _save_matrix_figure(path: str, matrix: Any, request: DistanceRequest) -> str | None:
    from pecli.render.image import save_heatmap

    positions = request.positions
    style = request.style
    return save_heatmap(
        matrix,
        path,
        title=request.title,
        x_label=style.x_label or "Position",
        y_label=style.y_label or "Position",
        scale=_colors(request, matrix),
        dpi=style.dpi,
        figsize=style.figsize or _FIGSIZE,
        x_ticks_from=positions.start,
        y_ticks_from=positions.start,
    )


def _terminal_profile(out: Output, result: Any, request: DistanceRequest) -> str:
    from pecli.render.charts import profile_chart

    width, height = chart_size(out, request)
    return profile_chart(
        result.offsets,
        result.mean,
        result.min,
        result.max,
        width=width,
        height=min(height, 24) if request.size[1] is None else height,
        title=request.title,
        y_label=result.metric,
    )


def _save_profile_figure(path: str, result: Any, request: DistanceRequest) -> None:
    import textwrap

    from pecli.render.charts import save_profile

    save_profile(
        result.offsets,
        result.mean,
        result.min,
        result.max,
        path,
        title=textwrap.fill(request.title, 80),
        y_label=request.style.y_label or result.metric,
        dpi=request.style.dpi,
        figsize=request.style.figsize or (8, 5),
    )
