"""The .pt format: a ``torch.save`` state dict, written and read through torch (imported only here,
inside the functions that need it).

A .pt file is never unpickled beyond what ``torch.load(weights_only=True)`` allows; a zip archive
must hold only stored entries, as torch.save writes them, and a tensor must own the storage its
shape claims.

>>> import io, numpy as np
>>> data = pt_bytes({"pe": Tensor.from_array(np.eye(2, dtype=np.float32))})
>>> entries, metadata = pt_entries(io.BytesIO(data), "<stream>", len(data))
>>> entries["pe"].load().tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import functools
import io
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from typing import IO, Any

import numpy as np

from pecli.errors import ParameterError, TableFileError
from pecli.io.tensor import StoredTensor, Tensor, check_tensor_count
from pecli.text import literal, literal_repr

__all__ = ["flatten_state", "load_state", "pt_bytes", "pt_entries", "require_torch", "torch_tensor"]

#: the fix named wherever a .pt file needs the optional torch
TORCH_HINT = "pip install 'pecli[torch]'"


def require_torch(what: str) -> None:
    """Refuse ``what`` (e.g. "writing a .pt file") before any work when torch is not installed.

    >>> require_torch("writing a .pt file")  # torch is installed here: nothing to say
    """
    try:
        import torch  # noqa: F401  (the import is the check; writing needs it anyway)
    except ImportError:
        raise ParameterError(f"{what} needs torch, which is not installed", hint=TORCH_HINT) from None


def pt_bytes(tensors: Mapping[str, Tensor]) -> bytes:
    """A ``torch.save`` archive of ``tensors`` (a dict of name -> tensor), built in memory."""
    import torch

    state = {name: torch_tensor(tensors[name]) for name in sorted(tensors)}
    buffer = io.BytesIO()  # an in-memory archive: torch names the archive root after the file
    torch.save(state, buffer)
    return buffer.getvalue()


def torch_tensor(tensor: Tensor) -> Any:
    """A torch tensor of ``tensor``'s values and dtype (bfloat16 through its bits: numpy has no bfloat16)."""
    import torch

    array = np.concatenate([np.asarray(c) for c in tensor.chunks()]).reshape(tensor.shape)
    if tensor.dtype == "bfloat16":
        return torch.from_numpy(array.view(np.uint16).copy()).view(torch.bfloat16)
    return torch.from_numpy(array.copy())


