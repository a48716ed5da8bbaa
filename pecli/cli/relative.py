"""``pecli distance`` of the relative schemes: RoPE as the score it gives, ALiBi, T5… as the bias they add.

A RoPE, ALiBi or T5 input (a scheme name, or a file pecli wrote, read back from its metadata) is
not a table of position vectors: :func:`relative_distance` draws what it does to attention
instead, from :mod:`pecli.analysis.relative` — the rotary score s(m, n) of a query and key
(``--qk``) or its profile over offsets with RoFormer's bound, the per-head bias matrices or their
profile (the registry entry's ``bias`` and ``bias_heads`` functions). Every other input keeps
:mod:`pecli.cli.distance`'s metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from pecli.cli.common import chart_size, write_data
from pecli.cli.output import Output
from pecli.cli.relative_input import RelativeInput
from pecli.errors import Message, ParameterError
from pecli.report import Deferred

if TYPE_CHECKING:
    from pecli.cli.distance_request import DistanceRequest
    from pecli.render.scale import ColorScale

__all__ = ["refuse_unused", "relative_distance"]

#: cell rows and columns of a figure of a bias matrix's heads (each panel averages them to its pixels)
_FIGURE_CELLS = (600, 700)
#: the size in inches of a figure of one score or bias matrix
_MATRIX_FIGSIZE = (7.0, 6.0)
#: float64 values of the bias computed at once (8 MiB): every head at a block of offsets
_BLOCK_VALUES = 1 << 20


def _matrix_pixels(request: DistanceRequest) -> tuple[int, int]:
    """One cell per pixel of the matrix figure's axes: more would alias, and its note would say a false size."""
    from pecli.render.image import heatmap_pixels

    return heatmap_pixels(request.style.figsize or _MATRIX_FIGSIZE, request.style.dpi)


