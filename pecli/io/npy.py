"""The .npy format: numpy's own, one array, no metadata; written as a header and raw row chunks.

Written here rather than by ``np.save`` so that a table streams to disk chunk by chunk; read with
``allow_pickle`` never in play: a header declaring Python objects is refused, and the declared
shape is checked against the file's size before anything is allocated.

>>> import io, numpy as np
>>> table = Tensor.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))
>>> data = b"".join(npy_pieces(table))
>>> bool(np.array_equal(np.load(io.BytesIO(data)), np.arange(6).reshape(2, 3)))
True
>>> entries, metadata = npy_entries(io.BytesIO(data), "<stream>", len(data))
>>> entries[""].shape, entries[""].dtype, entries[""].load().tolist()
((2, 3), 'float32', [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from typing import IO

import numpy as np

from pecli.dtypes import format_bytes
from pecli.errors import TableFileError
from pecli.io.tensor import StoredTensor, Tensor, raw_chunks, read_array, storage_dtype
from pecli.text import literal_repr

__all__ = ["npy_entries", "npy_pieces"]

#: numpy arrays have at most this many dimensions
_MAX_DIMENSIONS = 64


def _header(tensor: Tensor) -> bytes:
    """The version 1.0 header of a .npy file holding ``tensor`` (C order, little-endian)."""
    buffer = io.BytesIO()
    dtype = storage_dtype(tensor.dtype)
    np.lib.format.write_array_header_1_0(
        buffer,
        {
            "descr": np.lib.format.dtype_to_descr(dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype),
            "fortran_order": False,
            "shape": tuple(tensor.shape),
        },
    )
    return buffer.getvalue()


def npy_pieces(tensor: Tensor) -> Iterator[bytes | memoryview]:
    """The bytes of a .npy file holding ``tensor``: its header, then its rows as they are computed."""
    yield _header(tensor)
    yield from raw_chunks(tensor)


def npy_entries(handle: IO[bytes], name: str, size: int | None) -> tuple[dict[str, StoredTensor], dict[str, str]]:
    """The one array of a .npy file (key ``""``), its header checked against the file's ``size``; no metadata."""

    def invalid(why: object) -> TableFileError:
        return TableFileError(f"{name} is not a valid .npy file: {why}", hint="regenerate the file")

    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version in ((2, 0), (3, 0)):
            # 3.0 is 2.0 with a UTF-8 header (np.save writes it for non-Latin-1 field names); read as
            # Latin-1 only such names differ, and a dtype with named fields is no table anyway
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise invalid(f"unsupported format version {version[0]}.{version[1]}")
    except TableFileError:
        raise
    except Exception as error:
        # ValueError, SyntaxError, tokenize.TokenError, TypeError, RecursionError…: every one means "corrupt"
        detail = str(error).splitlines()[0][:200] if isinstance(error, ValueError) and str(error) else ""
        raise invalid(detail or f"its header cannot be parsed ({type(error).__name__})") from None
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise invalid(f"its header declares an invalid shape {literal_repr(shape)}")
    if len(shape) > _MAX_DIMENSIONS:
        raise invalid(f"its header declares {len(shape)} dimensions, more than numpy's {_MAX_DIMENSIONS}")
    if dtype.hasobject:
        raise TableFileError(
            f"{name} holds Python objects (dtype {dtype}), which pecli never unpickles",
            hint="save a numeric array (np.save with a float dtype)",
        )
    data_offset = handle.tell()
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    if size is not None and size - data_offset < nbytes:
        raise TableFileError(
            f"{name} is truncated: its header declares shape {tuple(shape)} ({format_bytes(nbytes)}) but only "
            f"{format_bytes(size - data_offset)} follow",
            hint="regenerate or re-download the file",
        )
    if size is not None and size - data_offset > nbytes:
        # np.save writes the data and nothing after it: the header does not describe all the file holds
        # (a pipe is read only as far as its first array's header declares: see pecli.io.source)
        raise TableFileError(
            f"{name}: its header declares shape {tuple(shape)} ({format_bytes(nbytes)}) but "
            f"{format_bytes(size - data_offset)} of data follow",
            hint="the file is corrupt, has bytes appended, or holds several arrays: save one table per file",
        )

    def load() -> np.ndarray:
        return read_array(handle, data_offset, dtype, count, name).reshape(shape, order="F" if fortran else "C")

    # a name for numbers (float32), numpy's string for the rest ("<U2", "|V6"), which np.dtype reads back
    dtype_name = dtype.name if dtype.kind in "fiubc" else dtype.str

    def read_values(start: int, length: int) -> np.ndarray:
        return read_array(handle, data_offset + start * dtype.itemsize, dtype, length, name)

    return {"": StoredTensor(tuple(shape), dtype_name, load, read_values)}, {}
