"""``pecli plot --terminal`` of a relative bias (ALiBi's heads, T5's buckets or learned bias, KERPLE): every
len × len slice is M[m, n] = f(m − n), so the drawn cells are computed from the offset curves f, in O(heads · len)
memory and time, never the slices themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pecli.cli.output import Output

if TYPE_CHECKING:
    import numpy as np

    from pecli.cli.drawing import DrawingStyle, TerminalHeatmap

__all__ = ["draw_relative_cells"]


def draw_relative_cells(
    out: Output,
    source: str,
    screen: TerminalHeatmap,
    style: DrawingStyle,
    *,
    preset: str | None,
    scheme_params: dict[str, Any] | None,
    length: int | None,
    dim: int | None,
    dtype: str,
    slice_index: int | None,
) -> bool:
    """A relative bias scheme (ALiBi's heads, T5's buckets or learned bias, KERPLE) drawn in the terminal
    from its offset curves, and True; False (nothing drawn) for any other input.

    Every len × len slice is M[m, n] = f(m − n): the drawn cells are its exact block means
    (:func:`pecli.analysis.toeplitz.toeplitz_block_means`), its range is f's, and the percentile sample
    of the colour scale holds the very values the whole slices' sample would (the same places, read
    off f): the picture and scale the slices give, in O(len) memory and time rather than len².
    A table short enough that the terminal might resample its columns (under 8 cells a column) is
    left to the whole-slice path, which is cheap there.
    """
    import numpy as np

    from pecli.cli.inputs import is_file_input

    if is_file_input(source):
        return False
    from pecli.cli.relative_input import relative_input

    params = dict(scheme_params or {})
    if "seed" in params:
        return False
    relative = relative_input(source, preset=preset, scheme_params=params, length=length, dim=dim, qk=None)
    if relative is None or relative.relative not in ("bias", "buckets"):
        return False
    from pecli.cli.relative import _offset_curves
    from pecli.render.terminal import _RESAMPLE_MOST, color_mode, heatmap_cells

    size = relative.length
    color = color_mode(out, force_terminal=screen.forced, no_color=not out.color)
    if size <= _RESAMPLE_MOST * heatmap_cells(size, width=screen.width, height=screen.height, color=color,
                                               title="t")[1]:  # fmt: skip
        return False
    from pecli.schemes.spec import TableSpec
    from pecli.sources import _describe

    spec = TableSpec.resolve(source, preset, params, length=length, dim=dim, dtype=dtype, name="pe").single()
    shape = tuple(spec.shape)
    heads = shape[0] if len(shape) == 3 else 1
    if shape not in ((size, size), (heads, size, size)) or not _is_toeplitz(source, relative, spec):
        return False  # another part (ALiBi's slopes), or rows that are not f(m − n) (ALiBi's form=key)
    if slice_index is not None and not (heads > 1 and -heads <= slice_index < heads):
        return False  # the whole-slice path says why
    from pecli.cli.panels import MAX_PANELS, with_slice
    from pecli.memory import check_fits_in_memory

    # only the heads drawn are computed: the first MAX_PANELS, or those up to --slice I
    index = None if slice_index is None or heads == 1 else slice_index % heads
    drawn = min(heads, MAX_PANELS if index is None else index + 1)
    # the curves, their copy in the table's dtype and the block means' two running sums: O(drawn heads · len)
    check_fits_in_memory(
        4 * 8 * drawn * (2 * size - 1), what="offset curves of the bias", hint="use a smaller {length}"
    )
    # f(h), h = −(len − 1) … len − 1, per head, in the table's dtype (as the slices hold it)
    curves = np.asarray(_offset_curves(relative, heads=drawn if heads > 1 else None))
    curves = curves.astype(dtype).astype(np.float64)
    if curves.shape[0] != drawn:
        return False
    metadata = spec.metadata()
    label = _describe(spec.scheme, metadata)
    if heads > 1:
        from pecli.schemes.catalog import get_scheme

        scheme = get_scheme(relative.scheme)
        names = scheme.head_names(relative.params)
        names = names if len(names) == heads else [f"head {i}" for i in range(heads)]
        if index is None:
            _relative_panels(out, source, screen, style, curves, names[:drawn], metadata, color, total=heads)
            return True
        curves, label = curves[index : index + 1], f"{label}, head {index}"
        metadata = with_slice(metadata, scheme, index)
    _relative_single(out, screen, style, curves[0], metadata, label, color)
    return True


def _is_toeplitz(source: str, relative: Any, spec: Any) -> bool:
    """Whether the table ``spec`` computes is the offset curves' M[m, n] = f(m − n): checked on the same
    scheme and parameters at 9 positions (the curves are the registry's ``bias``; the table its table)."""
    import dataclasses

    import numpy as np

    from pecli.analysis.toeplitz import toeplitz_matrix
    from pecli.cli.relative import _offset_curves
    from pecli.schemes.spec import TableSpec

    small = min(relative.length, 9)
    table = TableSpec.resolve(source, None, dict(spec.params), length=small, dim=None, dtype="float64",
                              name="pe").single()  # fmt: skip
    values = np.asarray(table.array(), dtype=np.float64)
    curves = np.asarray(_offset_curves(dataclasses.replace(relative, length=small)), dtype=np.float64)
    expected = toeplitz_matrix(curves).reshape(values.shape) if values.size == curves.shape[0] * small**2 else None
    return expected is not None and bool(np.allclose(values, expected, rtol=1e-12, atol=0.0, equal_nan=True))


def _curve_sample(curve: np.ndarray, size: int, step: int, offset: int) -> np.ndarray:
    """:func:`~pecli.render.scale.finite_sample` of the size × size slice M[m, n] = curve[m − n + size − 1]
    (flattened, at every ``step`` th place of a run in which it starts at place ``offset``), read off the curve."""
    import numpy as np

    places = np.arange((-offset) % step, size * size, step, dtype=np.int64)
    values = curve[places // size - places % size + size - 1]
    return values[np.isfinite(values)]


def _curve_cells(curve: np.ndarray, size: int, cells: tuple[int, int]) -> Any:
    """The exact block means of the slice M[m, n] = f(m − n) on the terminal's blocks (one size, even)."""
    from pecli.analysis.toeplitz import toeplitz_block_means
    from pecli.render.downsample import Downsampled, block_edges

    rows = block_edges(size, cells[0], uniform=True, even=True)
    cols = block_edges(size, cells[1], uniform=True, even=True)
    return Downsampled(toeplitz_block_means(curve[None], rows, cols)[0], rows, cols)


def _relative_single(out: Output, screen: TerminalHeatmap, style: DrawingStyle, curve: np.ndarray,
                     metadata: dict[str, str], label: str, color: str) -> None:  # fmt: skip
    """One relative slice, as :func:`plot` draws a table (its title, axes, scale and value line)."""
    import numpy as np

    from pecli.cli.drawing import color_note
    from pecli.render.scale import color_scale, sample_step, value_range
    from pecli.render.terminal import heatmap, heatmap_cells
    from pecli.render.titles import table_axes, table_title

    size = (curve.shape[0] + 1) // 2
    data = value_range(curve)  # a square slice holds every offset: its range is f's
    sample = _curve_sample(curve, size, sample_step(size * size), 0)
    scale = color_scale(None, vmin=style.vmin, vmax=style.vmax, robust=style.robust, cmap=style.cmap, data=data,
                        sample=sample)  # fmt: skip
    if color_note(scale):
        out.note(str(color_note(scale)))
    heading = style.title if style.title is not None else (table_title(metadata) or label)
    axes = table_axes(metadata, symmetric=bool(np.array_equal(curve, curve[::-1])))
    row_values = (axes.row_start, axes.row_step)
    cells = heatmap_cells(size, width=screen.width, height=screen.height, color=color, title=heading,
                          row_values=row_values)  # fmt: skip
    out.data(heatmap(
        _curve_cells(curve, size, cells), width=screen.width, height=screen.height, color=color,
        x_label=style.x_label or axes.x_label, y_label=style.y_label or axes.y_label, title=heading,
        vmin=scale.low if scale.flat is None else None, vmax=scale.high if scale.flat is None else None,
        cmap=scale.cmap, row_values=row_values, whole=data,
    ))  # fmt: skip


def _relative_panels(out: Output, source: str, screen: TerminalHeatmap, style: DrawingStyle, curves: np.ndarray,
                     names: list[str], metadata: dict[str, str], color: str, *, total: int) -> None:  # fmt: skip
    """The heads of a relative bias stacked, as :func:`pecli.cli.panels.draw_panels` draws a 3-D table's slices:
    ``curves`` holds the first (at most MAX_PANELS) of ``total`` heads."""
    import numpy as np

    from pecli.cli.drawing import color_note
    from pecli.cli.output import printable
    from pecli.cli.panels import SEE_A_SLICE, _truncate, drawn_count, stack_closing
    from pecli.render.scale import color_scale, merge_ranges, sample_step, value_range
    from pecli.render.terminal import ascii_text, grid_layout, heatmap_cells, heatmap_stack
    from pecli.render.titles import panel_titles, table_axes, table_title

    drawn_count(out, total, "slices", SEE_A_SLICE)  # curves holds the first MAX_PANELS of them
    size = (curves.shape[1] + 1) // 2
    options: dict[str, Any] = {"vmin": style.vmin, "vmax": style.vmax, "robust": style.robust, "cmap": style.cmap}
    ranges = [value_range(curve) for curve in curves]
    step = sample_step(len(curves) * size * size)
    sample = np.concatenate([_curve_sample(curve, size, step, i * size * size) for i, curve in enumerate(curves)])
    scale = color_scale(None, data=merge_ranges(ranges), sample=sample, **options)
    per_panel = style.panel_scale == "per-panel"
    own = [color_scale(None, data=data, sample=_curve_sample(curve, size, sample_step(size * size), 0), **options)
           for curve, data in zip(curves, ranges, strict=True)] if per_panel else []  # fmt: skip
    if color_note(scale):
        out.note(str(color_note(scale)))
    heading = style.title or table_title({k: v for k, v in metadata.items() if k != "part"}) or printable(source)
    axes = table_axes(metadata)
    titles = panel_titles(names)
    layout = grid_layout(len(curves), width=screen.width, height=screen.height - 1, shared=not per_panel, rows=size,
                         cols=size, color=color)  # fmt: skip
    shown = layout.shown
    cells = heatmap_cells(size, width=layout.width, height=layout.height, color=color, title="t")
    matrices = [_curve_cells(curve, size, cells) for curve in curves[:shown]]  # only the panels that fit
    scales = own if per_panel else [scale]
    text, _ = heatmap_stack(
        matrices, [f"{title}  ({heading})" for title in titles[:shown]], width=screen.width,
        height=screen.height - 1, color=color, scales=[(s.low, s.high, s.cmap) for s in scales],
        x_label=style.x_label or axes.x_label, y_label=style.y_label or axes.y_label,
        whole=merge_ranges(ranges[:shown]),
    )  # fmt: skip
    closing = _truncate(stack_closing(len(curves), shown, screen.height, per_panel=per_panel), screen.width)
    out.data(text + "\n" + (ascii_text(closing) if color == "ascii" else closing))
