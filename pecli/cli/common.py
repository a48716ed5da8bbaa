"""Steps several commands share: checking a table's shape, writing it out."""

from __future__ import annotations

import contextlib
import math
import os
import stat
from collections.abc import Iterable
from typing import IO, Any

from pecli.cli.output import Output
from pecli.dtypes import itemsize
from pecli.errors import OutputError, ParameterError
from pecli.text import literal, literal_repr


def check_sizes_positive(length: int | None, dim: int | None) -> None:
    """Each of --len and --d that was given is a positive integer."""
    for name, value in (("dim", dim), ("length", length)):  # a template: the flag as the user typed it
        if value is not None and value <= 0:
            raise ParameterError(f"{{{name}}} must be a positive integer, got {value}", hint=f"e.g. {{{name}=512}}")


def check_name_written(
    name: str | None, output: str | None, fmt: str | None, parts: Any = None, *, pick: str = "pick one with {part}"
) -> None:
    """Refuse a ``--name`` that would name nothing: no output, a format of one unnamed table (npy, csv,
    tsv), or a table written as several tensors (``parts``, each of its own name; ``pick`` says how to get one).

    >>> check_name_written(None, "pe.npy", None), check_name_written("w", "pe.safetensors", None)
    (None, None)
    >>> try:
    ...     check_name_written("w", "pe.npy", None)
    ... except ParameterError as error:
    ...     print(error)
    name names a tensor in a .safetensors or .pt file, but a .npy file holds one unnamed table
    (drop name, or write .safetensors or .pt)
    """
    from pecli.io import format_for

    if name is None:
        return
    if output is None:
        raise ParameterError("{name} names the tensor of an output file, but there is none",
                             hint="add -o FILE.safetensors, or drop {name}")  # fmt: skip
    fmt = format_for(output, fmt)
    if fmt not in ("safetensors", "pt"):
        raise ParameterError(f"{{name}} names a tensor in a .safetensors or .pt file, but a .{fmt} file holds one"
                             " unnamed table", hint="drop {name}, or write .safetensors or .pt")  # fmt: skip
    names = [part.name for part in parts or ()]
    if len(names) > 1:
        raise ParameterError(f"{{name}} names a one-tensor table, but this one is written as {len(names)} tensors"
                             f" of their own names: {literal(', '.join(names))}",
                             hint=f"drop {{name}}, or {pick}")  # fmt: skip


def free_disk_short_of(nbytes: int) -> str | None:
    """The free space of the working directory's disk, in words, when a file of ``nbytes`` would not fit in it.

    >>> free_disk_short_of(1) is None
    True
    """
    import shutil

    from pecli.dtypes import format_bytes

    try:
        free = shutil.disk_usage(".").free
    except OSError:
        return None
    if nbytes <= free:
        return None
    return f"{format_bytes(free)} free on disk here"


def save_hint(example: str, table: Any) -> str:
    """The hint under a printed table: the formats that can hold it (npy, csv and tsv hold one tensor, and no
    bfloat16), ``example`` (``pe.safetensors``) the file to name.

    >>> from types import SimpleNamespace as Part
    >>> one, two = [Part(name="pe", dtype="float32")], [Part(name="cos", dtype="float32")] * 2
    >>> save_hint("pe.safetensors", Part(parts=lambda: one))
    'hint: save it with -o pe.safetensors (or .npy, .pt, .csv, .tsv; -o - for stdout)'
    >>> save_hint("pe.safetensors", Part(parts=lambda: two))
    'hint: save it with -o pe.safetensors (or .pt; -o - --format safetensors for stdout)'
    """
    parts = table.parts()
    if len(parts) == 1 and parts[0].dtype != "bfloat16":
        return f"hint: save it with -o {example} (or .npy, .pt, .csv, .tsv; -o - for stdout)"
    return f"hint: save it with -o {example} (or .pt; -o - --format safetensors for stdout)"


def check_fits_without_output(table: Any) -> None:
    """Refuse a table too large for memory when no output was given, naming the fix: a file streams to
    disk, unless the disk here has no room for it either (then only a smaller table helps)."""
    from pecli.memory import check_fits_in_memory

    full = free_disk_short_of(table.nbytes)
    hint = "add -o FILE.npy or -o FILE.safetensors, which stream to disk"
    check_fits_in_memory(
        table.nbytes,
        hint=f"use a smaller {table.parts()[0].size_placeholders}: a file would not fit either, with {full}"
        if full
        else hint,
    )


