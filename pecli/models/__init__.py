"""Models' own files: a ``config.json`` → the position encoding it implies; a model directory → its
position tensors, read from safetensors headers and only the shards that hold them.

>>> model_encoding({"model_type": "bloom", "n_head": 8}).params
{'heads': 8}
"""

from __future__ import annotations

from pecli.models.config import ROPE_TYPES, ModelEncoding, model_encoding, read_config
from pecli.models.directory import (
    POSITION_TENSOR_NAMES,
    ModelDirectory,
    ModelTensor,
    is_position_tensor,
    open_model_directory,
)

__all__ = [
    "POSITION_TENSOR_NAMES",
    "ROPE_TYPES",
    "ModelDirectory",
    "ModelEncoding",
    "ModelTensor",
    "is_position_tensor",
    "model_encoding",
    "open_model_directory",
    "read_config",
]
