"""A model directory's weight files, as transformers finds them, and what a checkpoint copy did.

``from_pretrained`` loads the first of ``model.safetensors``, its shard index
``model.safetensors.index.json``, ``pytorch_model.bin`` and its shard index
``pytorch_model.bin.index.json``; :func:`weight_files` finds the same one, and :func:`other_weight_files`
the weight files beside it that the loader does not read. :mod:`pecli.io.checkpoint` (safetensors) and
:mod:`pecli.io.pt_checkpoint` (torch.save) copy a checkpoint with one tensor replaced and describe the copy as
a :class:`CheckpointCopy`.

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> for name in (PT_SINGLE_FILE, "tf_model.h5", "training_args.bin", "config.json"):
...     open(os.path.join(folder, name), "w").close()
>>> found = weight_files(folder)
>>> found.files, found.index
(('pytorch_model.bin',), None)
>>> other_weight_files(folder, found)
['tf_model.h5']
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pecli.errors import TableFileError
from pecli.text import literal, literal_repr, shown

__all__ = [
    "INDEX_FILE",
    "PT_INDEX_FILE",
    "PT_SINGLE_FILE",
    "SINGLE_FILE",
    "CheckpointCopy",
    "WeightFiles",
    "check_shard_holds",
    "loads_shards",
    "other_weight_files",
    "read_shard_index",
    "weight_files",
]

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
PT_SINGLE_FILE = "pytorch_model.bin"
PT_INDEX_FILE = "pytorch_model.bin.index.json"

#: the endings of weight files save_pretrained and other libraries write beside a model's own (TF, Flax, GGUF)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".gguf")
#: files with a weight file's ending that hold no weights (the Trainer's pickled TrainingArguments)
NOT_WEIGHTS = frozenset({"training_args.bin"})


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


def read_shard_index(directory: str, index_file: str = INDEX_FILE) -> tuple[dict[str, Any], dict[str, str]] | None:
    """``directory``'s shard index (``index_file``: ``model.safetensors.index.json``, or
    ``pytorch_model.bin.index.json``) and its weights' shard paths; None without one.

    Every reader of a sharded model (``info``, ``identify``, a checkpoint copy) goes through this one
    check: the index is a regular file of bounded size; it names no weight twice; each shard is a
    file beside it (not ``../x``, not in a subdirectory), present, and a regular file (not a FIFO,
    a directory, ``/dev/zero``). Anything else is a one-line :class:`~pecli.errors.TableFileError`.
    """
    from pecli.io.bounded import read_small_text

    index = os.path.join(directory, index_file)
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
    an EMA copy of it). ``old_files``: a model directory's other weight files, which its loader does not read and
    the copy keeps as they were, that hold the tensor at its old shape (a ``pytorch_model.bin`` beside
    ``model.safetensors``); ``unread_files``: such files pecli cannot read (``tf_model.h5``), kept as they were.
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
    old_files: tuple[str, ...] = ()
    unread_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class WeightFiles:
    """The weights transformers loads from a model directory: one file, or the shards an index names.

    ``files``: their names in the directory; ``index``: the index's name (None for one file), ``document`` its
    JSON and ``weight_map`` each weight's shard path (empty for one file, whose names only its header holds).
    """

    files: tuple[str, ...]
    index: str | None = None
    document: dict[str, Any] | None = None
    weight_map: Mapping[str, str] = field(default_factory=dict)

    @property
    def torch_save(self) -> bool:
        """Whether the files are torch.save checkpoints (``pytorch_model.bin``), not safetensors."""
        return not self.files[0].endswith(".safetensors")


def weight_files(directory: str) -> WeightFiles | None:
    """The weights ``from_pretrained`` would load from ``directory`` (the shard index read and checked by
    :func:`read_shard_index`); None where there are none of its four layouts."""
    for single, index_file in ((SINGLE_FILE, INDEX_FILE), (PT_SINGLE_FILE, PT_INDEX_FILE)):
        if os.path.isfile(os.path.join(directory, single)):
            return WeightFiles((single,))
        read = read_shard_index(directory, index_file)
        if read is not None:
            document, shards = read
            names = tuple(sorted({os.path.basename(path) for path in shards.values()}))
            return WeightFiles(names, index_file, document, shards)
    return None


def other_weight_files(directory: str, loaded: WeightFiles) -> list[str]:
    """The weight files directly in ``directory`` that its loader does not read (``loaded`` names those it does):
    a ``pytorch_model.bin`` beside ``model.safetensors``, an unread index's shards, a ``tf_model.h5``."""
    skip = {*loaded.files, *NOT_WEIGHTS}
    return sorted(
        entry.name
        for entry in os.scandir(directory)
        if entry.is_file() and not entry.name.startswith(".") and entry.name not in skip
        and entry.name.lower().endswith(WEIGHT_SUFFIXES)
    )  # fmt: skip
