"""A copy of a safetensors checkpoint with one tensor replaced, streamed: every other tensor's bytes
copied as they are, in large ranges, so a multi-GB file takes little more memory than the new table.

The header is parsed (and checked as :func:`~pecli.io.safetensors.safetensors_entries` checks it),
rewritten with the one entry's new shape and the offsets after it moved, and the data copied range
by range (``os.copy_file_range`` where the system has it, else ``os.sendfile``, else reads of
:data:`CHUNK_BYTES`). The copy is atomic (a temporary file renamed into place) and the input is
never written. A model directory (``model.safetensors``, shards listed in
``model.safetensors.index.json``, or their torch.save counterparts ``pytorch_model.bin`` and
``pytorch_model.bin.index.json``) is copied whole to a new directory, only the file holding the
tensor rewritten and the index's ``total_size`` updated.

>>> import os, tempfile, numpy as np
>>> from pecli.io import Tensor, write_tensors, read_tensors
>>> folder = tempfile.mkdtemp()
>>> source, target = os.path.join(folder, "m.safetensors"), os.path.join(folder, "new.safetensors")
>>> tables = {"pos": np.zeros((4, 2), np.float32), "w": np.ones((3,), np.float32)}
>>> tensors = {name: Tensor.from_array(value) for name, value in tables.items()}
>>> write_tensors(source, tensors, fmt="safetensors", metadata={"format": "pt"})
>>> replace_tensor(source, target, "pos", np.ones((6, 2), np.float32), note={"pecli_resample": "len=6"}).shape
(6, 2)
>>> read_tensors(target)
({'pos': ((6, 2), 'float32'), 'w': ((3,), 'float32')}, {'format': 'pt', 'pecli_resample': 'len=6'})
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import struct
import tempfile
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from pecli.errors import OutputError, ParameterError, TableFileError
from pecli.io.atomic import TEMP_MARKER, atomic_file, check_free_space, reported_os_errors
from pecli.io.checkpoint_files import (  # re-exported: where a model directory's weights are is defined there
    INDEX_FILE,
    SINGLE_FILE,
    CheckpointCopy,
    WeightFiles,
    check_shard_holds,
    loads_shards,
    other_weight_files,
    read_shard_index,
    weight_files,
)
from pecli.io.safetensors import dtype_code, safetensors_entries
from pecli.io.tensor import Tensor, raw_chunks
from pecli.text import literal, literal_repr

__all__ = [
    "CHUNK_BYTES",
    "INDEX_FILE",
    "SINGLE_FILE",
    "CheckpointCopy",
    "check_shard_holds",
    "loads_shards",
    "read_shard_index",
    "replace_in_directory",
    "replace_tensor",
]

#: bytes per read when the system cannot copy between files itself
CHUNK_BYTES = 16 << 20


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return os.path.realpath(first) == os.path.realpath(second)


def _raw_header(handle: IO[bytes]) -> tuple[dict[str, Any], int]:
    """The header's JSON object (already checked) and where the data starts."""
    handle.seek(0)
    (length,) = struct.unpack("<Q", handle.read(8))
    return json.loads(handle.read(length)), 8 + length


def _header_bytes(header: Mapping[str, Any]) -> bytes:
    """The length-prefixed JSON header, padded with spaces to 8 bytes as safetensors pads it."""
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def _copy_range(source: IO[bytes], target: IO[bytes], begin: int, count: int) -> None:
    """Append ``count`` bytes of ``source`` from ``begin`` to ``target``, without passing them through Python."""
    target.flush()
    src, dst = source.fileno(), target.fileno()
    offset, left = begin, count
    for copy in (getattr(os, "copy_file_range", None), getattr(os, "sendfile", None)):
        if copy is None:
            continue
        try:
            while left:
                if copy is os.sendfile:
                    done = os.sendfile(dst, src, offset, min(left, 1 << 30))
                else:
                    done = copy(src, dst, min(left, 1 << 30), offset)
                if done == 0:
                    raise TableFileError(
                        f"{literal(source.name)} ended early", hint="the file changed while it was copied"
                    )
                offset, left = offset + done, left - done
            target.seek(0, os.SEEK_END)
            return
        except OSError as error:
            import errno

            if error.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF):
                raise
    target.seek(0, os.SEEK_END)
    source.seek(offset)
    while left:
        chunk = source.read(min(left, CHUNK_BYTES))
        if not chunk:
            raise TableFileError(f"{literal(source.name)} ended early", hint="the file changed while it was copied")
        target.write(chunk)
        left -= len(chunk)