def flatten_state(state: Any, name: str) -> dict[str, Any]:
    """The tensors in a (nested) state dict or list, by dotted key; without recursion, so cycles and
    deep nesting in a hostile pickle cannot overflow the stack, and refused past :data:`MAX_TENSORS`.

    Containers are walked lazily, one iterator per open container: a list holding one tensor a
    million times (2 MB on disk) costs an iterator, not a million pending keys.

    >>> import torch
    >>> t = torch.zeros(1)
    >>> list(flatten_state({"a": [t, {"b": t}], "c": "text"}, "x.pt"))
    ['a.0', 'a.1.b']
    """
    import torch

    flat: dict[str, Any] = {}
    seen: set[int] = set()

    def children(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        return ((f"{prefix}.{k}" if prefix else str(k), v) for k, v in items)

    stack: list[Iterator[tuple[str, Any]]] = [iter([("", state)])]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        prefix, value = entry
        if isinstance(value, torch.Tensor):
            flat[prefix] = value
            check_tensor_count(name, len(flat))  # stops at the first tensor past the limit
        elif isinstance(value, (Mapping, list, tuple)) and id(value) not in seen:
            seen.add(id(value))
            stack.append(children(prefix, value))
    return flat


def _mappable_path(handle: IO[bytes]) -> str | None:
    """A path to the very file ``handle`` has open (``/proc/self/fd/N``), so torch can map it; None for a
    stream or where there is no such path.

    torch.load reads every storage whole, so a tensor that is a small view of a large storage (a
    slice saved without ``.clone()``) would cost the whole storage; mapped, only the view's pages are read.
    """
    import stat

    try:
        fd = handle.fileno()
        path = f"/proc/self/fd/{fd}"
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not os.path.exists(path):
            return None
    except (AttributeError, OSError, ValueError):  # BytesIO and other streams have no descriptor
        return None
    return path


def _check_archive(handle: IO[bytes], name: str, size: int | None) -> None:
    """A zip-format .pt may only hold stored (uncompressed) entries, as torch.save writes them.

    So no entry can expand beyond the file's own size: a small "zip bomb" cannot make torch
    allocate gigabytes.
    """
    import zipfile

    try:
        with zipfile.ZipFile(handle) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as error:
        raise TableFileError(
            f"{name} is not a valid .pt archive: {literal(str(error))}", hint="regenerate the file"
        ) from None
    finally:
        handle.seek(0)
    names = [member.filename for member in members]
    if not any(n == "data.pkl" or n.endswith("/data.pkl") for n in names) and any(n.endswith(".npy") for n in names):
        arrays = ", ".join(literal_repr(n.removesuffix(".npy")) for n in names[:8] if n.endswith(".npy"))
        raise TableFileError(
            f"{name} is a .npz archive of numpy arrays ({arrays}), not a .npy or .pt table",
            hint="save one array with np.save('table.npy', np.load(path)[key]) and give that",
        )
    for member in members:
        if member.compress_type != zipfile.ZIP_STORED or (size is not None and member.file_size > size):
            raise TableFileError(
                f"{name}: archive entry {literal_repr(member.filename)} is compressed, which torch.save never does",
                hint="pecli reads .pt files as torch.save writes them",
            )


def pt_entries(handle: IO[bytes], name: str, size: int | None) -> tuple[dict[str, StoredTensor], dict[str, str]]:
    """The tensors of a torch.save file by dotted key, loaded with ``weights_only=True``; no metadata.

    ``name`` labels the file in messages, which are templates: made :func:`~pecli.text.literal` by the caller.
    """
    state = load_state(handle, name, size)
    entries: dict[str, StoredTensor] = {}
    for key, tensor in flatten_state(state, name).items():
        dtype_name = str(tensor.dtype).removeprefix("torch.")
        entries[key] = StoredTensor(tuple(tensor.shape), dtype_name, functools.partial(_array, tensor, name, key))
    return entries, {}


def load_state(handle: IO[bytes], name: str, size: int | None) -> Any:
    """What ``torch.load(weights_only=True)`` gives for the file ``handle``, its storages mapped where it can."""
    try:
        import torch
    except ImportError:
        raise TableFileError(f"reading {name} (a .pt file) needs torch", hint=TORCH_HINT) from None
    mapped = None
    if handle.read(4) == b"PK\x03\x04":  # the zip format (torch ≥ 1.6), which torch can map
        _check_archive(handle, name, size)
        mapped = _mappable_path(handle)
    handle.seek(0)
    try:
        with warnings.catch_warnings():  # torch warns (many lines) about odd pickles: the error says enough
            warnings.simplefilter("ignore")
            if mapped is not None:  # storages mapped, not read: a small view of a large storage costs its own size
                state = torch.load(mapped, map_location="cpu", weights_only=True, mmap=True)
            else:
                state = torch.load(handle, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types; every one means "not a loadable weights file"
        raise TableFileError(
            f"{name} cannot be loaded safely as weights: {literal(_torch_load_reason(error))}",
            hint="pecli loads .pt files with weights_only=True and never runs pickled code",
        ) from None
    return state


def _torch_load_reason(error: Exception) -> str:
    """The informative line of a torch.load error (which starts with a paragraph about torch 2.6)."""
    if "alloc" in str(error) and isinstance(error, RuntimeError):  # torch's "[enforce fail at alloc_cpu.cpp…]"
        return "it declares a storage larger than the memory available"
    if "wrong byte size" in str(error) or "storage that is not resizable" in str(
        error
    ):  # read / mapped  # torch's "storage has wrong byte size: expected %ld got %ld…"
        return "it declares a storage larger than the file holds"
    refused = re.search(r"GLOBAL (\S+) was not an allowed global", str(error))
    if refused:  # torch goes on to suggest allowing it: pecli never runs a pickled class or function
        return f"it holds a pickled Python object ({_escaped(refused.group(1))[:100]}), which pecli never unpickles"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    specific = [line for line in lines if "GLOBAL" in line or "nsupported" in line]
    reason = (specific or lines or [type(error).__name__])[0]
    if "internal miniz error" in reason:  # "…failed locating file data/0: file not found. This is an internal…"
        reason = reason.split(". ")[0] + " (a record of the archive is missing)"
    if reason.startswith("Weights only load failed"):
        reason = "torch's weights_only loader refused it"
    return reason[:200]


def _escaped(text: str) -> str:
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _array(tensor: Any, name: str, key: str) -> np.ndarray:
    """A numpy copy of a loaded tensor, refusing one whose shape claims more elements than its storage
    holds (a zero-stride view can claim any shape over a one-element storage)."""
    import torch

    if tensor.layout != torch.strided or tensor.is_quantized:
        raise TableFileError(
            f"{name}: tensor {literal_repr(key)} is {str(tensor.layout).removeprefix('torch.')}"
            f"{' quantized' if tensor.is_quantized else ''}, not a dense table",
            hint="save a dense float tensor",
        )
    stored = tensor.untyped_storage().nbytes() // max(1, tensor.element_size())
    if tensor.numel() > stored:
        raise TableFileError(
            f"{name}: tensor {literal_repr(key)} claims shape {tuple(tensor.shape)} ({tensor.numel()} values) "
            f"but its storage holds only {stored}",
            hint="save a contiguous tensor (tensor.contiguous()) instead of an expanded view",
        )
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()  # numpy has no bfloat16: widen it exactly to float32
    return np.array(tensor.numpy(), copy=True, order="C")
