"""What ``pecli info DIR`` shows of a model directory: its position tensors (from the headers) and the
position settings its config gives, as text or JSON.

>>> import json, os, tempfile
>>> import numpy as np
>>> from safetensors.numpy import save_file
>>> model = tempfile.mkdtemp()
>>> save_file({"transformer.wpe.weight": np.zeros((8, 4), np.float32)}, os.path.join(model, "model.safetensors"))
>>> config = {"model_type": "gpt2", "n_positions": 8, "n_embd": 4}
>>> with open(os.path.join(model, "config.json"), "w") as file:
...     _ = file.write(json.dumps(config))
>>> info = describe_model_directory(model)
>>> [tensor.name for tensor in info.tensors], info.settings["scheme"]
(['transformer.wpe.weight'], 'learned')
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from pecli.analysis.stats import itemsize
from pecli.dtypes import format_bytes
from pecli.errors import ParameterError
from pecli.models.directory import ModelTensor, open_model_directory
from pecli.report import Shown
from pecli.text import printable

__all__ = ["ModelInfo", "describe_model_directory"]


@dataclass(frozen=True)
class ModelInfo(Shown):
    """A model directory's position tensors and position settings (or the problem reading them)."""

    directory: str
    model_type: Any
    weight_files: list[str]
    tensors: list[ModelTensor]
    #: scheme, preset, params and the config fields read; or ``{"problem": message}``
    settings: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "model_type": self.model_type,
            "weight_files": self.weight_files,
            "position_tensors": [
                {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "file": os.path.basename(t.file)}
                for t in self.tensors
            ],
            "position_settings": self.settings,
        }

    def text_lines(self) -> list[str]:
        files, tensors, settings = self.weight_files, self.tensors, self.settings
        model_type = printable(str(self.model_type if self.model_type is not None else "?"))
        lines = [
            f"{printable(self.directory)}: model_type {model_type}, {len(files)} weight file{'s' * (len(files) != 1)}"
        ]
        lines.append(f"position tensors ({len(tensors)}):" if tensors else "position tensors: none among the weights")
        width = max((len(printable(t.name)) for t in tensors), default=0)
        for tensor in tensors:
            size = format_bytes(math.prod(tensor.shape) * itemsize(tensor.dtype))
            file = printable(os.path.basename(tensor.file))
            lines.append(f"  {printable(tensor.name):<{width}}  {list(tensor.shape)}  {tensor.dtype}  {size}  ({file})")
        if "problem" in settings:
            return [*lines, f"position settings: {printable(settings['problem'])}"]
        preset = f" (preset {settings['preset']})" if settings["preset"] else ""
        params = " ".join(f"{k}={printable(str(v))}" for k, v in settings["params"].items() if k != "layout")
        lines.append(f"position settings: {settings['scheme']}{preset}" + (f": {params}" if params else ""))
        lines += [
            f"  config.json {printable(key)} = {printable(str(value))}" for key, value in settings["config"].items()
        ]
        return lines


def describe_model_directory(path: str) -> ModelInfo:
    """The position tensors (headers only) and the config's position settings of model directory ``path``."""
    from pecli.models import model_encoding

    directory = open_model_directory(path)
    try:
        encoding = model_encoding(directory.config)
        settings: dict[str, Any] = {
            "scheme": encoding.scheme or "learned",
            "preset": encoding.preset,
            "params": encoding.params,
            "config": {key: value for key, value in encoding.provenance.values()},
        }
    except ParameterError as error:
        settings = {"problem": str(error)}
    files = sorted({os.path.basename(file) for file in directory.weight_files.values()})
    return ModelInfo(path, directory.config.get("model_type"), files, directory.position_tensors(), settings)