def require_shape(length: int | None, dim: int | None) -> tuple[int, int]:
    """``--len`` and ``--d`` must both be given, as positive integers."""
    missing = [f"{{{name}}}" for name, value in (("dim", dim), ("length", length)) if value is None]
    if missing:
        raise ParameterError(f"missing {' and '.join(missing)}", hint="e.g. pecli generate --d 512 --len 2048")
    check_sizes_positive(length, dim)
    return int(length), int(dim)  # type: ignore[arg-type]


def build_table(
    scheme: str | None,
    preset: str | None,
    params: dict[str, Any],
    *,
    length: int | None,
    dim: int | None,
    dtype: str,
    name: str,
):
    """A :class:`~pecli.schemes.spec.TableSpec` for the command line's options (names, sizes and dtype checked).

    Which of ``--len`` and ``--d`` a scheme needs is its ``sizes`` rule's business (a grid sets
    the length, ALiBi has no d); a value given must be positive.
    """
    from pecli.schemes.spec import TableSpec

    check_sizes_positive(length, dim)
    return TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype=dtype, name=name)


def check_not_input(output: str | None, sources: Iterable[str], *, flag: str = "-o", inside: bool = False) -> None:
    """Refuse an ``output`` that is one of the run's input files or directories ``sources`` (any spelling, symbolic
    or hard link of it); with ``inside``, also a path inside an input directory (a new model.safetensors beside a
    model's own would change what the directory loads as). ``-`` and sources that are no file (scheme names,
    specs) are never the same.

    >>> check_not_input("new.npy", ["pecli"]), check_not_input("-", ["-"])
    (None, None)
    >>> try:
    ...     check_not_input("./pecli/../pecli", ["pecli"])
    ... except ParameterError as error:
    ...     print(error)
    -o './pecli/../pecli' would overwrite the input (give a new path: the input is never modified)
    """
    if output is None or output == "-":
        return
    real_output = os.path.realpath(output)
    for source in sources:
        if source == "-" or not os.path.exists(source):
            continue
        real_source = os.path.realpath(source)
        same = real_output == real_source
        if not same and os.path.exists(output):
            with contextlib.suppress(OSError):
                same = os.path.samefile(output, source)  # a hard link
        if same:
            raise ParameterError(
                f"{flag} {literal_repr(output)} would overwrite the input",
                hint="give a new path: the input is never modified",
            )
        if inside and os.path.isdir(real_source) and real_output.startswith(real_source.rstrip(os.sep) + os.sep):
            raise ParameterError(
                f"{flag} {literal_repr(output)} would write into the input model directory {literal_repr(source)}",
                hint="give a path outside it: the input is never modified",
            )


def check_output(out: Output, output: str, sources: Iterable[str] = (), *, flag: str = "-o") -> None:
    """The checks of an output path before any work: a path that can be written
    (:func:`pecli.io.check_output_path`), and none of ``sources`` nor the files this run has read already
    (:attr:`Output.input_files`) — see :func:`check_not_input`."""
    from pecli.io import check_output_path

    check_output_path(output)
    check_not_input(output, [*sources, *out.input_files], flag=flag)


