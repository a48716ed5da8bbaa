"""Opening a table to read: a regular file in place, anything else (stdin, a FIFO, ``<(…)``, a
device) read once into memory, and no further than its header declares.

A pipe cannot be measured before it is read, so its format is decided from a bounded prefix and
only the bytes the header declares are read (checked against the memory available first): an
endless ``/dev/zero`` or ``/dev/urandom`` stops after a few bytes as unrecognised content.

>>> import io, numpy as np
>>> buffer = io.BytesIO(); np.save(buffer, np.eye(2))
>>> endless = io.BufferedReader(io.BytesIO(buffer.getvalue() + bytes(1 << 20)))  # not seekable: a pipe
>>> endless.seekable = lambda: False
>>> handle, name, size = open_source(endless)
>>> name, size - len(buffer.getvalue()), kind_of(handle.read(16))
('<stream>', 0, 'npy')
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import struct
from typing import IO, Any

import numpy as np

from pecli.errors import TableFileError
from pecli.io.safetensors import MAX_HEADER_BYTES
from pecli.io.text import TEXT_BYTES, is_text
from pecli.text import literal, literal_repr

__all__ = ["STDIN_NAME", "ReadTable", "kind_of", "open_source", "read_stdin"]

#: what messages call standard input
STDIN_NAME = "<stdin>"

#: bytes read at a time from a pipe
_CHUNK = 1 << 20
#: a regular file up to this size is read whole: cheaper than many small reads, and small enough to hold
_READ_WHOLE = 16 << 20
#: the bytes CSV and TSV tables are made of, for ``bytes.translate``'s deletion
_TEXT_BYTES = bytes(sorted(TEXT_BYTES))
#: numpy refuses .npy headers longer than this (``np.lib.format``'s default ``max_header_size``)
_MAX_NPY_HEADER = 10_000


class ReadTable(str):
    """A table's bytes already read (standard input's, read once per run), standing where a path goes.

    It is the text it was given as (``-``) wherever a parameter is shown, recorded or compared,
    and every reader opens its bytes afresh: a table read twice (a scheme's sizes, then its
    values) reads the same bytes, not an emptied stream.

    >>> import io, numpy as np
    >>> piped = io.BytesIO(); np.save(piped, np.ones(3))
    >>> given = ReadTable("-", piped.getvalue())
    >>> given, [open_source(given)[1:] for _ in range(2)] == [("<stdin>", len(piped.getvalue()))] * 2
    ('-', True)
    """

    data: bytes
    display: str

    def __new__(cls, text: str, data: bytes, display: str = STDIN_NAME) -> ReadTable:
        given = super().__new__(cls, text)
        given.data, given.display = data, display
        return given


def kind_of(head: bytes) -> str | None:
    """The format a file's first 16 bytes announce: ``npy``, ``pt``, ``safetensors``, ``gguf``, ``text``, or None.

    >>> kind_of(b"\\x93NUMPY\\x01\\x00"), kind_of(b"PK\\x03\\x04"), kind_of(bytes(16)), kind_of(b"0,1\\n-0.5,nan\\n")
    ('npy', 'pt', None, 'text')
    >>> kind_of((0x380).to_bytes(8, "little") + b'{"pe"')  # a length that starts like a pickle
    'safetensors'
    """
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"GGUF"):
        return "gguf"
    if head.startswith(b"PK\x03\x04"):
        return "pt"
    # before the pickle test: a header of 0x280, 0x380, 0x480 or 0x580 bytes starts with 80 02…80 05
    if len(head) >= 9 and head[8:9] in (b"{", b"["):  # a JSON header after its 8-byte length
        return "safetensors"
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "pt"  # torch.save's legacy (pre-1.6, non-zip) format: a bare pickle stream
    if is_text(head):
        return "text"
    return None


def read_stdin(stdin: IO[bytes] | None) -> IO[bytes]:
    """The table on standard input, read once up to what its header declares, as a stream named ``<stdin>``.

    ``stdin`` is the run's binary standard input (the caller's to give: this module never reads
    ``sys.stdin``); None when the process started without one (``<&-``). A terminal is refused
    before anything is read, as it would wait for someone typing.

    >>> import io, numpy as np
    >>> piped = io.BytesIO(); np.save(piped, np.ones(3))
    >>> table = read_stdin(io.BytesIO(piped.getvalue()))
    >>> table.name, open_source(table)[2] == len(piped.getvalue())
    ('<stdin>', True)
    """
    if stdin is None:  # the process started with stdin closed (<&-)
        raise TableFileError("stdin is closed, so there is no table to read", hint="pipe one in, or give a file")
    if _is_terminal(stdin):
        raise TableFileError(  # the one message for it: pecli.cli.stdin and info read stdin through here
            "refusing to read a table from the terminal (stdin is not redirected)",
            hint="pipe one in: pecli generate {dim=64} {length=32} {output=-} | …",
        )
    stream, _, _ = _read_declared(stdin, STDIN_NAME)
    stream.name = STDIN_NAME  # type: ignore[misc]  # the name messages give it (IO declares it read-only)
    return stream


def open_source(source: str | IO[bytes]) -> tuple[IO[bytes], str, int]:
    """(binary handle, display name, size) for a path or a binary file object (stdin: :func:`read_stdin`).

    A regular file is opened in place; every other source is read once, up to what its header
    declares, into memory (so its size is known before any header is trusted). A path is a path:
    ``"-"`` names a file, standard input being a stream the caller passes.
    """
    if isinstance(source, ReadTable):
        return io.BytesIO(source.data), source.display, len(source.data)
    if not isinstance(source, str):
        name = getattr(source, "name", None)
        name = name if isinstance(name, str) else "<stream>"
        if _seekable(source):  # its size is known: read it whole, as a file would be
            data = source.read()
            return io.BytesIO(data), name, len(data)
        return _read_declared(source, name)
    if not os.path.exists(source):
        raise TableFileError(
            f"no such file: {literal_repr(source)}", hint="check the path, or give a scheme name such as sinusoidal"
        )
    if os.path.isdir(source):
        raise TableFileError(
            f"{literal_repr(source)} is a directory, not a table file", hint="give a .npy, .safetensors or .pt file"
        )
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed by the caller
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            with handle:
                return _read_declared(handle, source)
    except OSError as error:
        raise TableFileError(
            f"cannot read {literal_repr(source)}: {error.strerror}", hint="check its permissions"
        ) from None
    size = os.fstat(handle.fileno()).st_size
    if size <= _READ_WHOLE:  # one read instead of a seek and a read per tensor (info --stats on 10,000 tensors)
        with handle:
            return io.BytesIO(handle.read(size)), source, size
    return handle, source, size


def _seekable(stream: IO[bytes]) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _read_declared(stream: IO[bytes], name: str) -> tuple[IO[bytes], str, int]:
    """Read ``stream`` up to the end its header declares (or its end, whichever comes first)."""
    buffer = bytearray()
    _read_into(buffer, stream, 16)
    kind = kind_of(bytes(buffer))
    if kind is not None:
        declared = _declared_size(kind, buffer, stream)
        if declared is None:  # a .pt file or text declares no size: read it all, as long as memory allows
            while _read_into(buffer, stream, len(buffer) + _CHUNK):
                _check_memory(2 * len(buffer), name)
                if kind == "text" and bytes(buffer[-_CHUNK:]).translate(None, _TEXT_BYTES):
                    break  # not text after all (`yes 1 | cat /dev/zero`): the reader names the line
        else:
            _check_memory(declared, name)
            # one byte more tells the reader of a tail; but a stream may hold several .npy arrays one
            # after another (np.save called repeatedly, as np.load reads them): its first is the table
            _read_into(buffer, stream, declared + (kind != "npy"))
    return io.BytesIO(bytes(buffer)), name, len(buffer)


def _read_into(buffer: bytearray, stream: IO[bytes], until: int) -> bool:
    """Append bytes from ``stream`` until ``buffer`` holds ``until``; False once the stream ended."""
    while len(buffer) < until:
        piece = stream.read(min(_CHUNK, until - len(buffer)))
        if not piece:
            return False
        buffer += piece
    return True


def _declared_size(kind: str, buffer: bytearray, stream: IO[bytes]) -> int | None:
    """The whole size a header declares, reading the header into ``buffer``; None for .pt files.

    A header that cannot be understood declares nothing beyond itself: the reader reports it.
    """
    if kind in ("pt", "text", "gguf"):  # a GGUF file's size is in its tensor descriptions: read it all
        return None
    if kind == "safetensors":
        (header_length,) = struct.unpack("<Q", bytes(buffer[:8]))
        if header_length > MAX_HEADER_BYTES or not _read_into(buffer, stream, 8 + header_length):
            return len(buffer)
        try:
            header = json.loads(bytes(buffer[8 : 8 + header_length]))
            ends = [info["data_offsets"][1] for key, info in header.items() if key != "__metadata__"]
            return 8 + header_length + max((end for end in ends if isinstance(end, int)), default=0)
        except (ValueError, RecursionError, TypeError, AttributeError, KeyError, IndexError):
            return len(buffer)
    width = 2 if buffer[6:7] == b"\x01" else 4  # version 1.0: a 2-byte header length, 2.0 and 3.0: 4 bytes
    header_length = int.from_bytes(bytes(buffer[8 : 8 + width]), "little")
    if header_length > _MAX_NPY_HEADER or not _read_into(buffer, stream, 8 + width + header_length):
        return len(buffer)
    try:
        header = np.lib.format.read_array_header_1_0 if width == 2 else np.lib.format.read_array_header_2_0
        partial = io.BytesIO(bytes(buffer))
        np.lib.format.read_magic(partial)
        shape, _, dtype = header(partial)
        return 8 + width + header_length + math.prod(int(n) for n in shape) * dtype.itemsize
    except Exception:  # any unparsable header: the reader names the problem
        return len(buffer)


def _check_memory(nbytes: int, name: str) -> None:
    from pecli.dtypes import format_bytes
    from pecli.memory import available_memory

    available = available_memory()
    if available is not None and nbytes > available:
        raise TableFileError(
            f"{literal(name)} declares {format_bytes(nbytes)} of data, more than the {format_bytes(available)} "
            "of memory available to read it from a pipe",
            hint="save it to a file and give the path, or read a smaller table",
        )
