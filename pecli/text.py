r"""Text from outside (a file name, a tensor name, metadata) made safe for a terminal.

Every human output path — the CLI's and a result's own text — goes through :func:`printable`;
``--json`` keeps the exact strings.

>>> printable("pos\x1b[2J")
'pos\\x1b[2J'

Messages are templates (:func:`pecli.errors.name_parameters` turns ``{rows}`` into ``--rows``), so
text from outside enters one through :func:`literal`: its braces stand for themselves.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ascii_float", "ascii_int", "json_escaped", "literal", "literal_repr", "printable", "unliteral"]

#: characters that move the cursor, retitle the window, clear the screen or break a line: C0 and C1
#: controls, DEL, and Unicode's line separators and bidirectional overrides
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


#: what :func:`literal` writes for ``{`` and ``}``: two private-use characters no template placeholder
#: matches, turned back into braces once the template is filled (:func:`unliteral`)
OPEN, CLOSE = "\ue07b", "\ue07d"
_TO_LITERAL = {ord("{"): OPEN, ord("}"): CLOSE, ord(OPEN): "\\ue07b", ord(CLOSE): "\\ue07d"}
_FROM_LITERAL = {ord(OPEN): "{", ord(CLOSE): "}"}


def literal(text: str) -> str:
    r"""``text`` from outside (a file name, a tensor name, a config string, an option's value), to
    interpolate into a message template: no ``{rows}`` or ``{key=1}`` in it reads as a parameter
    placeholder. The filled template (:func:`pecli.errors.name_parameters`) and :func:`printable`
    show the braces again, so the user reads the name exactly as it is.

    >>> from pecli.errors import Message, name_parameters
    >>> note = Message(f"{literal('{rows}.npy')} has no {{rows}}")
    >>> note, note.spelled(lambda name: "--" + name)
    ('{rows}.npy has no rows', '{rows}.npy has no --rows')
    >>> printable(literal("}{x}}"))
    '}{x}}'

    The two stand-in characters themselves, were a name to hold them, are written as their escapes:
    no name turns into braces it does not have.

    >>> printable(literal("\ue07b"))
    '\\ue07b'
    """
    return text.translate(_TO_LITERAL)


def literal_repr(value: object) -> str:
    """``repr(value)`` made :func:`literal`: a quoted name in a template, as ``{value!r}`` writes it.

    >>> from pecli.errors import name_parameters
    >>> name_parameters(f"no tensor {literal_repr('{len}b')}", lambda name: "--" + name)
    "no tensor '{len}b'"
    """
    return literal(repr(value))


def unliteral(text: str) -> str:
    """The braces :func:`literal` stood in for, back: the last step of a filled template.

    >>> unliteral(literal("{key=1}")) == "{key=1}"
    True
    """
    return text.translate(_FROM_LITERAL)


def printable(text: str) -> str:
    r"""``text`` from outside made safe for a terminal.

    Control characters become Python escapes (``\x1b``, ``\n``), so an escape sequence in a file
    cannot clear the screen or retitle the window, and a message stays one line.

    >>> printable("t\x1b]0;pwned\x07\nnext")
    't\\x1b]0;pwned\\x07\\nnext'
    >>> printable("sinusoidal — base=10000")
    'sinusoidal — base=10000'

    A byte of a file name that is not UTF-8 (``\xff``, which Python holds as the lone surrogate
    ``\udcff``) is written as that byte's escape: raw, it is no valid text on a UTF-8 stream.

    >>> printable("\udcff.npy")
    '\\xff.npy'
    """
    return _CONTROL.sub(_escaped, unliteral(text))


def json_escaped(text: str) -> str:
    r"""JSON ``text`` (as :func:`json.dumps` writes it) with every control character :func:`printable`
    escapes written as ``\uXXXX``: the same document when parsed, and safe on a terminal.

    ``json.dumps`` escapes C0 controls inside strings but, with ``ensure_ascii=False``, leaves C1
    controls (U+009B is CSI), DEL, Unicode's line separators and bidirectional overrides raw; they
    can only stand inside a string, where the escape means the same character.

    >>> import json
    >>> text = json_escaped(json.dumps({"name": "a\u009b2Jb\u202e", "é": 1}, ensure_ascii=False))
    >>> text
    '{"name": "a\\u009b2Jb\\u202e", "é": 1}'
    >>> json.loads(text) == {"name": "a\u009b2Jb\u202e", "é": 1}
    True
    """
    return _CONTROL.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if char < " ":  # json.dumps escapes C0 in strings: one left raw is the document's own newline
        return char
    return f"\\u{ord(char):04x}"


def shown(text: str) -> str:
    """A name from a model's files, for a message: as it is when printable, else escaped whole (``unicode_escape``).

    >>> shown("wpe.weight"), shown("evil\\x1b[2J")
    ('wpe.weight', 'evil\\\\x1b[2J')
    """
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if "\udc80" <= char <= "\udcff":  # os.fsdecode's stand-in for an undecodable byte
        return f"\\x{ord(char) - 0xDC00:02x}"
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def ascii_int(value: Any) -> int:
    """``int(value)``, for text of ASCII digits only (Python's ``int`` also takes ``'١٢'`` and ``'１２'``).

    >>> ascii_int("12"), ascii_int(" -3 "), ascii_int(7)
    (12, -3, 7)
    >>> ascii_int("١٢")
    Traceback (most recent call last):
    ValueError: '١٢' is not written in ASCII digits
    """
    return int(_ascii(value))


def ascii_float(value: Any) -> float:
    """``float(value)``, for ASCII text only (``'1e-3'``, ``'inf'``; not ``'١.٥'`` or fullwidth ``'８'``).

    >>> ascii_float("1e-3"), ascii_float(2)
    (0.001, 2.0)
    """
    return float(_ascii(value))


def _ascii(value: Any) -> Any:
    if isinstance(value, str) and not value.isascii():
        raise ValueError(f"{value!r} is not written in ASCII digits")
    return value
