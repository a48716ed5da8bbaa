"""``pecli resample``: a learned position table to another grid (ViT) or length (BERT, RoBERTa)."""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Optional

import typer

from pecli.cli.common import check_not_input
from pecli.cli.options import (
    FormatOpt,
    KeyOpt,
    LenOpt,
    complete_choices,
    flag_for,
    output_options,
    output_path,
    parse_int,
)
from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal, literal_repr

HELP = """Resample a learned position table to another grid or length.

INPUT is a table file, - (stdin) or a model directory; --key picks the tensor. A 2-D table
(ViT: (N, C), (1, N, C) with --prefix-tokens leading class/register tokens kept, or a (C, H, W)
grid) goes to --grid HxW; its own grid is --from-grid HxW, inferred when square. A 1-D table
(BERT, RoBERTa, Whisper) goes to --len N rows, its first --keep-rows kept as they are: linear
(torch's interpolate), nearest, or tile (the Longformer recipe: the other rows repeated).

Computed in float64 as torch.nn.functional.interpolate computes it (align_corners=False;
bicubic a = -0.75; antialias as torch's), rounded once to the table's dtype; the shape keeps
its layout. The default is timm's: bicubic with antialias. --convention names a library's way:
timm (resample_abs_pos_embed), hf (transformers' interpolate_pos_encoding: no antialias) or
dinov2-original (scale_factor = (size + 0.1) / grid), each with one class token.

Examples:

\b
  pecli resample vit.safetensors --key pos_embed --grid 24x24 --convention timm -o pos.npy
  pecli resample pos.npy --prefix-tokens 1 --grid 16x12 --method bilinear --no-antialias -o new.npy
  pecli resample roberta.safetensors --key position_embeddings --len 4098 --keep-rows 2 --method tile -o long.npy
  pecli resample vit.safetensors --key pos_embed --grid 24x24 --in-checkpoint -o vit-384.safetensors
  pecli resample ./roberta-base --key position --len 4098 --keep-rows 2 --method tile --in-checkpoint -o ./roberta-4k
  pecli resample deit.pth --key model.pos_embed --grid 24x24 --in-checkpoint -o deit-384.pth

--in-checkpoint writes a copy of the checkpoint INPUT with only that tensor replaced: every other
tensor's bytes and the file's metadata kept (a pecli_resample entry added), streamed, the input
never modified. For a model directory (model.safetensors, pytorch_model.bin, or their shards) -o names
a new directory: the file holding the tensor is rewritten, the other files copied, the index's
total_size updated, and other weight files still holding the old table named in a warning. A PyTorch
checkpoint (.pt, .pth, .bin) is loaded with torch.load(weights_only=True) and saved again with torch.save: nested dicts,
epochs, optimizer state and storage shared between other tensors kept; a tied tensor is refused, and
optimizer state that keeps the old shape is named in a warning.
"""


def _methods() -> list[str]:
    from pecli.analysis.resample import GRID_METHODS, LENGTH_METHODS

    return list(dict.fromkeys((*GRID_METHODS, *LENGTH_METHODS)))


def _conventions() -> list[str]:
    from pecli.analysis.resample import CONVENTIONS

    return list(CONVENTIONS)


def register(app: typer.Typer) -> None:
    app.command("resample", help=HELP)(resample)


