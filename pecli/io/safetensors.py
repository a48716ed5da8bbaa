"""The .safetensors format: a JSON header (shapes, dtypes, byte ranges, string metadata), then the
raw little-endian data of each tensor, in the order of the header's sorted keys.

The header is written first, from the shapes alone, so the data streams after it chunk by chunk.
A header is checked as the reference implementation checks it (size, dtypes, byte ranges that tile
the data exactly) before any tensor is allocated.

>>> import io, numpy as np
>>> table = Tensor.from_array(np.eye(2, dtype=np.float32))
>>> data = b"".join(safetensors_pieces({"pe": table}, {"scheme": "eye"}))
>>> entries, metadata = safetensors_entries(io.BytesIO(data), "<stream>", len(data))
>>> entries["pe"].shape, entries["pe"].load().tolist(), metadata
((2, 2), [[1.0, 0.0], [0.0, 1.0]], {'scheme': 'eye'})
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator, Mapping
from functools import partial
from typing import IO, Any

import numpy as np

from pecli.errors import ParameterError, TableFileError
from pecli.io.tensor import StoredTensor, Tensor, check_tensor_count, raw_chunks, read_array
from pecli.text import literal_repr

__all__ = ["MAX_HEADER_BYTES", "dtype_code", "safetensors_entries", "safetensors_header", "safetensors_pieces"]

#: a safetensors header larger than this is refused before it is read (the format's own limit)
MAX_HEADER_BYTES = 100_000_000

_DTYPE_CODES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
}
_NUMPY_NAMES = {code: name for name, code in _DTYPE_CODES.items()}
#: dtypes the format defines (safetensors' ``Dtype``) that numpy has no type for
_UNSUPPORTED_CODES = frozenset({"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "C64"})
_NUMPY_NAMES.update({"U16": "uint16", "U32": "uint32", "U64": "uint64"})
#: how each dtype is stored (little-endian; bfloat16 as its 16 bits) and its bytes per value
_STORAGE = {
    name: np.dtype(np.uint16) if name == "bfloat16" else np.dtype(name).newbyteorder("<")
    for name in _NUMPY_NAMES.values()
}
_ITEMSIZES = {name: storage.itemsize for name, storage in _STORAGE.items()}
#: the type of a JSON count (a JSON true or false is a bool, no count)
_INT = frozenset({int})


def dtype_code(dtype: str) -> str:
    """The header's code for dtype name ``dtype``; a :class:`ParameterError` for one safetensors cannot hold.

    >>> dtype_code("bfloat16")
    'BF16'
    """
    code = _DTYPE_CODES.get(dtype)
    if code is None:
        raise ParameterError(f"safetensors cannot hold dtype {dtype}")
    return code


def safetensors_header(tensors: Mapping[str, Tensor], metadata: Mapping[str, str]) -> bytes:
    """The length-prefixed, 8-byte aligned JSON header of a safetensors file (keys sorted)."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for name in sorted(tensors):
        tensor = tensors[name]
        header[name] = {
            "dtype": dtype_code(tensor.dtype),
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + tensor.nbytes],
        }
        offset += tensor.nbytes
    encoded = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    encoded += b" " * (-len(encoded) % 8)
    if len(encoded) > MAX_HEADER_BYTES:  # a file no safetensors reader (pecli's included) would open
        raise ParameterError(
            f"the safetensors header would take {len(encoded)} bytes, over the format's {MAX_HEADER_BYTES}-byte limit",
            hint="store less metadata (fewer timesteps: {range}), or write .npy",
        )
    return struct.pack("<Q", len(encoded)) + encoded


def safetensors_pieces(tensors: Mapping[str, Tensor], metadata: Mapping[str, str]) -> Iterator[bytes | memoryview]:
    """The bytes of a .safetensors file: the header, then each tensor's rows as they are computed."""
    yield safetensors_header(tensors, metadata)
    for name in sorted(tensors):
        yield from raw_chunks(tensors[name])


def safetensors_entries(
    handle: IO[bytes], name: str, size: int | None
) -> tuple[dict[str, StoredTensor], dict[str, str]]:
    """The tensors a safetensors header describes, each checked against the file's ``size``, and its metadata.

    ``name`` labels the file in messages, which are templates: made :func:`~pecli.text.literal` by the caller.
    """
    prefix = handle.read(8)
    if len(prefix) < 8:
        raise TableFileError(f"{name} is too short to be a safetensors file", hint="regenerate the file")
    (header_length,) = struct.unpack("<Q", prefix)
    if header_length > MAX_HEADER_BYTES:
        raise TableFileError(
            f"{name} declares a {header_length}-byte safetensors header, over the {MAX_HEADER_BYTES}-byte limit",
            hint="the file is corrupt or not a safetensors file",
        )
    if size is not None and 8 + header_length > size:
        raise TableFileError(
            f"{name} is truncated: its safetensors header declares {header_length} bytes but the file has {size}",
            hint="regenerate or re-download the file",
        )
    raw = handle.read(header_length)
    check_tensor_count(name, raw.count(b'"data_offsets"'))  # every entry has one: counted before parsing
    try:
        header = json.loads(raw, object_pairs_hook=_unique_keys)
    except _DuplicateKey as error:
        raise TableFileError(
            f"{name}: the safetensors header names {literal_repr(error.key)} twice", hint="the file is corrupt"
        ) from None
    except (ValueError, RecursionError) as error:  # bad JSON or UTF-8, an absurd number, absurd nesting
        why = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
        raise TableFileError(f"{name} has a corrupt safetensors header ({why})", hint="regenerate the file") from None
    if not isinstance(header, dict):
        raise TableFileError(f"{name}: the safetensors header is not a JSON object", hint="the file is corrupt")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(value, str) for value in metadata.values()):
        # the safetensors library refuses both: __metadata__ is a map of strings to strings
        raise TableFileError(
            f"{name}: the safetensors __metadata__ is not an object of strings", hint="the file is corrupt"
        )
    data_start = 8 + header_length
    data_size = None if size is None else size - data_start
    entries = {key: _entry(handle, name, key, info, data_start, data_size) for key, info in header.items()}
    _check_layout(name, header, data_size)
    return entries, {str(k): str(v) for k, v in metadata.items()}


