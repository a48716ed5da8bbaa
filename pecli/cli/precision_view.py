"""``pecli plot SCHEME --view precision``: what reduced arithmetic costs a table, against float64.

The numbers are :func:`pecli.analysis.precision.precision_errors`'s; the picture
:mod:`pecli.render.precision`'s, as an image with ``-o``, as a terminal heatmap otherwise, or as
JSON with ``--json``. ``--arithmetic`` picks the arithmetic shown (bfloat16 when not given, the
one whose aliasing engines hit: huggingface/transformers#29285); the others' maxima are listed beside it.
"""

from __future__ import annotations

from typing import Any

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = ["DEFAULT_ARITHMETIC", "plot_precision"]

#: the arithmetic shown when none is given
DEFAULT_ARITHMETIC = "bfloat16"


def _spec(source: str, *, preset: str | None, scheme_params: dict[str, Any], length: int | None, dim: int | None):
    """The table ``source`` names (a scheme or ``NAME:param=value,…``), with the command line's parameters."""
    from pecli.cli.inputs import is_file_input
    from pecli.schemes.catalog import resolve
    from pecli.schemes.spec import TableSpec
    from pecli.schemes.specs import looks_like_spec, parse_spec

    if is_file_input(source):
        raise ParameterError(
            f"--view precision computes a scheme's table in each arithmetic; {literal_repr(source)} is a file",
            hint="give the scheme: pecli plot rope --d 128 --len 32768 --view precision --arithmetic bfloat16",
        )
    scheme: str | None = source
    params = dict(scheme_params)
    if looks_like_spec(source):
        parsed = parse_spec(source)
        if parsed.preset is not None and preset is not None:
            raise ParameterError(f"{literal_repr(source)} names a preset and so does --preset", hint="give one of them")
        scheme, preset, params = parsed.scheme, parsed.preset or preset, {**parsed.params, **scheme_params}
    arithmetic = params.pop("arithmetic", None) or DEFAULT_ARITHMETIC
    resolved, _ = resolve(scheme, preset, params)
    if not resolved.arithmetics:
        raise ParameterError(
            f"--view precision needs a scheme computed in an arithmetic; {literal_repr(resolved.name)} is float64 only",
            hint="use rope, sinusoidal or timestep",
        )
    if dim is None:
        raise ParameterError("missing --d", hint="e.g. --d 128")
    if length is None:
        raise ParameterError("missing --len", hint="e.g. --len 32768")
    spec = TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype="float64")
    if arithmetic == "float64":
        raise ParameterError("float64 is the reference: it has no error to show", hint="--arithmetic bfloat16")
    return spec.check(), arithmetic


def plot_precision(
    out: Output,
    source: str,
    *,
    output: str | None,
    title: str | None,
    preset: str | None,
    scheme_params: dict[str, Any],
    length: int | None,
    dim: int | None,
    terminal: bool = False,
    dpi: float = 100.0,
    figsize: tuple[float, float] = (8.0, 7.0),
    size: tuple[int | None, int | None] = (None, None),
) -> None:
    """Draw (or print as JSON) the error of ``source``'s table in reduced arithmetic against float64."""
    spec, arithmetic = _spec(source, preset=preset, scheme_params=scheme_params, length=length, dim=dim)
    if output is not None:
        from pecli.io import check_output_path
        from pecli.render.image import image_format

        check_output_path(output)
        image_format(output)
    from pecli.analysis.precision import precision_errors
    from pecli.render.titles import scheme_title

    errors = precision_errors(spec, arithmetic)
    label = scheme_title(spec.scheme, dict(spec.params), shape=f"d={spec.dim}, len={spec.length}",
                         skip=("part", "layout", "arithmetic"))  # fmt: skip
    heading = title if title is not None else f"{label} — {arithmetic} arithmetic against float64"
    from pecli.report import Deferred

    if output is not None:
        from pecli.render.precision import save_precision

        save_precision(errors, output, title=heading, dpi=dpi, figsize=figsize)
        out.note(f"wrote {output} ({round(figsize[0] * dpi)} × {round(figsize[1] * dpi)} px)")
        if not terminal:
            out.show(Deferred(errors.as_dict, list))
            return
    out.show(Deferred(errors.as_dict, lambda: _chart_lines(out, errors, heading, size, terminal)))


def _chart_lines(
    out: Output, errors: Any, heading: str, size: tuple[int | None, int | None], forced: bool
) -> list[str]:
    """The terminal view, fitted to ``size`` (--width, --height) or the terminal."""
    from pecli.render.precision import precision_chart
    from pecli.render.terminal import color_mode

    columns, lines = out.terminal_size()
    width = size[0] or columns
    height = size[1] or max(16, min(lines - 2, 40))
    color = color_mode(out, force_terminal=forced, no_color=not out.color)
    chart = precision_chart(errors, width=width, height=height, color=color, title=heading)
    taken = chart.count("\n") + 1
    if taken > height:  # the summary is never cut and the heatmap keeps its least rows: more than was asked
        raise ParameterError(
            f"--height {height} cannot hold the precision view at --width {width}: it takes {taken} lines",
            hint=f"give --height {taken} or more, a wider --width, or --json for the numbers",
        )
    return [chart]
