"""Reading and writing tables: .npy, .safetensors, .pt, CSV/TSV, files or stdin/stdout.

Writes stream row chunks (a table never has to fit in memory for .npy, .safetensors or text),
and are atomic: the bytes go to a recognisable temporary file next to the target, which replaces
the target with ``os.replace`` only when complete. Reads check a file's header against its size
before allocating anything, never unpickle (``allow_pickle=False``, ``weights_only=True``), and
read only the tensor asked for.

>>> import io, numpy as np
>>> buffer = io.BytesIO()
>>> write_tensors(buffer, {"pe": Tensor.from_array(np.eye(2, dtype=np.float32))}, fmt="safetensors",
...               metadata={"scheme": "eye"})
>>> table = read_table(io.BytesIO(buffer.getvalue()))
>>> table.key, table.array.tolist(), table.metadata["scheme"]
('pe', [[1.0, 0.0], [0.0, 1.0]], 'eye')
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import os
import shutil
import stat
import struct
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from pecli.errors import OutputError, ParameterError, PecliError, TableFileError, did_you_mean

__all__ = [
    "FORMATS",
    "TEMP_MARKER",
    "LoadedTable",
    "Tensor",
    "check_free_space",
    "check_output_path",
    "format_for",
    "read_table",
    "read_tensors",
    "write_tensors",
]

FORMATS: tuple[str, ...] = ("npy", "safetensors", "pt", "csv", "tsv")
BINARY_FORMATS = frozenset({"npy", "safetensors", "pt"})
_SINGLE_TENSOR_FORMATS = frozenset({"npy", "csv", "tsv"})
#: temporary files carry this marker, so stale ones (from a killed process) can be found
TEMP_MARKER = ".pecli-tmp-"
#: a safetensors header larger than this is refused before it is read (the format's own limit)
MAX_HEADER_BYTES = 100_000_000

_SAFETENSORS_DTYPES = {
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
_SAFETENSORS_NUMPY = {code: name for name, code in _SAFETENSORS_DTYPES.items()}
_SAFETENSORS_NUMPY.update({"U16": "uint16", "U32": "uint32", "U64": "uint64"})
_TEXT_FORMAT = {"float64": "%.17g", "float32": "%.9g", "float16": "%.5g"}


@dataclass(frozen=True)
class Tensor:
    """A tensor to write: its shape, dtype name, and a function yielding C-ordered row chunks."""

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
        return math.prod(self.shape) * _storage_dtype(self.dtype).itemsize


@dataclass
class LoadedTable:
    """A tensor read from a file: the array, the key it was stored under, and the file's metadata."""

    array: np.ndarray
    key: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    source: str = ""


def _storage_dtype(name: str) -> np.dtype:
    """numpy dtype of a tensor to write: any numpy name, or bfloat16 (through ml_dtypes)."""
    if name == "bfloat16":
        from pecli.dtypes import numpy_dtype

        return numpy_dtype(name)
    return np.dtype(name)


# ---------------------------------------------------------------------------------------------
# formats and output paths


