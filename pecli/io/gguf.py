"""GGUF files (llama.cpp's format) as tables: their float tensors, read by pecli's own bounded parser.

A GGUF file is a header (magic ``GGUF``, version, tensor and key counts), typed key-value metadata,
one description per tensor (name, dimensions, ggml type, offset), then the aligned data. Dimensions
are stored in ggml's order, the fastest-varying first: a (length, d) table is listed as ``[d, length]``
and read back as numpy's ``(length, d)``. Only F32, F16, BF16 and F64 tensors are tables; quantized
ones are refused by name. Every count and length is checked against the bytes the file holds
before anything is read, so a lying header never allocates more than the file.

This reader needs no ``gguf`` package, nor does ``--from-config model.gguf`` (:func:`gguf_settings`).

>>> import io, struct
>>> def text(s): return struct.pack("<Q", len(s)) + s.encode()
>>> header = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
>>> info = text("position_embd.weight") + struct.pack("<I2QIQ", 2, 3, 2, 0, 0)  # ggml dims [3, 2]: 2 rows of 3
>>> body = header + info
>>> data = body + bytes(-len(body) % 32) + np.arange(6, dtype="<f4").tobytes()
>>> entries, metadata = gguf_entries(io.BytesIO(data), "<stream>", len(data))
>>> entries["position_embd.weight"].shape, entries["position_embd.weight"].load().tolist()
((2, 3), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import IO, Any

import numpy as np

from pecli.errors import TableFileError
from pecli.io.tensor import StoredTensor, check_tensor_count, read_array
from pecli.text import literal_repr

__all__ = ["GGUF_MAGIC", "gguf_entries", "gguf_settings"]

GGUF_MAGIC = b"GGUF"

#: gguf's GGUFValueType -> the bytes of one value (8: string, 9: array are sized as they are read)
_VALUE_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
#: struct formats of gguf's scalar GGUFValueTypes
_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
#: the most items of an array setting decoded (a per-layer list); longer ones (a vocabulary) are skipped
_MOST_DECODED = 65536
#: ggml types pecli reads (gguf's GGMLQuantizationType): F32, F16, BF16, F64
_TABLE_TYPES = {0: "float32", 1: "float16", 30: "bfloat16", 28: "float64"}
_STORAGE: dict[str, np.dtype] = {
    "float32": np.dtype("<f4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
    "float64": np.dtype("<f8"),
}
#: names of the other ggml types, for the refusal (integer types included: ggml's I8…I64)
_OTHER_TYPES = {
    2: "Q4_0",
    3: "Q4_1",
    6: "Q5_0",
    7: "Q5_1",
    8: "Q8_0",
    9: "Q8_1",
    10: "Q2_K",
    11: "Q3_K",
    12: "Q4_K",
    13: "Q5_K",
    14: "Q6_K",
    15: "Q8_K",
    16: "IQ2_XXS",
    17: "IQ2_XS",
    18: "IQ3_XXS",
    19: "IQ1_S",
    20: "IQ4_NL",
    21: "IQ3_S",
    22: "IQ2_S",
    23: "IQ4_XS",
    24: "I8",
    25: "I16",
    26: "I32",
    27: "I64",
    29: "IQ1_M",
    34: "TQ1_0",
    35: "TQ2_0",
    39: "MXFP4",
}
#: the most dimensions ggml gives a tensor (GGML_MAX_DIMS)
_MAX_DIMS = 4
_DEFAULT_ALIGNMENT = 32


class _Cursor:
    """Reads a GGUF header from ``handle``, never past ``size``: a lying length is an error, not an allocation."""

    def __init__(self, handle: IO[bytes], name: str, size: int) -> None:
        self.handle, self.name, self.size, self.position = handle, name, size, 0

    def read(self, count: int, what: str) -> bytes:
        if count < 0 or self.position + count > self.size:
            raise TableFileError(
                f"{self.name} is truncated or corrupt: its {what} runs past the end of the file "
                f"(byte {self.position} + {count} of {self.size})",
                hint="the file is corrupt or was cut short",
            )
        data = self.handle.read(count)
        if len(data) != count:
            raise TableFileError(f"{self.name} ended while it was read", hint="read it again")
        self.position += count
        return data

    def skip(self, count: int, what: str) -> None:
        if count < 0 or self.position + count > self.size:
            self.read(count, what)  # raises
        self.position += count
        self.handle.seek(self.position)

    def unpack(self, fmt: str, what: str) -> tuple[int, ...]:
        return struct.unpack("<" + fmt, self.read(struct.calcsize("<" + fmt), what))

    def count(self, what: str, least_bytes: int) -> int:
        """A uint64 count of items of at least ``least_bytes`` each, checked against the bytes left."""
        (value,) = self.unpack("Q", what)
        if value * least_bytes > self.size - self.position:
            raise TableFileError(
                f"{self.name} declares {value} {what}, more than its {self.size} bytes can hold",
                hint="the file is corrupt or was cut short",
            )
        return value

    def string(self, what: str) -> str:
        (length,) = self.unpack("Q", f"{what}'s length")
        raw = self.read(length, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise TableFileError(f"{self.name}: a {what} is not UTF-8", hint="the file is corrupt") from None

    def decode(self, kind: int, what: str) -> Any:
        """One value of GGUF type ``kind`` as Python: a number, bool, str, or a list of them (an array of
        more than ``_MOST_DECODED`` items is its count as text: no setting pecli reads is that long)."""
        if kind == _STRING:
            return self.string(what)
        if kind == _ARRAY:
            (item_kind,) = self.unpack("I", what)
            if item_kind == _ARRAY:  # as value() says it: llama.cpp reads no array of arrays either
                raise TableFileError(f"{self.name}: {what} is an array of arrays", hint="the file is corrupt")
            if item_kind not in _FORMATS and item_kind != _STRING:
                raise TableFileError(f"{self.name}: {what} has unknown type {item_kind}", hint="the file is corrupt")
            least = 8 if item_kind == _STRING else _VALUE_SIZES[item_kind]
            items = self.count(f"items in {what}", least)
            if items > _MOST_DECODED:
                for _ in range(items) if item_kind == _STRING else ():
                    self.value(_STRING, what)
                if item_kind != _STRING:
                    self.skip(items * least, what)
                return f"[{items} values]"
            if item_kind == _STRING:
                return [self.string(what) for _ in range(items)]
            return list(struct.unpack(f"<{items}{_FORMATS[item_kind]}", self.read(items * least, what)))
        if kind not in _FORMATS:
            raise TableFileError(f"{self.name}: {what} has unknown type {kind}", hint="the file is corrupt")
        return self.unpack(_FORMATS[kind], what)[0]

    def value(self, kind: int, what: str) -> int | None:
        """Skip one value of GGUF type ``kind``; an unsigned integer's value is returned (general.alignment)."""
        if kind == _STRING:
            (length,) = self.unpack("Q", what)
            self.skip(length, what)
            return None
        if kind == _ARRAY:
            (item_kind,) = self.unpack("I", what)
            if item_kind == _ARRAY:
                raise TableFileError(f"{self.name}: {what} is an array of arrays", hint="the file is corrupt")
            if item_kind in _VALUE_SIZES:
                items = self.count(f"items in {what}", _VALUE_SIZES[item_kind])
                self.skip(items * _VALUE_SIZES[item_kind], what)
            elif item_kind == _STRING:
                for _ in range(self.count(f"strings in {what}", 8)):
                    self.value(_STRING, what)
            else:
                raise TableFileError(f"{self.name}: {what} has unknown type {item_kind}", hint="the file is corrupt")
            return None
        if kind not in _VALUE_SIZES:
            raise TableFileError(f"{self.name}: {what} has unknown type {kind}", hint="the file is corrupt")
        raw = self.read(_VALUE_SIZES[kind], what)
        return int.from_bytes(raw, "little") if kind in (0, 2, 4, 10) else None


