"""Reading and writing tables: .npy, .safetensors, .pt, CSV/TSV, files or streams; every format written reads back.

One module per format holds its reader and its writer (:mod:`pecli.io.npy`, :mod:`pecli.io.safetensors`,
:mod:`pecli.io.pt`, :mod:`pecli.io.text`); :mod:`pecli.io.atomic` makes writes safe. This module
picks the format: by name or extension when writing, by content when reading.

Writes stream row chunks (a table never has to fit in memory for .npy, .safetensors or text),
and are atomic: the bytes go to a recognisable temporary file next to the target, which replaces
the target with ``os.replace`` only when complete. Reads check a file's header against its size
before allocating anything, never unpickle (``allow_pickle=False``, ``weights_only=True``), and
read only the tensor asked for.

>>> import io, numpy as np
>>> buffer = io.BytesIO()
>>> write_tensors(buffer, {"pe": Tensor.from_array(np.eye(2, dtype=np.float32))}, fmt="safetensors",
...               metadata={"scheme": "eye"})
>>> table = read_table(io.BytesIO(buffer.getvalue()))
>>> table.key, table.array.tolist(), table.metadata["scheme"]
('pe', [[1.0, 0.0], [0.0, 1.0]], 'eye')
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from pecli.errors import OutputError, ParameterError, TableFileError, did_you_mean
from pecli.io.tensor import LoadedTable, StoredTensor, TableFile, Tensor, is_real_dtype
from pecli.text import literal, literal_repr

# Each format's module is imported where that format is read or written, so that reading a
# .safetensors file loads neither the .npy, .pt and text writers nor the atomic-write helpers.
if TYPE_CHECKING:
    from pecli.io.atomic import TEMP_MARKER, check_free_space, check_output_path

#: names this module gives from :mod:`pecli.io.atomic`, imported when first asked for (module ``__getattr__``)
_FROM_ATOMIC = frozenset({"TEMP_MARKER", "check_free_space", "check_output_path"})


def __getattr__(name: str) -> Any:
    """``from pecli.io import check_output_path`` (and the other write helpers) without loading them on reads."""
    if name in _FROM_ATOMIC:
        from pecli.io import atomic

        return getattr(atomic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BINARY_FORMATS",
    "FORMATS",
    "TEMP_MARKER",
    "LoadedTable",
    "StoredTensor",
    "TableFile",
    "Tensor",
    "check_format_holds",
    "check_free_space",
    "check_output_path",
    "chosen_tensor",
    "find_key",
    "format_for",
    "is_real_dtype",
    "open_tensors",
    "read_table",
    "read_tensors",
    "table_kind",
    "write_all",
    "write_tensors",
]

FORMATS: tuple[str, ...] = ("npy", "safetensors", "pt", "csv", "tsv")
BINARY_FORMATS = frozenset({"npy", "safetensors", "pt"})
_SINGLE_TENSOR_FORMATS = frozenset({"npy", "csv", "tsv"})
_NAMED_TENSOR_FORMATS = frozenset({"safetensors", "pt"})


def format_for(path: str, fmt: str | None) -> str:
    """The output format: ``fmt`` if given, else the one ``path``'s extension names.

    >>> format_for("pe.safetensors", None), format_for("-", None), format_for("x.txt", "csv")
    ('safetensors', 'npy', 'csv')
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise ParameterError(f"unknown format {literal_repr(fmt)}", hint=did_you_mean(fmt, FORMATS))
        return fmt
    if path == "-":
        return "npy"
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension in FORMATS:
        return extension
    raise ParameterError(
        f"cannot tell the format of {literal_repr(path)} from its extension "
        f"{('.' + literal(extension)) if extension else '(none)'}",
        hint="use .npy, .safetensors, .pt, .csv or .tsv, or pass {fmt}",
    )


