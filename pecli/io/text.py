"""CSV and TSV: one line per row, values separated by ``,`` or a tab, at the digits that round-trip.

A value is written with as many significant digits as its dtype needs to be read back exactly
(17 for float64, 9 for float32, 5 for float16). Text read back is a 2-D table, one row per line, in
float32 (float16) where every value is a float32's (float16's) printed with up to 9 (5) digits, else
float64 (text records no dtype; every written value parses back to the value written).

>>> import io, numpy as np
>>> written = b"".join(text_pieces(Tensor.from_array(np.array([[0.1, 2.0]], dtype=np.float32)), ","))
>>> written
b'0.100000001,2\\n'
>>> entries, metadata = text_entries(io.BytesIO(written), "t.csv", len(written))
>>> entries[""].shape, entries[""].dtype, entries[""].load().tolist() == [[np.float32(0.1), 2.0]]
((1, 2), 'float32', True)
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Iterator
from typing import IO

import numpy as np

from pecli.errors import TableFileError
from pecli.io.reprint import PrintedDtype, significant_digits
from pecli.io.tensor import StoredTensor, Tensor
from pecli.text import literal_repr

__all__ = ["TEXT_BYTES", "is_text", "text_entries", "text_pieces"]

#: every byte a table pecli writes as text can hold: digits, signs, exponents, nan and inf, the two
#: delimiters, line ends (and spaces, which other programs put around values)
TEXT_BYTES = frozenset(b"0123456789+-.eE,\t\r\n naNifINF")
_FIRST_BYTES = frozenset(b"0123456789+-.nNiI \t")

_VALUE_FORMAT = {"float64": "%.17g", "float32": "%.9g", "float16": "%.5g"}

#: values formatted per text piece: text is ~10× slower to produce than binary, so a reader such
#: as ``| head -1`` gets its first line after a few milliseconds, not after a whole 32 MiB chunk
_TEXT_PIECE_VALUES = 1 << 16


def text_pieces(tensor: Tensor, delimiter: str) -> Iterator[bytes]:
    """Lines of ``tensor``'s values (one row each, 2-D and wider rows flattened), a few thousand per piece."""
    template = _VALUE_FORMAT.get(tensor.dtype, "%.17g")
    for chunk in tensor.chunks():
        chunk = np.asarray(chunk)
        chunk = chunk.reshape(chunk.shape[0], math.prod(chunk.shape[1:])) if chunk.ndim > 1 else chunk[:, None]
        if chunk.shape[1] > _TEXT_PIECE_VALUES:  # a wide row in column pieces: no row-long string or tuple
            yield from _wide_rows(chunk, template, delimiter)
            continue
        step = max(1, _TEXT_PIECE_VALUES // max(1, chunk.shape[1]))
        for start in range(0, chunk.shape[0], step):
            buffer = io.BytesIO()
            np.savetxt(buffer, chunk[start : start + step], fmt=template, delimiter=delimiter)
            yield buffer.getvalue()


def _wide_rows(rows: np.ndarray, template: str, delimiter: str) -> Iterator[bytes]:
    """The lines of ``rows`` (each wider than a piece) a piece of columns at a time, as savetxt writes them: it
    formats a row as one string from a tuple of its values (a 10^7-value row took 700 MB)."""
    width = rows.shape[1]
    for row in rows:
        for start in range(0, width, _TEXT_PIECE_VALUES):
            buffer = io.BytesIO()
            np.savetxt(buffer, row[None, start : start + _TEXT_PIECE_VALUES], fmt=template, delimiter=delimiter)
            piece = buffer.getvalue()
            yield piece if start + _TEXT_PIECE_VALUES >= width else piece[:-1] + delimiter.encode()


def is_text(head: bytes) -> bool:
    """Whether a file's first bytes can start a table pecli wrote as CSV or TSV.

    Every byte must be one a number, a delimiter or a line end uses: 16 random bytes pass with a
    chance of about 1e-16, so ``/dev/urandom`` is never mistaken for text.

    >>> is_text(b"0,1,0,1\\n0.84147"), is_text(b"hello, world"), is_text(b"\\x93NUMPY"), is_text(b"")
    (True, False, False, False)
    """
    return bool(head) and head[0] in _FIRST_BYTES and all(byte in TEXT_BYTES for byte in head)


def text_entries(handle: IO[bytes], name: str, size: int | None) -> tuple[dict[str, StoredTensor], dict[str, str]]:
    """The one table of a CSV or TSV file (key ``""``, a row per line; float64, or the float32 or float16
    it was printed from: :mod:`pecli.io.reprint`); no metadata.

    The delimiter is the first line's: a comma, else a tab (a line without either is one column;
    spaces do not separate values). Every line must hold as many numbers as the first, or the file
    is refused naming the line. The text is read a block of lines at a time (about 1 MiB): besides the
    table, memory holds one block's lines, never the whole file's text or fields.

    >>> import io
    >>> text_entries(io.BytesIO(b"1\\t2\\n3\\t4\\n"), "t.tsv", 8)[0][""].load().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> text_entries(io.BytesIO(b"1,2\\n3\\n"), "t.csv", 6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.TableFileError: t.csv is not ... nor a CSV table: line 2 holds 1 value, line 1 2 (...)
    """
    start = handle.tell()
    blocks: list[np.ndarray] = []
    printed = PrintedDtype()
    delimiter, columns, kind = ",", 0, "CSV"
    for lines in _line_blocks(handle):
        if not blocks:  # the first line's delimiter, for the whole file
            delimiter = "\t" if "\t" in lines[0] and "," not in lines[0] else ","  # one column: no delimiter
            kind = "TSV" if delimiter == "\t" else "CSV"
            columns = len(lines[0].split(delimiter))
        try:
            block = np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, comments=None, ndmin=2)
        except ValueError:  # numpy words it by version: find the line and say it once
            block = None
        if block is None or block.shape != (len(lines), columns):
            handle.seek(start)
            raise _first_bad_line(name, _lines(handle), delimiter, columns, kind) from None
        digits = _digits(lines, delimiter, block.shape)
        if digits is None:  # the digits not counted value for value: the text is read as float64, its parse
            printed.unknown()
        else:
            printed.add(block, digits)
        blocks.append(block)
    if not blocks:
        raise _first_bad_line(name, iter(()), delimiter, columns, kind)

    array = np.empty((sum(len(block) for block in blocks), columns), dtype=printed.dtype)
    row = 0
    blocks.reverse()
    while blocks:  # each block freed as it is copied: the float64 text and the table are not both held whole
        block = blocks.pop()
        with np.errstate(over="ignore"):
            array[row : row + len(block)] = block
        row += len(block)

    def load() -> np.ndarray:
        return array.copy()

    return {"": StoredTensor(array.shape, array.dtype.name, load)}, {}


