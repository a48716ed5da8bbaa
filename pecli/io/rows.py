"""Reading a 2-D table from a .npy or .safetensors file row chunk by row chunk, with bounded memory.

:func:`open_rows` checks the file as :func:`~pecli.io.read_tensors` does (header against size),
then reads only where the chosen tensor's bytes lie: each chunk of rows is one ``seek`` and one
read, so scanning a table larger than memory holds one chunk at a time.

>>> import io, os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "pe.npy")
>>> np.save(path, np.arange(12.0).reshape(4, 3))
>>> rows = open_rows(path)
>>> rows.shape, rows.dtype, [chunk.tolist() for chunk in rows.chunks(2)]
((4, 3), 'float64', [[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]])
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from pecli.errors import TableFileError
from pecli.text import literal

__all__ = ["RowReader", "open_rows"]


@dataclass(frozen=True)
class RowReader:
    """A 2-D tensor at byte ``offset`` of file ``path``: its shape, dtype name and file metadata."""

    path: str
    offset: int
    shape: tuple[int, int]
    dtype: str  # numpy dtype name, or "bfloat16" (chunks widen it to float32)
    metadata: dict[str, str] = field(default_factory=dict)
    #: a (heads, L, L') tensor read as its heads' rows stacked: ``shape`` is (heads · L, L'); None for 2-D
    heads: int | None = None

    @property
    def tensor_shape(self) -> tuple[int, ...]:
        """The tensor's own shape: ``shape``, or (heads, L, L') for a per-head tensor."""
        if self.heads is None:
            return self.shape
        return self.heads, self.shape[0] // self.heads, self.shape[1]

    def chunks(self, step: int, *, reuse: bool = False) -> Iterator[np.ndarray]:
        """The table's rows, ``step`` at a time (bfloat16 widened to float32).

        ``reuse``: each chunk is read into the same buffer, overwritten by the next one (the caller copies
        what it keeps): fresh memory per chunk costs a page fault per 4 KiB.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "pe.npy")
        >>> np.save(path, np.arange(10.0).reshape(5, 2))
        >>> [float(chunk.sum()) for chunk in open_rows(path).chunks(2, reuse=True)]
        [6.0, 22.0, 17.0]
        """
        storage = np.dtype(np.uint16) if self.dtype == "bfloat16" else np.dtype(self.dtype).newbyteorder("<")
        rows, cols = self.shape
        buffer = np.empty(min(step, rows) * cols, storage) if reuse else None
        with open(self.path, "rb") as handle:
            for start in range(0, rows, step):
                count = min(step, rows - start)
                handle.seek(self.offset + start * cols * storage.itemsize)
                if buffer is None:
                    chunk = np.fromfile(handle, dtype=storage, count=count * cols).reshape(count, cols)
                else:
                    chunk = buffer[: count * cols].reshape(count, cols)
                    if handle.readinto(chunk.data.cast("B")) != chunk.nbytes:
                        raise TableFileError(  # shortened since its header was checked
                            f"{literal(self.path)} ends before its rows {start}–{start + count}",
                            hint="check that nothing is writing the file while it is read",
                        )
                if self.dtype == "bfloat16":
                    chunk = (chunk.astype(np.uint32) << np.uint32(16)).view(np.float32)
                yield chunk


def open_rows(path: str, key: str | None = None, *, heads: bool = False) -> RowReader | None:
    """A :class:`RowReader` for the 2-D tensor ``key`` of a regular .npy or .safetensors file.

    None when the table cannot be read in place: another format (.pt), a pipe, a tensor that is
    not 2-D, or a choice of tensor that :func:`~pecli.io.read_table` must make (and explain).
    ``heads``: a 3-D (heads, L, L') tensor of more than one head and row is read too, as its heads'
    rows stacked (C order keeps them so): :attr:`RowReader.heads` says how many.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bias.npy")
    >>> np.save(path, np.arange(12.0).reshape(2, 3, 2))
    >>> rows = open_rows(path, heads=True)
    >>> rows.shape, rows.tensor_shape, next(rows.chunks(4)).tolist()[3], open_rows(path) is None
    ((6, 2), (2, 3, 2), [6.0, 7.0], True)
    """
    from pecli.io import read_tensors

    if path == "-" or not os.path.isfile(path):
        return None
    tensors, metadata = read_tensors(path)  # every header check, before the offsets are trusted
    if key is None:
        own = metadata.get("tensor")
        key = next(iter(tensors)) if len(tensors) == 1 else own if own in tensors else None
    if key not in tensors:
        return None
    shape, dtype = tensors[key]
    per_head = heads and len(shape) == 3 and shape[0] > 1 and shape[1] > 1
    if len(shape) != 2 and not per_head:
        return None
    with open(path, "rb") as handle:
        head = handle.read(9)
        handle.seek(0)
        if head.startswith(b"\x93NUMPY"):
            version = np.lib.format.read_magic(handle)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            _, fortran, stored = reader(handle)
            if fortran or stored.byteorder == ">":
                return None
            offset = handle.tell()
        elif head[8:9] == b"{":  # a safetensors JSON header after its 8-byte length
            (header_length,) = struct.unpack("<Q", handle.read(8))
            offset = 8 + header_length + json.loads(handle.read(header_length))[key]["data_offsets"][0]
        else:  # .pt: its bytes sit inside a zip archive
            return None
    if math.prod(shape) == 0:
        return None
    if per_head:
        stacked = (int(shape[0]) * int(shape[1]), int(shape[2]))
        return RowReader(path, offset, stacked, dtype, dict(metadata), heads=int(shape[0]))
    return RowReader(path, offset, (int(shape[0]), int(shape[1])), dtype, dict(metadata))