def check_format_holds(
    fmt: str, dtypes: Mapping[str, str], *, what: str = "this table has", pick: str = "pick one part"
) -> None:
    """Refuse, before any work, tensors (name -> dtype name) that format ``fmt`` cannot hold.

    npy, csv and tsv hold one tensor and no bfloat16; safetensors and pt need names a reader can
    give back; safetensors holds only the dtypes its header has codes for; pt needs torch installed.
    ``what`` and ``pick`` word the one-tensor error for the caller ("rope writes", "pick one with ...").

    >>> check_format_holds("safetensors", {"cos": "float32", "sin": "float32"})
    >>> try:
    ...     check_format_holds("npy", {"cos": "float32", "sin": "float32"})
    ... except ValueError as error:
    ...     print(error)
    npy holds one tensor, but this table has 2: cos, sin (write .safetensors or .pt, or pick one part)
    """
    if fmt not in FORMATS:
        raise ParameterError(f"unknown format {literal_repr(fmt)}", hint=did_you_mean(fmt, FORMATS))
    if fmt == "pt":
        from pecli.io.pt import require_torch

        require_torch("writing a .pt file")
    if fmt in _NAMED_TENSOR_FORMATS:
        for name in dtypes:
            if not isinstance(name, str) or not name:
                raise ParameterError(
                    f"a tensor in a .{fmt} file needs a non-empty name, got {literal_repr(name)}", hint="{name=pe}"
                )
            if name == "__metadata__":
                raise ParameterError(
                    "'__metadata__' is reserved by the safetensors header, not a tensor name", hint="{name=pe}"
                )
    if fmt == "safetensors":
        from pecli.io.safetensors import dtype_code

        for dtype in dtypes.values():
            dtype_code(dtype)
    if fmt in _SINGLE_TENSOR_FORMATS:
        if len(dtypes) != 1:
            raise ParameterError(
                f"{fmt} holds one tensor, but {what} {len(dtypes)}: {literal(', '.join(dtypes))}",
                hint=f"write .safetensors or .pt, or {pick}",
            )
        if "bfloat16" in dtypes.values():
            raise ParameterError(
                f"{fmt} cannot store bfloat16 (numpy has no bfloat16 dtype)",
                hint="write .safetensors or .pt, or use {dtype=float32}",
            )


def _pieces(tensors: Mapping[str, Tensor], fmt: str, metadata: Mapping[str, str]) -> Iterator[bytes | memoryview]:
    check_format_holds(fmt, {name: tensor.dtype for name, tensor in tensors.items()})
    if fmt in ("npy", "csv", "tsv"):  # one tensor: check_format_holds refused more
        (tensor,) = tensors.values()
        if fmt == "npy":
            from pecli.io.npy import npy_pieces

            yield from npy_pieces(tensor)
        else:
            from pecli.io.text import text_pieces

            yield from text_pieces(tensor, "," if fmt == "csv" else "\t")
    elif fmt == "safetensors":
        from pecli.io.safetensors import safetensors_pieces

        yield from safetensors_pieces(tensors, metadata)
    else:
        from pecli.io.pt import pt_bytes

        yield pt_bytes(tensors)


def _stream(handle: IO[bytes], pieces: Iterable[bytes | memoryview], on_progress: Callable[[int], None] | None) -> None:
    for piece in pieces:
        write_all(handle, piece)
        if on_progress is not None:
            on_progress(len(piece))


def write_all(handle: IO[bytes], data: bytes | memoryview) -> None:
    """Write every byte of ``data``: an unbuffered stream (``PYTHONUNBUFFERED=1``) may take only part.

    A stream that takes nothing is an :class:`~pecli.errors.OutputError`, never a silent truncation.

    >>> import io
    >>> class Trickle(io.RawIOBase):  # takes at most 3 bytes per call, like a nearly full pipe
    ...     def __init__(self): self.got = b""
    ...     def writable(self): return True
    ...     def write(self, data): self.got += bytes(data[:3]); return min(3, len(data))
    >>> trickle = Trickle(); write_all(trickle, b"positional"); trickle.got
    b'positional'
    """
    view = memoryview(data).cast("B")
    while view:
        written = handle.write(view)
        if written is None:  # a non-blocking stream that is full: wait until it takes more
            import select

            select.select([], [handle], [])
            continue
        if written <= 0:
            raise OutputError("the output took no more bytes", hint="check the disk or the reading program")
        view = view[written:]