class _DuplicateKey(ValueError):
    """A JSON object that names a key twice (json keeps the last silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; :class:`_DuplicateKey` when a key comes twice.

    >>> _unique_keys([("a", 1), ("b", 2)])
    {'a': 1, 'b': 2}
    """
    header = dict(pairs)
    if len(header) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return header


def _check_layout(name: str, header: Mapping[str, Any], data_size: int | None) -> None:
    """The tensors' byte ranges must tile the data exactly: in order, no overlap, no hole, no tail.

    This is the rule the reference implementation enforces (safetensors' ``Metadata::validate``).
    """
    position = 0
    for key, info in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
        begin, end = info["data_offsets"]
        if begin != position:
            what = "overlaps the previous tensor" if begin < position else f"leaves a gap of {begin - position} bytes"
            raise TableFileError(
                f"{name}: tensor {literal_repr(key)} starts at byte {begin} of the data and {what}",
                hint="the file is corrupt or was not written by safetensors",
            )
        position = end
    if data_size is not None and position != data_size:
        raise TableFileError(
            f"{name}: the tensors cover {position} bytes of data, but the file holds {data_size}",
            hint="the file is corrupt, truncated, or has bytes appended",
        )


def _entry(handle: IO[bytes], name: str, key: str, info: Any, data_start: int, data_size: int | None) -> StoredTensor:
    # one entry per tensor, thousands in a checkpoint: plain type tests (JSON gives only int, float,
    # bool, str, None, list and dict, and a bool is no count) and no per-entry closures
    if type(info) is not dict:
        raise _corrupt(name, key, "has no valid description")
    code, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    dtype_name = _NUMPY_NAMES.get(code) if type(code) is str else None
    if dtype_name is None:
        if type(code) is str and code in _UNSUPPORTED_CODES:
            raise TableFileError(
                f"{name}: tensor {literal_repr(key)} has dtype {code},"
                " a valid safetensors dtype that pecli does not support",
                hint="convert it to float16, bfloat16 or float32 first",
            )
        raise _corrupt(name, key, f"has dtype {literal_repr(code)}, which pecli cannot read")
    if type(shape) is not list or not _INT.issuperset(map(type, shape)) or min(shape, default=0) < 0:
        raise _corrupt(name, key, f"has an invalid shape {literal_repr(shape)}")
    if max(shape, default=0) >= 1 << 64:  # the library reads dimensions as 64-bit sizes
        raise _corrupt(name, key, f"has a dimension over 2^64 in shape {literal_repr(shape)}")
    if type(offsets) is not list or len(offsets) != 2 or not _INT.issuperset(map(type, offsets)) or min(offsets) < 0:
        raise _corrupt(name, key, f"has invalid data_offsets {literal_repr(offsets)}")
    begin, end = offsets
    count = math.prod(shape)
    if end < begin or end - begin != count * _ITEMSIZES[dtype_name]:
        raise _corrupt(
            name, key, f"declares shape {shape} of {code} but data_offsets {offsets} span {end - begin} bytes"
        )
    if data_size is not None and end > data_size:
        raise _corrupt(name, key, f"ends at byte {end} of the data, but the file holds only {data_size}")
    offset = data_start + begin
    return StoredTensor(
        tuple(shape),
        dtype_name,
        partial(_load, handle, name, offset, dtype_name, count, shape),
        partial(_read_values, handle, name, offset, dtype_name),
    )


def _corrupt(name: str, key: str, what: str) -> TableFileError:
    return TableFileError(f"{name}: tensor {literal_repr(key)} {what}", hint="the file is corrupt or was cut short")


def _load(handle: IO[bytes], name: str, offset: int, dtype_name: str, count: int, shape: list[int]) -> np.ndarray:
    """A tensor's values, read from ``offset`` of the open file."""
    return _read_values(handle, name, offset, dtype_name, 0, count).reshape(shape)


def _read_values(handle: IO[bytes], name: str, offset: int, dtype_name: str, start: int, count: int) -> np.ndarray:
    """Values ``start … start + count`` of the tensor at byte ``offset`` (bfloat16 widened to float32)."""
    storage = _STORAGE[dtype_name]
    array = read_array(handle, offset + start * storage.itemsize, storage, count, name)
    if dtype_name == "bfloat16":
        array = (array.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return array
