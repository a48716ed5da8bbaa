"""``pecli info``: what a table file holds — tensors, shapes, dtypes and metadata — from its header."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from pecli.cli.options import KeyOpt, output_options
from pecli.cli.output import Output
from pecli.errors import TableFileError

HELP = """Describe a table file: every tensor's name, shape (e.g. [len, d]) and dtype, and its metadata.

FILE is a .npy, .safetensors or .pt file, or a CSV/TSV table pecli wrote (told by content), or -
for stdin. For a .safetensors file pecli wrote, the metadata names the scheme and every parameter
that was set; for any other safetensors file, its own __metadata__ is shown. Only the header is
read, so this is instant on multi-GB checkpoints (.pt files are loaded by torch, text is parsed);
--stats reads the data to add min, max, mean and std.

Examples:

\b
  pecli info pe.safetensors
  pecli info model.safetensors --key model.pos_embed --stats
  pecli generate --d 64 --len 128 -o - | pecli info - --json
"""


def register(app: typer.Typer) -> None:
    app.command("info", help=HELP, short_help="Describe a table file: tensors, shapes, dtypes, metadata.")(info)


@output_options
def info(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE", help="A .npy, .safetensors, .pt, CSV or TSV file, a model directory, or - for stdin."
        ),
    ],
    key: KeyOpt = None,
    stats: Annotated[
        bool, typer.Option("--stats", help="Also read the data: min, max, mean and std of each tensor (or of --key).")
    ] = False,
    *,
    out: Output,
) -> None:
    from pecli.analysis.file_info import describe
    from pecli.cli.output import note_chosen_key
    from pecli.io import find_key, open_tensors

    if os.path.isdir(file):
        from pecli.cli.model_inputs import show_model_directory

        show_model_directory(out, file, key=key, stats=stats)
        return
    if file != "-" and not os.path.exists(file):
        raise TableFileError(f"no such file: {file!r}", hint="give a .npy, .safetensors or .pt file, or - for stdin")
    from pecli.io.source import read_stdin

    source = read_stdin(out.stdin_bytes) if file == "-" else file
    with open_tensors(source) as opened:  # once: a pipe cannot be read twice, a file need not be
        if key is not None:
            chosen = find_key(opened.entries, key, opened.name)
            note_chosen_key(out, key, chosen)
            key = chosen
        shown = {key: opened.entries[key]} if key is not None else opened.entries
        tensors = {name: (entry.shape, entry.dtype) for name, entry in shown.items()}
        report = describe(opened.name, tensors, opened.metadata, size=opened.size)
        if stats:
            report.add_stats(shown)
    out.show(report)