def write_tensors(
    target: str | IO[bytes],
    tensors: Mapping[str, Tensor],
    *,
    fmt: str,
    metadata: Mapping[str, str] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> None:
    """Write ``tensors`` in format ``fmt`` to a path (atomically) or a binary stream (standard output's bytes).

    Args:
        target: a file path, or a writable binary file object (the caller passes stdout's: this
            module never reaches for ``sys.stdout``).
        tensors: name -> :class:`Tensor`; npy and text formats take exactly one.
        fmt: one of :data:`FORMATS`.
        metadata: string pairs stored in a safetensors header (ignored by other formats).
        on_progress: called with the number of bytes after each piece is written.

    Example:
        >>> import io
        >>> out = io.BytesIO()
        >>> write_tensors(out, {"pe": Tensor.from_array(np.arange(4.0).reshape(2, 2))}, fmt="csv")
        >>> out.getvalue().decode()
        '0,1\\n2,3\\n'
    """
    from pecli.io.atomic import atomic_file, check_free_space, reported_os_errors

    metadata = metadata or {}
    pieces = _pieces(tensors, fmt, metadata)
    first = next(pieces, b"")  # validates format and dtype before any file is touched
    if isinstance(target, str):
        check_free_space(target, sum(tensor.nbytes for tensor in tensors.values()))
        with atomic_file(target) as handle:
            _stream(handle, [first], on_progress)
            _stream(handle, pieces, on_progress)
        return
    with reported_os_errors(getattr(target, "name", "the output")):
        _stream(target, [first], on_progress)
        _stream(target, pieces, on_progress)
        target.flush()


def _read_entries(kind: str, handle: IO[bytes], name: str, size: int) -> tuple[dict[str, StoredTensor], dict[str, str]]:
    """The entries and metadata of a file of ``kind``, by that format's reader alone (imported here, not at start)."""
    reader: Callable[[IO[bytes], str, int], tuple[dict[str, StoredTensor], dict[str, str]]]
    if kind == "safetensors":
        from pecli.io.safetensors import safetensors_entries as reader
    elif kind == "npy":
        from pecli.io.npy import npy_entries as reader
    elif kind == "pt":
        from pecli.io.pt import pt_entries as reader
    elif kind == "text":
        from pecli.io.text import text_entries as reader
    else:  # "gguf": read only, pecli writes no GGUF
        from pecli.io.gguf import gguf_entries as reader
    return reader(handle, name, size)


@contextlib.contextmanager
def open_tensors(source: str | IO[bytes]) -> Iterator[TableFile]:
    """Open a table file once: every tensor's header, loadable one by one while the block runs.

    A pipe is read once (see :mod:`pecli.io.source`), so several tensors of stdin can be read.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> write_tensors(buffer, {"a": Tensor.from_array(np.ones(2)), "b": Tensor.from_array(np.zeros(1))},
    ...               fmt="safetensors")
    >>> with open_tensors(io.BytesIO(buffer.getvalue())) as opened:
    ...     [(key, entry.load().tolist()) for key, entry in opened.entries.items()], opened.size
    ([('a', [1.0, 1.0]), ('b', [0.0])], 144)
    """
    from pecli.io.source import kind_of, open_source

    handle, name, size = open_source(source)
    shown = literal(name)  # the file's name in messages, which are templates
    with handle:
        if size == 0:
            raise TableFileError(f"{shown} is empty", hint="give a .npy, .safetensors or .pt table")
        head = handle.read(16)
        handle.seek(0)
        kind = kind_of(head)
        if kind is None:
            raise TableFileError(
                f"{shown} is not a .npy, .safetensors, .pt or .gguf file,"
                " nor a CSV or TSV table (unrecognised content)",
                hint="pecli reads tables written by numpy, safetensors, torch, or itself as text",
            )
        entries, metadata = _read_entries(kind, handle, shown, size)  # the readers name the file in messages
        _check_names(shown, [*entries, *metadata.keys(), *metadata.values()])
        yield TableFile(entries, metadata, name, size)


def _check_names(name: str, texts: Iterable[str]) -> None:
    """Refuse a tensor name or metadata string that is no valid Unicode: a JSON ``"\\ud800"`` or a
    pickled string may hold an unpaired surrogate, which no output (terminal, JSON, a file) can encode.

    >>> _check_names("x.safetensors", ["pe", "\\ud800"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.TableFileError: x.safetensors: the name or metadata '\\ud800' is not valid Unicode ...
    """
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            shown = literal(text.encode("unicode_escape", "backslashreplace").decode("ascii")[:80])
            raise TableFileError(
                f"{name}: the name or metadata '{shown}' is not valid Unicode (it holds an unpaired surrogate)",
                hint="the file is corrupt or was not written by a standard writer",
            ) from None


def read_tensors(source: str | IO[bytes]) -> tuple[dict[str, tuple[tuple[int, ...], str]], dict[str, str]]:
    """The name -> (shape, dtype) of every tensor in a file, and its metadata, reading only headers.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> write_tensors(buffer, {"pe": Tensor.from_array(np.zeros((3, 2), np.float16))}, fmt="safetensors")
    >>> read_tensors(io.BytesIO(buffer.getvalue()))
    ({'pe': ((3, 2), 'float16')}, {})
    """
    with open_tensors(source) as opened:
        return {key: (entry.shape, entry.dtype) for key, entry in opened.entries.items()}, opened.metadata


#: at most this many candidate keys are named in an error, so it stays one readable line
_LISTED = 10


def find_key(names: Iterable[str], key: str, where: str, *, what: str = "tensor") -> str:
    """The tensor ``key`` names among ``names``: itself, else the one name that contains it.

    ``key="position_embeddings"`` picks ``embeddings.position_embeddings.weight`` when no other
    tensor's name contains it; no name, or several, is a :class:`TableFileError` naming them.

    >>> find_key(["embeddings.position_embeddings.weight", "embeddings.word_embeddings.weight"], "position", "m")
    'embeddings.position_embeddings.weight'
    >>> find_key(["a.w", "b.w"], "w", "m")
    Traceback (most recent call last):
    pecli.errors.TableFileError: m has 2 tensors whose names contain 'w' (give more of the name: 'a.w', 'b.w')
    >>> find_key([""], "foo", "t.npy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.TableFileError: t.npy holds one unnamed table, so no tensor is called 'foo' (give no key: ...)
    """
    names = list(names)
    if key in names:
        return key
    where, quoted = literal(where), literal_repr(key)  # names from files and the command line, in templates
    containing = [candidate for candidate in names if key and key in candidate]
    if len(containing) == 1:
        return containing[0]
    if containing:
        listed = ", ".join(literal_repr(candidate) for candidate in containing[:_LISTED])
        more = f" and {len(containing) - _LISTED} more" if len(containing) > _LISTED else ""
        raise TableFileError(
            f"{where} has {len(containing)} {what}s whose names contain {quoted}",
            hint=f"give more of the name: {listed}{more}",
        )
    if not names:  # a file of no tensors (a GGUF of metadata only): no key can help
        raise _no_tensors(where)
    if not any(names):  # a .npy or a CSV: one table without a name ("valid: " listed nothing)
        raise TableFileError(
            f"{where} holds one unnamed table, so no {what} is called {quoted}",
            hint="give no key: keys name the tensors of .safetensors and .pt files",
        )
    raise TableFileError(f"{where} has no {what} {quoted}", hint=did_you_mean(key, names))


def _no_tensors(where: str) -> TableFileError:
    """The refusal of a file of no tensors (``where``: its name as a message template shows it); a GGUF's rope
    metadata still gives the model's table, which ``generate --from-config`` writes."""
    if where.lower().endswith(".gguf"):
        hint = f"its rope metadata gives the model's table: pecli generate {{from_config={where}}} -o pe.safetensors"
    else:
        hint = "give a file with a table in it"
    return TableFileError(f"{where} holds no tensors", hint=hint)


def table_kind(shape: tuple[int, ...]) -> str | None:
    """The kind of table a tensor's shape holds, as a --key hint lists it; None for other tensors.

    >>> table_kind((40, 8)), table_kind((1, 17, 8)), table_kind((8, 3, 10)), table_kind((8, 10, 3))
    ('2-D', '(1, N, C)', '(heads, q, k)', None)
    """
    if len(shape) == 2:
        return "2-D"
    if len(shape) == 3 and shape[0] == 1 < shape[1]:
        return "(1, N, C)"
    if len(shape) == 3 and shape[0] > 1 and shape[1] <= shape[2]:
        return "(heads, q, k)"
    return None


def _candidates_label(kinds: list[str]) -> str:
    """The words before a --key hint's list of the table kinds found.

    >>> _candidates_label(["2-D"]), _candidates_label(["(1, N, C)"]), _candidates_label([])
    ('2-D candidates', '(1, N, C) candidates', 'candidates')
    >>> _candidates_label(["2-D", "(1, N, C)", "(heads, q, k)"])
    'candidates (2-D, (1, N, C) or (heads, q, k))'
    """
    if len(kinds) <= 1:
        return " ".join([*kinds, "candidates"])
    return f"candidates ({', '.join(kinds[:-1])} or {kinds[-1]})"


def _choose_key(entries: Mapping[str, StoredTensor], metadata: Mapping[str, str], key: str | None, name: str) -> str:
    if key is not None:
        return find_key(entries, key, name)
    if len(entries) == 1:
        return next(iter(entries))
    own = metadata.get("tensor")
    if own is not None and own in entries:
        return own
    name = literal(name)
    if not entries:
        raise _no_tensors(name)
    # a table is 2-D, (1, N, C) as ViT's pos_embed, or (heads, q, k) with q <= k as ALiBi's biases (all query rows
    # or decoding's last q); a name with "pos" or "alibi" in it first (pos_embed beside the weights)
    tables = [(k, e) for k, e in entries.items() if table_kind(tuple(e.shape))]

    def named(key: str) -> bool:
        return any(word in key.lower() for word in ("pos", "alibi"))

    tables.sort(key=lambda item: not named(item[0]))
    candidates = [f"{literal_repr(k)} {list(e.shape)}" for k, e in tables]
    listing = "; ".join(candidates[:_LISTED]) if candidates else "none is 2-D, (1, N, C) or (heads, q, k)"
    kinds = {table_kind(tuple(e.shape)) for _, e in tables}
    label = _candidates_label([kind for kind in ("2-D", "(1, N, C)", "(heads, q, k)") if kind in kinds])
    if len(candidates) > _LISTED:
        listing += f"; and {len(candidates) - _LISTED} more (pecli info lists them)"
    # a ready example: the first listed, a position table's name first, then a 2-D one
    chosen = min(tables, key=lambda item: (not named(item[0]), table_kind(tuple(item[1].shape)) != "2-D"), default=None)
    example = f"e.g. {{key={_shell_word(chosen[0])}}}; " if chosen else ""
    raise TableFileError(f"{name} holds {len(entries)} tensors; choose one with {{key}}",
                         hint=f"{example}{label}: {listing}")  # fmt: skip


def _shell_word(text: str) -> str:
    r"""``text`` (a tensor's name, from a file) as one word of a command to paste into a shell, in a message template:
    as it is when plain, quoted when the shell would split or expand it, and escaped (``'\x1b'``) when it holds a
    character a terminal would obey: such a name is shown, never sent to the terminal.

    >>> _shell_word("full_attention.cos"), _shell_word("pos embed"), _shell_word("a\x1b[2Jb")
    ('full_attention.cos', "'pos embed'", "'a\\x1b[2Jb'")
    """
    import re
    import shlex

    if re.fullmatch(r"[\w.,:/@%+=-]+", text, flags=re.ASCII):
        return text
    return literal(shlex.quote(text)) if text.isprintable() else literal_repr(text)


def chosen_tensor(source: str | IO[bytes], key: str | None = None) -> tuple[str, tuple[int, ...], str]:
    """The name, shape and dtype of the tensor :func:`read_table` would read (``key`` exact, a part of
    one name, or the file's only or own tensor), from the headers alone: no value is read.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> tensors = {"pos_embed": Tensor.from_array(np.zeros((1, 5, 2), np.float32)),
    ...            "head.weight": Tensor.from_array(np.zeros((3, 2), np.float16))}
    >>> write_tensors(buffer, tensors, fmt="safetensors")
    >>> chosen_tensor(io.BytesIO(buffer.getvalue()), "pos")
    ('pos_embed', (1, 5, 2), 'float32')
    """
    with open_tensors(source) as opened:
        chosen = _choose_key(opened.entries, opened.metadata, key, opened.name)
        entry = opened.entries[chosen]
        return chosen, tuple(entry.shape), entry.dtype


def _extended_float(name: str) -> bool:
    """Whether dtype ``name`` is numpy's extended-precision float (``float128``/``float96``, C's long double).

    >>> _extended_float("float128"), _extended_float("float64"), _extended_float("bfloat16")
    (True, False, False)
    """
    return name != "bfloat16" and is_real_dtype(name) and np.dtype(name).kind == "f" and np.dtype(name).itemsize > 8


def read_table(source: str | IO[bytes], key: str | None = None, *, complex_ok: bool = False) -> LoadedTable:
    """Read one tensor from a .npy, .safetensors, .pt, CSV or TSV file, or a binary stream.

    Standard input is a stream the caller passes (:func:`~pecli.io.source.read_stdin` reads it safely).

    The format is told by content, not by name. Without ``key``, a file with one tensor gives it, a
    file pecli wrote gives its own tensor, and any other multi-tensor file is an error that lists
    the 2-D candidates. Only the chosen tensor is read, and only after its header has been checked
    against the file's size; a tensor that is empty or not of a real number type is refused (``complex_ok``:
    a complex one is read, for the caller to read as an engine's freqs_cis).

    >>> import io
    >>> buffer = io.BytesIO()
    >>> np.save(buffer, np.array([[1 + 2j]]))
    >>> try:
    ...     read_table(io.BytesIO(buffer.getvalue()))
    ... except TableFileError as error:
    ...     print(error.message)
    <stream>: tensor array has dtype complex128, which is not a real number type
    """
    with open_tensors(source) as opened:
        entries, metadata, name = opened.entries, opened.metadata, opened.name
        chosen = _choose_key(entries, metadata, key, name)
        entry = entries[chosen]
        label = literal_repr(chosen) if chosen else "array"
        name = literal(name)  # in messages; the table's source is the name as it is
        if not is_real_dtype(entry.dtype) and not (complex_ok and str(entry.dtype).startswith("complex")):
            raise TableFileError(
                f"{name}: tensor {label} has dtype {entry.dtype}, which is not a real number type",
                hint="pecli reads float or integer tables"
                + (
                    "; compare reads a complex freqs_cis against a model's config or a rope spec"
                    if str(entry.dtype).startswith("complex")
                    else ""
                ),
            )
        if _extended_float(entry.dtype):  # numpy's long double: no format pecli writes holds it
            raise TableFileError(
                f"{name}: tensor {label} has dtype {entry.dtype} (extended precision), which pecli does not read",
                hint="pecli reads float16, bfloat16, float32, float64 and integer tables: save it as float64",
            )
        if math.prod(entry.shape) == 0:
            raise TableFileError(
                f"{name}: tensor {label} is empty (shape {tuple(entry.shape)})", hint="give a table with values"
            )
        from pecli.memory import check_fits_in_memory

        itemsize = 4 if entry.dtype == "bfloat16" else np.dtype(entry.dtype).itemsize  # bfloat16 widens to float32
        check_fits_in_memory(
            math.prod(entry.shape) * itemsize,
            what=f"tensor {label} in {name}" if chosen else f"table in {name}",
            hint="read a smaller table, or another tensor of the file with {key}",
        )
        array = entry.load()
    return LoadedTable(array=array, key=chosen or None, metadata=metadata, source=opened.name, dtype=entry.dtype)