def format_for(path: str, fmt: str | None) -> str:
    """The output format: ``fmt`` if given, else the one ``path``'s extension names.

    >>> format_for("pe.safetensors", None), format_for("-", None), format_for("x.txt", "csv")
    ('safetensors', 'npy', 'csv')
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise ParameterError(f"unknown format {fmt!r}", hint=did_you_mean(fmt, FORMATS))
        return fmt
    if path == "-":
        return "npy"
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension in FORMATS:
        return extension
    raise ParameterError(
        f"cannot tell the format of {path!r} from its extension {('.' + extension) if extension else '(none)'}",
        hint="use .npy, .safetensors, .pt, .csv or .tsv, or pass --format",
    )


def check_output_path(path: str) -> None:
    """Fail early, before any work, when ``path`` cannot be written."""
    if path == "-":
        return
    if not path:
        raise OutputError("the output path is empty", hint="give a file name, e.g. -o pe.safetensors, or - for stdout")
    if os.path.isdir(path):
        raise OutputError(f"output {path!r} is a directory", hint="give a file name, e.g. -o pe.safetensors")
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise OutputError(f"directory {directory!r} does not exist", hint=f"create it first: mkdir -p {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"directory {directory!r} is not writable", hint="choose another output path")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise OutputError(f"output {path!r} is not writable", hint="choose another output path")


def check_free_space(path: str, nbytes: int) -> None:
    """Refuse, before writing, an output of ``nbytes`` that the disk holding ``path`` has no room for."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        usage = shutil.disk_usage(directory)
    except OSError:
        return
    if usage.total and nbytes > usage.free:  # total 0: a pseudo file system (/proc), whose numbers mean nothing
        from pecli.dtypes import format_bytes

        raise OutputError(
            f"the output would take {format_bytes(nbytes)}, "
            f"more than the {format_bytes(usage.free)} free in {directory}",
            hint="make it smaller (--len, --d, --rows), or write elsewhere",
        )


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_temporaries(directory: str, basename: str) -> None:
    """Delete temporaries of ``basename`` left by pecli processes that no longer run (kill -9)."""
    prefix = f".{basename}{TEMP_MARKER}"
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if not entry.name.startswith(prefix):
                continue
            pid_text = entry.name[len(prefix) :].split("-", 1)[0]
            if pid_text.isdigit() and not _process_alive(int(pid_text)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


@contextlib.contextmanager
def atomic_file(path: str) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` only once it is complete (temp file + ``os.replace``).

    A symlink is followed (its target is replaced, the link stays); an existing device or FIFO
    (``/dev/null``, ``/dev/stdout``, a named pipe) is written in place, never replaced by a file.
    """
    check_output_path(path)
    try:
        existing_mode: int | None = os.stat(path).st_mode  # through symlinks: /dev/stdout may be a pipe
    except OSError:
        existing_mode = None
    if existing_mode is not None and not stat.S_ISREG(existing_mode):
        with _reported_os_errors(path), open(path, "wb") as handle:
            yield handle
        return
    real_path = os.path.realpath(path)
    directory, basename = os.path.split(real_path)
    _remove_stale_temporaries(directory, basename)
    try:
        descriptor, temp_path = tempfile.mkstemp(dir=directory, prefix=f".{basename}{TEMP_MARKER}{os.getpid()}-")
    except OSError as error:
        raise OutputError(
            f"cannot create a file in {directory!r}: {error.strerror}", hint="choose another output path"
        ) from None
    try:
        with _reported_os_errors(path):
            os.fchmod(descriptor, _mode_for(real_path))
            with os.fdopen(descriptor, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_path, real_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_path)
        raise


def _mode_for(path: str) -> int:
    """Permission bits for a new file at ``path``: those of the file it replaces, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def _reported_os_errors(path: str) -> Iterator[None]:
    """Turn an OSError while writing ``path`` (a full disk, a vanished directory) into an :class:`OutputError`."""
    try:
        yield
    except OSError as error:
        if isinstance(error, (PecliError, BrokenPipeError)):  # a closed pipe is main()'s quiet exit
            raise
        raise OutputError(f"cannot write {path!r}: {error.strerror or error}", hint=_os_hint(error)) from None


def _os_hint(error: OSError) -> str:
    import errno

    if error.errno == errno.ENOSPC:
        return "the disk is full: free space or write elsewhere"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "choose a writable output path"
    return "check the output path"


# ---------------------------------------------------------------------------------------------
# writing


def _raw_chunks(tensor: Tensor) -> Iterator[bytes | memoryview]:
    target = _storage_dtype(tensor.dtype)
    for chunk in tensor.chunks():
        chunk = np.ascontiguousarray(chunk)
        if chunk.dtype != target:
            raise AssertionError(f"chunk dtype {chunk.dtype} is not the declared {target}")
        if chunk.dtype.byteorder == ">":
            chunk = chunk.astype(chunk.dtype.newbyteorder("<"))
        yield memoryview(chunk.reshape(-1).view(np.uint8))


def _stream(handle: IO[bytes], pieces: Iterable[bytes | memoryview], on_progress: Callable[[int], None] | None) -> None:
    for piece in pieces:
        handle.write(piece)
        if on_progress is not None:
            on_progress(len(piece))


def safetensors_header(tensors: Mapping[str, Tensor], metadata: Mapping[str, str]) -> bytes:
    """The length-prefixed, 8-byte aligned JSON header of a safetensors file (keys sorted)."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for name in sorted(tensors):
        tensor = tensors[name]
        code = _SAFETENSORS_DTYPES.get(tensor.dtype)
        if code is None:
            raise ParameterError(f"safetensors cannot hold dtype {tensor.dtype}")
        header[name] = {"dtype": code, "shape": list(tensor.shape), "data_offsets": [offset, offset + tensor.nbytes]}
        offset += tensor.nbytes
    encoded = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    encoded += b" " * (-len(encoded) % 8)
    return struct.pack("<Q", len(encoded)) + encoded


def _npy_header(tensor: Tensor) -> bytes:
    buffer = io.BytesIO()
    dtype = _storage_dtype(tensor.dtype)
    np.lib.format.write_array_header_1_0(
        buffer,
        {
            "descr": np.lib.format.dtype_to_descr(dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype),
            "fortran_order": False,
            "shape": tuple(tensor.shape),
        },
    )
    return buffer.getvalue()


#: values formatted per text piece: text is ~10× slower to produce than binary, so a reader such
#: as ``| head -1`` gets its first line after a few milliseconds, not after a whole 32 MiB chunk
_TEXT_PIECE_VALUES = 1 << 16


def _text_pieces(tensor: Tensor, delimiter: str) -> Iterator[bytes]:
    template = _TEXT_FORMAT.get(tensor.dtype, "%.17g")
    for chunk in tensor.chunks():
        chunk = np.asarray(chunk)
        chunk = chunk.reshape(chunk.shape[0], -1) if chunk.ndim > 1 else chunk[:, None]
        step = max(1, _TEXT_PIECE_VALUES // max(1, chunk.shape[1]))
        for start in range(0, chunk.shape[0], step):
            buffer = io.BytesIO()
            np.savetxt(buffer, chunk[start : start + step], fmt=template, delimiter=delimiter)
            yield buffer.getvalue()


def _pt_bytes(tensors: Mapping[str, Tensor]) -> bytes:
    import torch

    state = {}
    for name in sorted(tensors):
        array = np.concatenate([np.asarray(c) for c in tensors[name].chunks()]).reshape(tensors[name].shape)
        if tensors[name].dtype == "bfloat16":
            state[name] = torch.from_numpy(array.view(np.uint16).copy()).view(torch.bfloat16)
        else:
            state[name] = torch.from_numpy(array.copy())
    buffer = io.BytesIO()  # an in-memory archive: torch names the archive root after the file
    torch.save(state, buffer)
    return buffer.getvalue()


def _check_tensor_names(tensors: Mapping[str, Tensor], fmt: str) -> None:
    """Names a safetensors or pt reader can give back: non-empty, and not the header's ``__metadata__``."""
    for name in tensors:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"a tensor in a .{fmt} file needs a non-empty name, got {name!r}", hint="--name pe")
        if name == "__metadata__":
            raise ParameterError(
                "'__metadata__' is reserved by the safetensors header, not a tensor name", hint="--name pe"
            )


def _pieces(tensors: Mapping[str, Tensor], fmt: str, metadata: Mapping[str, str]) -> Iterator[bytes | memoryview]:
    if fmt in ("safetensors", "pt"):
        _check_tensor_names(tensors, fmt)
    if fmt in _SINGLE_TENSOR_FORMATS and len(tensors) != 1:
        raise ParameterError(
            f"{fmt} holds one tensor, but this table has {len(tensors)}: {', '.join(tensors)}",
            hint="write .safetensors or .pt, or pick one part",
        )
    if fmt in ("npy", "csv", "tsv"):
        (tensor,) = tensors.values()
        if tensor.dtype == "bfloat16":
            raise ParameterError(
                f"{fmt} cannot store bfloat16 (numpy has no bfloat16 dtype)",
                hint="write .safetensors or .pt, or use --dtype float32",
            )
        if fmt == "npy":
            yield _npy_header(tensor)
            yield from _raw_chunks(tensor)
        else:
            yield from _text_pieces(tensor, "," if fmt == "csv" else "\t")
    elif fmt == "safetensors":
        yield safetensors_header(tensors, metadata)
        for name in sorted(tensors):
            yield from _raw_chunks(tensors[name])
    elif fmt == "pt":
        yield _pt_bytes(tensors)
    else:
        raise ParameterError(f"unknown format {fmt!r}", hint=did_you_mean(fmt, FORMATS))


def write_tensors(
    target: str | IO[bytes],
    tensors: Mapping[str, Tensor],
    *,
    fmt: str,
    metadata: Mapping[str, str] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> None:
    """Write ``tensors`` in format ``fmt`` to a path (atomically), ``"-"`` (stdout) or a binary stream.

    Args:
        target: a file path, ``"-"`` for standard output, or a writable binary file object.
        tensors: name -> :class:`Tensor`; npy and text formats take exactly one.
        fmt: one of :data:`FORMATS`.
        metadata: string pairs stored in a safetensors header (ignored by other formats).
        on_progress: called with the number of bytes after each piece is written.

    Example:
        >>> import io
        >>> out = io.BytesIO()
        >>> write_tensors(out, {"pe": Tensor.from_array(np.arange(4.0).reshape(2, 2))}, fmt="csv")
        >>> out.getvalue().decode()
        '0,1\\n2,3\\n'
    """
    metadata = metadata or {}
    pieces = _pieces(tensors, fmt, metadata)
    first = next(pieces, b"")  # validates format and dtype before any file is touched
    if isinstance(target, str) and target != "-":
        check_free_space(target, sum(tensor.nbytes for tensor in tensors.values()))
        with atomic_file(target) as handle:
            _stream(handle, [first], on_progress)
            _stream(handle, pieces, on_progress)
        return
    handle = sys.stdout.buffer if target == "-" else target
    _stream(handle, [first], on_progress)
    _stream(handle, pieces, on_progress)
    handle.flush()


# ---------------------------------------------------------------------------------------------
# reading


def _open_source(source: str | IO[bytes]) -> tuple[IO[bytes], str, int | None]:
    """(binary handle, display name, size if known) for a path, ``"-"`` or a file object.

    Pipes (stdin, ``<(…)`` process substitution, FIFOs) are read whole, so that their size is known
    before any header is trusted.
    """
    if not isinstance(source, str):
        data = source.read()
        name = getattr(source, "name", None)
        return io.BytesIO(data), name if isinstance(name, str) else "<stream>", len(data)
    if source == "-":
        if sys.stdin is None or _is_terminal(sys.stdin):
            raise TableFileError(
                "no table on stdin (it is a terminal)", hint="pipe one in: pecli generate --d 64 --len 32 -o - | …"
            )
        data = sys.stdin.buffer.read()
        return io.BytesIO(data), "<stdin>", len(data)
    if not os.path.exists(source):
        raise TableFileError(
            f"no such file: {source!r}", hint="check the path, or give a scheme name such as sinusoidal"
        )
    if os.path.isdir(source):
        raise TableFileError(
            f"{source!r} is a directory, not a table file", hint="give a .npy, .safetensors or .pt file"
        )
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed by the caller
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            with handle:
                data = handle.read()
            return io.BytesIO(data), source, len(data)
    except OSError as error:
        raise TableFileError(f"cannot read {source!r}: {error.strerror}", hint="check its permissions") from None
    return handle, source, os.fstat(handle.fileno()).st_size


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _kind_of(head: bytes) -> str | None:
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK\x03\x04"):
        return "pt"
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "pt"  # torch.save's legacy (pre-1.6, non-zip) format: a bare pickle stream
    if len(head) >= 9 and head[8:9] in (b"{", b"["):  # a JSON header after its 8-byte length
        return "safetensors"
    return None


@dataclass
class _Entry:
    shape: tuple[int, ...]
    dtype: str  # numpy dtype name, or "bfloat16"
    load: Callable[[], np.ndarray]


def _read_npy(handle: IO[bytes], name: str, size: int | None) -> tuple[dict[str, _Entry], dict[str, str]]:
    def invalid(why: object) -> TableFileError:
        return TableFileError(f"{name} is not a valid .npy file: {why}", hint="regenerate the file")

    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise invalid(f"unsupported format version {version[0]}.{version[1]}")
    except TableFileError:
        raise
    except Exception as error:
        # ValueError, SyntaxError, tokenize.TokenError, TypeError, RecursionError…: every one means "corrupt"
        detail = str(error).splitlines()[0][:200] if isinstance(error, ValueError) and str(error) else ""
        raise invalid(detail or f"its header cannot be parsed ({type(error).__name__})") from None
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise invalid(f"its header declares an invalid shape {shape!r}")
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
            f"{name} is truncated: its header declares shape {tuple(shape)} ({nbytes} bytes) but only "
            f"{size - data_offset} bytes follow",
            hint="regenerate or re-download the file",
        )

    def load() -> np.ndarray:
        handle.seek(data_offset)
        if isinstance(handle, io.BytesIO):
            array = np.frombuffer(handle.getbuffer(), dtype=dtype, count=count, offset=data_offset).copy()
        else:
            array = np.fromfile(handle, dtype=dtype, count=count)
        return array.reshape(shape, order="F" if fortran else "C")

    return {"": _Entry(tuple(shape), dtype.name, load)}, {}


def _read_safetensors(handle: IO[bytes], name: str, size: int | None) -> tuple[dict[str, _Entry], dict[str, str]]:
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
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError) as error:  # bad JSON or UTF-8, an absurd number, absurd nesting
        why = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
        raise TableFileError(f"{name} has a corrupt safetensors header ({why})", hint="regenerate the file") from None
    if not isinstance(header, dict):
        raise TableFileError(f"{name}: the safetensors header is not a JSON object", hint="the file is corrupt")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise TableFileError(f"{name}: the safetensors __metadata__ is not an object", hint="the file is corrupt")
    data_start = 8 + header_length
    data_size = None if size is None else size - data_start
    entries = {key: _safetensors_entry(handle, name, key, info, data_start, data_size) for key, info in header.items()}
    _check_safetensors_layout(name, header, data_size)
    return entries, {str(k): str(v) for k, v in metadata.items()}


def _check_safetensors_layout(name: str, header: Mapping[str, Any], data_size: int | None) -> None:
    """The tensors' byte ranges must tile the data exactly: in order, no overlap, no hole, no tail.

    This is the rule the reference implementation enforces (safetensors' ``Metadata::validate``).
    """
    position = 0
    for key, info in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
        begin, end = info["data_offsets"]
        if begin != position:
            what = "overlaps the previous tensor" if begin < position else f"leaves a gap of {begin - position} bytes"
            raise TableFileError(
                f"{name}: tensor {key!r} starts at byte {begin} of the data and {what}",
                hint="the file is corrupt or was not written by safetensors",
            )
        position = end
    if data_size is not None and position != data_size:
        raise TableFileError(
            f"{name}: the tensors cover {position} bytes of data, but the file holds {data_size}",
            hint="the file is corrupt, truncated, or has bytes appended",
        )


def _safetensors_entry(
    handle: IO[bytes], name: str, key: str, info: Any, data_start: int, data_size: int | None
) -> _Entry:
    def corrupt(what: str) -> TableFileError:
        return TableFileError(f"{name}: tensor {key!r} {what}", hint="the file is corrupt or was cut short")

    def is_count(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    if not isinstance(info, dict):
        raise corrupt("has no valid description")
    code, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(code, str) or code not in _SAFETENSORS_NUMPY:
        raise corrupt(f"has dtype {code!r}, which pecli cannot read")
    if not (isinstance(shape, list) and all(is_count(s) for s in shape)):
        raise corrupt(f"has an invalid shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(is_count(o) for o in offsets)):
        raise corrupt(f"has invalid data_offsets {offsets!r}")
    begin, end = offsets
    dtype_name = _SAFETENSORS_NUMPY[code]
    itemsize = 2 if dtype_name == "bfloat16" else np.dtype(dtype_name).itemsize
    count = math.prod(shape)
    if end < begin or end - begin != count * itemsize:
        raise corrupt(f"declares shape {shape} of {code} but data_offsets {offsets} span {end - begin} bytes")
    if data_size is not None and end > data_size:
        raise corrupt(f"ends at byte {end} of the data, but the file holds only {data_size}")

    def load() -> np.ndarray:
        storage = np.dtype(np.uint16) if dtype_name == "bfloat16" else np.dtype(dtype_name).newbyteorder("<")
        if isinstance(handle, io.BytesIO):
            array = np.frombuffer(handle.getbuffer(), dtype=storage, count=count, offset=data_start + begin).copy()
        else:
            handle.seek(data_start + begin)
            array = np.fromfile(handle, dtype=storage, count=count)
        if dtype_name == "bfloat16":
            array = (array.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return array.reshape(shape)

    return _Entry(tuple(shape), dtype_name, load)


def _flatten_state(state: Any) -> dict[str, Any]:
    """The tensors in a (nested) state dict or list, by dotted key; without recursion, so cycles and
    deep nesting in a hostile pickle cannot overflow the stack."""
    import torch

    flat: dict[str, Any] = {}
    seen: set[int] = set()
    pending: list[tuple[str, Any]] = [("", state)]
    while pending:
        prefix, value = pending.pop()
        if isinstance(value, torch.Tensor):
            flat[prefix] = value
            continue
        if id(value) in seen:
            continue
        if isinstance(value, Mapping):
            seen.add(id(value))
            children = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            seen.add(id(value))
            children = [(str(i), v) for i, v in enumerate(value)]
        else:
            continue
        pending.extend((f"{prefix}.{k}" if prefix else k, v) for k, v in reversed(children))
    return flat


def _check_pt_archive(handle: IO[bytes], name: str, size: int | None) -> None:
    """A zip-format .pt may only hold stored (uncompressed) entries, as torch.save writes them.

    So no entry can expand beyond the file's own size: a small "zip bomb" cannot make torch
    allocate gigabytes.
    """
    import zipfile

    try:
        with zipfile.ZipFile(handle) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as error:
        raise TableFileError(f"{name} is not a valid .pt archive: {error}", hint="regenerate the file") from None
    finally:
        handle.seek(0)
    for member in members:
        if member.compress_type != zipfile.ZIP_STORED or (size is not None and member.file_size > size):
            raise TableFileError(
                f"{name}: archive entry {member.filename!r} is compressed, which torch.save never does",
                hint="pecli reads .pt files as torch.save writes them",
            )


def _read_pt(handle: IO[bytes], name: str, size: int | None) -> tuple[dict[str, _Entry], dict[str, str]]:
    try:
        import torch
    except ImportError:
        raise TableFileError(f"reading {name} (a .pt file) needs torch", hint="pip install 'pecli[torch]'") from None
    if handle.read(4) == b"PK\x03\x04":
        _check_pt_archive(handle, name, size)
    handle.seek(0)
    try:
        with warnings.catch_warnings():  # torch warns (many lines) about odd pickles: the error says enough
            warnings.simplefilter("ignore")
            state = torch.load(handle, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types; every one means "not a loadable weights file"
        raise TableFileError(
            f"{name} cannot be loaded safely as weights: {_torch_load_reason(error)}",
            hint="pecli loads .pt files with weights_only=True and never runs pickled code",
        ) from None
    entries: dict[str, _Entry] = {}
    for key, tensor in _flatten_state(state).items():
        dtype_name = str(tensor.dtype).removeprefix("torch.")
        entries[key] = _Entry(tuple(tensor.shape), dtype_name, functools.partial(_pt_array, tensor, name, key))
    return entries, {}


def _torch_load_reason(error: Exception) -> str:
    """The informative line of a torch.load error (which starts with a paragraph about torch 2.6)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    specific = [line for line in lines if "GLOBAL" in line or "nsupported" in line]
    reason = (specific or lines or [type(error).__name__])[0]
    if reason.startswith("Weights only load failed"):
        reason = "torch's weights_only loader refused it"
    return reason[:200]


def _pt_array(tensor: Any, name: str, key: str) -> np.ndarray:
    """A numpy copy of a loaded tensor, refusing one whose shape claims more elements than its storage
    holds (a zero-stride view can claim any shape over a one-element storage)."""
    import torch

    if tensor.layout != torch.strided or tensor.is_quantized:
        raise TableFileError(
            f"{name}: tensor {key!r} is {str(tensor.layout).removeprefix('torch.')}"
            f"{' quantized' if tensor.is_quantized else ''}, not a dense table",
            hint="save a dense float tensor",
        )
    stored = tensor.untyped_storage().nbytes() // max(1, tensor.element_size())
    if tensor.numel() > stored:
        raise TableFileError(
            f"{name}: tensor {key!r} claims shape {tuple(tensor.shape)} ({tensor.numel()} values) "
            f"but its storage holds only {stored}",
            hint="save a contiguous tensor (tensor.contiguous()) instead of an expanded view",
        )
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()  # numpy has no bfloat16: widen it exactly to float32
    return np.array(tensor.numpy(), copy=True, order="C")


_READERS = {"npy": _read_npy, "safetensors": _read_safetensors, "pt": _read_pt}


@contextlib.contextmanager
def _opened(source: str | IO[bytes]) -> Iterator[tuple[dict[str, _Entry], dict[str, str], str]]:
    handle, name, size = _open_source(source)
    with handle:
        if size == 0:
            raise TableFileError(f"{name} is empty", hint="give a .npy, .safetensors or .pt table")
        head = handle.read(16)
        handle.seek(0)
        kind = _kind_of(head)
        if kind is None:
            raise TableFileError(
                f"{name} is not a .npy, .safetensors or .pt file (unrecognised content)",
                hint="pecli reads tables written by numpy, safetensors or torch",
            )
        entries, metadata = _READERS[kind](handle, name, size)
        yield entries, metadata, name


def read_tensors(source: str | IO[bytes]) -> tuple[dict[str, tuple[tuple[int, ...], str]], dict[str, str]]:
    """The name -> (shape, dtype) of every tensor in a file, and its metadata, reading only headers.

    >>> buffer = io.BytesIO()
    >>> write_tensors(buffer, {"pe": Tensor.from_array(np.zeros((3, 2), np.float16))}, fmt="safetensors")
    >>> read_tensors(io.BytesIO(buffer.getvalue()))
    ({'pe': ((3, 2), 'float16')}, {})
    """
    with _opened(source) as (entries, metadata, _):
        return {key: (entry.shape, entry.dtype) for key, entry in entries.items()}, metadata


def _choose_key(entries: Mapping[str, _Entry], metadata: Mapping[str, str], key: str | None, name: str) -> str:
    if key is not None:
        if key not in entries:
            raise TableFileError(f"{name} has no tensor {key!r}", hint=did_you_mean(key, list(entries)))
        return key
    if len(entries) == 1:
        return next(iter(entries))
    own = metadata.get("tensor")
    if own in entries:
        return own
    if not entries:
        raise TableFileError(f"{name} holds no tensors", hint="give a file with a table in it")
    candidates = [f"{k} {list(e.shape)}" for k, e in entries.items() if len(e.shape) == 2]
    listing = "; ".join(candidates) if candidates else "none is 2-D"
    raise TableFileError(
        f"{name} holds {len(entries)} tensors; choose one with --key", hint=f"2-D candidates: {listing}"
    )


_NUMERIC_KINDS = frozenset("fiub")


def read_table(source: str | IO[bytes], key: str | None = None) -> LoadedTable:
    """Read one tensor from a .npy, .safetensors or .pt file, ``"-"`` (stdin) or a binary stream.

    The format is told by content, not by name. Without ``key``, a file with one tensor gives it, a
    file pecli wrote gives its own tensor, and any other multi-tensor file is an error that lists
    the 2-D candidates. Only the chosen tensor is read, and only after its header has been checked
    against the file's size; a tensor that is empty or not of a real number type is refused.

    >>> buffer = io.BytesIO()
    >>> np.save(buffer, np.array([[1 + 2j]]))
    >>> try:
    ...     read_table(io.BytesIO(buffer.getvalue()))
    ... except TableFileError as error:
    ...     print(error.message)
    <stream>: tensor array has dtype complex128, which is not a real number type
    """
    with _opened(source) as (entries, metadata, name):
        chosen = _choose_key(entries, metadata, key, name)
        entry = entries[chosen]
        label = repr(chosen) if chosen else "array"
        if not _is_real_dtype(entry.dtype):
            raise TableFileError(
                f"{name}: tensor {label} has dtype {entry.dtype}, which is not a real number type",
                hint="pecli reads float or integer tables",
            )
        if math.prod(entry.shape) == 0:
            raise TableFileError(
                f"{name}: tensor {label} is empty (shape {tuple(entry.shape)})", hint="give a table with values"
            )
        from pecli.schemes import check_fits_in_memory

        itemsize = 4 if entry.dtype == "bfloat16" else np.dtype(entry.dtype).itemsize  # bfloat16 widens to float32
        check_fits_in_memory(
            math.prod(entry.shape) * itemsize,
            what=f"tensor {label} in {name}" if chosen else f"table in {name}",
            hint="read a smaller table, or another tensor of the file with --key",
        )
        array = entry.load()
    return LoadedTable(array=array, key=chosen or None, metadata=metadata, source=name)


def _is_real_dtype(name: str) -> bool:
    """Whether a tensor of dtype ``name`` holds real numbers pecli can plot and compare."""
    if name == "bfloat16":
        return True
    try:
        return np.dtype(name).kind in _NUMERIC_KINDS
    except TypeError:
        return False
