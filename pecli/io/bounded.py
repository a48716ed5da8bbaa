"""Small text files from elsewhere (a model's ``config.json``, a shard index), read with a size bound.

Such a file is untrusted: a link to ``/dev/zero`` would be read until memory runs out, and a FIFO
would block forever. :func:`read_small_text` opens without blocking, refuses anything but a regular
file, and reads at most ``limit`` bytes; :func:`read_small_json` also bounds how deeply the JSON nests.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "c.json")
...     _ = open(path, "w").write('{"n_head": 4}')
...     read_small_json(path, what="config")
{'n_head': 4}
>>> read_small_text("/dev/zero", what="config")
Traceback (most recent call last):
...
pecli.errors.TableFileError: /dev/zero is a character device, not a regular file (give the config as a file)
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import Any

from pecli.errors import TableFileError
from pecli.text import literal, literal_repr, shown

__all__ = ["INT_DIGITS", "JSON_DEPTH", "SMALL_TEXT_BYTES", "read_small_json", "read_small_text"]

#: a config or an index is a few KiB to a few MiB (a 1000-shard index); nothing of this kind is larger
SMALL_TEXT_BYTES = 16 << 20
#: how deeply a config or index may nest: they nest two or three levels
JSON_DEPTH = 64
#: the most digits an integer in a config or index may have (Python's own default bound on reading one): a config's
#: numbers have a few, and past the bound Python refuses to read it (``sys.set_int_max_str_digits``)
INT_DIGITS = 4300

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _escaped(text: str) -> str:
    """A file name for a message template: escaped when not printable, its braces no placeholder (``{len}``)."""
    return literal(shown(text))


def read_small_text(path: str, *, what: str, limit: int = SMALL_TEXT_BYTES) -> str:
    """The UTF-8 text of regular file ``path``, at most ``limit`` bytes; a one-line TableFileError otherwise.

    ``what`` names the file in the hint ("config"). The file is opened without blocking (a FIFO
    returns at once) and checked with ``fstat`` on the opened descriptor, so a link cannot be
    swapped between the check and the read.
    """
    shown = _escaped(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise TableFileError(f"cannot read {shown}: {error.strerror}", hint=f"give the {what} as a file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise TableFileError(f"{shown} is {kind}, not a regular file", hint=f"give the {what} as a file")
        pieces, size = [], 0
        while size <= limit:
            piece = os.read(fd, min(1 << 20, limit + 1 - size))
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
    except OSError as error:
        raise TableFileError(f"cannot read {shown}: {error.strerror}", hint=f"give the {what} as a file") from None
    finally:
        os.close(fd)
    if size > limit:
        raise TableFileError(
            f"{shown} is larger than {limit >> 20} MiB, far more than a {what} holds",
            hint=f"give the model's own {what}",
        )
    try:
        return b"".join(pieces).decode("utf-8")
    except UnicodeDecodeError as error:
        raise TableFileError(
            f"cannot read {shown}: not UTF-8 text (byte {error.start})", hint=f"give the model's own {what}"
        ) from None


class _NumberText(float):
    """A JSON number too large for a float (``1e400``): infinite, but shown as the file wrote it."""

    text: str

    def __new__(cls, text: str) -> _NumberText:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _parse_float(text: str) -> float:
    number = float(text)
    return number if math.isfinite(number) else _NumberText(text)


class _LongInteger(Exception):
    """An integer in the JSON with more than :data:`INT_DIGITS` digits (its text in ``text``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > INT_DIGITS:
        raise _LongInteger(text)
    try:
        return int(text)
    except ValueError:  # a lower bound set for this Python (PYTHONINTMAXSTRDIGITS)
        raise _LongInteger(text) from None


def _long_integer(document: str, number: str) -> str:
    r"""Where the over-long integer ``number`` stands in ``document``: in its field, else on its line.

    >>> _long_integer('{"a": {"rope_theta": 12345}}', "12345"), _long_integer('[1,\n 12345]', "12345")
    ("in 'rope_theta'", 'on line 2')
    """
    field = re.search(r'"((?:[^"\\]|\\.)*)"\s*:\s*' + re.escape(number) + r"(?![0-9])", document)
    if field is not None:
        try:
            name = json.loads('"' + field.group(1) + '"')  # the key as the JSON writes it, escapes and all
        except ValueError:
            name = None
        if isinstance(name, str):
            return f"in {literal_repr(name)}"
    line = document.count("\n", 0, max(document.find(number), 0)) + 1
    return f"on line {line}"


def _depth(document: Any) -> int:
    """How deeply ``document`` nests (1 for a flat object), walked without recursion."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if depth > JSON_DEPTH:
                return depth
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return deepest


def read_small_json(path: str, *, what: str, limit: int = SMALL_TEXT_BYTES) -> Any:
    """The JSON document in ``path`` (see :func:`read_small_text`), nesting at most :data:`JSON_DEPTH` deep.

    Numbers too large for a float (``1e400``) read as infinity but show as written in messages.
    """
    text = read_small_text(path, what=what, limit=limit)
    shown = _escaped(path)
    try:
        document = json.loads(text, parse_float=_parse_float, parse_int=_parse_int)
    except _LongInteger as error:
        where = _long_integer(text, error.text)
        raise TableFileError(
            f"cannot read {shown}: the number {where} has {len(error.text.lstrip('-'))} digits, too many to read "
            f"(at most {INT_DIGITS})",
            hint=f"write the number {where} with fewer digits (in exponent form if need be: 1e+20)",
        ) from None
    except RecursionError:
        raise TableFileError(f"{shown} nests too deeply", hint=f"a {what} nests a few levels") from None
    except (json.JSONDecodeError, ValueError) as error:
        raise TableFileError(f"cannot read {shown}: {_escaped(str(error))}", hint=f"give the model's {what}") from None
    if _depth(document) > JSON_DEPTH:
        raise TableFileError(f"{shown} nests deeper than {JSON_DEPTH} levels", hint=f"a {what} nests a few levels")
    return document
