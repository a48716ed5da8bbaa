"""``pecli info``: what a table file holds — tensors, shapes, dtypes and metadata — from its header."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Mapping
from typing import IO, Annotated, Any

import typer

from pecli.cli.options import KeyOpt, output_options
from pecli.cli.output import Output

HELP = """Describe a table file: every tensor's name, shape (e.g. [len, d]) and dtype, and its metadata.

FILE is a .npy, .safetensors or .pt file (told by content), or - for stdin. For a file pecli
wrote, the metadata names the scheme and every parameter; for any other safetensors file, its own
__metadata__ is shown. Only the header is read, so this is instant on multi-GB checkpoints
(.pt files are loaded by torch); --stats reads the data to add min, max, mean and std.

Examples:

\b
  pecli info pe.safetensors
  pecli info model.safetensors --key model.pos_embed --stats
  pecli generate --d 64 --len 128 -o - | pecli info - --json
"""

def register(app: typer.Typer) -> None:
    app.command("info", help=HELP, short_help="Describe a table file: tensors, shapes, dtypes, metadata.")(info)


@output_options
def info(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="A .npy, .safetensors or .pt file, a model directory, or - for stdin.")
    ],
    key: KeyOpt = None,
    stats: Annotated[
        bool, typer.Option("--stats", help="Also read the data: min, max, mean and std of each tensor (or of --key).")
    ] = False,
    *,
    out: Output,
) -> None:
    from pecli.io import read_tensors

    if os.path.isdir(file):
        from pecli.cli.model_inputs import show_model_directory

        show_model_directory(out, file, key=key, stats=stats)
        return
    if file != "-" and not os.path.exists(file):
        from pecli.errors import TableFileError

        raise TableFileError(f"no such file: {file!r}", hint="give a .npy, .safetensors or .pt file, or - for stdin")
    open_source = _source_opener(out, file)
    tensors, metadata = read_tensors(open_source())
    if key is not None and key not in tensors:
        from pecli.errors import TableFileError, did_you_mean

        raise TableFileError(f"{_display_name(file)} has no tensor {key!r}", hint=did_you_mean(key, list(tensors)))
    shown = {key: tensors[key]} if key is not None else tensors
    report = describe(_display_name(file), shown, metadata)
    if stats:
        for entry in report["tensors"]:
            entry["stats"] = tensor_stats(open_source, entry["name"], entry["nbytes"], entry["dtype"])
    if out.json_output:
        out.json(report)
        return
    for line in format_report(report):
        out.data(line)


def _display_name(file: str) -> str:
    return "<stdin>" if file == "-" else file


def _source_opener(out: Output, file: str) -> Callable[[], str | IO[bytes]]:
    """Something to pass to the table readers, once per read: the path, or stdin read once and replayed."""
    if file != "-":
        return lambda: file
    data = out.stdin.buffer.read()  # type: ignore[attr-defined]

    def replay() -> io.BytesIO:
        stream = io.BytesIO(data)
        stream.name = "<stdin>"  # what error messages call it
        return stream

    return replay


def describe(
    name: str, tensors: Mapping[str, tuple[tuple[int, ...], str]], metadata: Mapping[str, str]
) -> dict[str, Any]:
    """The JSON-ready report of a file: its tensors, and its metadata split into pecli's and the file's own.

    >>> report = describe("pe.safetensors", {"pe": ((4, 2), "float32")},
    ...                   {"scheme": "sinusoidal", "base": "10000.0", "pecli_version": "0.1.0"})
    >>> report["tensors"][0]["nbytes"], report["pecli"]["scheme"], report["pecli"]["params"]["base"]
    (32, 'sinusoidal', 10000.0)
    """
    entries = [
        {"name": key, "shape": list(shape), "dtype": dtype, "nbytes": math.prod(shape) * _itemsize(dtype)}
        for key, (shape, dtype) in tensors.items()
    ]
    size = os.path.getsize(name) if os.path.isfile(name) else None
    return {
        "file": name,
        "size": size,
        "tensors": entries,
        "pecli": _pecli_metadata(metadata),
        "metadata": dict(metadata),
    }


def _itemsize(dtype: str) -> int:
    import numpy as np

    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


def _pecli_metadata(metadata: Mapping[str, str]) -> dict[str, Any] | None:
    """The scheme, preset and parameters recorded by pecli (values decoded), or None for other files."""
    if "scheme" not in metadata or "pecli_version" not in metadata:
        return None
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.metadata import TABLE_KEYS, decode_value

    scheme = SCHEMES.get(metadata["scheme"])
    # a scheme this version does not know (written by a newer pecli): show every non-table key
    names = list(scheme.defaults) if scheme is not None else [k for k in metadata if k not in TABLE_KEYS]
    return {
        "scheme": metadata["scheme"],
        "preset": metadata.get("preset"),
        "params": {name: decode_value(metadata[name]) for name in names if name in metadata},
        "version": metadata["pecli_version"],
    }


def tensor_stats(open_source: Callable[[], Any], key: str, nbytes: int, dtype: str) -> dict[str, float | None] | None:
    """min, max, mean and std (accumulated in float64) of tensor ``key``; None for a dtype with no real numbers.

    Refuses (a :class:`~pecli.errors.ParameterError`) a tensor that, with std's float64 scratch
    copy, would not fit in the memory available.

    >>> import io, numpy as np
    >>> buffer = io.BytesIO(); np.save(buffer, np.array([[1, 2], [3, 6]], dtype=np.int16))
    >>> tensor_stats(lambda: io.BytesIO(buffer.getvalue()), "", 8, "int16")
    {'min': 1.0, 'max': 6.0, 'mean': 3.0, 'std': 1.8708286933869707}
    """
    from pecli.io import is_real_dtype, read_table
    from pecli.memory import check_fits_in_memory

    if not is_real_dtype(dtype):
        return None
    count = nbytes // _itemsize(dtype)
    check_fits_in_memory(
        nbytes + 8 * count,
        what=f"tensor {key!r} and its statistics",
        hint="drop --stats (the header alone is instant), or choose a smaller tensor with --key",
    )
    import numpy as np

    values = read_table(open_source(), key=key or None).array
    if values.size == 0:
        return {"min": None, "max": None, "mean": None, "std": None}
    return {
        "min": float(values.min()),
        "max": float(values.max()),
        "mean": float(values.mean(dtype=np.float64)),
        "std": float(values.std(dtype=np.float64)),
    }


def format_report(report: Mapping[str, Any]) -> list[str]:
    """The human-readable lines of a :func:`describe` report.

    >>> print("\\n".join(format_report(describe("x.npy", {"": ((3, 2), "float64")}, {}))))
    x.npy: 1 tensor
      (array)  [3, 2]  float64  48 B
    """
    from pecli.dtypes import format_bytes

    tensors = report["tensors"]
    size = f", {format_bytes(report['size'])}" if report.get("size") is not None else ""
    lines = [f"{report['file']}: {len(tensors)} tensor{'s' if len(tensors) != 1 else ''}{size}"]
    names = [t["name"] or "(array)" for t in tensors]
    shapes = [str(t["shape"]) for t in tensors]
    name_width = max(map(len, names), default=0)
    shape_width = max(map(len, shapes), default=0)
    dtype_width = max((len(t["dtype"]) for t in tensors), default=0)
    for name, shape, tensor in zip(names, shapes, tensors, strict=True):
        line = f"  {name:<{name_width}}  {shape:<{shape_width}}  {tensor['dtype']:<{dtype_width}}  "
        line += format_bytes(tensor["nbytes"])
        stats = tensor.get("stats")
        if stats and stats["min"] is not None:
            line += "  " + ", ".join(f"{k} {stats[k]:.6g}" for k in ("min", "max", "mean", "std"))
        lines.append(line.rstrip())
    pecli_meta = report.get("pecli")
    if pecli_meta is not None:
        preset = f" (preset {pecli_meta['preset']})" if pecli_meta.get("preset") else ""
        lines.append(f"written by pecli {pecli_meta['version']}: {pecli_meta['scheme']}{preset}")
        params = " ".join(f"{k}={v}" for k, v in pecli_meta["params"].items())
        lines.append(f"  parameters: {params or '(none)'}")
    elif report["metadata"]:
        lines += ["metadata:", *(f"  {k}: {v}" for k, v in report["metadata"].items())]
    return lines