@output_options
def resample(
    source: Annotated[str, typer.Argument(metavar="INPUT", help="A table file, - (stdin), or a model directory.")],
    output: Annotated[
        Optional[str],
        typer.Option(
            "-o",
            "--output",
            help="Output file (.npy, .safetensors, .pt, .csv, .tsv), or -.",
            metavar="PATH",
            callback=output_path,
        ),
    ] = None,
    grid: Annotated[Optional[str], typer.Option("--grid", help="Target grid, e.g. 24x24.", metavar="HxW")] = None,
    from_grid: Annotated[
        Optional[str],
        typer.Option("--from-grid", help="The table's grid (default: the square its positions fill).", metavar="HxW"),
    ] = None,
    prefix_tokens: Annotated[
        Optional[int],
        typer.Option(
            "--prefix-tokens", help="Leading class/register tokens kept (default 0; 1 with --convention).", metavar="N"
        ),
    ] = None,
    method: Annotated[
        Optional[str],
        typer.Option(
            "--method",
            help="Grid: bicubic, bilinear, nearest, area. Length: linear, tile, nearest.",
            metavar="METHOD",
            autocompletion=complete_choices(_methods),
        ),
    ] = None,
    antialias: Annotated[
        Optional[bool],
        typer.Option(
            "--antialias/--no-antialias",
            help="Antialias when shrinking (default on: bicubic, bilinear).",
            show_default=False,
        ),
    ] = None,
    convention: Annotated[
        Optional[str],
        typer.Option(
            "--convention",
            help="timm, hf or dinov2-original.",
            metavar="NAME",
            autocompletion=complete_choices(_conventions),
        ),
    ] = None,
    length: LenOpt = None,
    keep_rows: Annotated[
        int, typer.Option("--keep-rows", help="With --len: leading rows kept as they are (RoBERTa: 2).", metavar="K")
    ] = 0,
    in_checkpoint: Annotated[
        bool,
        typer.Option(
            "--in-checkpoint",
            help="Write a copy of the checkpoint INPUT with only this tensor replaced (-o: a .safetensors or "
            ".pt/.pth/.bin file as INPUT is, or a new directory for a model directory).",
        ),
    ] = False,
    fmt: FormatOpt = None,
    key: KeyOpt = None,
    *,
    out: Output,
) -> None:
    from pecli.analysis import resample as core

    if (grid is None) == (length is None):
        raise ParameterError("give the target as --grid HxW or --len N", hint="one of them, e.g. --grid 24x24")
    if output is None:
        raise ParameterError("missing -o", hint="e.g. -o resampled.npy, or -o - for stdout")
    settings: dict[str, Any] = {}
    if grid is not None:
        settings = _grid_settings(core, grid, from_grid, prefix_tokens, method, antialias, convention)
        if keep_rows:
            raise ParameterError("--keep-rows applies to --len", hint="use --prefix-tokens for a grid's class tokens")
    else:
        given = {
            "--grid": grid,
            "--from-grid": from_grid,
            "--prefix-tokens": prefix_tokens,
            "--antialias" if antialias else "--no-antialias": antialias,  # the flag given, not its opposite
            "--convention": convention,
        }
        extra = [flag for flag, value in given.items() if value is not None]
        if extra:
            one = len(extra) == 1
            raise ParameterError(f"{', '.join(extra)} appl{'ies' if one else 'y'} to --grid, not --len",
                                 hint="drop it" if one else "drop them")  # fmt: skip
        settings = {"length": length, "method": method or "linear", "keep_rows": keep_rows}
        if settings["method"] not in core.LENGTH_METHODS:
            raise ParameterError(
                f"unknown --method {literal_repr(method)} for --len", hint=f"one of {', '.join(core.LENGTH_METHODS)}"
            )
    if in_checkpoint:
        fmt = _check_checkpoint_output(source, output, fmt)
        target: Any = None
    else:
        check_not_input(output, [source], inside=True)
        target, fmt = _prepare_output(out, output, fmt)
    written_format = fmt or "safetensors"

    from pecli.cli.inputs import load_input, require_table
    from pecli.sources import is_config_source, weights_beside_config

    require_table("resample", source)
    if not os.path.isdir(source) and is_config_source(source):
        directory = weights_beside_config(source)
        if directory is not None:  # a learned (or ViT's) config: its table is in the weights beside it
            raise ParameterError(
                f"resample reads a learned table, which {literal_repr(source)} does not hold: its model's weights do",
                hint=f"give its model directory instead, with the same options: pecli resample {literal(directory)} …",
            )
        # a config that computes its tables at any length
        raise ParameterError(
            f"resample reads a learned table, but {literal_repr(source)} is a model's config,"
            " whose tables pecli computes at any length",
            hint=f"pecli generate --from-config {literal(source)} --len N -o table.safetensors",
        )
    if source != "-":
        _check_before_reading(core, source, key, settings, written_format)
    if os.path.isdir(source):  # a learned table among its weights (a config's tables are computed, not resampled)
        from pecli.analysis.resample_checkpoint import open_weights
        from pecli.cli.inputs import InputTable

        # the tensor's dtype as stored (a bfloat16 tensor's copy must be bfloat16, not numpy's float32)
        stored, values = open_weights(source).position_table(key)
        table = InputTable(values, source, {}, source, stored.name, stored.dtype, requested_key=key)
        if table.key_note is not None:
            out.note(table.key_note.spelled(flag_for))
    else:
        table = load_input(out, source, key=key)
    dtype = table.dtype_name
    _check_holds(dtype, written_format)
    if grid is not None:
        resampled = core.resample_grid(table.array, **settings, dtype=dtype)
    else:
        resampled = core.resample_length(table.array, **settings, dtype=dtype)
    from pecli.io import Tensor, write_tensors

    how = ", ".join(f"{name}={_text(value)}" for name, value in settings.items() if value is not None)
    name = table.key or "position_embeddings"
    shape = lambda array: " × ".join(map(str, array.shape))  # noqa: E731
    from pecli.report import Listing  # before the write: nothing is imported once the file is there

    if in_checkpoint:
        from pecli.analysis import resample_checkpoint

        note = None if written_format == "pt" else f"{name}: {shape(table.array)} -> {shape(resampled)}; {how}"
        done = resample_checkpoint.write_checkpoint_copy(source, output, name, resampled, note=note)
        kept = "entry kept" if written_format == "pt" else "tensor copied"
        change = f"{done.key} {shape(table.array)} -> {shape(resampled)} {dtype}"
        wrote = [f"wrote {output}: {change}, every other {kept}; {how}"]
        warnings, notes = resample_checkpoint.copy_notes(done, source, output, settings)
        for warning in warnings:
            out.warn(warning.spelled(flag_for))
        for line in notes:
            out.note(line.spelled(flag_for))
    else:
        write_tensors(
            target, {name: Tensor.from_array(resampled)}, fmt=written_format, metadata={"pecli_resample": how}
        )
        read = f" ({table.array.shape[1]} positions of {table.array.shape[2]} channels)" if _batch_of_one(table) else ""
        wrote = [
            f"wrote {output}: {shape(resampled)} {dtype} ({written_format}) from {shape(table.array)}{read}; {how}"
        ]
    written = {
        "input": source,
        "key": table.key,
        "shape": list(table.array.shape),
        "dtype": dtype,
        "output": output,
        "output_shape": list(resampled.shape),
        "convention": convention,
        "in_checkpoint": in_checkpoint,
        **{name: list(value) if isinstance(value, tuple) else value for name, value in settings.items()},
    }
    # the file is the result: a note says so, or --json says what was done
    out.show(Listing(written, [], notes=wrote if output != "-" else []))