def replace_tensor(
    source: str, target: str, key: str, table: np.ndarray, *, note: Mapping[str, str] | None = None
) -> CheckpointCopy:
    """Write ``source`` (a .safetensors file) to ``target`` with tensor ``key`` replaced by ``table``.

    Every other tensor's bytes and the file's metadata are kept (``note`` added to it); the tensor
    keeps its dtype, so ``table`` must have it. ``target`` must be another file than ``source``.

    Returns:
        A :class:`CheckpointCopy` describing the replacement.
    """
    if os.path.exists(target) and _same_file(source, target):
        raise ParameterError(
            f"the output {literal_repr(target)} is the input file",
            hint="write to a new file: the input is never modified",
        )
    try:
        handle = open(source, "rb")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise TableFileError(f"cannot read {literal_repr(source)}: {error.strerror}", hint="check the path") from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        safetensors_entries(handle, literal(source), size)  # every check the reader makes, before any byte is written
        header, data_start = _raw_header(handle)
        metadata = dict(header.pop("__metadata__", {}) or {})
        from pecli.io import find_key

        name = find_key(list(header), key, source)
        tensor = Tensor.from_array(table)
        old = header[name]
        if dtype_code(tensor.dtype) != old["dtype"]:
            raise ParameterError(
                f"{literal(source)}: tensor {literal_repr(name)} is {old['dtype']}, the new table {tensor.dtype}",
                hint="round the table to the tensor's dtype first",
            )
        begin, end = old["data_offsets"]
        moved = tensor.nbytes - (end - begin)
        new_header: dict[str, Any] = {"__metadata__": {**metadata, **(note or {})}} if metadata or note else {}
        for other, info in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
            first, last = info["data_offsets"]
            if other == name:
                info = {**info, "shape": list(tensor.shape), "data_offsets": [first, first + tensor.nbytes]}
            elif first >= end:
                info = {**info, "data_offsets": [first + moved, last + moved]}
            new_header[other] = info
        head = _header_bytes(new_header)
        total = len(head) + size - data_start + moved
        check_free_space(target, total)
        with atomic_file(target) as written:
            written.write(head)
            _copy_range(handle, written, data_start, begin)
            for chunk in raw_chunks(tensor):
                written.write(chunk)
            _copy_range(handle, written, data_start + end, size - data_start - end)
    return CheckpointCopy(name, tuple(old["shape"]), tensor.shape, tensor.dtype, target, tensor.nbytes, end - begin)


