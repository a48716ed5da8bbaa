"""``pecli identify``: which known convention produced this table? (exit 0 found, 1 none, 2 bad input, 3 failure)."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import typer

from pecli.cli.options import KeyOpt, LayerTypeOpt, output_options
from pecli.cli.output import Output
from pecli.errors import ExitCode, ParameterError
from pecli.text import literal

HELP = """Name the convention that produced a table, and its command.

Searches the sinusoidal family (layout, sin/cos order, frequency shift, base — a grid with 10000
and the common RoPE bases 500000 and 1e6, plus the base read off the table — and first position),
RoPE cos/sin/angle tables (either layout, any base, linear/dynamic/yarn/llama3 scaling read off
the columns' frequencies), timestep rows at any t (printed, or as a --range), ALiBi's (H, L, L)
biases, one query row per head (BLOOM's and MPT's (H, 1, L)), one head's (L, L) or the (H,)
slopes, every preset, and the other deterministic schemes.
Reports the best match, its max error, and the command that reproduces it; a random (learned)
table matches none. A match is claimed only after regenerating the table: exact within the
rounding of its values, approximate within the noise of float32 arithmetic (2^-23·|p| at
position p for sin/cos conventions).
Exit status: 0 when a convention matches, 1 when none does, 2 on bad input, 3 on a runtime failure.

Examples:


  pecli identify model_pe.npy
  pecli identify checkpoint.safetensors --key embed_positions.weight --json
  pecli generate --preset fairseq --d 64 --len 128 -o - | pecli identify -
"""


def register(app: typer.Typer) -> None:
    app.command("identify", help=HELP)(identify)


@output_options
def identify(
    source: Annotated[str, typer.Argument(metavar="INPUT", help="A table file, or - for stdin.")],
    key: KeyOpt = None,
    layer_type: LayerTypeOpt = None,
    *,
    out: Output,
) -> None:
    from pecli.cli.inputs import require_table

    require_table("identify", source)
    from pecli.analysis.identify.report import IdentifyReport
    from pecli.cli.reproduce import command_line
    from pecli.sources import check_layer_type

    check_layer_type(source, layer_type)
    with _length_from_config(source):
        table, found = _identified(out, source, key, layer_type)
    # the file's dtype: a bfloat16 table is held as float32, the precision of its values tells the rest
    found = dataclasses.replace(found, dtype=table.dtype_name)
    out.show(IdentifyReport(found, table.label, command_line))
    if not found.matched:
        raise typer.Exit(int(ExitCode.NO_MATCH))


@contextlib.contextmanager
def _length_from_config(source: str) -> Iterator[None]:
    """A config with no context asks for a length: identify has no --len, so the fix is to write the table."""
    try:
        yield
    except ParameterError as error:
        if not error.hint_names("length"):
            raise
        raise ParameterError(
            error.message,
            hint=f"identify takes the length from the config: add max_position_embeddings to it, or write the "
            f"table first (pecli generate --from-config {literal(source)} --len N -o table.npy) and identify that",
        ) from None


def _identified(out: Output, source: str, key: str | None, layer_type: str | None) -> tuple[Any, Any]:
    """The table ``source`` holds (a RoPE cos/sin pair read as one) and what identify finds in it."""
    from pecli.analysis.identify import identify_rope_pair, identify_table
    from pecli.cli.inputs import InputTable, as_matrix, input_parts, load_input, pair_label, rope_pair
    from pecli.sources import is_config_source

    pair = rope_pair(out, source) if key is None else None
    if pair is None and key is None and is_config_source(source):  # a model's config: its cos and sin, as one table
        parts = input_parts(out, source, layer_type=layer_type)
        if parts is not None and [part.key for part in parts] == ["cos", "sin"]:
            pair = parts[0], parts[1]
    if pair is not None:  # a RoPE table written as its cos and sin: one table
        cos, sin = pair
        table = InputTable(cos.array, pair_label(cos, sin), cos.metadata, source, dtype=cos.dtype)
        with _progress_line(out) as progress:
            found = identify_rope_pair(
                cos.array, sin.array, dtype=cos.dtype_name, progress=progress, names=(str(cos.key), str(sin.key))
            )
    else:
        table = load_input(out, source, key=key, layer_type=layer_type)
        values, note = table.array, None
        # 2-D, and (1, L, d) / (L, 1, d) squeezed; no table at all (a scalar, 4-D) refused as every command does
        if values.ndim in (0, 2) or values.ndim > 3 or (values.ndim == 3 and 1 in values.shape[:2]):
            values, note = as_matrix(values, table.label)
        if note:
            out.note(note)
        with _progress_line(out) as progress:
            found = identify_table(values, dtype=table.dtype_name, progress=progress)
    return table, found


#: a search shows its stage on a terminal once it has run this long (seconds)
_PROGRESS_AFTER = 1.0


@contextlib.contextmanager
def _progress_line(out: Output) -> Iterator[Callable[[str], None] | None]:
    """A one-line ``identifying: <stage>`` on stderr, rewritten in place, for a terminal and a search over 1 s."""
    if out.quiet or not out.stderr_is_terminal:
        yield None
        return
    started, shown = time.monotonic(), False

    def show(stage: str) -> None:
        nonlocal shown
        if time.monotonic() - started >= _PROGRESS_AFTER:
            out.say(f"\r\x1b[Kidentifying: {stage}…")  # a stderr that refuses it is given up, never fatal
            shown = True

    try:
        yield show
    finally:
        if shown:
            out.say("\r\x1b[K")
