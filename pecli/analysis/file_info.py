"""What a table file holds — its tensors, shapes, dtypes, metadata, and (read on request) statistics.

:func:`describe` builds a :class:`FileInfo` from a file's header; the report shows itself as text
(every name from the file escaped) or as JSON (the exact strings).

>>> info = describe("pe.npy", {"": ((4, 2), "float32")}, {})
>>> info.text_lines()
['pe.npy: 1 tensor', '  (array)  [4, 2]  float32  32 B']
>>> info.to_json()["tensors"][0]["nbytes"]
32
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pecli.analysis.stats import all_tensor_stats, itemsize
from pecli.errors import Message
from pecli.report import Shown
from pecli.text import printable

if TYPE_CHECKING:
    from pecli.io import StoredTensor

__all__ = ["FileInfo", "describe"]

#: the human report lists at most this many tensors (``--json`` lists them all)
SHOWN_TENSORS = 1000


@dataclass
class FileInfo(Shown):
    """The report of one file: its name, size, tensors (name, shape, dtype, nbytes, stats) and metadata."""

    file: str
    size: int | None
    tensors: list[dict[str, Any]]
    #: the scheme, preset and decoded parameters pecli recorded, or None for another writer's file
    pecli: dict[str, Any] | None
    metadata: dict[str, str]
    #: the tensor ``--key`` chose (``tensors`` lists it alone), or None when every tensor is listed
    key: str | None = None
    #: how many tensors the file holds (``tensors`` may list one of them), or None when it lists them all
    count: int | None = None

    def add_stats(self, stored: Mapping[str, StoredTensor]) -> None:
        """Read every listed tensor (``stored[name]``) and add its min, max, mean and std."""
        found = all_tensor_stats([(entry["name"], stored[entry["name"]], entry["nbytes"]) for entry in self.tensors])
        for entry, entry_stats in zip(self.tensors, found, strict=True):
            entry["stats"] = entry_stats

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "size": self.size,
            "tensor_count": len(self.tensors) if self.count is None else self.count,
            "key": self.key,
            "tensors": self.tensors,
            "pecli": self.pecli,
            "metadata": self.metadata,
        }

    def text_lines(self) -> list[str]:
        """The report as lines, every text from the file escaped.

        >>> print("\\n".join(describe("x.npy", {"": ((3, 2), "float64")}, {}).text_lines()))
        x.npy: 1 tensor
          (array)  [3, 2]  float64  48 B
        >>> describe("m.safetensors", {}, {"t": "\\x1b]0;pwned\\x07"}).text_lines()[-1]
        '  t: \\\\x1b]0;pwned\\\\x07'
        """
        from pecli.dtypes import format_bytes

        report = self.to_json()
        tensors = report["tensors"]
        size = f", {format_bytes(report['size'])}" if report.get("size") is not None else ""
        total = report["tensor_count"]
        count = f"{total} tensor{'s' if total != 1 else ''}"
        chosen = f", showing {printable(report['key']) or '(array)'}" if report["key"] is not None else ""
        lines = [f"{printable(report['file'])}: {count}{size}{chosen}"]
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
            for field, what in (("nan", "NaN"), ("posinf", "+inf"), ("neginf", "-inf")):
                if stats and stats.get(field):
                    line += f", {stats[field]} {what}"
            lines.append(line.rstrip())
        if len(tensors) > len(listed):
            more = len(tensors) - len(listed)
            lines.append(Message(f"  … and {more} more ({{json_output}} lists them all, {{key}} shows one)"))
        pecli_meta = report.get("pecli")
        if pecli_meta is not None:
            preset = f" (preset {printable(pecli_meta['preset'])})" if pecli_meta.get("preset") else ""
            lines.append(
                f"written by pecli {printable(pecli_meta['version'])}: {printable(pecli_meta['scheme'])}{preset}"
            )
            # what was set, as generate shows it: a parameter left unset (None) is not news (--json has them all)
            params = " ".join(
                f"{printable(k)}={printable(str(v))}" for k, v in pecli_meta["params"].items() if v is not None
            )
            for layer, values in pecli_meta.get("layer_types", {}).items():  # one table per layer type
                shown = " ".join(f"{printable(k)}={printable(str(v))}" for k, v in values.items() if v is not None)
                lines.append(f"  {printable(layer)}: {shown}")
            if params or not pecli_meta.get("layer_types"):
                lines.append(f"  parameters: {params or '(none)'}")
        elif report["metadata"]:
            lines += ["metadata:", *(f"  {printable(k)}: {printable(v)}" for k, v in report["metadata"].items())]
        return lines


def describe(
    name: str,
    tensors: Mapping[str, tuple[tuple[int, ...], str]],
    metadata: Mapping[str, str],
    *,
    size: int | None = None,
    key: str | None = None,
) -> FileInfo:
    """The JSON-ready report of a file: its tensors, and its metadata split into pecli's and the file's own.

    With ``key`` (one of ``tensors``), that tensor alone is listed, and the report still counts them all:

    >>> shown = describe("m.safetensors", {"a": ((2,), "float32"), "b": ((3,), "float32")}, {}, key="b")
    >>> shown.text_lines()[0], [t["name"] for t in shown.to_json()["tensors"]], shown.to_json()["tensor_count"]
    ('m.safetensors: 2 tensors, showing b', ['b'], 2)

    >>> report = describe("pe.safetensors", {"pe": ((4, 2), "float32")},
    ...                   {"scheme": "sinusoidal", "base": "10000.0", "pecli_version": "0.1.0"})
    >>> report.tensors[0]["nbytes"], report.pecli["scheme"], report.pecli["params"]["base"]
    (32, 'sinusoidal', 10000.0)
    """
    entries = [
        {"name": tensor, "shape": list(shape), "dtype": dtype, "nbytes": math.prod(shape) * itemsize(dtype)}
        for tensor, (shape, dtype) in tensors.items()
        if key is None or tensor == key
    ]
    return FileInfo(name, size, entries, _pecli_metadata(metadata), dict(metadata), key, len(tensors))


def _pecli_metadata(metadata: Mapping[str, str]) -> dict[str, Any] | None:
    """The scheme, preset and parameters recorded by pecli (values decoded), or None for other files."""
    if "scheme" not in metadata or "pecli_version" not in metadata:
        return None
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.metadata import TABLE_KEYS, decode_value

    scheme = SCHEMES.get(metadata["scheme"])
    # a scheme this version does not know (written by a newer pecli): show every non-table key
    names = list(scheme.defaults) if scheme is not None else [k for k in metadata if k not in TABLE_KEYS]
    described = {
        "scheme": metadata["scheme"],
        "preset": metadata.get("preset"),
        "params": {name: decode_value(metadata[name]) for name in names if name in metadata},
        "version": metadata["pecli_version"],
    }
    layer_types = _layer_types(metadata.get("layer_types"))
    if layer_types:  # a file of one table per layer type (TableSet): each one's parameters
        described["layer_types"] = layer_types
    return described


def _layer_types(text: str | None) -> dict[str, dict[str, Any]]:
    """The ``layer_types`` metadata (JSON: layer type -> its scheme and parameters); {} when absent or malformed."""
    import json

    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        return {}
    return value