def _check_before_reading(core: Any, source: str, key: str | None, settings: dict[str, Any], fmt: str) -> None:
    """From the file's headers alone: refuse a result the output format cannot hold, or one larger than memory,
    before the table is read (a --len of 10^9 was refused only after reading a 256 MiB input). The tensor is
    the one the read will take: --key exact or a part of one name, a file's only or own tensor, a model
    directory's one position table."""
    from pecli.analysis.resample_checkpoint import stored_table
    from pecli.errors import PecliError

    try:
        _, shape, dtype = stored_table(source, key)
    except PecliError:  # no such tensor, or several: the read says so, naming the candidates
        return
    _check_holds(dtype, fmt)
    if "length" in settings:
        core.check_stored_target(shape, dtype, length=settings["length"])
    else:
        core.check_stored_target(shape, dtype, grid=settings["grid"], prefix_tokens=settings["prefix_tokens"])


def _check_holds(dtype: str, fmt: str) -> None:
    """A bfloat16 table resampled stays bfloat16: refuse a format without it, naming what resample offers."""
    if dtype == "bfloat16" and fmt in ("npy", "csv", "tsv"):
        raise ParameterError(
            f"the table is bfloat16, which {fmt} cannot store (numpy has no bfloat16 dtype), and resample keeps "
            "the table's dtype",
            hint="write -o resampled.safetensors or -o resampled.pt, which keep bfloat16",
        )


def _text(value: Any) -> str:
    return "x".join(map(str, value)) if isinstance(value, tuple) else str(value)


def parse_grid(text: str, flag: str) -> tuple[int, int]:
    """A grid written ``HxW`` (or ``H,W`` as generate's ``--grid``) as (H, W).

    >>> parse_grid("24x16", "--grid"), parse_grid("7,7", "--from-grid")
    ((24, 16), (7, 7))
    """
    parts = re.split(r"[x×,]", text.strip().lower())
    if len(parts) != 2:
        raise ParameterError(f"{flag}: {literal_repr(text[:20])} is not a grid HxW", hint=f"e.g. {flag} 24x24")
    height, width = (parse_int(part, flag=flag, example="24x24") for part in parts)
    return height, width


