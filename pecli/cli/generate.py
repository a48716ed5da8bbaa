"""``pecli generate``: compute a table and write it to a file, stdout, or a summary."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import (
    DimOpt,
    DtypeOpt,
    FormatOpt,
    LayerTypeOpt,
    LenOpt,
    OutputOpt,
    PresetOpt,
    SchemeArg,
    output_options,
    scheme_options,
)
from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

HELP = """Generate a positional-encoding table.

SCHEME defaults to sinusoidal (Vaswani et al. 2017); it may be a spec, rope:base=500000,scaling=linear,factor=4
(its parameters as if given as options; one given both ways must agree). The format follows the output's extension
(.npy, .safetensors, .pt, .csv, .tsv) unless --format says otherwise; -o - writes npy bytes (or
--format csv/tsv text) to stdout. Without -o, print a summary and the first and last rows.

Examples:


  pecli generate --d 512 --len 2048 -o pe.safetensors
  pecli generate --preset fairseq --d 512 --len 1024 -o fairseq.npy
  pecli generate learned --d 768 --len 512 --std 0.02 --seed 0 -o bert_init.pt
  pecli generate --d 8 --len 4 -o - --format csv
  pecli generate rope --d 128 --len 4096 --scaling yarn --factor 4 --original-max-position 2048 -o rope.safetensors
  pecli generate alibi --heads 12 --len 128 --part slopes -o slopes.npy
  pecli generate sincos2d --preset mae --grid 14,14 --d 768 --cls-token -o mae.npy
  pecli generate sincos2d:preset=mae,grid=14x14 --d 768 -o mae.npy
  pecli generate --from-config Llama-3.1-8B/config.json --len 8192 -o llama31.safetensors
  pecli generate --from-config Llama-3.1-8B/config.json --probe -o probe.safetensors
