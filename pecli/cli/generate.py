"""``pecli generate``: compute a table and write it to a file, stdout, or a summary."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pecli.cli.options import (
    DimOpt,
    DtypeOpt,
    FormatOpt,
    JsonOpt,
    LenOpt,
    NoColorOpt,
    OutputOpt,
    PresetOpt,
    QuietOpt,
    SchemeArg,
    scheme_options,
)

HELP = """Generate a positional-encoding table.

SCHEME defaults to sinusoidal (Vaswani et al. 2017). The format follows the output's extension
(.npy, .safetensors, .pt, .csv, .tsv) unless --format says otherwise; -o - writes npy bytes (or
--format csv/tsv text) to stdout. Without -o, print a summary.

Examples:


  pecli generate --d 512 --len 2048 -o pe.safetensors
  pecli generate --preset fairseq --d 512 --len 1024 -o fairseq.npy
  pecli generate learned --d 768 --len 512 --std 0.02 --seed 0 -o bert_init.pt
  pecli generate --d 8 --len 4 -o - --format csv
"""


def register(app: typer.Typer) -> None:
    app.command("generate", help=HELP)(generate)


@scheme_options
def generate(
    scheme: SchemeArg = None,
    d: DimOpt = None,
    length: LenOpt = None,
    dtype: DtypeOpt = "float32",
    output: OutputOpt = None,
    fmt: FormatOpt = None,
    name: Annotated[str, typer.Option("--name", help="Tensor name in .safetensors/.pt files.", metavar="KEY")] = "pe",
    preset: PresetOpt = None,
    list_presets: Annotated[
        bool, typer.Option("--list-presets", help="List the presets with their sources and exit.")
    ] = False,
    json_output: JsonOpt = False,
    quiet: QuietOpt = False,
    no_color: NoColorOpt = False,
    scheme_params: dict[str, Any] | None = None,
) -> None:
    from pecli.cli.output import Output

    out = Output(quiet=quiet, color=False if no_color else None)
    if list_presets:
        _print_presets(out, json_output)
        return
    from pecli.cli.common import build_table, prepare_output, require_shape, write_table

    length, d = require_shape(length, d)
    table = build_table(scheme, preset, scheme_params or {}, length=length, dim=d, dtype=dtype, name=name)
    if output is None:
        if fmt is not None:
            from pecli.errors import ParameterError

            raise ParameterError("--format needs an output", hint="add -o FILE or -o -")
        from pecli.schemes import check_fits_in_memory

        check_fits_in_memory(table.nbytes, hint="add -o FILE.npy or -o FILE.safetensors, which stream to disk")
        _print_summary(out, table.check(), json_output)
        return
    target, fmt = prepare_output(out, table, output, fmt)
    write_table(out, table.check(), target, fmt, label=output)
    if json_output:
        out.json({**table.summary(with_values=False), "output": output})


def _print_presets(out: Any, json_output: bool) -> None:
    from pecli.schemes.catalog import PRESETS

    if json_output:
        out.json(
            [
                {
                    "name": p.name,
                    "scheme": p.scheme,
                    "params": dict(p.params),
                    "convention": p.convention,
                    "source": p.source,
                }
                for p in PRESETS.values()
            ]
        )
        return
    for preset in PRESETS.values():
        out.data(f"{preset.name:<18} {preset.scheme}: {preset.convention}\n{'':<18} source: {preset.source}")


def _print_summary(out: Any, table: Any, json_output: bool) -> None:
    summary = table.summary(with_values=True)
    if json_output:
        out.json(summary)
        return
    params = " ".join(f"{k}={v}" for k, v in summary["params"].items()) or "(none)"
    preset = f" (preset {summary['preset']})" if summary.get("preset") else ""
    rows, cols = summary["shape"]
    out.data(f"{summary['scheme']}{preset}: {rows} × {cols} {summary['dtype']}, {summary['size']}")
    out.data(f"  parameters: {params}")
    out.data(f"  values: min {summary['min']:.6g}, max {summary['max']:.6g}")
    out.note("hint: save it with -o pe.safetensors (or .npy, .pt, .csv, .tsv; -o - for stdout)")
