"""Small multiples for ``pecli plot``: the tables of one input drawn side by side with shared colours.

A scheme with several parts (RoPE's cos and sin), a file whose tensors all share one 2-D shape,
and a 3-D table (ALiBi's heads, any ``(n, L, d)``) each give several panels; ``--key`` picks one
tensor and ``--slice`` one slice (for the alibi scheme itself, its ``--head``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pecli.cli.drawing import DRAWING_PANEL, DrawingStyle, TerminalHeatmap, color_note
from pecli.cli.output import Output, printable
from pecli.errors import Message, ParameterError
from pecli.text import literal

if TYPE_CHECKING:  # the inputs (and the resolver) load when a table is read, not for --help
    from pecli.cli.images import ImageFile
    from pecli.cli.inputs import InputTable

SliceOpt = Annotated[
    Optional[int],
    typer.Option(
        "--slice",
        help="Draw only slice I of a 3-D table (an ALiBi head in a file), not one panel per slice.",
        metavar="I",
        rich_help_panel=DRAWING_PANEL,
    ),
]
#: the most panels drawn; a larger stack is drawn in part, with a note
MAX_PANELS = 16

#: how the slices a 3-D table's panels leave out are seen
SEE_A_SLICE = "--slice I picks any one"


def drawn_count(out: Output, total: int, noun: str, rest: str) -> int:
    """How many of ``total`` panels (``noun``: slices, heads) a figure or the terminal draws: at most
    :data:`MAX_PANELS`, with a note saying so and how ``rest`` shows the others.

    >>> import io
    >>> out = Output(stderr=io.StringIO())
    >>> drawn_count(out, 20, "heads", "--json holds them all"), out.stderr.getvalue().strip()
    (16, 'drawing the first 16 of 20 heads (--json holds them all)')
    >>> drawn_count(out, 3, "heads", "--json holds them all")
    3
    """
    if total > MAX_PANELS:
        out.note(f"drawing the first {MAX_PANELS} of {total} {noun} ({rest})")
    return min(total, MAX_PANELS)


def load_parts(
    out: Output,
    source: str,
    *,
    key: str | None,
    preset: str | None,
    scheme_params: dict[str, Any] | None,
    length: int | None,
    dim: int | None,
    dtype: str,
    layer_type: str | None = None,
) -> list[InputTable] | None:
    """The tables of a multi-part scheme or of a file whose tensors share one 2-D shape; None otherwise."""
    if key is not None:
        return None
    from pecli.cli.inputs import input_parts

    # through the one resolver: a path or stdin alike (a model directory names its table)
    return input_parts(out, source, preset=preset, scheme_params=scheme_params, length=length, dim=dim, dtype=dtype,
                       layer_type=layer_type)  # fmt: skip


def split_slices(table: InputTable, index: int | None) -> list[InputTable]:
    """A 3-D table as one table per slice (or slice ``index`` alone); any other table as is.

    >>> import numpy as np
    >>> from pecli.cli.inputs import InputTable
    >>> bias = -np.array([0.0625, 0.00390625])[:, None, None] * abs(np.arange(3)[:, None] - np.arange(3))
    >>> tables = split_slices(InputTable(bias, "alibi", {"scheme": "alibi", "heads": "2"}), None)
    >>> [t.label for t in tables], tables[0].array.shape
    (['head 0, slope 0.0625', 'head 1, slope 0.003906'], (3, 3))
    """
    from pecli.cli.inputs import InputTable

    array = table.array
    stacked = getattr(array, "ndim", 0) == 3 and array.shape[0] > 1 and 1 not in array.shape[1:]
    if not stacked:
        if index is not None:
            raise ParameterError(
                f"--slice picks a slice of a 3-D table, but {literal(table.label)} has shape {array.shape}",
                hint="drop --slice",
            )
        return [_computed(table)]
    from pecli.schemes.catalog import find_scheme

    scheme = find_scheme(table.metadata.get("scheme"))
    what = "head" if stack_of_heads(table.metadata, array.shape) else "slice"
    if index is not None:
        if not -array.shape[0] <= index < array.shape[0]:
            raise ParameterError(
                f"--slice {index} is outside the {array.shape[0]} slices of {literal(table.label)}"
                f" (0…{array.shape[0] - 1})",
                hint=f"give --slice 0 to {array.shape[0] - 1}",
            )
        index %= array.shape[0]
        # a scheme's head: its title names it (head=3), as --head 3's does
        metadata = with_slice(table.metadata, scheme, index)
        return [_computed(InputTable(array[index], f"{table.label}, {what} {index}", metadata, table.source))]
    names = _head_names(table, scheme)
    if len(names) == _recorded_slices(table) > array.shape[0]:  # the first heads of a computed stack
        names = names[: array.shape[0]]
    names = names if len(names) == array.shape[0] else [f"{what} {i}" for i in range(array.shape[0])]
    return [InputTable(array[i], name, table.metadata, table.source) for i, name in enumerate(names)]


def with_slice(metadata: dict[str, str], scheme: Any, index: int) -> dict[str, str]:
    """``metadata`` of one slice ``index`` of a stack of heads: its scheme's ``head`` parameter set, where it has one
    (the title then names the head drawn, as ``--head I`` does); else as is.

    >>> from pecli.schemes.catalog import get_scheme
    >>> with_slice({"scheme": "alibi", "heads": "8"}, get_scheme("alibi"), 3)
    {'scheme': 'alibi', 'heads': '8', 'head': '3'}
    """
    if scheme is None or "head" not in scheme.defaults:
        return metadata
    return {**metadata, "head": str(index)}


def stack_of_heads(metadata: dict[str, str], shape: tuple[int, ...]) -> bool:
    """Whether a 3-D table of ``shape`` is a stack of per-head (query × key) slices: a bias scheme's, or, with no
    scheme named, square slices (heads, L, L), as compare reads a 3-D file (head, query, key).

    >>> stack_of_heads({"scheme": "alibi"}, (8, 5, 5)), stack_of_heads({}, (8, 5, 5)), stack_of_heads({}, (8, 5, 3))
    (True, True, False)
    >>> stack_of_heads({"scheme": "sinusoidal"}, (2, 5, 5))
    False
    """
    from pecli.schemes.catalog import find_scheme

    if len(shape) != 3:
        return False
    scheme = find_scheme(metadata.get("scheme"))
    if scheme is not None:
        return scheme.kind == "bias"
    return "scheme" not in metadata and shape[1] == shape[2]


def _computed(table: InputTable) -> InputTable:
    """``table`` with its values computed, where they were left to compute on reading (a stack's slices)."""
    import dataclasses

    import numpy as np

    from pecli.sources import LazySlice, LazySlices

    lazy = isinstance(table.array, (LazySlices, LazySlice))
    return dataclasses.replace(table, array=np.asarray(table.array)) if lazy else table


def _recorded_slices(table: InputTable) -> int:
    """The slices of the whole table its metadata describes (of which only the first may be computed), else 0.

    >>> import numpy as np
    >>> from pecli.cli.inputs import InputTable
    >>> _recorded_slices(InputTable(np.zeros((3, 3)), "x", {"shape": "70000,3,3"}))
    70000
    >>> _recorded_slices(InputTable(np.zeros((64, 64)), "cos", {"shape": "64,64"}))  # a part, not a slice
    0
    """
    shape = table.metadata.get("shape", "").split(",")
    if len(shape) != table.array.ndim + 1:  # the table is the whole tensor (RoPE's cos), not one slice of it
        return 0
    return int(shape[0]) if shape[0].isdigit() else 0


def _head_names(table: InputTable, scheme: Any) -> list[str]:
    """The names the registry's ``bias_heads`` gives a bias scheme's heads (ALiBi's slopes), from the file's metadata.

    Empty where there are none: another scheme, T5's learned bias (its table is a file), metadata that lacks them.
    """
    if scheme is None or scheme.relative != "bias":
        return []
    from pecli.schemes.metadata import decode_value

    params = {**scheme.defaults}
    params.update({name: decode_value(table.metadata[name]) for name in scheme.defaults if name in table.metadata})
    if params.get("heads", 0) is None:  # a table without metadata (pecli.encode's array): one slice a head
        params["heads"] = table.array.shape[0]
    try:
        return scheme.head_names(params)
    except (ParameterError, TypeError, ValueError):
        return []


def _named_structure(metadata: dict[str, str]) -> Any:
    """The column structure the tables' metadata names (RoPE's halves), or None to judge it from the
    values (a cos panel's halves are alike: its values alone cannot tell them)."""
    import numpy as np

    from pecli.render.downsample import NO_STRUCTURE, column_structure

    named = column_structure(np.zeros((1, 1)), metadata)  # no values to judge: only what the metadata says
    return None if named == NO_STRUCTURE else named


def draw_panels(
    out: Output,
    tables: list[Any],
    style: DrawingStyle,
    image: ImageFile | None,
    screen: TerminalHeatmap | None,
    *,
    rows: str | None,
    cols: str | None,
    source: str,
    shape: tuple[int, ...] = (),
) -> None:
    """Small multiples: every table in one colour scale, side by side in an image, one under another in the terminal.

    ``shape``: the 3-D table's, where the tables are its slices (a file's stack of heads: its axes are named so).
    """

    from pecli.cli.inputs import table_view
    from pecli.render.titles import panel_titles, table_axes, table_title

    if screen is not None:
        _check_stack_height(screen.height, len(tables))
    total = max(len(tables), _recorded_slices(tables[0]))
    tables = tables[: drawn_count(out, total, "slices", SEE_A_SLICE)]
    views = [table_view(table, rows=rows, cols=cols) for table in tables]  # a computed head: not computed yet
    matrices = [view.values for view in views]
    per_panel = style.panel_scale == "per-panel"
    scale, own_scales = panel_scales(matrices, style, per_panel=per_panel)
    if color_note(scale):
        out.note(str(color_note(scale)))
    metadata = tables[0].metadata
    from pecli.cli.inputs import is_file_input

    name = printable("<stdin>" if source == "-" else os.path.basename(os.path.normpath(source)))
    if metadata.get("layer_type"):  # a model whose layer types differ: the one these tables are of
        name += f" ({printable(metadata['layer_type'])})"
    described = style.title or table_title({k: v for k, v in metadata.items() if k != "part"})
    if is_file_input(source):  # a file is named by its base name, as a single table's title names it
        heading = f"{described} — {name}" if described else name
    else:
        heading = described or printable(source)
    axes = table_axes(metadata, shape=shape)
    x_label, y_label = style.x_label or axes.x_label, style.y_label or axes.y_label
    titles = panel_titles([table.label for table in tables])  # cos, sin; head 0, head 1…; a file's tensors
    if image is not None:
        from pecli.render.panels import save_panels

        own = own_scales if per_panel else scale
        notes = save_panels(
            matrices, image.path, titles=titles, title=heading, scale=own, x_label=x_label, y_label=y_label,
            dpi=image.dpi, figsize=image.figsize,
        )  # fmt: skip
        for note in notes:
            out.note(note.spelled(out.spell) if isinstance(note, Message) else note)
        which = "each in its own colour scale" if per_panel else "in one colour scale"
        out.note(f"wrote {image.path} ({image.pixels}, {len(matrices)} panels {which})")
    if screen is not None:
        from pecli.render.terminal import ascii_text, color_mode, heatmap_stack

        color = color_mode(out, force_terminal=screen.forced, no_color=not out.color)
        scales = own_scales if per_panel else [scale]
        text, shown = heatmap_stack(
            list(matrices), [f"{title}  ({heading})" for title in titles], width=screen.width,
            height=screen.height - 1, color=color, scales=[(s.low, s.high, s.cmap) for s in scales],
            x_label=x_label, y_label=y_label, x_ticks_from=views[0].col_start, y_ticks_from=views[0].row_start,
            structure=_named_structure(metadata) if cols is None else None,
        )  # fmt: skip
        closing = _truncate(stack_closing(len(matrices), shown, screen.height, per_panel=per_panel), screen.width)
        out.data(text + "\n" + (ascii_text(closing) if color == "ascii" else closing))


def _check_stack_height(height: int, count: int) -> None:
    """Refuse a --height that cannot hold one stacked panel and the line under the stack (before any work).

    >>> _check_stack_height(9, 2)
    >>> try:
    ...     _check_stack_height(8, 2)
    ... except ParameterError as error:
    ...     print(error.message)
    --height 8 cannot hold a stack of 2 panels: one panel and the line under it take 9 lines
    """
    from pecli.render.terminal import MIN_PANEL_LINES, frame_lines

    least = frame_lines(title=True) + MIN_PANEL_LINES + 1
    if height < least:
        raise ParameterError(
            f"--height {height} cannot hold a stack of {count} panels: one panel and the line under it take "
            f"{least} lines",
            hint=f"give --height {least} or more, or --slice I for one panel",
        )


def stack_closing(count: int, shown: int, height: int, *, per_panel: bool) -> str:
    """The line under a terminal stack of ``count`` panels: their colour scales, and how many fit in ``height``.

    >>> stack_closing(8, 3, 20, per_panel=False)
    '8 panels in one colour scale; 3 of 8 fit in 20 lines (--height, --slice I); each its own: --scale per-panel'
    """
    which = "each panel in its own colour scale" if per_panel else f"{count} panels in one colour scale"
    if shown < count:
        which += f"; {shown} of {count} fit in {height} lines (--height, --slice I)"
    return which + (" (--scale per-panel)" if per_panel else "; each its own: --scale per-panel")


def panel_scales(matrices: list[Any], style: DrawingStyle, *, per_panel: bool) -> tuple[Any, list[Any]]:
    """One colour scale for all the panels, and (``per_panel``) each panel's own, from the drawing options.

    One panel's values are in memory at a time (a computed head is computed here, and again when
    drawn): each panel's range and its share of the percentile sample are gathered in turn, and
    give the limits that the panels joined into one table would.

    >>> import numpy as np
    >>> from pecli.cli.drawing import drawing_style
    >>> from pecli.render.scale import color_scale
    >>> heads = [-np.abs(np.subtract.outer(np.arange(9.0), np.arange(9.0))) * m for m in (1.0, 0.25)]
    >>> scale, own = panel_scales(heads, drawing_style(), per_panel=True)
    >>> scale == color_scale(np.concatenate([h.ravel() for h in heads])), [s.low for s in own]
    (True, [-8.0, -2.0])
    """
    import math

    import numpy as np

    from pecli.render.scale import color_scale, finite_sample, merge_ranges, sample_step, value_range

    options: dict[str, Any] = {"vmin": style.vmin, "vmax": style.vmax, "robust": style.robust, "cmap": style.cmap}
    step = sample_step(sum(math.prod(matrix.shape) for matrix in matrices))
    ranges, samples, own, offset = [], [], [], 0
    for matrix in matrices:
        values = np.asarray(matrix)
        ranges.append(value_range(values))
        samples.append(finite_sample(values, step, offset))
        if per_panel:
            own.append(color_scale(values, data=ranges[-1], **options))
        offset += values.size
        del values  # before the next panel is computed
    return color_scale(None, data=merge_ranges(ranges), sample=np.concatenate(samples), **options), own


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"
