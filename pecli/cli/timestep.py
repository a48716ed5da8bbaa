"""``pecli timestep``: diffusion timestep embeddings of given timesteps, to a file, stdout, or a table."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import DimOpt, DtypeOpt, FormatOpt, OutputOpt, PresetOpt, output_options, scheme_options
from pecli.cli.output import Output
from pecli.errors import Message, ParameterError
from pecli.schemes.catalog import SCHEMES
from pecli.text import literal_repr

HELP = """Embed diffusion timesteps t, one row per t: an (N, d) table.

The default is latent-diffusion's / guided-diffusion's timestep_embedding: h = d // 2,
freqs[k] = exp(-ln(max_period) * k / (h - S)), args = scale * t * freqs, rows [cos(args) | sin(args)],
an odd d appends a zero column. diffusers' get_timestep_embedding(timesteps, embedding_dim,
flip_sin_to_cos=False, downscale_freq_shift=1, scale=1, max_period=10000) is --no-flip-sin-to-cos
--freq-shift 1, or --preset diffusers; but diffusers' UNets (UNet2DConditionModel…) call it with
flip_sin_to_cos=True, freq_shift=0, which is the ldm convention, the default here. Presets: ldm
(= guided-diffusion, the default), diffusers, ddpm (split, sin first, shift 1).

Timesteps come from the arguments, from --range START:STOP:STEP (Python slice semantics, real
numbers allowed, STOP excluded), or from stdin when the argument is - (numbers separated by
whitespace, commas or newlines). Put -- before a negative first timestep.

--dtype float16/bfloat16 round the table once, after computing t * freqs and sin/cos in float64:
rounding t or the frequencies first moves the phases a lot (bfloat16 turns t = 998.39 into 1000,
and float16 holds integers exactly only up to 2048).

Without -o, print a summary and the first and last rows (--json for machines). .safetensors files record
every parameter and the timesteps in their metadata.

Examples:

\b
  pecli timestep 0 250 999 --dim 320
  seq 0 999 | pecli timestep --dim 320 - -o t.npy
  pecli timestep --range 0:1000:10 --dim 320 --preset diffusers -o t.safetensors
  pecli timestep 998.39 --dim 8 --dtype bfloat16 -o t.safetensors