#: text read per block of lines: its strings, parsed values and digit counts take a few times this
_BLOCK_BYTES = 1 << 20


def _line_blocks(handle: IO[bytes]) -> Iterator[list[str]]:
    """The non-blank lines of ``handle``'s text (``str.splitlines``'s lines of it decoded as latin-1, where any
    byte decodes), in blocks of about :data:`_BLOCK_BYTES` (a longer line is one block)."""
    pending: list[bytes] = []
    while True:
        piece = handle.read(_BLOCK_BYTES)
        cut = piece.rfind(b"\n") + 1 or piece.rfind(b"\r", 0, len(piece) - 1) + 1  # a \r\n is not split
        if piece and not cut:  # no line ends here: the line goes on in the next piece
            pending.append(piece)
            continue
        text = b"".join([*pending, piece[:cut] if piece else b""]).decode("latin-1")
        pending = [piece[cut:]]
        lines = [line for line in text.splitlines() if line.strip()]
        if lines:
            yield lines
        if not piece:
            return


def _lines(handle: IO[bytes]) -> Iterator[str]:
    """The non-blank lines of ``handle``'s text, one by one."""
    for lines in _line_blocks(handle):
        yield from lines


def _digits(lines: list[str], delimiter: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """The significant digits of each value of ``lines`` (parsed to a table of ``shape``); None where the count
    finds another number of values than numpy parsed (no such text is known: then no dtype is read from it)."""
    text = "\n".join(lines).encode("latin-1")
    counts = significant_digits(text, delimiter.encode())
    return counts.reshape(shape) if counts.size == math.prod(shape) else None


def _first_bad_line(name: str, lines: Iterable[str], delimiter: str, columns: int, kind: str) -> TableFileError:
    """The error naming the first line of ``lines`` that is not ``columns`` numbers."""
    what = f"{name} is not a .npy, .safetensors or .pt file, nor a {kind} table"
    for number, line in enumerate(lines, start=1):
        fields = line.split(delimiter)
        if len(fields) != columns:
            return TableFileError(
                f"{what}: line {number} holds {len(fields)} value{'s' * (len(fields) != 1)}, line 1 {columns}",
                hint=f"a {kind} table has as many values on every line",
            )
        for field in fields:
            try:
                float(field)
            except ValueError:
                return TableFileError(
                    f"{what}: line {number} holds {literal_repr(field.strip()[:40])}, which is not a number",
                    hint=f"pecli reads {kind} tables of numbers, as pecli generate -o pe.csv writes them",
                )
    return TableFileError(f"{what} of numbers", hint="give one row of numbers per line")