def replace_in_directory(
    source: str, target: str, key: str, table: np.ndarray, *, note: Mapping[str, str] | None = None
) -> CheckpointCopy:
    """Copy model directory ``source`` to the new directory ``target`` with tensor ``key`` replaced by ``table``.

    The files directly in ``source`` are copied (hidden ones and subdirectories are not: the result's
    ``left_out`` names the subdirectories); the weights file holding ``key`` among those transformers
    loads (:func:`~pecli.io.checkpoint_files.weight_files`: ``model.safetensors``, the shard the index
    names, or their ``pytorch_model.bin`` counterparts) is rewritten by :func:`replace_tensor` (``note`` added
    to its metadata) or :func:`~pecli.io.pt_checkpoint.replace_pt_tensor`; the index keeps its
    ``weight_map`` and gets the new ``metadata.total_size``. The other weight files, which the loader does not
    read, are copied as they were: the result's ``old_files`` names those holding the tensor at its old shape.
    ``target`` is written whole or not at all (a temporary directory renamed), and must not exist or be empty.
    """
    loaded = weight_files(source)  # model.safetensors first, as transformers
    if loaded is None:
        raise TableFileError(
            f"{literal(source)} has no weights ({SINGLE_FILE}, {INDEX_FILE} or their pytorch_model.bin counterparts)",
            hint="give a model directory",
        )
    name, shard = key, loaded.files[0]
    if loaded.index is not None:
        from pecli.io import find_key, read_tensors

        index_path = os.path.join(source, loaded.index)
        name = find_key(list(loaded.weight_map), key, index_path)
        shard = os.path.basename(loaded.weight_map[name])
        check_shard_holds(index_path, name, loaded.weight_map[name], read_tensors(loaded.weight_map[name])[0])
    if os.path.exists(target) and (not os.path.isdir(target) or _same_file(source, target) or os.listdir(target)):
        raise ParameterError(
            f"the output {literal_repr(target)} exists" + (" and is the input" if _same_file(source, target) else ""),
            hint="give a new directory: the input is never modified",
        )
    parent, base = os.path.split(os.path.abspath(target))
    if not os.path.isdir(parent):
        raise OutputError(
            f"directory {literal_repr(parent)} does not exist", hint=f"create it first: mkdir -p {literal(parent)}"
        )
    entries = [entry for entry in os.scandir(source) if not entry.name.startswith(".")]
    files = sorted(entry.name for entry in entries if entry.is_file())
    # a sentence-transformers model's 1_Pooling/, an onnx/ export: not copied, and said so
    left_out = tuple(sorted(entry.name for entry in entries if entry.is_dir()))
    check_free_space(parent, sum(os.path.getsize(os.path.join(source, file)) for file in files) + table.nbytes)
    with reported_os_errors(target):
        temporary = tempfile.mkdtemp(dir=parent, prefix=f".{base}{TEMP_MARKER}{os.getpid()}-")
    try:
        with reported_os_errors(target):
            for file in files:
                if file != shard and file != loaded.index:  # an unread index: copied
                    shutil.copyfile(os.path.join(source, file), os.path.join(temporary, file))
        if loaded.torch_save:  # no metadata for a note
            from pecli.io.pt_checkpoint import replace_pt_tensor

            done = replace_pt_tensor(os.path.join(source, shard), os.path.join(temporary, shard), name, table)
        else:
            done = replace_tensor(os.path.join(source, shard), os.path.join(temporary, shard), name, table, note=note)
        if loaded.document is not None and loaded.index is not None:
            info = loaded.document.get("metadata")
            if isinstance(info, dict) and isinstance(info.get("total_size"), int):
                info["total_size"] += done.nbytes - done.old_nbytes
            with atomic_file(os.path.join(temporary, loaded.index)) as handle:
                handle.write((json.dumps(loaded.document, indent=2) + "\n").encode())
        old_files, unread_files = _holding(source, loaded, done.key, done.old_shape)
        with reported_os_errors(target):
            os.chmod(temporary, 0o777 & ~_umask())
            os.rename(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(temporary)
        raise
    return CheckpointCopy(done.key, done.old_shape, done.shape, done.dtype, os.path.join(target, shard),
                          done.nbytes, done.old_nbytes, left_out, done.stale, old_files, unread_files)  # fmt: skip


def _holding(
    source: str, loaded: WeightFiles, name: str, shape: tuple[int, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Of ``source``'s weight files that its loader does not read: those that hold tensor ``name`` (or the
    same weight under a prefix more or less: ``wpe.weight`` for ``transformer.wpe.weight``) at ``shape``, and
    those pecli cannot read (``tf_model.h5``, a .bin without torch). Only headers are read."""
    from pecli.errors import PecliError
    from pecli.io import read_tensors

    holding, unread = [], []
    for file in other_weight_files(source, loaded):
        if not file.lower().endswith((".safetensors", ".bin", ".pt", ".pth")):
            unread.append(file)
            continue
        try:
            tensors = read_tensors(os.path.join(source, file))[0]
        except PecliError:
            unread.append(file)
            continue
        same = [other for other in tensors if other == name or name.endswith("." + other) or other.endswith("." + name)]
        if any(tuple(tensors[other][0]) == shape for other in same):
            holding.append(file)
    return tuple(holding), tuple(unread)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
