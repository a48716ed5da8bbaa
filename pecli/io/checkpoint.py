"""A copy of a safetensors checkpoint with one tensor replaced, streamed: every other tensor's bytes
copied as they are, in large ranges, so a multi-GB file takes little more memory than the new table.

The header is parsed (and checked as :func:`~pecli.io.safetensors.safetensors_entries` checks it),
rewritten with the one entry's new shape and the offsets after it moved, and the data copied range
by range (``os.copy_file_range`` where the system has it, else ``os.sendfile``, else reads of
:data:`CHUNK_BYTES`). The copy is atomic (a temporary file renamed into place) and the input is
never written. A model directory (``model.safetensors`` or shards listed in
``model.safetensors.index.json``) is copied whole to a new directory, only the shard holding the
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
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from pecli.errors import OutputError, ParameterError, TableFileError
from pecli.io.atomic import TEMP_MARKER, atomic_file, check_free_space, reported_os_errors
from pecli.io.safetensors import dtype_code, safetensors_entries
from pecli.io.tensor import Tensor, raw_chunks
from pecli.text import literal, literal_repr, shown

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
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"


def _kind(mode: int) -> str:
    import stat

    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))  # fmt: skip
    return next((name for test, name in kinds if test(mode)), "not a file")


def check_shard_holds(index: str, name: str, file: str, names: Mapping[str, Any] | Any) -> None:
    """Refuse a shard index that places weight ``name`` in ``file`` when the shard's own ``names`` lack it.

    >>> check_shard_holds("m/index.json", "wpe", "m/a.safetensors", {"wpe": None})
    >>> check_shard_holds("m/index.json", "wte", "m/a.safetensors", {"wpe": None})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.TableFileError: m/index.json places 'wte' in a.safetensors, which does not hold it (...)
    """
    if name not in names:
        raise TableFileError(
            f"{literal(shown(index))} places {literal_repr(name)} in {literal(os.path.basename(file))},"
            " which does not hold it",
            hint="the index and the shards disagree: re-save the model",
        )


def loads_shards(directory: str) -> bool:
    """Whether transformers loads ``directory``'s weights through its shard index: ``from_pretrained`` takes
    ``model.safetensors`` where there is one (it checks SAFE_WEIGHTS_NAME before SAFE_WEIGHTS_INDEX_NAME), so an
    index beside it is not read, and the file is what a reader or a copy of the model must use.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> open(os.path.join(folder, INDEX_FILE), "w").close()
    >>> loads_shards(folder)
    True
    >>> open(os.path.join(folder, SINGLE_FILE), "w").close()
    >>> loads_shards(folder)
    False
    """
    return not os.path.isfile(os.path.join(directory, SINGLE_FILE)) and os.path.lexists(
        os.path.join(directory, INDEX_FILE)
    )


def read_shard_index(directory: str) -> tuple[dict[str, Any], dict[str, str]] | None:
    """``directory``'s shard index (``model.safetensors.index.json``) and its weights' shard paths; None without one.

    Every reader of a sharded model (``info``, ``identify``, a checkpoint copy) goes through this one
    check: the index is a regular file of bounded size; it names no weight twice; each shard is a
    file beside it (not ``../x``, not in a subdirectory), present, and a regular file (not a FIFO,
    a directory, ``/dev/zero``). Anything else is a one-line :class:`~pecli.errors.TableFileError`.
    """
    from pecli.io.bounded import read_small_text

    index = os.path.join(directory, INDEX_FILE)
    if not os.path.lexists(index):
        return None
    where = literal(shown(index))  # in messages, which are templates
    text = read_small_text(index, what="shard index")  # a FIFO, a directory or /dev/zero: "not a regular file"
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        document = dict(items)
        if len(document) != len(items):
            names = [name for name, _ in items]
            repeated.extend(name for name in document if names.count(name) > 1)
        return document

    try:
        document = json.loads(text, object_pairs_hook=pairs)
    except RecursionError:
        raise TableFileError(f"{where} nests too deeply", hint="a shard index nests a few levels") from None
    except ValueError as error:
        raise TableFileError(f"cannot read {where}: {literal(shown(str(error)))}", hint="re-save the model") from None
    weight_map = document.get("weight_map") if isinstance(document, dict) else None
    if not isinstance(weight_map, dict) or not all(
        isinstance(name, str) and isinstance(shard, str) for name, shard in weight_map.items()
    ):
        raise TableFileError(f"{where} has no weight_map of names to shard files", hint="re-save the model")
    if repeated:
        raise TableFileError(
            f"{where} names {literal_repr(repeated[0])} twice, so which shard holds it is unknown",
            hint="the index is corrupt: re-save the model",
        )
    files = {}
    for name, shard in weight_map.items():
        file = os.path.join(directory, shard)
        if os.path.basename(shard) != shard or shard in ("", ".", ".."):
            raise TableFileError(
                f"{where} names shard {literal_repr(shard)}, which is not a file in the model directory",
                hint="an index names the shards beside it: re-save the model",
            )
        try:
            mode = os.stat(file).st_mode
        except OSError:
            raise TableFileError(
                f"{where} names shard {literal_repr(shard)}, which is missing",
                hint="download every shard the index lists",
            ) from None
        import stat

        if not stat.S_ISREG(mode):
            raise TableFileError(
                f"{where} names shard {literal_repr(shard)}, which is {_kind(mode)}, not a regular file",
                hint="give the model's own shard files",
            )
        files[name] = file
    return document, files


@dataclass(frozen=True)
class CheckpointCopy:
    """What a copy did: the tensor replaced, its shapes and data bytes before and after, the file written.

    ``left_out``: a model directory's subdirectories (``1_Pooling``, ``onnx``), which the copy does not hold.
    ``stale``: tensors that went with the old one and keep its shape (a .pt checkpoint's optimizer state for it,
    an EMA copy of it).
    """

    key: str
    old_shape: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: str
    file: str
    nbytes: int
    old_nbytes: int
    left_out: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()


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
    ``left_out`` names the subdirectories); the
    weights file holding ``key`` (``model.safetensors``, or the shard the index names) is
    rewritten by :func:`replace_tensor`; the index keeps its ``weight_map`` and gets the new
    ``metadata.total_size``. ``target`` is written whole or not at all (a temporary directory
    renamed), and must not exist or be empty.
    """
    index_path = os.path.join(source, INDEX_FILE)
    index: dict[str, Any] | None = None
    read = read_shard_index(source) if loads_shards(source) else None  # model.safetensors first, as transformers
    if read is not None:
        index, shards = read
        from pecli.io import find_key, read_tensors

        name = find_key(list(shards), key, index_path)
        shard = os.path.basename(shards[name])
        check_shard_holds(index_path, name, shards[name], read_tensors(shards[name])[0])
    elif os.path.isfile(os.path.join(source, SINGLE_FILE)):
        name, shard = key, SINGLE_FILE
    else:
        raise TableFileError(
            f"{literal(source)} has no weights ({SINGLE_FILE} or {INDEX_FILE})", hint="give a model directory"
        )
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
                if file != shard and not (file == INDEX_FILE and index is not None):  # an unread index: copied
                    shutil.copyfile(os.path.join(source, file), os.path.join(temporary, file))
        done = replace_tensor(os.path.join(source, shard), os.path.join(temporary, shard), name, table, note=note)
        if index is not None:
            info = index.get("metadata")
            if isinstance(info, dict) and isinstance(info.get("total_size"), int):
                info["total_size"] += done.nbytes - done.old_nbytes
            with atomic_file(os.path.join(temporary, INDEX_FILE)) as handle:
                handle.write((json.dumps(index, indent=2) + "\n").encode())
        with reported_os_errors(target):
            os.chmod(temporary, 0o777 & ~_umask())
            os.rename(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(temporary)
        raise
    return CheckpointCopy(done.key, done.old_shape, done.shape, done.dtype, os.path.join(target, shard),
                          done.nbytes, done.old_nbytes, left_out)  # fmt: skip


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
