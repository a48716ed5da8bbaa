"""A model directory as ``save_pretrained`` writes it: ``config.json`` beside ``model.safetensors``, or
beside shards listed in ``model.safetensors.index.json``, and the position tensors among its weights.

Only headers are read to list tensors, and only the shards whose index entries name a position
tensor; reading a tensor opens the one shard that holds it.

>>> is_position_tensor("bert.embeddings.position_embeddings.weight"), is_position_tensor("wte.weight")
(True, False)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pecli.errors import TableFileError
from pecli.io.checkpoint import INDEX_FILE, SINGLE_FILE, check_shard_holds  # the file names, defined once
from pecli.io.checkpoint_files import PT_INDEX_FILE
from pecli.text import literal, shown

__all__ = [
    "INDEX_FILE",
    "POSITION_TENSOR_NAMES",
    "SINGLE_FILE",
    "ModelDirectory",
    "ModelTensor",
    "is_position_tensor",
    "is_table_shape",
    "open_model_directory",
    "shown",
]

#: name components that mark a position tensor, as the models name them: BERT and its kin,
#: GPT-2, BART/OPT/Marian/Whisper, ViT/MAE (``pos_embed``), T5's buckets, rotary buffers
POSITION_TENSOR_NAMES = (
    "position_embeddings",
    "wpe",
    "embed_positions",
    "pos_embed",
    "position_embedding",
    "relative_attention_bias",
    "inv_freq",
)

CONFIG_FILE = "config.json"


def is_table_shape(shape: tuple[int, ...]) -> bool:
    """A position table's shape: 2-D, or ``(1, N, C)`` as a ViT's ``pos_embed`` is stored.

    >>> is_table_shape((512, 768)), is_table_shape((1, 197, 768)), is_table_shape((64,)), is_table_shape((2, 4, 8))
    (True, True, False, False)
    """
    from pecli.io import table_kind

    return table_kind(shape) in ("2-D", "(1, N, C)")


def is_position_tensor(name: str) -> bool:
    """Whether weight ``name`` is a position table (or a rotary ``inv_freq``), by its dotted components."""
    return any(part in POSITION_TENSOR_NAMES for part in name.split("."))


@dataclass(frozen=True)
class ModelTensor:
    """One weight of a model directory: its name, the file that holds it, and (once read) shape and dtype."""

    name: str
    file: str  #: path of the .safetensors file holding it
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class ModelDirectory:
    """A model directory: its ``config.json`` and where each weight lives (the index, or the single file)."""

    path: str
    config: Mapping[str, Any]
    weight_files: Mapping[str, str]  #: weight name -> the .safetensors file that holds it

    def position_tensors(self) -> list[ModelTensor]:
        """The position tensors with shapes and dtypes, reading the headers of the shards that hold them."""
        from pecli.io import read_tensors

        wanted = [name for name in self.weight_files if is_position_tensor(name)]
        headers: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {}
        found = []
        for name in wanted:
            file = self.weight_files[name]
            if file not in headers:
                headers[file] = read_tensors(file)[0]
            check_shard_holds(self._index_name(), name, file, headers[file])
            shape, dtype = headers[file][name]
            found.append(ModelTensor(name, file, tuple(shape), dtype))
        return found

    def position_table(self, key: str | None = None) -> tuple[ModelTensor, Any]:
        """The position table (tensor ``key``, or the one 2-D position tensor) and its values; the tensor's
        ``dtype`` is the one stored in the file (``bfloat16`` where numpy holds the values as float32).

        More than one candidate, or none, is a :class:`~pecli.errors.TableFileError` listing them.
        """
        from pecli.io import read_table

        tensor = self.stored_table(key)
        loaded = read_table(tensor.file, key=tensor.name)
        # the dtype stored in the file (a bfloat16 tensor is held as float32 by numpy)
        return replace(tensor, dtype=loaded.dtype or loaded.array.dtype.name), loaded.array

    def stored_table(self, key: str | None = None) -> ModelTensor:
        """The tensor :meth:`position_table` reads (its name, shard, shape and stored dtype), from the headers
        alone: tensor ``key`` (exact, or the one weight, else the one position tensor, whose name contains it),
        else the one 2-D position tensor, else the one ``(1, N, C)`` position tensor (a ViT's ``pos_embed``)."""
        from pecli.io import find_key, read_tensors

        if key is not None:
            containing = [name for name in self.weight_files if key in name]
            if key not in self.weight_files and len(containing) > 1:
                # a part several weights contain but one position tensor does (BART's --key encoder: its
                # encoder.embed_positions.weight, not the decoder's encoder_attn weights)
                positions = [name for name in containing if is_position_tensor(name)]
                key = positions[0] if len(positions) == 1 else key
            key = find_key(self.weight_files, key, self.path, what="weight")
            file = self.weight_files[key]
            header = read_tensors(file)[0]
            check_shard_holds(self._index_name(), key, file, header)
            shape, dtype = header[key]
            return ModelTensor(key, file, tuple(shape), dtype)
        found = self.position_tensors()
        # 2-D tables first (as before); a ViT's (1, N, C) pos_embed when there is none
        tables = [tensor for tensor in found if len(tensor.shape) == 2] or [t for t in found if is_table_shape(t.shape)]
        if len(tables) != 1:
            listing = "; ".join(f"{literal(shown(t.name))} {list(t.shape)}" for t in tables)
            problem = f"{literal(self.path)} holds {len(tables)} 2-D position tensors" if tables else None
            if problem is None:
                raise TableFileError(
                    f"{literal(self.path)} holds no 2-D position table among its weights",
                    hint="its encoding may be computed: pecli generate {from_config=" + literal(self.path) + "}",
                )
            raise TableFileError(f"{problem}; choose one with {{key}}", hint=f"candidates: {listing}")
        return tables[0]

    def _index_name(self) -> str:
        """The shard index the weights were listed from: ``pytorch_model.bin.index.json`` for torch.save shards
        (a resample's :func:`~pecli.analysis.resample_checkpoint.open_weights`), else ``model.safetensors.index.json``.

        >>> ModelDirectory("m", {}, {"wpe.weight": "m/pytorch_model-00001-of-00002.bin"})._index_name()
        'm/pytorch_model.bin.index.json'
        >>> ModelDirectory("m", {}, {"wpe.weight": "m/model-00001-of-00002.safetensors"})._index_name()
        'm/model.safetensors.index.json'
        """
        torch_save = any(not file.endswith(".safetensors") for file in self.weight_files.values())
        return os.path.join(self.path, PT_INDEX_FILE if torch_save else INDEX_FILE)


def open_model_directory(path: str) -> ModelDirectory:
    """Read ``path``'s ``config.json`` and where its weights are (the shard index, or ``model.safetensors``).

    A directory without ``config.json``, without weights, or whose index names a missing shard is
    a :class:`~pecli.errors.TableFileError`. No tensor data is read.
    """
    from pecli.io.checkpoint import loads_shards, read_shard_index
    from pecli.models.config import read_config

    config = read_config(path)
    single = os.path.join(path, SINGLE_FILE)
    # model.safetensors first, as transformers loads it; the index's FIFO, /dev/zero or outside shard named as such
    read = read_shard_index(path) if loads_shards(path) else None
    if read is not None:
        return ModelDirectory(path, config, read[1])
    if os.path.isfile(single):
        from pecli.io import read_tensors

        return ModelDirectory(path, config, dict.fromkeys(read_tensors(single)[0], single))
    raise TableFileError(
        f"{literal(path)} has no weights ({SINGLE_FILE} or {INDEX_FILE})",
        hint="give a directory that save_pretrained wrote with safetensors weights",
    )
