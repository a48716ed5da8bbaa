"""The string metadata pecli records with a table (a safetensors ``__metadata__``): its keys, and
how a parameter value becomes a string and back.

Strings are stored as they are; every other value (numbers, booleans, None, lists) as JSON, so a
reader gets back the value the writer had.

>>> encode_value(10000.0), encode_value("split"), encode_value(None), encode_value([2, 3])
('10000.0', 'split', 'null', '[2, 3]')
>>> decode_value("10000.0"), decode_value("split"), decode_value("null"), decode_value("[2, 3]")
(10000.0, 'split', None, [2, 3])
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["TABLE_KEYS", "decode_value", "encode_value"]

#: metadata keys that describe the table itself rather than a scheme parameter
TABLE_KEYS: tuple[str, ...] = ("scheme", "preset", "dtype", "shape", "tensor", "pecli_version")


def encode_value(value: Any) -> str:
    """A parameter value as a metadata string: a string as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def decode_value(text: str) -> Any:
    """The parameter value a metadata string records (:func:`encode_value`'s inverse)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