"""

DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        help="Where the sin/cos angles are computed: cpu (numpy) or cuda[:N] (torch, float64, then rounded once).",
        metavar="DEVICE",
    ),
]


FromConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--from-config",
        help="A model's config.json (or its directory): the tables its own code computes (RoPE cos and sin, "
        "attention scaling included; ALiBi; sinusoidal presets). --len defaults to max_position_embeddings.",
        metavar="PATH",
    ),
]

ProbeOpt = Annotated[
    bool,
    typer.Option(
        "--probe",
        help="Write a probe for an engine's rotary code instead of the table (.safetensors): seeded q and k "
        "(--heads, default 2; --seed, default 0), their positions, and the expected rotated q, k and scores in "
        "the model's (or the RoPE spec's) convention; pecli compare ENGINE_OUT PROBE checks an engine's rotation.",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("generate", help=HELP)(generate)


@scheme_options
@output_options
def generate(
    scheme: SchemeArg = None,
    d: DimOpt = None,
    length: LenOpt = None,
    dtype: DtypeOpt = "float32",
    output: OutputOpt = None,
    fmt: FormatOpt = None,
    name: Annotated[
        Optional[str],
        typer.Option("--name", help="Tensor name in .safetensors/.pt files (default: pe).", metavar="KEY"),
    ] = None,
    preset: PresetOpt = None,
    list_presets: Annotated[
        bool,
        typer.Option("--list-presets", help="List the presets (SCHEME's only, if given) and their sources, and exit."),
    ] = False,
    device: DeviceOpt = "cpu",
    from_config: FromConfigOpt = None,
    layer_type: LayerTypeOpt = None,
    probe: ProbeOpt = False,
    *,
    out: Output,
    scheme_params: dict[str, Any] | None = None,
) -> None:
    if list_presets:  # before a spec (rope:base=3) adds its own parameters: only flags are named
        _refuse_with_list_presets(d=d, length=length, output=output, fmt=fmt, name=name, preset=preset,
                                  from_config=from_config, layer_type=layer_type, probe=probe or None,
                                  dtype=None if dtype == "float32" else dtype,
                                  device=None if device == "cpu" else device, **(scheme_params or {}))  # fmt: skip
    if scheme is not None:  # a spec (rope:base=500000) is its scheme with its parameters as options
        from pecli.cli.inputs import scheme_input

        spec = scheme
        scheme, preset, scheme_params = scheme_input(scheme, preset=preset, scheme_params=scheme_params,
                                                     length=length, dim=d, dtype=dtype)  # fmt: skip
        if list_presets:  # the spec's own parameters (rope:base=3) would do nothing either
            _refuse_with_list_presets(spec=spec, preset=preset, **(scheme_params or {}))
    if list_presets:
        _print_presets(out, scheme)
        return
    from pecli.cli.common import build_table, check_name_written, prepare_output, write_table
    from pecli.cli.stdin import stdin_file_params
    from pecli.schemes.backend import angles_on

    scheme_params = stdin_file_params(out, scheme_params or {})  # --bias-from -: stdin, read once for the run
    if from_config is not None:  # the model's config.json (of a directory) is read, never written over
        import os

        from pecli.cli.common import check_not_input

        config_file = os.path.join(from_config, "config.json") if os.path.isdir(from_config) else from_config
        check_not_input(output, [config_file])
    if probe:
        if name is not None:
            raise ParameterError("{name} names a one-tensor table, but a probe's tensors have names of their own",
                                 hint="drop {name}")  # fmt: skip
        reference = from_config if from_config is not None else scheme or "rope"
        _write_probe(out, reference, preset, scheme_params, d, length, layer_type, output, fmt, from_config)
        return

    if from_config is not None:
        from pecli.cli.model_inputs import config_table

        table = config_table(
            out,
            from_config,
            scheme,
            preset,
            scheme_params or {},
            d,
            length,
            dtype=dtype,
            name="pe" if name is None else name,
            layer_type=layer_type,
        )
    else:
        if layer_type is not None:
            raise ParameterError("--layer-type picks a layer type of a model's config", hint="add --from-config PATH")
        table = build_table(
            scheme, preset, scheme_params or {}, length=length, dim=d, dtype=dtype, name="pe" if name is None else name
        )
    from pecli.schemes.spec import TableSet

    pick = f"pick one with --layer-type {'|'.join(table.names)}" if isinstance(table, TableSet) else None
    check_name_written(name, output, fmt, table.parts(), **({"pick": pick} if pick else {}))  # never ignored
    backend = _phasor_backend(device)
    if output is None:
        if fmt is not None:
            raise ParameterError("--format needs an output", hint="add -o FILE or -o -")
        from pecli.cli.common import check_fits_without_output

        check_fits_without_output(table)
        with angles_on(backend) as placement:
            _print_summary(out, table.check())
        _note_unused_device(out, placement, table.scheme)
        return
    from pecli.report import Deferred  # before the write: nothing is imported once the file is there

    target, fmt = prepare_output(out, table, output, fmt, pick=pick)
    with angles_on(backend) as placement:
        write_table(out, table.check(), target, fmt, label=output)
    _note_unused_device(out, placement, table.scheme)
    # the file is the result (its note is on stderr); --json adds the summary
    out.show(Deferred(lambda: {**table.summary(with_values=False), "output": output}, list))


def _refuse_with_list_presets(spec: str | None = None, **given: Any) -> None:
    """--list-presets lists and exits: an option that would shape a table is refused, not silently dropped; with
    ``spec`` (rope:base=3), ``given`` are the spec's parameters, named as written there."""
    if spec is not None:
        named = [name for name, value in given.items() if value is not None]
        where, drop = f" in {literal_repr(spec)}", "from the spec"
    else:  # d and length are the command's own names for the parameters a message calls dim and length
        named = [f"{{{'dim' if name == 'd' else name}}}" for name, value in given.items() if value is not None]
        where, drop = "", ""
    if named:
        raise ParameterError(
            f"--list-presets lists the presets and exits, so {', '.join(named)}{where} would do nothing",
            hint=f"drop {'it' if len(named) == 1 else 'them'}{' ' + drop if drop else ''}, or drop --list-presets",
        )


