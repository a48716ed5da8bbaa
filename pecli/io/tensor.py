"""What the format modules share: a tensor to write, a tensor found in a file, a tensor read.

>>> import numpy as np
>>> tensor = Tensor.from_array(np.eye(2, dtype=np.float32))
>>> tensor.shape, tensor.dtype, tensor.nbytes, is_real_dtype(tensor.dtype), is_real_dtype("complex64")
((2, 2), 'float32', 16, True, False)
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

import numpy as np

from pecli.errors import TableFileError

__all__ = [
    "MAX_TENSORS",
    "LoadedTable",
    "StoredTensor",
    "TableFile",
    "Tensor",
    "check_tensor_count",
    "is_real_dtype",
    "raw_chunks",
    "read_array",
    "storage_dtype",
]

_NUMERIC_KINDS = frozenset("fiub")

#: the most tensors pecli reads from one file: a large checkpoint shard holds a few thousand, and every
#: entry costs memory however small its file (a 2 MB .pt can list one tensor a million times)
MAX_TENSORS = 100_000


def check_tensor_count(name: str, count: int) -> None:
    """Refuse a file listing more than :data:`MAX_TENSORS` tensors, before its entries are built.

    >>> check_tensor_count("ok.safetensors", 3)
    >>> check_tensor_count("x.pt", 1_000_000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.TableFileError: x.pt lists more than 100000 tensors, the most pecli reads from one file (...)
    """
    if count > MAX_TENSORS:
        raise TableFileError(
            f"{name} lists more than {MAX_TENSORS} tensors, the most pecli reads from one file",
            hint="split it into files of fewer tensors",
        )


def storage_dtype(name: str) -> np.dtype:
    """numpy dtype of a tensor's chunks as written: any numpy name, or bfloat16 as its uint16 bit patterns
    (numpy has no bfloat16: ``ml_dtypes`` is not imported to write it; an ``ml_dtypes`` bfloat16 chunk is
    taken as its bits too, see :func:`raw_chunks`).

    >>> storage_dtype("float16").itemsize, storage_dtype("bfloat16").name
    (2, 'uint16')
    """
    return np.dtype(np.uint16) if name == "bfloat16" else np.dtype(name)


def is_real_dtype(name: str) -> bool:
    """Whether a tensor of dtype ``name`` holds real numbers pecli can plot and compare.

    >>> is_real_dtype("bfloat16"), is_real_dtype("int8"), is_real_dtype("<U1"), is_real_dtype("bogus")
    (True, True, False, False)
    """
    if name == "bfloat16":
        return True
    try:
        dtype = np.dtype(name)
    except TypeError:
        return False
    # numpy's own types only: once ml_dtypes is imported (for bfloat16, or by the caller), numpy also
    # knows its float8 and int4 names, and the answer must not depend on what was imported before
    return dtype.kind in _NUMERIC_KINDS and dtype.type.__module__ == "numpy"


@dataclass(frozen=True)
class Tensor:
    """A tensor to write: its shape, dtype name, and a function yielding C-ordered row chunks (of
    :func:`storage_dtype`: a bfloat16 tensor's chunks are its uint16 bits, or ``ml_dtypes`` bfloat16 arrays)."""

    shape: tuple[int, ...]
    dtype: str
    chunks: Callable[[], Iterable[np.ndarray]]

    @classmethod
    def from_array(cls, array: np.ndarray) -> Tensor:
        """Wrap an in-memory array.

        >>> Tensor.from_array(np.zeros((2, 3), dtype=np.float32)).shape
        (2, 3)
        """
        array = np.ascontiguousarray(array)
        return cls(tuple(array.shape), array.dtype.name, lambda: [array])

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * storage_dtype(self.dtype).itemsize


def raw_chunks(tensor: Tensor) -> Iterator[memoryview]:
    """The little-endian bytes of ``tensor``, one piece per chunk (copied only on a big-endian machine).

    >>> b"".join(raw_chunks(Tensor.from_array(np.array([1, 258], dtype=np.int16))))
    b'\\x01\\x00\\x02\\x01'
    """
    target = storage_dtype(tensor.dtype)
    for chunk in tensor.chunks():
        chunk = np.ascontiguousarray(chunk)
        if tensor.dtype == "bfloat16" and chunk.dtype.name == "bfloat16":  # ml_dtypes' (an array a caller gave)
            chunk = chunk.view(np.uint16)
        if chunk.dtype != target:
            raise AssertionError(f"chunk dtype {chunk.dtype} is not the declared {target}")
        if chunk.dtype.byteorder == ">":
            chunk = chunk.astype(chunk.dtype.newbyteorder("<"))
        yield chunk.reshape(-1).view(np.uint8).data


def read_array(handle: IO[bytes], offset: int, dtype: np.dtype, count: int, name: str) -> np.ndarray:
    """``count`` values of ``dtype`` at byte ``offset`` of an open file or in-memory stream, as a new array.

    Read straight into the array (no second copy), which also keeps thousands of small reads fast.

    >>> read_array(io.BytesIO(bytes(4) + np.float32([1.5, 2]).tobytes()), 4, np.dtype("<f4"), 2, "x").tolist()
    [1.5, 2.0]
    >>> read_array(io.BytesIO(np.float64([0.25]).astype(">f8").tobytes()), 0, np.dtype(">f8"), 1, "x").dtype.str
    '<f8'
    """
    if isinstance(handle, io.BytesIO):
        array = np.frombuffer(handle.getbuffer(), dtype=dtype, count=count, offset=offset).copy()
    else:
        array = np.empty(count, dtype)
        handle.seek(offset)
        if handle.readinto(array.view(np.uint8)) != array.nbytes:  # type: ignore[attr-defined]
            raise TableFileError(f"{name} ended while it was read (it changed or was cut short)", hint="read it again")
    # a big-endian .npy (">f8") is swapped once here: the analysis views float bits as native integers
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


@dataclass
class StoredTensor:
    """A tensor found in a file by its reader: shape and dtype from the header, data on demand."""

    shape: tuple[int, ...]
    dtype: str  # numpy dtype name, or "bfloat16"
    load: Callable[[], np.ndarray]
    #: ``read_values(start, count)``: values ``start … start + count`` in storage order, for readers
    #: whose data lies in one run of bytes (statistics of a tensor larger than memory, a block at a time)
    read_values: Callable[[int, int], np.ndarray] | None = None


@dataclass
class LoadedTable:
    """A tensor read from a file: the array, the key it was stored under, and the file's metadata."""

    array: np.ndarray
    key: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    source: str = ""
    dtype: str = ""  #: the stored dtype ("bfloat16" for a table numpy holds as float32)


@dataclass
class TableFile:
    """An opened table file: its tensors by name (headers read, data on demand), metadata, name, size."""

    entries: dict[str, StoredTensor]
    metadata: dict[str, str]
    name: str
    size: int