def _grid_settings(
    core: Any,
    grid: str,
    from_grid: str | None,
    prefix_tokens: int | None,
    method: str | None,
    antialias: bool | None,
    convention: str | None,
) -> dict[str, Any]:
    """The core's arguments for --grid: the convention's, then the options given."""
    settings: dict[str, Any] = {"grid": parse_grid(grid, "--grid")}
    if from_grid is not None:
        settings["from_grid"] = parse_grid(from_grid, "--from-grid")
    if convention is not None:
        if convention not in core.CONVENTIONS:
            from pecli.errors import did_you_mean

            raise ParameterError(
                f"unknown --convention {literal_repr(convention)}", hint=did_you_mean(convention, core.CONVENTIONS)
            )
        if method is not None or antialias is not None:
            raise ParameterError(f"--convention {convention} sets --method and --antialias", hint="drop them")
        chosen = core.CONVENTIONS[convention]
        method, antialias = chosen.method, chosen.antialias
        prefix_tokens = chosen.prefix_tokens if prefix_tokens is None else prefix_tokens
        if chosen.scale_offset is not None:
            settings["scale_offset"] = chosen.scale_offset
    method = method or "bicubic"
    if method not in core.GRID_METHODS:
        raise ParameterError(
            f"unknown --method {literal_repr(method)} for --grid", hint=f"one of {', '.join(core.GRID_METHODS)}"
        )
    if antialias is None:
        antialias = method in ("bicubic", "bilinear")  # timm's default
    if prefix_tokens is not None and prefix_tokens < 0:
        raise ParameterError(f"--prefix-tokens must be >= 0, got {prefix_tokens}", hint="e.g. --prefix-tokens 1")
    return {**settings, "prefix_tokens": prefix_tokens or 0, "method": method, "antialias": antialias}


def _check_checkpoint_output(source: str, output: str, fmt: str | None) -> str:
    """With --in-checkpoint: a safetensors or .pt INPUT (or model directory), and -o a new file or directory of
    the same kind, not INPUT. Returns the format written: "pt" or "safetensors"."""
    from pecli.analysis.resample_checkpoint import PT_SUFFIXES
    from pecli.io import check_output_path

    written = "pt" if source.lower().endswith(PT_SUFFIXES) and not os.path.isdir(source) else "safetensors"
    if source == "-" or not (os.path.isdir(source) or source.endswith(".safetensors") or written == "pt"):
        raise ParameterError(
            f"--in-checkpoint copies a .safetensors or .pt checkpoint; {literal_repr(source)} is not one",
            hint="give a .safetensors, .pt, .pth or .bin file or a model directory, or drop --in-checkpoint",
        )
    if fmt not in (None, written):
        raise ParameterError(f"--in-checkpoint writes {written} as INPUT is, not --format {fmt}", hint="drop --format")
    if output == "-":
        raise ParameterError(
            "--in-checkpoint writes a file, not stdout", hint=f"give a new path, e.g. -o new.{written}"
        )
    check_not_input(output, [source], flag="--in-checkpoint -o", inside=True)
    if os.path.isdir(source):
        if os.path.exists(output) and not (os.path.isdir(output) and not os.listdir(output)):
            raise ParameterError(
                f"-o {literal_repr(output)} exists; a model directory is copied to a new (or empty) directory",
                hint="give a new directory, e.g. -o resampled-model",
            )
        suffix = os.path.splitext(output.rstrip(os.sep))[1].lower()
        if suffix in (".safetensors", ".npy", ".pt", ".pth", ".bin", ".csv", ".tsv", ".json"):
            raise ParameterError(
                f"-o {literal_repr(output)} names a {suffix} file, but a model directory is copied to a new directory",
                hint="give a directory name, e.g. -o resampled-model",
            )
        return written
    if written == "pt":
        from pecli.io.pt import require_torch

        if not output.lower().endswith(PT_SUFFIXES):
            raise ParameterError(
                f"-o {literal_repr(output)} is not a .pt, .pth or .bin file, as the checkpoint INPUT is",
                hint="e.g. -o resampled.pt",
            )
        require_torch("--in-checkpoint on a .pt checkpoint")
    elif not output.endswith(".safetensors"):
        raise ParameterError(
            f"-o {literal_repr(output)} is not a .safetensors file", hint="e.g. -o resampled.safetensors"
        )
    check_output_path(output)
    return written


def _prepare_output(out: Output, output: str, fmt: str | None) -> tuple[Any, str]:
    """Check -o before any work: its path, format, and that --json does not share stdout with it."""
    from pecli.cli.common import output_target
    from pecli.io import check_output_path, format_for

    if out.json_output and output in ("-", "/dev/stdout"):
        raise ParameterError("--json and -o - both write to stdout", hint="write the table to a file, or drop --json")
    if output != "-":
        check_output_path(output)
        if os.path.isdir(output):
            raise ParameterError(
                f"-o {literal_repr(output)} is a directory", hint="give a file name, e.g. -o resampled.npy"
            )
    fmt = format_for(output, fmt)
    return output_target(out, output, fmt), fmt


def _batch_of_one(table: Any) -> bool:
    """A (1, N, C) tensor: read as N positions of C channels (ViT's pos_embed), never as a one-channel grid."""
    return table.array.ndim == 3 and table.array.shape[0] == 1
