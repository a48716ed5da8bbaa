"""``pecli info``: what a table file holds — tensors, shapes, dtypes and metadata — from its header; or the
positional encoding a model's config describes (a config.json, a model directory, a .gguf, a cached model id)."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from pecli.cli.options import KeyOpt, complete_choices, output_options
from pecli.cli.output import Output
from pecli.errors import ParameterError, TableFileError
from pecli.text import literal_repr

HELP = """Describe a table file: every tensor's name, shape (e.g. [len, d]) and dtype, and its metadata.

FILE is a .npy, .safetensors or .pt file, or a CSV/TSV table pecli wrote (told by content), or -
for stdin. For a .safetensors file pecli wrote, the metadata names the scheme and every parameter
that was set; for any other safetensors file, its own __metadata__ is shown. Only the header is
read, so this is instant on multi-GB checkpoints (.pt files are loaded by torch, text is parsed);
--stats reads the data to add min, max, mean and std.

FILE may also be a model's config.json, a model directory, a .gguf file or a model id in the local
Hugging Face cache (org/name[@revision]): its positional encoding as pecli understands it, per layer
type — scheme, base, scaling, the attention factor transformers computes, rotary dims and pairing,
the layers without positional encoding — with warnings for settings engines read differently.
--as writes the same settings as another tool takes them: hf-v4 (rope_theta + rope_scaling),
hf-v5 (rope_parameters, per layer type where they differ) or gguf (llama.cpp's metadata keys).

Examples:

\b
  pecli info pe.safetensors
  pecli info model.safetensors --key model.pos_embed --stats
  pecli generate --d 64 --len 128 -o - | pecli info - --json
  pecli info config.json
  pecli info meta-llama/Llama-3.1-8B --as gguf
"""


def _tools() -> tuple[str, ...]:
    from pecli.models.tool_settings import TOOLS

    return TOOLS


def register(app: typer.Typer) -> None:
    app.command("info", help=HELP, short_help="Describe a table file: tensors, shapes, dtypes, metadata.")(info)


@output_options
def info(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help="A .npy, .safetensors, .pt, CSV or TSV file, - for stdin, or a model: config.json, model "
            "directory, .gguf or cached model id.",
        ),
    ],
    key: KeyOpt = None,
    stats: Annotated[
        bool, typer.Option("--stats", help="Also read the data: min, max, mean and std of each tensor (or of --key).")
    ] = False,
    settings_as: Annotated[
        Optional[str],
        typer.Option(
            "--as",
            metavar="hf-v4|hf-v5|gguf",
            help="Write a model's position settings as another tool takes them (JSON): hf-v4, hf-v5 or gguf.",
            autocompletion=complete_choices(_tools),
        ),
    ] = None,
    *,
    out: Output,
) -> None:
    from pecli.analysis.file_info import describe
    from pecli.cli.output import note_chosen_key
    from pecli.io import find_key, open_tensors

    if settings_as is not None or _is_model(file):  # a config, a config-only directory, a model id
        _show_model(out, file, key=key, stats=stats, settings_as=settings_as)
        return
    if os.path.isdir(file):
        from pecli.cli.model_inputs import show_model_directory

        show_model_directory(out, file, key=key, stats=stats)
        return
    if file != "-" and not os.path.exists(file):
        from pecli.cli.inputs import require_table

        require_table("info", file)  # a scheme's name: write its table first
        raise TableFileError(
            f"no such file: {literal_repr(file)}", hint="give a .npy, .safetensors or .pt file, or - for stdin"
        )
    from pecli.io.source import read_stdin

    source = read_stdin(out.stdin_bytes) if file == "-" else file
    with open_tensors(source) as opened:  # once: a pipe cannot be read twice, a file need not be
        if key is not None:
            chosen = find_key(opened.entries, key, opened.name)
            note_chosen_key(out, key, chosen)
            key = chosen
        tensors = {name: (entry.shape, entry.dtype) for name, entry in opened.entries.items()}
        # every tensor counted, the chosen one alone listed (and read for --stats)
        report = describe(opened.name, tensors, opened.metadata, size=opened.size, key=key)
        if stats:
            report.add_stats(opened.entries)
    if file.lower().endswith(".gguf") and key is None and not stats:  # llama.cpp's file: its rope metadata too
        from pecli.models.info import describe_file_encoding

        report = describe_file_encoding(file, report)
    out.show(report)


def _is_model(file: str) -> bool:
    """Whether ``file`` names a model's config (a .json or .gguf file, a directory with no weights beside its
    config.json) or a cached model id."""
    from pecli.models.info import holds_weights
    from pecli.sources import kind_of_source

    if os.path.isdir(file):
        return os.path.isfile(os.path.join(file, "config.json")) and not holds_weights(file)
    # a .gguf is a table file too (its tensors, then its rope metadata); a config with --as
    return file.lower().endswith(".json") or kind_of_source(file).name == "model-id"


def _show_model(out: Output, file: str, *, key: str | None, stats: bool, settings_as: str | None) -> None:
    """The positional encoding of a config, .gguf, model id (or, with --as, a model directory)."""
    if key is not None or stats:
        given = " and ".join(name for name, on in (("--key", key is not None), ("--stats", stats)) if on)
        if settings_as is not None:  # the file may be a table: what conflicts is the options given
            raise ParameterError(
                f"--as writes a model's position settings; it cannot go with {given}", hint="use one of them"
            )
        verb = "describe" if " and " in given else "describes"
        raise ParameterError(
            f"{given} {verb} a table file, but {literal_repr(file)} is a model's config",
            hint="pecli info CONFIG describes its positional encoding",
        )
    from pecli.models.info import describe_config

    if file != "-" and not os.path.exists(file) and not _is_model(file):
        raise TableFileError(
            f"no such file: {literal_repr(file)}", hint="give a config.json, a model directory or a .gguf file"
        )
    info = describe_config(file)
    if settings_as is None:
        from pecli.cli.model_inputs import spelled_notes

        out.show(spelled_notes(out, info))
        return
    import json

    from pecli.models.tool_settings import tool_settings
    from pecli.report import Listing

    settings = tool_settings(info, settings_as)
    out.show(Listing(settings, json.dumps(settings, indent=2).splitlines()))
