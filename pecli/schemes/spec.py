"""A table described by its scheme and parameters, computed on demand (whole or in row chunks).

>>> spec = TableSpec.resolve("sinusoidal", None, {"layout": "split"}, length=3, dim=4)
>>> spec.array().shape, spec.metadata()["layout"], spec.metadata()["scheme"]
((3, 4), 'split', 'sinusoidal')
>>> TableSpec.from_metadata(spec.metadata()) == spec
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from pecli import __version__
from pecli.dtypes import check_dtype, format_bytes, itemsize, round_to_stored, widen_bfloat16
from pecli.errors import ParameterError
from pecli.schemes._sizes import Sizes
from pecli.schemes.catalog import get_scheme, resolve
from pecli.schemes.metadata import decode_value, encode_value
from pecli.text import literal_repr

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Self

__all__ = ["TableSet", "TableSpec", "recorded_row_positions"]


#: the length at which :meth:`TableSpec.check` computes the first row of a table of more than two axes
_CHECK_LENGTH = 16
#: a bfloat16 table of more values than this is written from ``ml_dtypes``' compiled rounding (the scheme's own
#: bfloat16 rows), a smaller one from float64 rows rounded on the integer bits, which never imports ``ml_dtypes``:
#: its 0.7 release takes 2–3 s to import, and the integer route costs about 15 ns a value more (sinusoidal
#: 32768 × 1024: 0.74 s against 0.23 s), so the import pays off past about 150 million values
_COMPILED_BFLOAT16_FROM = 1 << 27


@dataclass(frozen=True)
class TableSpec:
    """Scheme, full parameters, sizes and dtype of a table; computes it on demand.

    ``length`` and ``dim`` are what the scheme function receives (``dim`` is None for ALiBi, and
    a grid's tokens set ``length``); :attr:`shape` is the tensor's, by the scheme's ``sizes`` rule.
    A scheme with several parts (RoPE's cos and sin) is one spec per part: see :meth:`parts`.
    """

    scheme: str
    params: Mapping[str, Any]
    length: int | None
    dim: int | None
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
        length: int | None,
        dim: int | None,
        dtype: str = "float32",
        name: str = "pe",
    ) -> Self:
        """Validate names, sizes and dtype and describe the table (:meth:`check` validates values)."""
        resolved, full = resolve(scheme, preset, params)
        sizes = resolved.sizes(length, dim, full)
        return cls(resolved.name, full, sizes.length, sizes.dim, check_dtype(dtype), preset, name)

    def check(self) -> TableSpec:
        """Compute the first row of every part, which checks every parameter value; returns the spec."""
        for part in self.parts():
            if not part.shape[0]:
                continue
            if len(part.shape) > 2 and part.length is not None and part.length > _CHECK_LENGTH:
                # a row of a (heads, len, len) table is a len × len matrix: the values are checked at a small len
                part = replace(part, length=_CHECK_LENGTH)
            part.stored_rows(range(0, 1))
        return self

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> Self:
        """The spec recorded in a file pecli wrote (see :meth:`metadata`), of the scheme's spec class.

        The registry names each scheme's class (``pecli timestep``'s files keep their timesteps).
        """
        scheme = get_scheme(metadata["scheme"])
        if cls is TableSpec and scheme.spec_class is not TableSpec:
            return cast("Self", scheme.spec_class.from_metadata(metadata))  # cls is TableSpec: any spec is one
        shape = metadata.get("shape", "").split(",")
        if "len" in metadata or "d" in metadata or len(shape) != 2:
            length, dim = (decode_value(metadata[key]) if key in metadata else None for key in ("len", "d"))
        else:  # files from before len and d were recorded
            length, dim = (int(n) for n in shape)
        params = {name: decode_value(metadata[name]) for name in scheme.defaults if name in metadata}
        return cls(
            scheme.name,
            {**scheme.defaults, **params},
            length,
            dim,
            metadata["dtype"],
            metadata.get("preset") or None,
            metadata.get("tensor", "pe"),
        )

    def parts(self) -> list[TableSpec]:
        """One spec per tensor to write: the scheme's default parts when ``part`` is unset, else itself.

        >>> [(p.name, p.params["part"]) for p in TableSpec.resolve("rope", None, {}, length=2, dim=4).parts()]
        [('cos', 'cos'), ('sin', 'sin')]
        """
        scheme = get_scheme(self.scheme)
        if not scheme.parts or self.params.get("part") is not None:
            return [self]
        if len(scheme.default_parts) == 1:
            return [replace(self, params={**self.params, "part": scheme.default_parts[0]})]
        return [replace(self, params={**self.params, "part": part}, name=part) for part in scheme.default_parts]

    def single(self) -> TableSpec:
        """This spec as one tensor; a scheme that writes several parts needs ``--part``.

        >>> TableSpec.resolve("rope", None, {"part": "sin"}, length=2, dim=4).single().shape
        (2, 4)
        """
        parts = self.parts()
        if len(parts) > 1:
            names = "|".join(get_scheme(self.scheme).parts)
            raise ParameterError(
                f"scheme {literal_repr(self.scheme)} has several tensors "
                f"({', '.join(p.name for p in parts)}); this needs one",
                hint=f"pick one with {{part={names}}}",
            )
        return parts[0]

    @property
    def sizes(self) -> Sizes:
        return get_scheme(self.scheme).sizes(self.length, self.dim, self.parts()[0].params)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.sizes.shape

    @property
    def nbytes(self) -> int:
        return sum(math.prod(part.shape) for part in self.parts()) * itemsize(self.dtype)

    @property
    def size_placeholders(self) -> str:
        """The sizes a user can shrink, as the placeholders a hint names them by (the CLI's flags).

        >>> TableSpec.resolve("alibi", None, {"heads": 4}, length=8, dim=None).size_placeholders
        '{length}'
        >>> TableSpec.resolve("sinusoidal", None, {}, length=8, dim=4).size_placeholders
        '{length} or {dim}'
        """
        return "{length}" if self.dim is None else "{length} or {dim}"

    def rows(self, rows: range):
        """Rows ``rows`` (of axis 0) of the table."""
        part = self.single()
        return get_scheme(self.scheme).function(part.length, part.dim, dtype=self.dtype, rows=rows, **part.params)

    def array(self):
        """The whole table (refused when it would not fit in memory)."""
        from pecli.memory import check_fits_in_memory

        part = self.single()
        # what the table is read for (a view, a comparison) needs it whole: writing it is generate's
        check_fits_in_memory(part.nbytes, hint=f"use a smaller {part.size_placeholders}")
        return part.rows(range(part.shape[0]))

    def chunks(self, chunk_bytes: int = 32 << 20) -> Iterator:
        """The table as consecutive chunks of rows (axis 0) of about ``chunk_bytes``, as a file stores them (the
        chunks of a :class:`~pecli.io.tensor.Tensor`): bfloat16 as its uint16 bit patterns, the same bits as
        :meth:`rows` gives, computed without ``ml_dtypes`` below ``_COMPILED_BFLOAT16_FROM`` values.

        >>> spec = TableSpec.resolve("sinusoidal", None, {}, length=3, dim=2, dtype="bfloat16")
        >>> [chunk.tolist() for chunk in spec.chunks(chunk_bytes=32)]
        [[[0, 16256], [16215, 16138]], [[16233, 48853]]]
        """
        part = self.single()
        value_bytes = 8 if part._rounds_bits() else itemsize(part.dtype)
        for rows in part._row_ranges(chunk_bytes, value_bytes):
            yield part.stored_rows(rows)

    def stored_rows(self, rows: range):
        """Rows ``rows`` (of axis 0) of the table as a file stores them: bfloat16 as its uint16 bit patterns.

        >>> spec = TableSpec.resolve("sinusoidal", None, {}, length=2, dim=2, dtype="bfloat16")
        >>> spec.stored_rows(range(1, 2)).tolist()
        [[16215, 16138]]
        """
        part = self.single()
        if part._rounds_bits():  # computed in float64 (as every dtype is) and rounded once, here
            return round_to_stored(replace(part, dtype="float64").rows(rows), "bfloat16")
        table = part.rows(rows)
        return table.view("uint16") if part.dtype == "bfloat16" else table

    def _rounds_bits(self) -> bool:
        """Whether :meth:`stored_rows` rounds float64 rows to bfloat16 bits itself (no ``ml_dtypes``)."""
        return self.dtype == "bfloat16" and math.prod(self.shape) <= _COMPILED_BFLOAT16_FROM

    def row_chunks(self, chunk_bytes: int = 32 << 20) -> Iterator:
        """The table as consecutive chunks of rows (axis 0) of about ``chunk_bytes``, each as :meth:`rows` gives it."""
        part = self.single()
        for rows in part._row_ranges(chunk_bytes, itemsize(part.dtype)):
            yield part.rows(rows)

    def _row_ranges(self, chunk_bytes: int, value_bytes: int) -> Iterator[range]:
        """Consecutive ranges of rows of about ``chunk_bytes`` at ``value_bytes`` a value."""
        shape = self.shape
        step = max(1, chunk_bytes // max(1, math.prod(shape[1:]) * value_bytes))
        for start in range(0, shape[0], step):
            yield range(start, min(start + step, shape[0]))

    def row_positions(self) -> np.ndarray | None:
        """The position p each row's angles p·ω (ω ≤ 1) take, when it is not the row's number (a timestep
        table's scale·t, fairseq's rows from position 2: a 1-D scheme's ``offset``); else None.

        >>> TableSpec.resolve("sinusoidal", None, {}, length=3, dim=4).row_positions() is None
        True
        >>> TableSpec.resolve("sinusoidal", "fairseq", {}, length=3, dim=4).row_positions().tolist()
        [2.0, 3.0, 4.0]
        """
        scaled = get_scheme(self.scheme).positions_of_rows(self.length, self.dim, self.params)
        if scaled is not None:  # a grid's scaled coordinates can pass its token index
            return scaled
        offset = self.params.get("offset")
        if not offset or self.length is None or get_scheme(self.scheme).axes != "positions":
            return None  # rows 0, 1, 2, … (a grid's rows are its cells: their index bounds their coordinates)
        import numpy as np

        return np.arange(self.length, dtype=np.float64) + float(offset)

    def metadata(self) -> dict[str, str]:
        """String pairs for a safetensors header: scheme, every parameter, dtype, shape, version.

        A file of several parts lists them under ``tensors`` (each tensor's shape is in the header).
        """
        parts = self.parts()
        meta = {"scheme": self.scheme, "dtype": self.dtype}
        if len(parts) == 1:
            meta.update(shape=",".join(str(n) for n in parts[0].shape), tensor=self.name)
        else:
            meta["tensors"] = ",".join(part.name for part in parts)
        meta.update({key: str(value) for key, value in (("len", self.length), ("d", self.dim)) if value is not None})
        meta["pecli_version"] = __version__
        if self.preset:
            meta["preset"] = self.preset
        meta.update(
            {name: encode_value(value) for name, value in parts[0].params.items() if len(parts) == 1 or name != "part"}
        )
        meta.update(get_scheme(self.scheme).derived_metadata(self.sizes, self.params))
        meta.update(self.extra_metadata)
        return meta

    def summary(self, *, with_values: bool) -> dict[str, Any]:
        """A JSON-ready description; ``with_values`` adds min and max (computed chunk by chunk)."""
        parts = self.parts()
        summary: dict[str, Any] = {
            "scheme": self.scheme,
            "preset": self.preset,
            "shape": list(parts[0].shape),
            "dtype": self.dtype,
            "nbytes": self.nbytes,
            "size": format_bytes(self.nbytes),
            # the parameters the file records (its metadata): the part written, or none for several parts
            "params": {name: value for name, value in parts[0].params.items() if len(parts) == 1 or name != "part"},
        }
        if len(parts) > 1:
            summary["parts"] = {part.name: list(part.shape) for part in parts}
        if with_values:
            import numpy as np

            low, high, nan = np.inf, -np.inf, 0
            for part in parts:
                for chunk in part.chunks():
                    chunk = np.asarray(widen_bfloat16(chunk) if part.dtype == "bfloat16" else chunk, dtype=np.float64)
                    if chunk.size and np.isnan(chunk.min()):  # min(inf, nan) is inf: NaN is counted apart
                        numbers = ~np.isnan(chunk)
                        nan += chunk.size - int(numbers.sum())
                        chunk = chunk[numbers]
                    if chunk.size:
                        low, high = min(low, float(chunk.min())), max(high, float(chunk.max()))
            summary["min"], summary["max"] = (low, high) if low <= high else (None, None)
            if nan:
                summary["nan"] = nan
        return summary


@dataclass(frozen=True)
class TableSet:
    """Several named tables written to one file (a model's tables per layer type): each table's parts are
    its tensors, named ``NAME.PART`` (``sliding_attention.cos``); the same interface as :class:`TableSpec`.

    >>> rope = TableSpec.resolve("rope", None, {}, length=2, dim=4)
    >>> tables = TableSet((("local", rope), ("global", replace(rope, params={**rope.params, "base": 1e6}))))
    >>> [part.name for part in tables.parts()], tables.nbytes
    (['local.cos', 'local.sin', 'global.cos', 'global.sin'], 128)
    >>> json.loads(tables.metadata()["layer_types"])["global"]["base"]
    1000000.0
    """

    tables: tuple[tuple[str, TableSpec], ...]
    extra_metadata: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def scheme(self) -> str:
        """The tables' scheme (each table's, when they share one)."""
        schemes = sorted({table.scheme for _, table in self.tables})
        return schemes[0] if len(schemes) == 1 else "+".join(schemes)

    @property
    def dtype(self) -> str:
        return self.tables[0][1].dtype

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.tables]

    def parts(self) -> list[TableSpec]:
        """Every table's parts, each named by its table: ``NAME.PART`` (``NAME`` for a one-tensor table)."""
        return [
            replace(part, name=f"{name}.{part.name}" if len(table.parts()) > 1 else name)
            for name, table in self.tables
            for part in table.parts()
        ]

    def single(self) -> TableSpec:
        names = ", ".join(part.name for part in self.parts())
        raise ParameterError(f"this file holds several tables ({names}); this needs one", hint="pick one table")

    def check(self) -> TableSet:
        """Check every table's values (see :meth:`TableSpec.check`); returns the set."""
        for _, table in self.tables:
            table.check()
        return self

    @property
    def nbytes(self) -> int:
        return sum(table.nbytes for _, table in self.tables)

    def metadata(self) -> dict[str, str]:
        """The file's metadata: its tensors, and under ``layer_types`` each table's scheme and parameters (JSON)."""
        meta = {"scheme": self.scheme, "dtype": self.dtype, "tensors": ",".join(p.name for p in self.parts())}
        meta["pecli_version"] = __version__
        meta["layer_types"] = json.dumps({name: _table_params(table) for name, table in self.tables})
        meta.update(self.extra_metadata)
        return meta

    def summary(self, *, with_values: bool) -> dict[str, Any]:
        """A JSON-ready description: each table's summary under ``tables``, and the file's totals."""
        summaries = {name: table.summary(with_values=with_values) for name, table in self.tables}
        summary: dict[str, Any] = {
            "scheme": self.scheme,
            "preset": None,
            "shape": summaries[self.names[0]]["shape"],
            "dtype": self.dtype,
            "nbytes": self.nbytes,
            "size": format_bytes(self.nbytes),
            "params": {},
            "parts": {part.name: list(part.shape) for part in self.parts()},
            "tables": {name: table["params"] for name, table in summaries.items()},
        }
        if with_values:
            lows = [s["min"] for s in summaries.values() if s["min"] is not None]
            highs = [s["max"] for s in summaries.values() if s["max"] is not None]
            summary["min"], summary["max"] = (min(lows), max(highs)) if lows else (None, None)
            nan = sum(s.get("nan", 0) for s in summaries.values())
            if nan:
                summary["nan"] = nan
        return summary


def recorded_row_positions(metadata: Mapping[str, str]) -> np.ndarray | None:
    """The positions the rows of a table pecli wrote embed, from its metadata, when they are not 0, 1, 2, …

    None for any other table, and for metadata that does not describe a spec (a file is untrusted input:
    its rows are then taken as positions, the usual reading).

    >>> recorded_row_positions({"scheme": "timestep", "dtype": "float32", "d": "4", "timesteps": "0:30:10"})
    array([ 0., 10., 20.])
    >>> recorded_row_positions({"scheme": "sinusoidal", "dtype": "float32", "len": "3", "d": "4"}) is None
    True
    """
    from pecli.schemes.catalog import find_scheme

    if find_scheme(metadata.get("scheme")) is None or "dtype" not in metadata:
        return None
    try:
        return TableSpec.from_metadata(metadata).row_positions()
    except (ValueError, TypeError, KeyError, ParameterError):
        return None


def _table_params(table: TableSpec) -> dict[str, Any]:
    """A table's scheme, sizes and parameters as JSON values (``part`` left out: each part is a tensor)."""
    params = {name: value for name, value in table.params.items() if name != "part"}
    return {"scheme": table.scheme, "len": table.length, "d": table.dim, **params}
