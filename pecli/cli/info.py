"""``pecli info``: what a table file holds — tensors, shapes, dtypes and metadata — from its header."""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pecli.cli.options import KeyOpt, output_options
from pecli.cli.output import Output, printable
from pecli.errors import TableFileError

if TYPE_CHECKING:
    from pecli.io import StoredTensor

HELP = """Describe a table file: every tensor's name, shape (e.g. [len, d]) and dtype, and its metadata.

FILE is a .npy, .safetensors or .pt file, or a CSV/TSV table pecli wrote (told by content), or -
for stdin. For a .safetensors file pecli wrote, the metadata names the scheme and every parameter
that was set; for any other safetensors file, its own __metadata__ is shown. Only the header is
read, so this is instant on multi-GB checkpoints (.pt files are loaded by torch, text is parsed);
--stats reads the data to add min, max, mean and std.

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
        str,
        typer.Argument(
            metavar="FILE", help="A .npy, .safetensors, .pt, CSV or TSV file, a model directory, or - for stdin."
        ),
    ],
    key: KeyOpt = None,
    stats: Annotated[
        bool, typer.Option("--stats", help="Also read the data: min, max, mean and std of each tensor (or of --key).")
    ] = False,
    *,
    out: Output,
) -> None:
    from pecli.cli.output import note_chosen_key
    from pecli.io import find_key, open_tensors

    if os.path.isdir(file):
        from pecli.cli.model_inputs import show_model_directory

        show_model_directory(out, file, key=key, stats=stats)
        return
    if file != "-" and not os.path.exists(file):
        raise TableFileError(f"no such file: {file!r}", hint="give a .npy, .safetensors or .pt file, or - for stdin")
    from pecli.io.source import read_stdin

    source = read_stdin(out.stdin_bytes) if file == "-" else file
    with open_tensors(source) as opened:  # once: a pipe cannot be read twice, a file need not be
        if key is not None:
            chosen = find_key(opened.entries, key, opened.name)
            note_chosen_key(out, key, chosen)
            key = chosen
        shown = {key: opened.entries[key]} if key is not None else opened.entries
        report = describe(
            opened.name,
            {name: (entry.shape, entry.dtype) for name, entry in shown.items()},
            opened.metadata,
            size=opened.size,
        )
        if stats:
            entries = report["tensors"]
            found = all_tensor_stats([(entry["name"], shown[entry["name"]], entry["nbytes"]) for entry in entries])
            for entry, entry_stats in zip(entries, found, strict=True):
                entry["stats"] = entry_stats
    if out.json_output:
        out.json(report)
        return
    for line in format_report(report):
        out.data(line)


def describe(
    name: str,
    tensors: Mapping[str, tuple[tuple[int, ...], str]],
    metadata: Mapping[str, str],
    *,
    size: int | None = None,
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
    return {
        "file": name,
        "size": size,
        "tensors": entries,
        "pecli": _pecli_metadata(metadata),
        "metadata": dict(metadata),
    }


@functools.cache
def _itemsize(dtype: str) -> int:
    """Bytes per value of dtype ``dtype``: a numpy name or string (``<U2``), or a torch name numpy lacks.

    >>> _itemsize("bfloat16"), _itemsize("<U2"), _itemsize("float8_e4m3fn"), _itemsize("qint32")
    (2, 8, 1, 4)
    """
    import numpy as np

    if dtype == "bfloat16":
        return 2
    try:
        return np.dtype(dtype).itemsize
    except TypeError:  # float8_e5m2, qint8, quint4x2…: the name carries the bits
        bits = re.search(r"\d+", dtype)
        return max(1, int(bits.group()) // 8) if bits else 1


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


#: a tensor and its float64 copy this small fit in any memory pecli runs in
_ALWAYS_FITS = 16 << 20

#: above this magnitude the sum or the squares of a tensor's values can overflow float64
_OVERFLOWS = 1e150


def tensor_stats(entry: StoredTensor, key: str, nbytes: int) -> dict[str, float | int | None] | None:
    """min, max, mean and std (in float64, scaled so values near 1e308 do not overflow) of a tensor.

    None for a dtype with no real numbers. NaN values are left out and counted (``nan``, present
    only when there are some). Refuses (a :class:`~pecli.errors.ParameterError`) a tensor that,
    with its float64 copy, would not fit in the memory available.

    >>> import numpy as np
    >>> from pecli.io import StoredTensor
    >>> values = np.array([[1, 2], [3, 6]], dtype=np.int16)
    >>> tensor_stats(StoredTensor((2, 2), "int16", lambda: values), "", 8)
    {'min': 1.0, 'max': 6.0, 'mean': 3.0, 'std': 1.8708286933869707}
    >>> huge = np.array([1e308, 1e308, np.nan])
    >>> tensor_stats(StoredTensor((3,), "float64", lambda: huge), "", 24)
    {'min': 1e+308, 'max': 1e+308, 'mean': 1e+308, 'std': 0.0, 'nan': 1}
    """
    from pecli.io import is_real_dtype
    from pecli.memory import check_fits_in_memory

    if not is_real_dtype(entry.dtype):
        return None
    count = nbytes // _itemsize(entry.dtype)
    if nbytes + 8 * count > _ALWAYS_FITS:  # asking the system costs more than a small tensor's statistics
        check_fits_in_memory(
            nbytes + 8 * count,
            what=f"tensor {key!r} and its statistics",
            hint="drop --stats (the header alone is instant), or choose a smaller tensor with --key",
        )
    import numpy as np

    # ufunc reductions rather than the array methods: the same arithmetic as numpy's mean and std,
    # without their per-call overhead, which dominates for thousands of small tensors
    values = np.asarray(entry.load(), dtype=np.float64).reshape(-1)
    found: dict[str, float | int | None] = {"min": None, "max": None, "mean": None, "std": None}
    nan_count = 0
    if values.size and math.isnan(np.minimum.reduce(values)):  # NaN propagates: count them, leave them out
        missing = np.isnan(values)
        nan_count = int(np.count_nonzero(missing))
        values = values[~missing]
    if values.size:
        low, high = float(np.minimum.reduce(values)), float(np.maximum.reduce(values))
        scale = max(abs(low), abs(high))
        if scale == math.inf:
            with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: the mean and std are NaN
                mean, std = _mean_and_std(values)
        elif scale > _OVERFLOWS:  # scaled into [-1, 1], neither the sum nor the squares can overflow
            mean, std = (scale * moment for moment in _mean_and_std(values / scale))
        else:
            mean, std = _mean_and_std(values)
        found = {"min": low, "max": high, "mean": mean, "std": std}
    if nan_count:
        found["nan"] = nan_count
    return found


#: tensors of at most this many values have their statistics computed together, a batch at a time
_BATCHED_VALUES = 4096

#: float64 values in one batch (8 MiB, and as much again for the deviations)
_BATCH_VALUES = 1 << 20


def all_tensor_stats(tensors: Sequence[tuple[str, StoredTensor, int]]) -> list[dict[str, float | int | None] | None]:
    """:func:`tensor_stats` of each ``(key, entry, nbytes)``, the same values bit for bit.

    Small tensors of one dtype and size (a checkpoint's thousands of biases and norms) are read
    into one float64 array and reduced along its rows, a batch at a time: a few numpy calls per
    batch instead of ten per tensor, which dominated ``--stats`` on 10,000 tensors. A row with a
    NaN, an infinity or a value beyond the overflow guard takes :func:`tensor_stats`' careful path.

    >>> import numpy as np
    >>> from pecli.io import StoredTensor
    >>> ints = StoredTensor((2, 2), "int16", lambda: np.array([[1, 2], [3, 6]], dtype=np.int16))
    >>> gap = StoredTensor((2, 2), "float32", lambda: np.array([[1, np.nan], [3, 5]], dtype=np.float32))
    >>> for found in all_tensor_stats([("a", ints, 8), ("b", gap, 16)]):
    ...     print(found)
    {'min': 1.0, 'max': 6.0, 'mean': 3.0, 'std': 1.8708286933869707}
    {'min': 1.0, 'max': 5.0, 'mean': 3.0, 'std': 1.632993161855452, 'nan': 1}
    """
    from pecli.io import is_real_dtype

    found: list[dict[str, float | int | None] | None] = [None] * len(tensors)
    batches: dict[tuple[str, int], list[int]] = {}
    for index, (key, entry, nbytes) in enumerate(tensors):
        count = math.prod(entry.shape)
        if 0 < count <= _BATCHED_VALUES and is_real_dtype(entry.dtype):
            batches.setdefault((entry.dtype, count), []).append(index)
        else:
            found[index] = tensor_stats(entry, key, nbytes)
    if not batches:
        return found
    import numpy as np

    for (_, count), indices in batches.items():
        step = max(1, _BATCH_VALUES // count)
        for first in range(0, len(indices), step):
            batch = indices[first : first + step]
            values = np.empty((len(batch), count))
            for row, index in enumerate(batch):
                values[row] = tensors[index][1].load().reshape(-1)
            # per row, the arithmetic of tensor_stats and _mean_and_std (a reduction along a
            # contiguous row sums pairwise, as it does over a 1-D array)
            with np.errstate(all="ignore"):  # rows with NaN or inf are redone below
                low, high = np.minimum.reduce(values, axis=1), np.maximum.reduce(values, axis=1)
                plain = np.maximum(np.abs(low), np.abs(high)) <= _OVERFLOWS  # False for NaN and inf
                mean = np.add.reduce(values, axis=1) / count
                deviation = values - mean[:, None]
                variance = np.add.reduce(deviation * deviation, axis=1) / count
            for row, index in enumerate(batch):
                if plain[row]:
                    found[index] = {
                        "min": float(low[row]),
                        "max": float(high[row]),
                        "mean": float(mean[row]),
                        "std": math.sqrt(variance[row]),
                    }
                else:
                    found[index] = tensor_stats(tensors[index][1], tensors[index][0], tensors[index][2])
    return found


#: the human report lists at most this many tensors (``--json`` lists them all)
SHOWN_TENSORS = 1000


def _mean_and_std(values: Any) -> tuple[float, float]:
    """The mean and the (population) standard deviation of a 1-D float64 array, as numpy computes them."""
    import numpy as np

    mean = np.add.reduce(values) / values.size
    deviation = values - mean
    return float(mean), math.sqrt(np.add.reduce(deviation * deviation) / values.size)


def format_report(report: Mapping[str, Any]) -> list[str]:
    """The human-readable lines of a :func:`describe` report, every text from the file escaped.

    >>> print("\\n".join(format_report(describe("x.npy", {"": ((3, 2), "float64")}, {}))))
    x.npy: 1 tensor
      (array)  [3, 2]  float64  48 B
    >>> format_report(describe("m.safetensors", {}, {"t": "\\x1b]0;pwned\\x07"}))[-1]
    '  t: \\\\x1b]0;pwned\\\\x07'
    """
    from pecli.dtypes import format_bytes

    tensors = report["tensors"]
    size = f", {format_bytes(report['size'])}" if report.get("size") is not None else ""
    count = f"{len(tensors)} tensor{'s' if len(tensors) != 1 else ''}"
    lines = [f"{printable(report['file'])}: {count}{size}"]
    listed = tensors[:SHOWN_TENSORS]
    names = [printable(t["name"]) or "(array)" for t in listed]
    shapes = [str(t["shape"]) for t in listed]
    name_width = max(map(len, names), default=0)
    shape_width = max(map(len, shapes), default=0)
    dtype_width = max((len(t["dtype"]) for t in listed), default=0)
    for name, shape, tensor in zip(names, shapes, listed, strict=True):
        line = f"  {name:<{name_width}}  {shape:<{shape_width}}  {tensor['dtype']:<{dtype_width}}  "
        line += format_bytes(tensor["nbytes"])
        stats = tensor.get("stats")
        if stats and stats["min"] is not None:
            line += "  " + ", ".join(f"{k} {stats[k]:.6g}" for k in ("min", "max", "mean", "std"))
        if stats and stats.get("nan"):
            line += f", {stats['nan']} NaN"
        lines.append(line.rstrip())
    if len(tensors) > len(listed):
        lines.append(f"  … and {len(tensors) - len(listed)} more (--json lists them all, --key shows one)")
    pecli_meta = report.get("pecli")
    if pecli_meta is not None:
        preset = f" (preset {printable(pecli_meta['preset'])})" if pecli_meta.get("preset") else ""
        lines.append(f"written by pecli {printable(pecli_meta['version'])}: {printable(pecli_meta['scheme'])}{preset}")
        # what was set, as generate shows it: a parameter left unset (None) is not news (--json has them all)
        params = " ".join(
            f"{printable(k)}={printable(str(v))}" for k, v in pecli_meta["params"].items() if v is not None
        )
        lines.append(f"  parameters: {params or '(none)'}")
    elif report["metadata"]:
        lines += ["metadata:", *(f"  {printable(k)}: {printable(v)}" for k, v in report["metadata"].items())]
    return lines
