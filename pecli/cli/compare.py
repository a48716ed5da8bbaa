"""``pecli compare``: how two tables differ (exit 0 same, 1 different, 2 bad input, 3 failure), and property reports."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import (
    DimOpt,
    KeyOpt,
    LayerTypeOpt,
    LenOpt,
    complete_choices,
    dtype_names,
    output_options,
    output_path,
)
from pecli.cli.output import Output
from pecli.errors import ExitCode, ParameterError

HELP = """Compare two tables, or check schemes' properties (--properties).

A and B are files, - (stdin), or scheme specs: NAME or NAME:param=value,… where NAME is a
scheme or a preset (sinusoidal:layout=split,freq_shift=1; fairseq; count). A spec takes its
shape from --d/--len or from the other table, and its dtype from --dtype or the other table.

Reports the shapes and dtypes, max and mean |A − B|, the max relative difference, the worst
position and dimension, and the per-position cosine similarity; when the tables differ only by a
column permutation (interleaved vs split layout, sin/cos order) or a row shift (an offset), says so.
By default the tolerance follows the data: row p may differ by the rounding of the lower-precision
table plus the noise of float32 arithmetic at position p (2^-23·p, as a float32 implementation
rounds the angle p·ω); --atol/--rtol (either alone) set it instead, and --exact asks for bit equality.
Exit status: 0 when |A − B| is within the tolerance everywhere, 1 when not, 2 on bad input,
3 when the figure (-o) cannot be written or another runtime failure.

A value may hold commas: a comma starts a new parameter only before param=, so
mae:grid=14,14,cls_token=true is read as grid 14,14 (grid=14x14 says the same).
SCHEME:preset=NAME,… picks one of that scheme's presets: 'sincos2d:preset=mae,grid=14x14'.

When one file is a probe (generate --probe), the other holds an engine's rotation of its q and k
(q_rotated, k_rotated): they are compared with the probe's, and the cause of a difference named.
Two probes of the same q, k and positions (the same head width, length and seed): the second's
rotation is compared with the first's, as an engine's; probes of other inputs are refused.

With --properties, each SCHEME (a spec) is checked at --d (default 64) × --len (default 512)
for the six properties of an ideal positional encoding, with the figure behind each verdict.

Examples:


  pecli compare model_pe.npy sinusoidal && echo same
  pecli compare fairseq.npy tensor2tensor --atol 1e-5
  pecli generate --d 64 --len 128 -o - | pecli compare - sinusoidal:layout=split
  pecli compare a.npy b.npy -o diff.png
  pecli compare engine_rotated.safetensors probe.safetensors
  pecli compare --properties sinusoidal count count-normalized binary --d 64 --len 512
