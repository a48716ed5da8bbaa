"""A PyTorch checkpoint copied with one tensor replaced: ``pecli resample --in-checkpoint`` on a .pt, .pth or .bin.

Loaded with ``torch.load(weights_only=True)`` (:mod:`pecli.io.pt`) and saved whole with ``torch.save``; the
safetensors copy, streamed byte for byte, is :mod:`pecli.io.checkpoint`'s.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import IO, Any, cast

import numpy as np

from pecli.errors import ParameterError, TableFileError
from pecli.io import find_key
from pecli.io.atomic import atomic_file, check_free_space, reported_os_errors
from pecli.io.checkpoint_files import CheckpointCopy
from pecli.io.pt import flatten_state, load_state, torch_tensor
from pecli.io.tensor import Tensor
from pecli.text import literal, literal_repr

__all__ = ["replace_pt_tensor"]

#: the names torch.optim gives per-parameter state (Adam, AdamW, SGD, RMSprop, Adagrad, Adadelta)
_OPTIMIZER_STATE = frozenset({"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg", "acc_delta"})


def replace_pt_tensor(source: str, target: str, key: str, table: np.ndarray) -> CheckpointCopy:
    """Write ``source`` (a torch.save checkpoint) to ``target`` with tensor ``key`` replaced by ``table``.

    ``key`` is dotted as :func:`pt_entries` names it (``model.pos_embed``); ``table`` must have the
    tensor's dtype. The checkpoint is loaded with ``weights_only=True`` and saved whole with
    ``torch.save``: nested containers, non-tensor entries (epochs, optimizer settings, strings) and
    storage shared between other tensors kept as torch.load gives them. The tensor is replaced in
    place (``set_``), so an ``nn.Parameter`` stays one and a tuple holding it holds the new one. A
    tensor sharing its storage with another (tied weights) is refused: replacing one would untie
    them. The copy is atomic; ``target`` must be another file than ``source``.

    Returns:
        A :class:`~pecli.io.checkpoint.CheckpointCopy`; its ``stale`` names the tensors that keep the
        old shape (Adam's ``exp_avg`` for it, an EMA copy).

    Example:
        >>> import os, tempfile, torch
        >>> folder = tempfile.mkdtemp()
        >>> source, target = os.path.join(folder, "m.pt"), os.path.join(folder, "new.pt")
        >>> torch.save({"model": {"pos": torch.zeros(4, 2)}, "epoch": 7}, source)
        >>> replace_pt_tensor(source, target, "model.pos", np.ones((6, 2), np.float32)).shape
        (6, 2)
        >>> copy = torch.load(target, weights_only=True)
        >>> copy["model"]["pos"].shape, copy["epoch"]
        (torch.Size([6, 2]), 7)
    """
    import torch

    with contextlib.suppress(OSError):
        if os.path.samefile(source, target):
            raise ParameterError(
                f"the output {literal_repr(target)} is the input file",
                hint="write to a new file: the input is never modified",
            )
    where = literal(source)
    with reported_os_errors(source), open(source, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        state = load_state(handle, where, size)  # storages mapped from ``handle``: it stays open until saved
        flat = flatten_state(state, where)
        name = find_key(list(flat), key, source)
        old = flat[name]
        new = Tensor.from_array(table)
        if str(old.dtype).removeprefix("torch.") != new.dtype:
            raise ParameterError(
                f"{where}: tensor {literal_repr(name)} is {str(old.dtype).removeprefix('torch.')}, "
                f"the new table {new.dtype}",
                hint="round the table to the tensor's dtype first",
            )
        # torch.save keeps tensors of one storage together by the storage's identity (its _cdata) too
        storage = old.untyped_storage()._cdata
        tied = [other for other, tensor in flat.items() if other != name and tensor.untyped_storage()._cdata == storage]
        if tied:
            raise TableFileError(
                f"{where}: tensor {literal_repr(name)} shares its storage with {literal_repr(tied[0])}"
                f"{f' and {len(tied) - 1} more' if len(tied) > 1 else ''} (tied weights), so replacing it alone "
                "would untie them",
                hint="untie them in the model and save it again, or write the resampled table to a file of its own",
            )
        old_shape, old_nbytes = tuple(old.shape), old.numel() * old.element_size()
        stale = _stale_copies(flat, name, old_shape)
        with torch.no_grad():
            old.set_(torch_tensor(new))
        check_free_space(target, size + new.nbytes - old_nbytes)
        with atomic_file(target) as written:
            recorded = _WriteErrors(written)
            try:
                torch.save(state, cast(IO[bytes], recorded))  # torch writes through write() and flush() alone
            except RuntimeError:  # torch's zip writer reports a failed write as "unexpected pos" at its end
                if recorded.error is None:
                    raise
                raise recorded.error from None
    return CheckpointCopy(name, old_shape, new.shape, new.dtype, target, new.nbytes, old_nbytes, stale=stale)


class _WriteErrors:
    """The file torch.save writes, keeping the first OSError of a write (a full disk) for the error message."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            return self.handle.write(data)
        except OSError as error:
            self.error = self.error or error
            raise

    def flush(self) -> None:
        self.handle.flush()


def _stale_copies(flat: Mapping[str, Any], name: str, shape: tuple[int, ...]) -> tuple[str, ...]:
    """The tensors of ``shape`` besides ``name`` that go with it: optimizer state (under a key naming an
    optimizer, or named as torch.optim names per-parameter state) or a copy under another prefix (an EMA).

    >>> import torch
    >>> flat = {"model.pos": torch.zeros(3), "ema.pos": torch.zeros(3), "optimizer.state.0.exp_avg": torch.zeros(3),
    ...         "model.bias": torch.zeros(3), "optimizer.state.1.exp_avg": torch.zeros(2)}
    >>> _stale_copies(flat, "model.pos", (3,))
    ('ema.pos', 'optimizer.state.0.exp_avg')
    """
    tail = name.split(".", 1)[-1]

    def goes_with(other: str) -> bool:
        parts = other.split(".")
        optimizer = parts[-1] in _OPTIMIZER_STATE or any("optim" in part.lower() for part in parts)
        return optimizer or other == tail or other.endswith("." + tail)

    return tuple(other for other, tensor in flat.items()
                 if other != name and tuple(tensor.shape) == shape and goes_with(other))  # fmt: skip