def _write_probe(out: Output, reference: str, preset: str | None, scheme_params: dict[str, Any], d: int | None,
                 length: int | None, layer_type: str | None, output: str | None, fmt: str | None,
                 from_config: str | None) -> None:  # fmt: skip
    """The probe file of ``reference`` (a config, a model directory or a RoPE scheme), its convention in the header."""
    from pecli.cli.common import output_target
    from pecli.io import Tensor, check_output_path, format_for, write_tensors
    from pecli.probe import head_dim_of, make_probe, rotary_spec
    from pecli.report import Listing

    if output is None or format_for(output, fmt) != "safetensors":
        raise ParameterError("a probe holds several tensors and its convention: it is written as .safetensors",
                             hint="add -o probe.safetensors")  # fmt: skip
    if out.json_output and output in ("-", "/dev/stdout"):
        raise ParameterError("--json and -o - both write to stdout", hint="write the probe to a file, or drop --json")
    if from_config is not None and d is not None:
        raise ParameterError("{dim} comes from the config with --from-config", hint="drop {dim}")
    params = dict(scheme_params)
    seed, heads = params.pop("seed", None), params.pop("heads", None)
    seed, heads = 0 if seed is None else seed, 2 if heads is None else heads  # the probe checks both
    check_output_path(output)
    spec = rotary_spec(reference, dim=d, length=length, preset=preset, scheme_params=params, layer_type=layer_type)
    probe = make_probe(spec, heads=heads, seed=seed, head_dim=head_dim_of(reference, spec))
    tensors = {name: Tensor.from_array(array) for name, array in probe.tensors().items()}
    write_tensors(output_target(out, output, "safetensors"), tensors, fmt="safetensors", metadata=probe.metadata())
    heads_, positions, dim = probe.q.shape
    heads_text = f"{heads_} head{'' if heads_ == 1 else 's'}"
    notes = [f"wrote {output}: probe of {heads_text} × {positions} positions × {dim}"] if output != "-" else []
    document = {"output": output, "heads": heads_, "positions": probe.positions.tolist(), "head_dim": dim,
                "metadata": probe.metadata()}  # fmt: skip
    out.show(Listing(document, [], notes=notes))


def _phasor_backend(device: str) -> Any:
    """None for numpy (``cpu``), else torch on the device, checked to exist (torch imported only then)."""
    if device == "cpu":
        return None

    if not (device == "cuda" or device.startswith("cuda:")):
        raise ParameterError(f"unknown device {literal_repr(device)}", hint="use --device cpu or --device cuda[:N]")
    try:
        from pecli.torch_backend import TorchPhasors, check_device
    except ImportError:
        raise ParameterError(
            f"--device {device} needs torch, which is not installed", hint="pip install torch, or drop --device"
        ) from None
    return TorchPhasors(check_device(device))


def _note_unused_device(out: Output, placement: Any, scheme: str) -> None:
    if placement.backend is not None and not placement.used:
        out.warn(f"--device {placement.backend.device}: scheme {scheme!r} computes no sin/cos, so it ran on the CPU")


def _print_presets(out: Output, scheme: str | None) -> None:
    """Every preset, or those of ``scheme`` (``pecli generate rope --list-presets``: an unknown name is refused)."""
    from pecli.report import Listing
    from pecli.schemes import get_scheme
    from pecli.schemes.presets import PRESETS

    owner = None if scheme is None else get_scheme(scheme).name
    presets = [p for p in PRESETS.values() if owner is None or p.scheme == owner]
    document = [
        {"name": p.name, "scheme": p.scheme, "params": dict(p.params), "convention": p.convention, "source": p.source}
        for p in presets
    ]
    lines = [f"{p.name:<18} {p.scheme}: {p.convention}\n{'':<18} source: {p.source}" for p in presets]
    if not presets:
        out.note(f"{owner} has no presets")
    out.show(Listing(document, lines))


def _print_summary(out: Output, table: Any) -> None:
    """The summary, then a preview of the values (the first and last rows and columns of each part)."""
    import math
    from functools import partial

    from pecli.render.preview import preview_lines
    from pecli.render.summary import TableSummary
    from pecli.sources import spec_rows

    parts = table.parts()
    previews = [
        # a 1-D part is one column, a 3-D one (ALiBi's heads) rows of its last axes; bfloat16 as its exact values
        (part.name if len(parts) > 1 else "",
         preview_lines(partial(spec_rows, part), part.shape[0], math.prod(part.shape[1:])))
        for part in parts
    ]  # fmt: skip
    from pecli.cli.common import save_hint

    out.show(TableSummary(table.summary(with_values=True), previews=previews, hint=save_hint("pe.safetensors", table)))
