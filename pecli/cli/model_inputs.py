"""Model files on the command line: ``generate --from-config``, a model directory as a table input, ``info DIR``.

The reading is :mod:`pecli.models`' business; this module turns its answers into tables and lines.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

from pecli.cli.output import Output, printable
from pecli.errors import ParameterError, PecliError


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
) -> Any:
    """The :class:`~pecli.schemes.spec.TableSpec` a model's config implies, recording the config's values.

    A config whose layer types have different settings (and no ``layer_type`` picked) gives a
    :class:`~pecli.schemes.spec.TableSet`: one table per layer type, each tensor named ``TYPE.PART``.

    The config sets the scheme and its parameters; ``--len`` (default: the model's context),
    ``--part``, ``--dtype`` and the output options stay the user's.
    """
    from pecli.models import model_encoding, read_config
    from pecli.schemes.params import PARAMS

    given = [flag for flag, value in (("SCHEME", scheme), ("--preset", preset), ("--d", dim)) if value is not None]
    given += [PARAMS[param].flag for param in scheme_params if param != "part"]
    if given:
        raise ParameterError(
            f"--from-config sets the scheme and its parameters, so {', '.join(given)} cannot be given too",
            hint="drop them; --len, --part and --dtype still apply",
        )
    config_file = os.path.join(source, "config.json") if os.path.isdir(source) else source
    encoding = model_encoding(read_config(source), source=config_file, layer_type=layer_type)
    if encoding.scheme is None:
        weight = _learned_weight(source, encoding.learned_weight or "")
        raise ParameterError(
            f"{encoding.model_type} learns its positions: its table is the weight {weight!r}, not a formula",
            hint=f"pecli plot {_directory_of(source)} draws it",
        )
    for note in encoding.notes:
        out.note(f"{encoding.model_type}: {note}")

    def table_of(layer_encoding: Any) -> Any:
        return _encoding_table(layer_encoding, scheme_params=scheme_params, length=length, dtype=dtype, name=name)

    if encoding.layers:  # the layer types differ and none was picked: one table per layer type, in one file
        from pecli.schemes.spec import TableSet

        for layer, layer_encoding in encoding.layers:
            for note in layer_encoding.notes:
                if note not in encoding.notes:
                    out.note(f"{encoding.model_type} ({layer}): {note}")
        tables = tuple((layer, table_of(layer_encoding)) for layer, layer_encoding in encoding.layers)
        _check_config_size(sum(table.nbytes for _, table in tables), encoding, length)
        return TableSet(tables, extra_metadata=encoding.metadata(config_file))
    table = table_of(encoding)
    return dataclasses.replace(table, extra_metadata=encoding.metadata(config_file))


def _encoding_table(encoding: Any, *, scheme_params: dict[str, Any], length: int | None, dtype: str, name: str) -> Any:
    """The checked :class:`~pecli.schemes.spec.TableSpec` of one encoding, a bad value blamed on its config field."""
    from pecli.cli.common import build_table

    params = {**encoding.params, **scheme_params}
    fields = {k: v for k, v in encoding.fields.items() if not (k == "length" and length is not None)}
    try:
        table = build_table(
            encoding.scheme,
            encoding.preset,
            params,
            length=length if length is not None else encoding.length,
            dim=encoding.dim,
            dtype=dtype,
            name=name,
        )
        _check_config_size(table.nbytes, encoding, length)
        if all(len(part.shape) == 2 for part in table.parts()):  # a relative bias's row is a whole matrix
            row = max(part.shape[1] for part in table.parts())
            if row > _ROW_VALUES:
                raise ParameterError(
                    f"config.json asks for rows of {row:,} values ({_config_sizes(encoding, length)})",
                    hint="no model's position table is that wide: check the model's config.json",
                )
            table.check()  # the scheme checks its values on the first row, here where a field can be named
    except ParameterError as error:
        raise _blamed_on_config(error, fields) from None
    return table


#: a table larger than this is no model's: no disk holds it, so the config is broken or hostile
_ABSURD_BYTES = 1 << 50
#: the widest row (one position's values: head_dim, d_model) a config may ask for
_ROW_VALUES = 1 << 24


def _blamed_on_config(error: ParameterError, fields: dict[str, str]) -> ParameterError:
    """``error`` from the scheme with each parameter the config set named by its config field, not a flag.

    An error about the user's own options (``--len``, ``--part``) is returned as it is.
    """
    from pecli.cli.options import flag_for
    from pecli.errors import _PARAMETER, name_parameters

    message = error._templates[0]
    if not any(match.group(1) in fields for match in _PARAMETER.finditer(message)):
        return error

    def spell(name: str) -> str:
        if name in fields:
            return fields[name]
        return flag_for(name) if name in ("length", "part") else name

    return ParameterError(
        "config.json: " + name_parameters(message, spell), hint="the model's config.json sets this value"
    )


def human_bytes(nbytes: int) -> str:
    """A byte count in binary units, however large.

    >>> human_bytes(3 << 20), human_bytes(2**62), human_bytes(2**100)
    ('3.0 MiB', '4.0 EiB', '1.3e+30 bytes')
    """
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{float(nbytes):.1e} bytes"


def _config_sizes(encoding: Any, length: int | None) -> str:
    """The config's sizes, as ``max_position_embeddings 4096, head_dim 128`` (and ``--len N`` when given)."""
    from pecli.models.directory import shown

    sizes = [
        f"{key} {shown(str(value))}"
        for what, (key, value) in encoding.provenance.items()
        if what in ("length", "dim", "heads") and not (what == "length" and length is not None)
    ]
    return ", ".join(sizes + ([f"--len {length}"] if length is not None else []))


def _check_config_size(nbytes: int, encoding: Any, length: int | None) -> None:
    """A ParameterError, before any work, when the config's sizes make a table no disk can hold."""
    if nbytes <= _ABSURD_BYTES:
        return
    raise ParameterError(
        f"config.json asks for a table of {human_bytes(nbytes)} ({_config_sizes(encoding, length)})",
        hint="no disk holds it: pass a smaller --len, or check the model's config.json",
    )


def _directory_of(source: str) -> str:
    return source if os.path.isdir(source) else (os.path.dirname(source) or ".")


def _learned_weight(source: str, usual: str) -> str:
    """The learned position table's name in the model's own weights when they are there, else the usual name."""
    from pecli.models import open_model_directory

    try:
        names = [tensor.name for tensor in open_model_directory(_directory_of(source)).position_tensors()]
    except PecliError:
        return usual
    return next((name for name in names if name.endswith(usual)), names[0] if names else usual)


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