def gguf_entries(handle: IO[bytes], name: str, size: int) -> tuple[dict[str, StoredTensor], dict[str, str]]:
    """The tensors a GGUF file describes (shapes in numpy's order), each checked against the file's ``size``.

    ``name`` labels the file in messages, which are templates: made :func:`~pecli.text.literal` by the caller.
    """
    entries, _ = gguf_settings(handle, name, size, lambda key: False)
    return entries, {}


def gguf_settings(
    handle: IO[bytes], name: str, size: int, wanted: Callable[[str], bool]
) -> tuple[dict[str, StoredTensor], dict[str, Any]]:
    """The tensors, and the values of the metadata keys ``wanted`` picks (the others are skipped, not decoded:
    a vocabulary of 200,000 strings costs a seek).

    >>> import io, struct
    >>> def text(s): return struct.pack("<Q", len(s)) + s.encode()
    >>> data = b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + text("llama.context_length") + struct.pack("<II", 4, 4096)
    >>> data += text("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1) + text("a")
    >>> gguf_settings(io.BytesIO(data), "<stream>", len(data), lambda key: key.startswith("llama."))
    ({}, {'llama.context_length': 4096})
    """
    header = _header(handle, name, size)
    cursor = _Cursor(handle, name, size)
    settings: dict[str, Any] = {}
    for key, kind, position in header.keys:
        if wanted(key):
            cursor.position = position
            handle.seek(position)
            settings[key] = cursor.decode(kind, f"metadata {literal_repr(key)}")
    if header.entries is not None:  # a file in memory, seen before: its tensors read from the bytes kept
        return dict(header.entries), settings
    entries = {
        key: _entry(handle, name, size, key, shape, kind, header.data_start + offset)
        for key, shape, kind, offset in header.tensors
    }
    return entries, settings