def refuse_unused(options: dict[str, Any], what: str) -> None:
    """A one-line error naming the options given (not None) that ``what`` does not take.

    >>> refuse_unused({"--rows": None}, "rope's score")
    """
    given = [flag for flag, value in options.items() if value is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ParameterError(f"{', '.join(given)} {verb} to tables of position vectors, not to {what}",
                             hint="drop it" if len(given) == 1 else "drop them")  # fmt: skip


def relative_distance(
    out: Output, source: RelativeInput, request: DistanceRequest, *, profile: bool, unused: dict[str, Any] | None = None
) -> None:
    """``pecli distance`` of a relative scheme, drawn or written as ``request`` says.

    ``unused``: the table options given (flag → value), refused.
    """
    refuse_unused(unused or {}, f"{source.scheme}'s {'score' if source.relative == 'score' else 'bias'}")
    if source.relative == "score":
        if profile:
            _rope_profile(out, source, request)
        else:
            _rope_matrix(out, source, request)
    elif profile:
        _bias_profile(out, source, request)
    else:
        _bias_matrices(out, source, request)


def _offsets(source: RelativeInput, request: DistanceRequest, *, both_sides: bool = False) -> range:
    last = source.length - 1 if request.max_offset is None else min(request.max_offset, source.length - 1)
    return range(-last if both_sides else 0, last + 1)


def _rope_profile(out: Output, source: RelativeInput, request: DistanceRequest) -> None:
    import numpy as np

    from pecli.analysis.relative import rope_profile

    profile = rope_profile(source.length, source.rotary_dim, offsets=_offsets(source, request), **source.rope_options)
    bound = profile.bound
    ratio = float(np.max(np.abs(profile.score) / bound))
    title = f"rotary score s(h), qk={source.qk} — {source.label}"
    if request.kind == "data":
        _write_columns(out, request, {"offset": profile.offsets, "score": profile.score, "bound": bound})
        return
    if request.kind == "image":
        from pecli.render.offsets import save_offset_curves

        save_offset_curves(profile.offsets, {f"s(h), qk={source.qk}": profile.score}, str(request.output),
                           y_label="s(h)", bound=bound, **_figure(request, title, (8.0, 5.0)))  # fmt: skip
        out.note(f"wrote {request.output}")
        return

    def listed() -> dict[str, Any]:
        return {
            "scheme": "rope",
            "qk": source.qk,
            "seed": source.seed if source.qk == "random" else None,
            "length": source.length,
            "dim": source.dim,
            "offsets": profile.offsets.tolist(),
            "score": profile.score.tolist(),
            "bound": bound.tolist(),
            "relative_bound": profile.relative_bound.tolist(),
            "bound_scale": profile.bound_scale,
        }

    def drawn() -> list[str]:
        import textwrap

        from pecli.render.charts import profile_chart

        width, height = chart_size(out, request)
        note = textwrap.wrap(f"RoFormer bound B(h) ≥ |s(h)|: B = {bound[0]:.4g} at h = 0, {bound[-1]:.4g} at h = "
                             f"{profile.offsets[-1]}; max |s|/B = {ratio:.3g}", width)  # fmt: skip
        # the note under the chart, and the chart's title over it, stay on the screen
        chart = profile_chart(profile.offsets, profile.score, profile.score, profile.score, width=width,
                              height=_profile_height(request, height) - len(note), title=title,
                              y_label="s(h)")  # fmt: skip
        return [chart, "\n".join(note)]

    out.show(Deferred(listed, drawn))


def _rope_matrix(out: Output, source: RelativeInput, request: DistanceRequest) -> None:
    import numpy as np

    from pecli.analysis.relative import rope_scores

    length, options = source.length, source.rope_options
    title = f"rotary score s(m, n), qk={source.qk} — {source.label}"

    def scores(rows: Any, cols: Any) -> Any:
        return rope_scores(rows, cols, source.rotary_dim, length=length, **options)

    if request.kind == "data":
        from pecli.io import Tensor

        block = max(1, (8 << 20) // (8 * length))

        def blocks() -> Any:  # the keys made here: the output's size is checked before any work
            keys = np.arange(length)
            for first in range(0, length, block):
                yield scores(np.arange(first, min(first + block, length)), keys).astype(np.float32)

        write_data(out, request, "score", Tensor((length, length), "float32", blocks), {"qk": source.qk})
        return
    if request.kind == "image":
        (cells,) = _cells(source, _matrix_pixels(request))
        _save_matrix(out, request, cells, title, symmetric=True)
        return

    def listed() -> dict[str, Any]:
        from pecli.memory import check_fits_in_memory

        what = f"{length} × {length} score matrix"
        check_fits_in_memory(8 * length * length, what=what, hint="use a smaller {length}")
        positions = np.arange(length)
        return {"scheme": "rope", "qk": source.qk, "matrix": scores(positions, positions).tolist()}

    def drawn() -> list[str]:
        (cells,) = _cells(source, _terminal_cells(out, request, length, title))
        return _draw_matrix(out, request, cells, title, symmetric=True)

    out.show(Deferred(listed, drawn))


def _offset_curves(source: RelativeInput, heads: int | None = None) -> Any:
    """f(h) per head for h = −(len − 1) … len − 1: every matrix here is M[m, n] = f(m − n), O(len·d) to get.

    ``heads``: only the first ``heads`` heads, computed a block of offsets at a time (never every head's curve).
    """
    import numpy as np

    length = source.length
    if source.relative == "score":
        from pecli.analysis.relative import rope_profile

        offsets = range(-(length - 1), length)
        return rope_profile(length, source.rotary_dim, offsets=offsets, **source.rope_options).score[None, :]
    key_offsets = -np.arange(-(length - 1), length)  # key − query = −h
    if heads is None:
        return _bias_at(source, key_offsets)
    # a copy of each block's first heads: a view would keep every head's values alive until the end
    return np.concatenate([block[:heads].copy() for block in _bias_blocks(source, key_offsets)], axis=1)


def _bias_blocks(source: RelativeInput, key_offsets: Any) -> Any:
    """The bias of every head at ``key_offsets``, a block of offsets at a time: (heads, block) arrays of ~8 MiB."""
    block = max(1, _BLOCK_VALUES // len(_panel_names(source)))
    for first in range(0, len(key_offsets), block):
        yield _bias_at(source, key_offsets[first : first + block])


def _bias_at(source: RelativeInput, offsets: Any) -> Any:
    """Bias (heads, *offsets.shape) at key − query offsets: the registry entry's ``bias`` function."""
    from pecli.schemes.catalog import get_scheme

    return get_scheme(source.scheme).relative_bias(offsets, source.params)


def _panel_names(source: RelativeInput) -> list[str]:
    from pecli.schemes.catalog import get_scheme

    return get_scheme(source.scheme).head_names(source.params)


def _bias_profile(out: Output, source: RelativeInput, request: DistanceRequest) -> None:
    import numpy as np

    # offset h = m − n: query m = h, key n = 0 (keys after the query for h < 0)
    last = _offsets(source, request).stop - 1
    # even in h (ALiBi): h ≥ 0 says it all; T5's buckets differ
    hs = np.arange(0 if _even_in_offset(source, last) else -last, last + 1)
    names = _panel_names(source)
    what = "bucket" if names == ["bucket"] else "bias"
    title = f"{what} against offset h = m − n — {source.label}"

    def curves() -> Any:  # (heads, offsets): what --json, -o and a figure show; the chart needs less
        return _bias_at(source, -hs)  # key − query = −h

    if request.kind == "data":
        _write_columns(out, request, {"offset": hs, **dict(zip(names, curves(), strict=True))})
        return
    if request.kind == "image":
        from pecli.render.offsets import save_offset_curves

        save_offset_curves(hs, dict(zip(names, curves(), strict=True)), str(request.output), y_label=what,
                           **_figure(request, title, (8.0, 5.0)))  # fmt: skip
        out.note(f"wrote {request.output}")
        return

    def drawn() -> list[str]:
        from pecli.render.charts import profile_chart

        mean, low, high = _head_spread(source, -hs)
        width, height = chart_size(out, request)
        spread = "" if len(names) == 1 else f" (• mean, │ range over {len(names)} heads)"
        return [profile_chart(hs, mean, low, high, width=width, height=_profile_height(request, height),
                              title=title + spread, y_label=what)]  # fmt: skip

    def listed() -> dict[str, Any]:
        return {"scheme": source.scheme, "offsets": hs.tolist(), "heads": names, what: curves().tolist()}

    out.show(Deferred(listed, drawn))


def _even_in_offset(source: RelativeInput, last: int) -> bool:
    """Whether every head's bias is the same at offsets h and −h for h = 0 … ``last`` (block by block)."""
    import numpy as np

    offsets = np.arange(last + 1)
    pairs = zip(_bias_blocks(source, offsets), _bias_blocks(source, -offsets), strict=True)
    return all(np.array_equal(ahead, behind) for ahead, behind in pairs)


def _head_spread(source: RelativeInput, key_offsets: Any) -> tuple[Any, Any, Any]:
    """The mean, least and greatest bias over the heads at each of ``key_offsets``: O(offsets), not O(heads·offsets)."""
    import numpy as np

    spread = np.empty((3, len(key_offsets)))
    first = 0
    for block in _bias_blocks(source, key_offsets):
        stop = first + block.shape[1]
        spread[:, first:stop] = block.mean(axis=0), block.min(axis=0), block.max(axis=0)
        first = stop
    return spread[0], spread[1], spread[2]


def _bias_matrices(out: Output, source: RelativeInput, request: DistanceRequest) -> None:
    import numpy as np

    length, names = source.length, _panel_names(source)
    title = f"{'bucket' if names == ['bucket'] else 'bias'} — {source.label}"

    def whole() -> Any:
        from pecli.analysis.toeplitz import toeplitz_matrix
        from pecli.memory import check_fits_in_memory

        check_fits_in_memory(8 * len(names) * length * length, what="bias matrices", hint="use a smaller {length}")
        return toeplitz_matrix(_offset_curves(source))

    if request.kind == "data":
        from pecli.io import Tensor

        curves = _offset_curves(source)  # (heads, 2·len − 1): every row of a head is a window of its curve
        block = max(1, (8 << 20) // (8 * length))
        keys = np.arange(length)

        def blocks() -> Any:  # head by head, a block of query rows at a time: the file, never the matrices
            for curve in curves:
                for first in range(0, length, block):
                    queries = np.arange(first, min(first + block, length))
                    yield curve[queries[:, None] - keys[None, :] + length - 1].astype(np.float32)

        write_data(out, request, "bias", Tensor((len(curves), length, length), "float32", blocks), {})
        return
    if request.kind == "image" and len(names) > 1:
        drawn_heads = _drawn_heads(out, names)
        from pecli.render.panels import save_panels
        from pecli.render.scale import color_scale

        # small multiples in one colour scale (sequential: the biases are ≤ 0), as plot draws the heads
        heads = [_matrix_values(head) for head in _cells(source, _FIGURE_CELLS, drawn_heads)]
        style = request.style
        scale: ColorScale | list[ColorScale] = color_scale(
            np.stack(heads), vmin=style.vmin, vmax=style.vmax, robust=style.robust, cmap=style.cmap
        )
        if style.panel_scale == "per-panel":  # each head its own colourbar
            scale = [_matrix_scale(request, [head]) for head in heads]
        step = -(-length // heads[0].shape[0])  # the panels' axes count cells: say how many positions one holds
        unit = f" (cells of {step})" if step > 1 else ""
        notes = save_panels(heads, str(request.output), titles=names[:drawn_heads], scale=scale,
                    x_label=style.x_label or f"Key position n{unit}",
                    y_label=style.y_label or f"Query position m{unit}",
                    **_figure(request, title, (8.0, 6.0)))  # fmt: skip
        for note in notes:
            out.note(note.spelled(out.spell) if isinstance(note, Message) else note)
        out.note(f"wrote {request.output}")
        return
    if request.kind == "image":
        (cells,) = _cells(source, _matrix_pixels(request))
        _save_matrix(out, request, cells, title, symmetric=False)
        return

    def drawn() -> list[str]:
        if len(names) > 1:
            from pecli.render.terminal import color_mode, heatmap_cells, stack_layout

            drawn_names = names[: _drawn_heads(out, names)]
            width, height = chart_size(out, request)
            _, panel_height = stack_layout(len(drawn_names), height - 1, shared=request.style.panel_scale == "shared")
            color = color_mode(out, force_terminal=request.forced, no_color=not out.color)
            grid = heatmap_cells(length, width=width, height=panel_height, title=title, color=color)
            return _draw_heads(out, request, _cells(source, grid, len(drawn_names)), drawn_names, title)
        (cells,) = _cells(source, _terminal_cells(out, request, length, title))
        return _draw_matrix(out, request, cells, title, symmetric=False)

    out.show(Deferred(lambda: {"scheme": source.scheme, "heads": names, "matrix": whole().tolist()}, drawn))


# -- shared drawing ---------------------------------------------------------------------------


def _terminal_cells(out: Output, request: DistanceRequest, length: int, title: str) -> tuple[int, int]:
    """The cells (rows, columns) of a matrix drawn in the terminal at --width × --height."""
    from pecli.render.terminal import color_mode, heatmap_cells

    width, height = chart_size(out, request)
    color = color_mode(out, force_terminal=request.forced, no_color=not out.color)
    return heatmap_cells(length, width=width, height=height, color=color, title=title)


def _drawn_heads(out: Output, names: list[str]) -> int:
    """How many heads a figure or the terminal draws: at most MAX_PANELS (as ``pecli plot``), with a note."""
    from pecli.cli.panels import drawn_count

    return drawn_count(out, len(names), "heads", "--json or -o FILE.npy holds them all")


def _cells(source: RelativeInput, cells: tuple[int, int], heads: int | None = None) -> list[Any]:
    """Per head (the first ``heads``), the matrix at the resolution drawn: itself when it fits, else its block means.

    From the offset curves alone (:mod:`pecli.analysis.toeplitz`): O(len·d), never len × len.
    """
    from pecli.analysis.toeplitz import toeplitz_block_means, toeplitz_matrix
    from pecli.render.downsample import Downsampled, block_edges

    length, curves = source.length, _offset_curves(source, heads)
    if length <= min(cells):
        return list(toeplitz_matrix(curves))
    row_edges = block_edges(length, cells[0], uniform=True)
    col_edges = block_edges(length, cells[1], uniform=True)
    means = toeplitz_block_means(curves, row_edges, col_edges)
    return [Downsampled(head, row_edges, col_edges) for head in means]


def _matrix_values(cells: Any) -> Any:
    """The values of a matrix, whole or :class:`~pecli.render.downsample.Downsampled`."""
    return getattr(cells, "values", cells)


def _save_matrix(out: Output, request: DistanceRequest, cells: Any, title: str, *, symmetric: bool) -> None:
    """One matrix as a figure, in a colour scale that follows its values (see :func:`_draw_matrix`)."""
    from pecli.render.image import save_heatmap

    scale = _matrix_scale(request, [cells])
    style = request.style
    save_heatmap(cells, str(request.output), x_label=style.x_label or "Key position n",
                 y_label=style.y_label or "Query position m", vmin=scale.low, vmax=scale.high, cmap=scale.cmap,
                 **_figure(request, title, _MATRIX_FIGSIZE))  # fmt: skip
    out.note(f"wrote {request.output}")


def _draw_matrix(out: Output, request: DistanceRequest, cells: Any, title: str, *, symmetric: bool) -> list[str]:
    """One matrix in the terminal, in a colour scale that follows its values.

    ``symmetric``: a signed score (RoPE's), drawn diverging around 0 only where its values change
    sign; all of one sign (qk=ones: 0.38 … 0.60), a sequential map over their range.
    """
    from pecli.render.terminal import color_mode, heatmap

    scale = _matrix_scale(request, [cells])
    width, height = chart_size(out, request)
    return [
        heatmap(cells, width=width, height=height,
                color=color_mode(out, force_terminal=request.forced, no_color=not out.color),
                x_label="Key position n", y_label="Query position m", title=title, vmin=scale.low, vmax=scale.high,
                cmap=scale.cmap)
    ]  # fmt: skip


def _matrix_scale(request: DistanceRequest, heads: list[Any]) -> ColorScale:
    """The colour scale of one or more matrices (their cells), from --vmin/--vmax/--robust/--cmap and the values."""
    import numpy as np

    from pecli.render.scale import color_scale

    style = request.style
    values = np.concatenate([np.asarray(_matrix_values(head), dtype=np.float64).ravel() for head in heads])
    return color_scale(values, vmin=style.vmin, vmax=style.vmax, robust=style.robust, cmap=style.cmap)


def _draw_heads(out: Output, request: DistanceRequest, heads: list[Any], names: list[str], title: str) -> list[str]:
    """Several heads in the terminal, stacked within --height, in one colour scale or each in its own."""
    from pecli.render.terminal import color_mode, heatmap_stack

    width, height = chart_size(out, request)
    per_panel = request.style.panel_scale == "per-panel"
    scales = [_matrix_scale(request, [head]) for head in heads] if per_panel else [_matrix_scale(request, heads)]
    text, shown = heatmap_stack(
        heads, [f"{name}  ({title})" for name in names], width=width, height=height - 1,
        color=color_mode(out, force_terminal=request.forced, no_color=not out.color),
        scales=[(scale.low, scale.high, scale.cmap) for scale in scales],
        x_label="Key position n", y_label="Query position m",
    )  # fmt: skip
    which = "each head in its own colour scale" if per_panel else f"{len(heads)} heads in one colour scale"
    if shown < len(heads):
        which += f"; {shown} of {len(heads)} fit (--height, --head I)"
    which += " (--scale per-panel)" if per_panel else "; each its own: --scale per-panel"
    return [text, which if len(which) <= width else which[: width - 1] + "…"]


def _profile_height(request: DistanceRequest, height: int) -> int:
    """--height, else the terminal's lines up to 24 (a profile taller than that shows nothing more)."""
    return height if request.size[1] is not None else min(height, 24)


def _write_columns(out: Output, request: DistanceRequest, columns: dict[str, Any]) -> None:
    import numpy as np

    from pecli.io import Tensor

    table = np.column_stack([np.asarray(column, dtype=np.float64) for column in columns.values()])
    write_data(out, request, "profile", Tensor.from_array(table), {"columns": ",".join(columns)})


class _Figure(TypedDict):
    """The keyword arguments every figure function takes for its title and size."""

    title: str
    dpi: float
    figsize: tuple[float, float]


def _figure(request: DistanceRequest, title: str, figsize: tuple[float, float]) -> _Figure:
    """The image's title, dpi and size: --title, --dpi, --figsize, else ``title`` and ``figsize``."""
    style = request.style
    return {"title": style.title or title, "dpi": style.dpi, "figsize": style.figsize or figsize}