"""


def register(app: typer.Typer) -> None:
    app.command("compare", help=HELP)(compare)


@output_options
def compare(
    tables: Annotated[
        list[str],
        typer.Argument(metavar="A B", help="Two tables (file, - or scheme spec); with --properties, schemes."),
    ],
    key: KeyOpt = None,
    key_a: Annotated[Optional[str], typer.Option("--key-a", help="Tensor to read from A.", metavar="NAME")] = None,
    key_b: Annotated[Optional[str], typer.Option("--key-b", help="Tensor to read from B.", metavar="NAME")] = None,
    atol: Annotated[
        Optional[float],
        typer.Option(
            "--atol",
            help="Absolute tolerance (default: per row, the lower-precision table's rounding plus float32"
            " arithmetic noise).",
            metavar="FLOAT",
        ),
    ] = None,
    rtol: Annotated[float, typer.Option("--rtol", help="Relative tolerance (of |B|).", metavar="FLOAT")] = 0.0,
    exact: Annotated[bool, typer.Option("--exact", help="Agree only when every value is equal, bit for bit.")] = False,
    d: DimOpt = None,
    length: LenOpt = None,
    dtype: Annotated[
        Optional[str],
        typer.Option(
            "--dtype",
            help="dtype of a scheme spec's table (default: the other table's precision).",
            metavar="DTYPE",
            autocompletion=complete_choices(dtype_names),
        ),
    ] = None,
    properties: Annotated[
        bool, typer.Option("--properties", help="Report the six properties of each SCHEME instead.")
    ] = False,
    output: Annotated[
        Optional[str],
        typer.Option(
            "-o",
            "--output",
            help="Figure of A, B and A − B side by side (.png, .svg, .pdf).",
            metavar="PATH",
            callback=output_path,
        ),
    ] = None,
    layer_type: LayerTypeOpt = None,
    *,
    out: Output,
) -> None:
    from pecli.analysis.compare import check_tolerances

    check_tolerances(0.0 if atol is None else atol, rtol)  # before any table is read or computed
    if exact and (atol is not None or rtol):
        raise ParameterError("--exact asks for bit equality; it cannot go with --atol or --rtol", hint="drop one")
    if atol is None and rtol:
        atol = 0.0  # --rtol alone replaces the data-driven tolerance too, as --atol does
    from pecli.cli.compare_inputs import check_size_in_spec
    from pecli.schemes.specs import looks_like_spec

    for text in (text for text in tables if looks_like_spec(text)):  # before any spec is read (rope's pairs too)
        check_size_in_spec(text, {"--d": d, "--len": length, "--dtype": dtype})
    if properties:
        given = (("-o", output), ("--key", key or key_a or key_b), ("--layer-type", layer_type))
        extra = [flag for flag, value in given if value]
        if extra:
            verb = "does" if len(extra) == 1 else "do"
            raise ParameterError(f"{', '.join(extra)} {verb} not apply to --properties",
                                 hint="drop it" if len(extra) == 1 else "drop them")  # fmt: skip
        from pecli.cli.compare_properties import property_report

        property_report(out, tables, dim=d, length=length)
        return
    if len(tables) != 2:
        raise ParameterError(
            f"compare takes two tables, got {len(tables)}", hint="pecli compare A B, or pecli compare --properties S …"
        )
    for text in tables:  # both inputs, before either is read: an error about B's tensor is not led by A's name
        out.read_from(text)
    if key is not None and (key_a is not None or key_b is not None):
        raise ParameterError("--key sets both keys; it cannot go with --key-a or --key-b", hint="use one or the other")
    if layer_type is not None:  # a model's config's option: it applies to each side that is one, and needs one
        from pecli.sources import check_layer_type, is_config_source

        if not any(is_config_source(text) for text in tables):
            check_layer_type(tables[0], layer_type)
    from pecli.cli.relative_compare import compare_rope_specs

    same_rope = compare_rope_specs(out, tables, dim=d, length=length)
    if same_rope is not None:
        if not same_rope:
            raise typer.Exit(int(ExitCode.NO_MATCH))
        return
    from pecli.probe_check import compare_probe_files

    rotated = None if key or key_a or key_b else compare_probe_files(tables, atol=atol)  # an engine against a probe
    if rotated is not None:
        if output is not None:
            raise ParameterError("-o draws two tables; a probe's rotated q and k have no figure", hint="drop -o")
        out.show(rotated)
        if not rotated.agree:
            raise typer.Exit(int(ExitCode.NO_MATCH))
        return
    from pecli.cli.compare_figure import check_figure_path, save_difference_figure

    if output is not None:
        check_figure_path(out, output, list(tables))
    from pecli.cli.compare_request import CompareRequest
    from pecli.cli.compare_stream import compare_large

    request = CompareRequest(
        (tables[0], tables[1]), (key_a or key, key_b or key), (key_a, key_b), d=d, length=length, dtype=dtype,
        layer_type=layer_type, atol=atol, rtol=rtol, exact=exact,
    )  # fmt: skip
    compared = compare_large(request)  # -o too
    if compared is None:
        from pecli.cli.compare_inputs import compare_loaded

        compared = compare_loaded(out, request)
    first, second, result = compared
    if output is not None:
        save_difference_figure(output, first, second)
        out.note(f"wrote {output}")
    from pecli.analysis.compare_report import CompareReport, Side

    side_a, side_b = (Side(table.label, *_shape_and_dtype(table)) for table in (first, second))
    out.show(CompareReport(side_a, side_b, result))
    if not result.agree:
        raise typer.Exit(int(ExitCode.NO_MATCH))


def _shape_and_dtype(table: Any) -> tuple[tuple[int, ...], str]:
    from pecli.cli.compare_stream import StreamedTable

    if isinstance(table, StreamedTable):
        return table.shape, table.dtype
    return table.array.shape, table.dtype_name  # as stored: a bfloat16 file is bfloat16, not its float32 values