@dataclass(frozen=True)
class _Header:
    """A GGUF file's header, checked: its metadata keys (with each value's type and byte position, not
    decoded) and its tensors' descriptions (name, shape in numpy's order, ggml type, offset in the data)."""

    keys: tuple[tuple[str, int, int], ...]
    tensors: tuple[tuple[str, tuple[int, ...], int, int], ...]
    data_start: int
    #: a file read whole into memory: its tensors, loaded from a copy of the handle the cache keeps
    entries: dict[str, StoredTensor] | None = None


#: headers already parsed, by file identity (device, inode, size, mtime, ctime): a run reads one file's
#: header several times (its tensors, its settings, the chosen table), and a header of 100,000 tensors
#: takes a second to parse
_HEADERS: dict[tuple[Any, ...], _Header] = {}
_HEADERS_KEPT = 2  # compare's two files; a file in memory is kept with its header (at most 16 MiB)


def _identity(handle: IO[bytes], name: str, size: int) -> tuple[Any, ...] | None:
    """What tells a file apart from any other or from itself rewritten: a file read whole into memory (every one
    up to 16 MiB) by a digest of its bytes, one read in place by its device, inode, size and times."""
    if isinstance(handle, io.BytesIO):
        return "bytes", name, size, hashlib.blake2b(handle.getbuffer(), digest_size=16).digest()
    try:
        status = os.fstat(handle.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    if status.st_size != size:
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


def _header(handle: IO[bytes], name: str, size: int) -> _Header:
    """The file's header, parsed once per file (and again only if the file changed)."""
    identity = _identity(handle, name, size)
    if identity is not None and identity in _HEADERS:
        return _HEADERS[identity]
    header = _parse_header(handle, name, size)
    if identity is not None:
        while len(_HEADERS) >= _HEADERS_KEPT:
            del _HEADERS[next(iter(_HEADERS))]
        _HEADERS[identity] = header
    return header


def _parse_header(handle: IO[bytes], name: str, size: int) -> _Header:
    cursor = _Cursor(handle, name, size)
    handle.seek(0)
    if cursor.read(4, "magic") != GGUF_MAGIC:
        raise TableFileError(f"{name} is not a GGUF file", hint="its first bytes are not GGUF")
    (version,) = cursor.unpack("I", "version")
    if version not in (2, 3):
        raise TableFileError(
            f"{name} is GGUF version {version}; pecli reads versions 2 and 3",
            hint="convert it with a current llama.cpp",
        )
    tensor_count = cursor.count("tensors", 8 + 4 + 4 + 8)  # name length, n_dims, type, offset
    check_tensor_count(name, tensor_count)
    alignment = _DEFAULT_ALIGNMENT
    keys: list[tuple[str, int, int]] = []
    seen: set[str] = set()
    for _ in range(cursor.count("metadata keys", 8 + 4)):
        key = cursor.string("metadata key")
        if key in seen:  # which value holds? llama.cpp and the gguf package refuse the file: so does pecli
            raise TableFileError(f"{name} lists metadata key {literal_repr(key)} twice", hint="the file is corrupt")
        seen.add(key)
        (kind,) = cursor.unpack("I", f"type of {literal_repr(key)}")
        keys.append((key, kind, cursor.position))
        value = cursor.value(kind, f"metadata {literal_repr(key)}")
        if key == "general.alignment":
            if kind != _UINT32 or value is None or value <= 0 or value & (value - 1):
                raise TableFileError(f"{name}: general.alignment must be a power of two", hint="the file is corrupt")
            alignment = value
    described = [_describe(cursor) for _ in range(tensor_count)]
    data_start = cursor.position + (-cursor.position % alignment)
    # a file in memory: its tensors read from the same bytes in a handle of the cache's own, which no caller closes
    loader = io.BytesIO(handle.getvalue()) if isinstance(handle, io.BytesIO) else handle
    entries: dict[str, StoredTensor] = {}
    for key, shape, kind, offset in described:
        if key in entries:
            raise TableFileError(f"{name} lists tensor {literal_repr(key)} twice", hint="the file is corrupt")
        entries[key] = _entry(loader, name, size, key, shape, kind, data_start + offset)  # checked against the size
    return _Header(tuple(keys), tuple(described), data_start, entries if loader is not handle else None)


def _describe(cursor: _Cursor) -> tuple[str, tuple[int, ...], int, int]:
    key = cursor.string("tensor name")
    (n_dims,) = cursor.unpack("I", f"dimensions of {literal_repr(key)}")
    if n_dims > _MAX_DIMS:
        raise TableFileError(
            f"{cursor.name}: tensor {literal_repr(key)} has {n_dims} dimensions", hint="the file is corrupt"
        )
    dims = cursor.unpack(f"{n_dims}Q", f"dimensions of {literal_repr(key)}")
    kind, offset = cursor.unpack("IQ", f"type and offset of {literal_repr(key)}")
    return key, tuple(reversed(dims)), kind, offset  # ggml lists the fastest-varying dimension first


def _entry(
    handle: IO[bytes], name: str, size: int, key: str, shape: tuple[int, ...], kind: int, start: int
) -> StoredTensor:
    dtype = _TABLE_TYPES.get(kind)
    count = math.prod(shape)
    if dtype is None:
        # a quantized tensor's shape is listed; reading it is refused (read_table names the type)
        type_name = _OTHER_TYPES.get(kind, f"type {kind}")
        if start > size:  # its byte size depends on the type's blocks: only its start is checked
            raise TableFileError(
                f"{name}: tensor {literal_repr(key)} starts at byte {start}, but the file holds {size}",
                hint="the file is corrupt or was cut short",
            )
        integer = type_name.startswith("I") and type_name[1:].isdigit()
        shown = f"ggml {type_name}" if integer else f"quantized {type_name}"
        return StoredTensor(shape, shown, partial(_refuse, name, key, type_name))
    nbytes = count * _STORAGE[dtype].itemsize
    if start + nbytes > size:
        from pecli.dtypes import format_bytes

        # in human units: a corrupt shape's product has a hundred digits
        raise TableFileError(
            f"{name}: tensor {literal_repr(key)} ({_dims(shape)} of {dtype}, {format_bytes(nbytes)}) ends at byte "
            f"{_position(start + nbytes)}, but the file holds {format_bytes(size)}",
            hint="the file is corrupt or was cut short",
        )
    return StoredTensor(shape, dtype, partial(_load, handle, name, start, dtype, count, shape))


def _position(offset: int) -> str:
    """A byte offset for a message: digits while a file could be that large, a power of ten past it.

    >>> _position(288), _position(2**300)
    ('288', '2e+90')
    """
    return f"{offset:,}" if offset < 10**15 else f"{offset:.2g}"


def _dims(shape: tuple[int, ...]) -> str:
    """A tensor's shape for a message; a dimension past 10^12 (no real tensor's) as a power of ten.

    >>> _dims((8, 4)), _dims((2**63, 4))
    ('8 × 4', '9.2e+18 × 4')
    """
    return " × ".join(f"{dim:.2g}" if dim >= 10**12 else str(dim) for dim in shape) or "a scalar"


def _refuse(name: str, key: str, type_name: str) -> np.ndarray:
    raise TableFileError(
        f"{name}: tensor {literal_repr(key)} has ggml type {type_name}; pecli reads F32, F16, BF16 and F64 tensors",
        hint="convert the model to f32 or f16 (llama.cpp's convert_hf_to_gguf.py, outtype f32)",
    )


def _load(handle: IO[bytes], name: str, offset: int, dtype: str, count: int, shape: tuple[int, ...]) -> np.ndarray:
    array = read_array(handle, offset, _STORAGE[dtype], count, name)
    if dtype == "bfloat16":
        array = (array.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return array.reshape(shape)