"""

_ONE_SOURCE = "give timesteps as arguments, - for stdin, or --range START:STOP:STEP"

#: rows of the table in --json's "first_rows" without -o
_SHOWN_ROWS = 8


def register(app: typer.Typer) -> None:
    app.command("timestep", help=HELP)(timestep)


@scheme_options(scheme="timestep")
@output_options
def timestep(
    timesteps: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="[T ...]", help="Timesteps (numbers), or - to read them from stdin.", show_default=False
        ),
    ] = None,
    d: DimOpt = None,
    range_text: Annotated[
        Optional[str],
        typer.Option("--range", help="Timesteps START:STOP:STEP, e.g. 0:1000:10 (STOP excluded).", metavar="RANGE"),
    ] = None,
    dtype: DtypeOpt = "float32",
    output: OutputOpt = None,
    fmt: FormatOpt = None,
    name: Annotated[
        Optional[str],
        typer.Option("--name", help="Tensor name in .safetensors/.pt files (default: t_emb).", metavar="KEY"),
    ] = None,
    preset: PresetOpt = None,
    *,
    out: Output,
    scheme_params: dict[str, Any] | None = None,
) -> None:
    from pecli.cli.common import check_name_written, prepare_output, write_table
    from pecli.report import Deferred  # now: nothing is imported once the file is written
    from pecli.schemes.timestep import TimestepSpec

    _refuse_options_after_dashes(timesteps or [])
    if d is None:
        raise ParameterError("missing --dim", hint="e.g. pecli timestep 0 250 999 --dim 320")
    SCHEMES["timestep"].sizes(1, d, {})  # checks --dim before reading the timesteps (stdin may be a terminal)
    if output is None and fmt is not None:
        raise ParameterError("--format needs an output", hint="add -o FILE or -o -")
    check_name_written(name, output, fmt)  # before the timesteps are read (stdin may be a terminal)
    _refuse_ignored_by_repeat_only(scheme_params or {}, preset)
    times = _read_timesteps(out, timesteps or [], range_text)
    _refuse_repeated_overflow(times, scheme_params or {}, dtype)
    table = TimestepSpec.build(
        times,
        d,
        preset=preset,
        params=scheme_params,
        dtype=dtype,
        name="t_emb" if name is None else name,
    ).check()
    if output is None:
        _print_table(out, table)
        return
    target, fmt = prepare_output(out, table, output, fmt)
    if fmt == "safetensors":
        _check_recorded_timesteps(table)
    write_table(out, table, target, fmt, label=output)
    # the file is the result (its note is on stderr); --json adds the summary
    out.show(Deferred(lambda: {**table.summary(with_values=False), "output": output}, list))


#: options of other commands the user may reach for here, and what stands for each (``timestep --len 4``)
timestep.pecli_instead = {
    "--len": "its rows are the timesteps given (as arguments, - for stdin, or --range START:STOP:STEP)",
    "--length": "its rows are the timesteps given (as arguments, - for stdin, or --range START:STOP:STEP)",
}


def _refuse_repeated_overflow(times: Any, params: dict[str, Any], dtype: str) -> None:
    """--repeat-only writes t itself: a timestep --dtype float16 cannot hold is named (was 'cannot hold the
    table's values … or smaller --len', an option timestep does not have)."""
    import numpy as np

    from pecli.schemes.timestep import TimestepRange

    count = len(times)
    if not params.get("repeat_only") or dtype != "float16" or not count:
        return
    # a range is monotone: its ends hold its largest magnitude (a long range is never built whole here)
    values = np.concatenate([times.array(0, 1), times.array(count - 1, count)]) if isinstance(
        times, TimestepRange) else times.array()  # fmt: skip
    peak = float(np.abs(values).max())
    if peak >= 65520.0:  # float16 rounds it to inf (65504 + half its last step of 32)
        raise ParameterError(
            f"timestep {peak:g} overflows float16 (its largest is 65504), which --repeat-only writes as it is",
            hint="use --dtype float32 or --dtype bfloat16, or timesteps below 65504",
        )


def _refuse_ignored_by_repeat_only(params: dict[str, Any], preset: str | None = None) -> None:
    """--repeat-only embeds t as it is: the sinusoid's options (a --preset's among them) given with it would be
    silently ignored (a preset's were recorded in the file's metadata, unused)."""
    from pecli.cli.options import flag_for

    if not params.get("repeat_only"):
        return
    ignored = [flag_for(name) if params[name] is not False else "--no-" + flag_for(name)[2:]
               for name in ("max_period", "freq_shift", "scale", "flip_sin_to_cos", "arithmetic")
               if params.get(name) is not None]  # fmt: skip
    if preset is not None:
        from pecli.schemes.presets import get_preset

        get_preset(preset, "timestep")  # an unknown name is named as such, not as one the sinusoid ignores
        ignored.append(f"{flag_for('preset')} {preset}")
    if ignored:
        verb = "shapes" if len(ignored) == 1 else "shape"
        raise ParameterError(
            f"{', '.join(ignored)} {verb} the sinusoid, which --repeat-only does not compute (it repeats t d times)",
            hint="drop it" if len(ignored) == 1 else "drop them",
        )


#: the most text of timesteps a safetensors header records (the format's header limit is 100 MB)
_MAX_RECORDED = 16 << 20


def _check_recorded_timesteps(table: Any) -> None:
    """Refuse timesteps too many and too uneven to record: the file would fail every reader's header limit.

    Evenly spaced timesteps (``seq 0 13999999``) are recorded as their range, whatever their number.
    """
    from pecli.dtypes import format_bytes

    size = len(table.metadata()["timesteps"])
    if size > _MAX_RECORDED:
        raise ParameterError(
            f"{len(table.timesteps)} unevenly spaced timesteps take {format_bytes(size)} of safetensors metadata, "
            f"more than the {format_bytes(_MAX_RECORDED)} pecli records",
            hint="write .npy (no metadata), or evenly spaced timesteps (--range START:STOP:STEP)",
        )


def _refuse_options_after_dashes(arguments: list[str]) -> None:
    """An option's name among the timesteps (``pecli timestep -- -1 --dim 4``): after ``--`` every word is a
    timestep, so it was not read as an option; say to put the options first (was 'missing --dim', or
    "'--scale' is not a number")."""
    for token in arguments:
        if re.match(r"-{1,2}[A-Za-z]", token):
            try:
                float(token)  # -inf, -nan, -Infinity: values, refused or taken later
            except ValueError:
                raise ParameterError(
                    f"{literal_repr(token)} was read as a timestep: every word after '--' is one",
                    hint="give the options before '--', e.g. pecli timestep --dim 4 -o t.npy -- -1 5",
                ) from None


def _read_timesteps(out: Output, arguments: list[str], range_text: str | None):
    """The timesteps of exactly one source: arguments, ``-`` (stdin) or ``--range``."""
    from pecli.schemes.timestep import parse_range, parse_timestep_arguments, parse_timesteps

    if range_text is not None:
        if arguments:
            raise ParameterError("timesteps given both as arguments and with --range", hint=_ONE_SOURCE)
        return parse_range(range_text)
    if "-" in arguments:
        if len(arguments) > 1:
            raise ParameterError("- (stdin) cannot be mixed with other timesteps", hint=_ONE_SOURCE)
        if out.stdin is None:  # the process started with stdin closed (<&-)
            raise ParameterError("stdin is closed, so there are no timesteps to read", hint=_ONE_SOURCE)
        if out.stdin_is_terminal:
            out.note("reading timesteps from stdin (end with Ctrl-D)")
        return parse_timesteps(_read_text(out.stdin), source="stdin")
    if not arguments:
        raise ParameterError("no timesteps given", hint=f"e.g. pecli timestep 0 250 999 --dim 320; {_ONE_SOURCE}")
    return parse_timestep_arguments(arguments)


def _read_text(stream: Any) -> str:
    """All of ``stream``, refused once it outgrows what its timesteps could take in memory (``/dev/zero``)."""
    from pecli.memory import available_memory

    # each timestep (two characters at least) becomes a Python float and a float64 while parsed
    limit = (available_memory() or 1 << 40) // 32
    pieces: list[str] = []
    size = 0
    for piece in _text_pieces(stream):
        size += len(piece)
        if size > limit:
            raise ParameterError(
                f"stdin holds more than {limit} characters of timesteps, more than memory can parse",
                hint="give fewer timesteps, or --range START:STOP:STEP",
            )
        if "\0" in piece:  # binary data (/dev/zero, a table): stop before reading more of it
            line = "".join(pieces).count("\n") + piece[: piece.index("\0")].count("\n") + 1
            raise ParameterError(
                f"line {line} of stdin is not a number: it holds binary data (a NUL byte)",
                hint="give timesteps as text, one or more per line",
            )
        pieces.append(piece)
    return "".join(pieces)


def _text_pieces(stream: Any) -> Iterator[str]:
    """``stream``'s text a MiB at a time: its bytes decoded as UTF-8 whatever the locale's decoder.

    A byte that is not UTF-8 stays a lone surrogate, reported as a token that is not a number (a
    stdin decoding strictly, as under en_US.UTF-8, raised UnicodeDecodeError: an internal error).
    """
    import codecs

    raw = getattr(stream, "buffer", None)
    if raw is None:  # a text stream only (a caller's StringIO)
        while piece := stream.read(1 << 20):
            yield piece
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    while data := raw.read(1 << 20):
        yield decoder.decode(data)
    yield decoder.decode(b"", final=True)


def _save_hint(table: Any) -> str:
    """How to save the table: a file, unless the disk here cannot hold it (10^15 timesteps print at once)."""
    from pecli.cli.common import free_disk_short_of, save_hint
    from pecli.dtypes import format_bytes

    full = free_disk_short_of(table.nbytes)
    if full:
        size = format_bytes(table.nbytes)
        return f"hint: a file of it would take {size}, with {full}: save fewer timesteps or a smaller --dim"
    return save_hint("t_emb.safetensors", table)


def _print_table(out: Output, table: Any) -> None:
    """The summary, then the first and last rows (a few leading and trailing columns) under their t."""
    import numpy as np

    from pecli.render.preview import preview_lines
    from pecli.render.summary import VALUES_LIMIT, TableSummary
    from pecli.schemes.timestep import number_text

    summary = table.summary(with_values=table.nbytes <= VALUES_LIMIT)  # --range 0:1e15 prints without a pass

    def first_rows() -> dict[str, Any]:  # for JSON only: as lists, a value takes 30 bytes
        shown = min(_SHOWN_ROWS, table.length)
        values = np.asarray(table.rows(range(shown)), dtype=np.float64)
        times = table.timesteps.array(0, shown)
        rows = zip(times, values, strict=True)
        return {"first_rows": [{"t": float(t), "embedding": row.tolist()} for t, row in rows]}

    def labels(rows: range) -> list[str]:  # each t exactly, as short as it reads back (999999999999999, 0.1, 1e+308)
        return [number_text(t) for t in table.timesteps.array(rows.start, rows.stop)]

    preview = preview_lines(table.rows, table.length, table.dim, row_label="t", row_labels=labels)
    report = TableSummary(
        summary,
        details=[Message(f"  timesteps: {_describe_timesteps(table.timesteps)}")],
        previews=[("", preview)],
        extra=first_rows,
        hint=_save_hint(table),
    )
    out.show(report)


def _describe_timesteps(timesteps: Any) -> str:
    from pecli.schemes.timestep import TimestepRange, number_text

    if isinstance(timesteps, TimestepRange):
        return f"{len(timesteps)} from {{range}} {timesteps.describe()}"
    if len(timesteps) <= 10:  # each t as it reads back: 1234567.5, not 1.23457e+06
        return ", ".join(number_text(t) for t in timesteps.values)
    head = ", ".join(number_text(t) for t in timesteps.values[:8])
    return f"{len(timesteps)}: {head}, …, {number_text(timesteps.values[-1])}"
