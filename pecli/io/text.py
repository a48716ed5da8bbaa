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
from collections.abc import Iterator
from typing import IO

import numpy as np

from pecli.errors import TableFileError
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
    it was printed from: :func:`_as_written`); no metadata.

    The delimiter is the first line's: a comma, else a tab (a line without either is one column;
    spaces do not separate values). Every line must hold as many numbers as the first, or the file
    is refused naming the line.

    >>> import io
    >>> text_entries(io.BytesIO(b"1\\t2\\n3\\t4\\n"), "t.tsv", 8)[0][""].load().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> text_entries(io.BytesIO(b"1,2\\n3\\n"), "t.csv", 6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.TableFileError: t.csv is not ... nor a CSV table: line 2 holds 1 value, line 1 2 (...)
    """
    text = handle.read().decode("latin-1")  # any byte decodes: one that is not a number is named below
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    delimiter = "\t" if "\t" in first and "," not in first else ","  # one column: no delimiter at all
    kind = "TSV" if delimiter == "\t" else "CSV"
    columns = len(first.split(delimiter)) if lines else 0
    try:
        array = np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, comments=None, ndmin=2)
    except ValueError:  # numpy words it by version: find the line and say it once
        raise _first_bad_line(name, lines, delimiter, columns, kind) from None
    if array.shape != (len(lines), columns):
        raise _first_bad_line(name, lines, delimiter, columns, kind)

    array = _as_written(array, lines, delimiter)

    def load() -> np.ndarray:
        return array.copy()

    return {"": StoredTensor(array.shape, array.dtype.name, load)}, {}


#: (dtype, the significant digits pecli writes it with): text holding that many digits somewhere, each value
#: the rounding of its own value in that dtype at the digits written, was written from that dtype
_WRITTEN_DIGITS = (("float16", 5), ("float32", 9))


def _as_written(array: np.ndarray, lines: list[str], delimiter: str) -> np.ndarray:
    """``array`` in the float dtype it was printed from (float16 or float32, as pecli writes them), else as
    parsed (float64).

    A float32 value printed with 9 digits parses to a float64 that is not that float32 (0.841470957 is not
    float32's 0.84147095680…): read as float64, the table showed float64 precision and was 3e-8 off every
    float32 convention. The evidence is the text's: with more digits than the dtype pins down (6 for float32,
    3 for float16) a float64 value truncated to them agrees with its dtype's rounding by chance in about one
    value of ten, pecli's own output in every one.

    >>> _as_written(np.array([[0.841470957, 1.0]]), ["0.841470957,1"], ",").dtype.name
    'float32'
    >>> _as_written(np.array([[0.8414709848078965]]), ["0.84147098480789650"], ",").dtype.name
    'float64'
    >>> _as_written(np.array([[0.841471]]), ["0.841471"], ",").dtype.name  # 6 digits: the digits' own precision
    'float64'
    """
    fields = [field.strip() for line in lines for field in line.split(delimiter)]
    digits = np.array([_significant_digits(field) for field in fields]).reshape(array.shape)
    for dtype, written in _WRITTEN_DIGITS:
        if digits.max(initial=0) < written - 1 or digits.max(initial=0) > written:
            continue
        with np.errstate(over="ignore"):
            rounded = array.astype(dtype)
        if not np.array_equal(np.isfinite(rounded), np.isfinite(array)):
            continue
        # the first rows first: a table that was not printed from this dtype says so there, at once
        if all(_reprinted(rounded[rows], digits[rows], array[rows]) for rows in (slice(0, 64), slice(64, None))):
            return rounded
    return array


def _reprinted(rounded: np.ndarray, digits: np.ndarray, parsed: np.ndarray) -> bool:
    """Whether each finite value of ``rounded``, printed with its ``digits``, is the value ``parsed``."""
    finite = np.isfinite(parsed)
    return all(
        float(f"{float(value):.{count}g}") == written
        for value, count, written in zip(rounded[finite], digits[finite], parsed[finite], strict=True)
    )


def _significant_digits(field: str) -> int:
    """The significant digits a number is written with (``"0.0316175073"``: 9; ``"1"``: 1; ``"nan"``: 0).

    >>> _significant_digits("-0.000316227757"), _significant_digits("8.41e-01"), _significant_digits("1.500")
    (9, 3, 4)
    """
    mantissa = field.lower().split("e")[0].lstrip("+-").replace(".", "")
    return len(mantissa.lstrip("0")) if mantissa.isdigit() else 0


def _first_bad_line(name: str, lines: list[str], delimiter: str, columns: int, kind: str) -> TableFileError:
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
