"""Model files on the command line: ``generate --from-config``, a model directory as a table input, ``info DIR``.

The reading is :mod:`pecli.models`' business; this module turns its answers into tables and lines.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from pecli.cli.output import Output, printable
from pecli.errors import ParameterError

if TYPE_CHECKING:
    from pecli.schemes.spec import TableSpec


def config_table(
    out: Output,
    source: str,
    scheme: str | None,
    preset: str | None,
    scheme_params: dict[str, Any],
    dim: int | None,
    length: int | None,
    *,
    dtype: str,
    name: str,
    layer_type: str | None = None,
) -> TableSpec:
    """The :class:`~pecli.schemes.spec.TableSpec` a model's config implies (:mod:`pecli.models.from_config`).

    The config sets the scheme and its parameters; ``--len`` (default: the model's context),
    ``--part``, ``--dtype`` and the output options stay the user's.
    """
    from pecli.models.from_config import config_encoding, config_spec
    from pecli.schemes.params import PARAMS

    given = [flag for flag, value in (("SCHEME", scheme), ("--preset", preset), ("--d", dim)) if value is not None]
    given += [PARAMS[param].flag for param in scheme_params if param != "part"]
    if given:
        raise ParameterError(
            f"--from-config sets the scheme and its parameters, so {', '.join(given)} cannot be given too",
            hint="drop them; --len, --part and --dtype still apply",
        )
    model = config_encoding(source, layer_type=layer_type)
    if not model.is_formula:
        raise ParameterError(
            f"{model.encoding.model_type} learns its positions: its table is the weight {model.learned_weight()!r}, "
            "not a formula",
            hint=f"pecli plot {model.directory} draws it",
        )
    for note in model.encoding.notes:
        out.note(f"{model.encoding.model_type}: {note}")
    return config_spec(model, length=length, scheme_params=scheme_params, dtype=dtype, name=name)


def show_model_directory(out: Output, path: str, *, key: str | None = None, stats: bool = False) -> None:
    """``pecli info DIR``: the position tensors (headers only) and the config's position settings."""
    if key is not None or stats:
        raise ParameterError(
            f"--key and --stats describe one file, but {path!r} is a model directory",
            hint="pecli info DIR lists its position tensors; give one of its .safetensors files for --key/--stats",
        )
    import numpy as np

    from pecli.dtypes import format_bytes
    from pecli.models import model_encoding, open_model_directory
    from pecli.models.directory import shown

    directory = open_model_directory(path)
    tensors = directory.position_tensors()
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
    if out.json_output:
        out.json(
            {
                "directory": path,
                "model_type": directory.config.get("model_type"),
                "weight_files": files,
                "position_tensors": [
                    {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "file": os.path.basename(t.file)}
                    for t in tensors
                ],
                "position_settings": settings,
            }
        )
        return
    model_type = shown(str(directory.config.get("model_type", "?")))
    out.data(f"{printable(path)}: model_type {model_type}, {len(files)} weight file{'s' * (len(files) != 1)}")
    out.data(f"position tensors ({len(tensors)}):" if tensors else "position tensors: none among the weights")
    width = max((len(shown(t.name)) for t in tensors), default=0)
    for tensor in tensors:
        itemsize = 2 if tensor.dtype == "bfloat16" else np.dtype(tensor.dtype).itemsize
        size = format_bytes(math.prod(tensor.shape) * itemsize)
        shape = str(list(tensor.shape))
        file = printable(os.path.basename(tensor.file))
        out.data(f"  {shown(tensor.name):<{width}}  {shape}  {tensor.dtype}  {size}  ({file})")
    if "problem" in settings:
        out.data(f"position settings: {shown(settings['problem'])}")
        return
    preset = f" (preset {settings['preset']})" if settings["preset"] else ""
    params = " ".join(f"{k}={shown(str(v))}" for k, v in settings["params"].items() if k not in ("layout",))
    out.data(f"position settings: {settings['scheme']}{preset}" + (f": {params}" if params else ""))
    for key, value in settings["config"].items():
        out.data(f"  config.json {shown(key)} = {shown(str(value))}")