def prepare_output(
    out: Output, table: Any, output: str, fmt: str | None, *, pick: str | None = None
) -> tuple[Any, str]:
    """Check everything about ``output`` before any work: path, format, terminal, space. Returns (target, format).

    ``table`` is a :class:`~pecli.schemes.spec.TableSpec` or a :class:`~pecli.schemes.spec.TableSet`;
    ``pick`` says how to choose one of its tensors for a one-tensor format (default: ``--part``).
    With ``--json`` the JSON summary owns stdout, so the table cannot go there too.
    """
    from pecli.io import check_format_holds, check_free_space, format_for
    from pecli.schemes.catalog import get_scheme

    if out.json_output and output in ("-", "/dev/stdout"):  # a check of the command line, not a rendering
        raise ParameterError(
            "--json and -o - both write to stdout", hint="write the table to a file (-o pe.npy), or drop --json"
        )
    check_output(out, output)
    fmt = format_for(output, fmt)
    check_format_holds(
        fmt,
        {part.name: part.dtype for part in table.parts()},
        what=f"{table.scheme} writes",
        pick=pick or f"pick one with --part {'|'.join(get_scheme(table.scheme).parts)}",
    )
    target = output_target(out, output, fmt)
    if output != "-":
        check_free_space(output, table.nbytes)
    from pecli.memory import check_fits_in_memory

    # tables stream a chunk of rows at a time, so one row must fit (-o - has no free space to check)
    row_bytes = max(math.prod(part.shape[1:]) for part in table.parts()) * itemsize(table.dtype)
    check_fits_in_memory(row_bytes, what="table's widest row", hint="use a smaller {dim} or {length}")
    if fmt == "pt":
        check_fits_in_memory(2 * table.nbytes, hint="write .npy or .safetensors, which stream to disk")
    return target, fmt


def write_table(out: Output, table: Any, target: Any, fmt: str, *, label: str) -> None:
    """Write a :class:`~pecli.schemes.spec.TableSpec` (or a ``TableSet``) to a target from
    :func:`prepare_output`, streaming chunks."""
    from pecli.io import Tensor, write_tensors

    if isinstance(target, str):
        check_not_input(target, out.input_files)  # the last word: whatever this run read is never written over
    tensors = {part.name: Tensor(part.shape, part.dtype, part.chunks) for part in table.parts()}
    with out.progress(f"writing {label}", table.nbytes) as on_progress:
        write_tensors(target, tensors, fmt=fmt, metadata=table.metadata(), on_progress=on_progress)
    if label != "-":
        shapes = ", ".join(
            (f"{name} " if len(tensors) > 1 else "") + " × ".join(map(str, tensor.shape))
            for name, tensor in tensors.items()
        )
        out.note(f"wrote {label}: {shapes} {table.dtype} ({fmt})")


def output_target(out: Output, output: str, fmt: str) -> str | IO[bytes]:
    """Where data in ``fmt`` goes for ``-o output``: stdout's bytes for ``-``, else the path itself.

    Binary data is refused on a terminal, be it stdout (``-o -``) or a path naming one
    (``-o /dev/stdout``, ``-o /dev/tty``).
    """
    from pecli.io import BINARY_FORMATS

    if output == "-":
        target = out.binary_stdout(f"{fmt} data") if fmt in BINARY_FORMATS else out.stdout.buffer
        out.stdout.flush()
        return target
    if fmt in BINARY_FORMATS and _is_terminal_path(output):
        raise OutputError(
            f"refusing to write binary {fmt} data to the terminal {literal(output)}",
            hint="write to a file, or pipe it: -o - | pecli plot -",
        )
    return output


def _is_terminal_path(path: str) -> bool:
    """Whether ``path`` names a terminal device (``/dev/tty``, ``/dev/stdout`` on a terminal)."""
    try:
        if not stat.S_ISCHR(os.stat(path).st_mode):
            return False
        descriptor = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return os.isatty(descriptor)
    finally:
        os.close(descriptor)


def write_data(out: Output, request: Any, name: str, tensor: Any, metadata: dict[str, str]) -> None:
    """Stream ``tensor`` (a :class:`pecli.io.Tensor`) as ``name`` to ``request.output`` (a path or ``-``).

    ``request`` is a command's settings with ``output`` and ``fmt`` (``--format``), as distance's.
    """
    from pecli.io import format_for, write_tensors

    output = str(request.output)
    check_not_input(output, out.input_files)  # the last word: whatever this run read is never written over
    fmt = format_for(output, request.fmt)
    write_tensors(output_target(out, output, fmt), {name: tensor}, fmt=fmt, metadata=metadata)
    if output != "-":
        out.note(f"wrote {output}: {' × '.join(map(str, tensor.shape))} {tensor.dtype} ({fmt})")


def chart_size(out: Output, request: Any) -> tuple[int, int]:
    """A terminal chart's (columns, lines): ``request.size`` (--width, --height), else the terminal's
    columns and its lines less two (title, prompt), at least 8."""
    columns, lines = out.terminal_size()
    width, height = request.size
    return width or columns, height or max(8, lines - 2)
