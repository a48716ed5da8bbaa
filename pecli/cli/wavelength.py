"""``pecli plot --view wavelength``: each RoPE frequency pair's wavelength before and after a scaling.

The numbers are :func:`pecli.analysis.wavelengths.rope_wavelengths`'s; the picture (the chart used to
explain NTK, YaRN's β bands and Llama 3's frequency bands) is :mod:`pecli.render.wavelengths`'s,
as an image with ``-o``, as text otherwise, or as JSON with ``--json``.
"""

from __future__ import annotations

from typing import Any

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = ["VIEWS", "check_view", "plot_wavelengths", "rope_wavelength_input"]

#: the views ``plot --view`` draws besides the table itself
VIEWS = ("wavelength", "pca", "precision")


def check_view(view: str | None, *, json_output: bool, unused: dict[str, Any]) -> None:
    """``--view`` is one of :data:`VIEWS`; ``--json`` needs it, and it takes none of the heatmap's options.

    >>> try:
    ...     check_view(None, json_output=True, unused={})
    ... except ParameterError as error:
    ...     print(error.message)
    --json applies to plot --view wavelength, pca or precision
    """
    if view is None:
        if json_output:
            raise ParameterError(
                "--json applies to plot --view wavelength, pca or precision",
                hint="drop --json, or add --view wavelength (RoPE), --view pca (a trained table) or --view precision",
            )
        return
    if view not in VIEWS:
        raise ParameterError(f"unknown view {literal_repr(view)}", hint=f"use --view {'|'.join(VIEWS)}")
    given = [flag for flag, value in unused.items() if value is not None]
    if given:
        raise ParameterError(
            f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to the table's heatmap, "
            f"not to --view {view}",
            hint="drop them",
        )


def rope_wavelength_input(
    source: str, *, preset: str | None, scheme_params: dict[str, Any], length: int | None, dim: int | None
) -> tuple[dict[str, Any], int, int | None, str]:
    """The RoPE parameters, head dimension, length and label of a rope spec or a RoPE file pecli wrote.

    Anything else is a one-line :class:`ParameterError`: there are no frequencies to draw.
    """
    from pecli.cli.inputs import is_file_input

    if is_file_input(source):
        from pecli.io import read_tensors
        from pecli.schemes.catalog import find_scheme
        from pecli.schemes.spec import TableSpec

        metadata = {} if source == "-" else read_tensors(source)[1]
        described = find_scheme(metadata.get("scheme"))
        if described is None or described.relative != "score":
            what = (
                f"a {literal_repr(metadata['scheme'])} table"
                if "scheme" in metadata
                else "not a RoPE table pecli wrote"
            )
            raise ParameterError(
                f"--view wavelength draws RoPE frequencies; {literal_repr(source)} is {what}",
                hint="give a rope scheme (pecli plot rope --d 128 --view wavelength) or a RoPE file pecli wrote",
            )
        if scheme_params or preset or dim or length:
            raise ParameterError(
                f"{literal_repr(source)} is a file: its metadata gives the RoPE parameters", hint="drop them"
            )
        from pecli.schemes.checks import positive_int

        spec = TableSpec.from_metadata(metadata)
        return dict(spec.params), positive_int("dim", spec.dim), spec.length, f"rope — {source}"
    from pecli.schemes.catalog import resolve

    scheme = source if ":" not in source else source.split(":", 1)[0]
    resolved, params = resolve(scheme, preset, scheme_params)
    if resolved.relative != "score":
        raise ParameterError(
            f"--view wavelength draws RoPE frequencies; scheme {literal_repr(resolved.name)} has none",
            hint="use pecli plot rope --d 128 --view wavelength [--scaling …]",
        )
    if dim is None:
        raise ParameterError("missing --d", hint="e.g. --d 128")
    from pecli.render.titles import scheme_title

    # the parameters that differ from RoPE's defaults, and the length (dynamic NTK depends on it)
    shape = f"d={dim}" + ("" if length is None else f", len={length}")
    return params, dim, length, scheme_title("rope", params, shape=shape, skip=("part", "layout"))


def plot_wavelengths(
    out: Output,
    source: str,
    *,
    output: str | None,
    title: str | None,
    preset: str | None,
    scheme_params: dict[str, Any],
    length: int | None,
    dim: int | None,
    dpi: float = 100.0,
    figsize: tuple[float, float] = (8.0, 5.0),
    size: tuple[int | None, int | None] = (None, None),
) -> None:
    """Draw (or print as JSON) the wavelengths of the RoPE ``source`` names; ``dpi``, ``figsize``: the image's."""
    from pecli.analysis.wavelengths import rope_wavelengths

    params, dim, length, label = rope_wavelength_input(
        source, preset=preset, scheme_params=scheme_params, length=length, dim=dim
    )
    if output is not None:
        from pecli.io import check_output_path
        from pecli.render.image import image_format

        check_output_path(output)
        image_format(output)
    options = {name: value for name, value in params.items() if value is not None and name not in ("part", "layout")}
    waves = rope_wavelengths(dim, length=length, **options)
    # the parameters first: a title too long for a small figure loses its end, not the scaling
    heading = title if title is not None else f"{label} — wavelength per frequency pair"
    from pecli.report import Deferred

    if output is not None:  # the figure, and with --json its data too
        from pecli.render.wavelengths import save_wavelengths

        save_wavelengths(waves, output, title=heading, dpi=dpi, figsize=figsize)
        out.note(f"wrote {output} ({round(figsize[0] * dpi)} × {round(figsize[1] * dpi)} px)")
        out.show(Deferred(waves.as_dict, list))
        return
    out.show(Deferred(waves.as_dict, lambda: _chart_lines(out, waves, heading, size)))


def _chart_lines(out: Output, waves: Any, heading: str, size: tuple[int | None, int | None]) -> list[str]:
    """The wavelength chart for the terminal (``size``: --width, --height), its title wrapped, never cut."""
    import textwrap

    from pecli.render.wavelengths import wavelength_chart

    columns, lines = out.terminal_size()
    width = size[0] or columns
    height = size[1] or max(12, min(lines - 2, 30))
    # a title wider than the chart is wrapped over its own lines, never cut
    heading_lines = textwrap.wrap(heading, width) if len(heading) > width else []
    room = height - len(heading_lines)  # a wrapped heading takes its own lines; the chart then has no title
    chart = wavelength_chart(waves, width=width, height=room, title=None if heading_lines else heading)
    overflow = len(chart.splitlines()) - room  # the band legend under the axis: take its lines from the plot
    if overflow > 0:
        chart = wavelength_chart(waves, width=width, height=max(room - overflow, 3),
                                 title=None if heading_lines else heading)  # fmt: skip
    text = "\n".join([*heading_lines, chart])
    taken = text.count("\n") + 1
    if taken > height:  # the wrapped title is never cut and the plot keeps its least rows: more than was asked
        raise ParameterError(
            f"--height {height} cannot hold the wavelength chart at --width {width}: it takes {taken} lines",
            hint=f"give --height {taken} or more, a wider --width, or --json for the numbers",
        )
    from pecli.render.terminal import ascii_text, color_mode

    # a stdout that cannot encode the chart's characters (PYTHONIOENCODING=ascii) gets them in ASCII, as the
    # heatmaps do, not as \u escapes
    return [ascii_text(text) if color_mode(out) == "ascii" else text]
