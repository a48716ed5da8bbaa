"""A table described by its scheme and parameters, computed on demand (whole or in row chunks).

>>> spec = TableSpec.resolve("sinusoidal", None, {"layout": "split"}, length=3, dim=4)
>>> spec.array().shape, spec.metadata()["layout"], spec.metadata()["scheme"]
((3, 4), 'split', 'sinusoidal')
>>> TableSpec.from_metadata(spec.metadata()) == spec
True
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pecli import __version__
from pecli.dtypes import check_dtype, itemsize
from pecli.schemes._checks import positive_int
from pecli.schemes.catalog import get_scheme, resolve

__all__ = ["TableSpec"]

#: metadata keys that describe the table rather than a scheme parameter
_RESERVED = ("scheme", "preset", "dtype", "shape", "tensor", "pecli_version")


@dataclass(frozen=True)
class TableSpec:
    """Scheme, full parameters, shape and dtype of a table; computes it on demand."""

    scheme: str
    params: Mapping[str, Any]
    length: int
    dim: int
    dtype: str = "float32"
    preset: str | None = None
    name: str = "pe"
    extra_metadata: Mapping[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def resolve(
        cls,
        scheme: str | None,
        preset: str | None,
        params: Mapping[str, Any],
        *,
        length: int,
        dim: int,
        dtype: str = "float32",
        name: str = "pe",
    ) -> TableSpec:
        """Validate names, shape and dtype and describe the table (:meth:`check` validates values)."""
        resolved, full = resolve(scheme, preset, params)
        length = positive_int("len", length, flag="--len")
        dim = positive_int("d", dim, flag="--d")
        return cls(resolved.name, full, length, dim, check_dtype(dtype), preset, name)

    def check(self) -> TableSpec:
        """Compute one row, which checks every parameter value; returns the spec."""
        self.rows(range(0, 1))
        return self

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> TableSpec:
        """The spec recorded in a file pecli wrote (see :meth:`metadata`); ``pecli timestep``'s keep their timesteps."""
        if "timesteps" in metadata and cls is TableSpec:
            from pecli.schemes.timestep import TimestepSpec

            return TimestepSpec.from_metadata(metadata)
        scheme = get_scheme(metadata["scheme"])
        length, dim = (int(n) for n in metadata["shape"].split(","))
        params = {name: _decode(metadata[name]) for name in scheme.defaults if name in metadata}
        return cls(
            scheme.name,
            {**scheme.defaults, **params},
            length,
            dim,
            metadata["dtype"],
            metadata.get("preset") or None,
            metadata.get("tensor", "pe"),
        )

    @property
    def shape(self) -> tuple[int, int]:
        return (self.length, self.dim)

    @property
    def nbytes(self) -> int:
        return self.length * self.dim * itemsize(self.dtype)

    def rows(self, rows: range):
        """Rows ``rows`` of the table."""
        return get_scheme(self.scheme).function(self.length, self.dim, dtype=self.dtype, rows=rows, **self.params)

    def array(self):
        """The whole table (refused when it would not fit in memory)."""
        from pecli.schemes import check_fits_in_memory

        check_fits_in_memory(self.nbytes)
        return self.rows(range(self.length))

    def chunks(self, chunk_bytes: int = 32 << 20) -> Iterator:
        """The table as consecutive row chunks of about ``chunk_bytes``."""
        step = max(1, chunk_bytes // (self.dim * itemsize(self.dtype)))
        for start in range(0, self.length, step):
            yield self.rows(range(start, min(start + step, self.length)))

    def metadata(self) -> dict[str, str]:
        """String pairs for a safetensors header: scheme, every parameter, dtype, shape, version."""
        meta = {
            "scheme": self.scheme,
            "dtype": self.dtype,
            "shape": f"{self.length},{self.dim}",
            "tensor": self.name,
            "pecli_version": __version__,
        }
        if self.preset:
            meta["preset"] = self.preset
        meta.update({name: _encode(value) for name, value in self.params.items()})
        meta.update(self.extra_metadata)
        return meta

    def summary(self, *, with_values: bool) -> dict[str, Any]:
        """A JSON-ready description; ``with_values`` adds min and max (computed chunk by chunk)."""
        summary: dict[str, Any] = {
            "scheme": self.scheme,
            "preset": self.preset,
            "shape": [self.length, self.dim],
            "dtype": self.dtype,
            "nbytes": self.nbytes,
            "size": _human(self.nbytes),
            "params": dict(self.params),
        }
        if with_values:
            import numpy as np

            low, high = np.inf, -np.inf
            for chunk in self.chunks():
                chunk = np.asarray(chunk, dtype=np.float64)
                low, high = min(low, float(chunk.min())), max(high, float(chunk.max()))
            summary["min"], summary["max"] = low, high
        return summary


def _encode(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _human(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024:
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes:.1f} TiB"
