"""What precision costs: a table computed in reduced arithmetic against the float64 table.

A table with an ``arithmetic`` parameter (:mod:`pecli.schemes.arithmetic`: RoPE, sinusoidal,
timestep) is computed twice at the same rows, in float64 and in the arithmetic, and the absolute
difference ``|table_a − table_64|`` is reduced to what a picture needs: per column over
log-spaced position bins (a heatmap), per bin (a curve), and the largest error of each reduced
arithmetic. Where positions alias is the first position ``p`` the arithmetic holds as the same value
as ``p − 1`` (bfloat16: 257, float16: 2049, float32: 16777217).

Memory is bounded: a table of at most :data:`FULL_ROWS` rows is computed whole, in blocks of
:data:`BLOCK_ROWS` rows; a longer one on :data:`SAMPLE_BLOCKS` blocks of :data:`SAMPLE_ROWS`
consecutive rows at log-spaced starts (``sampled`` says so).

>>> from pecli.schemes.spec import TableSpec
>>> spec = TableSpec.resolve("rope", None, {}, length=1024, dim=8, dtype="float64")
>>> errors = precision_errors(spec, "bfloat16")
>>> errors.alias_position, errors.sampled
(257, False)
>>> errors.max_error["bfloat16"] > 0.1 > errors.max_error["float32"]
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import ParameterError
from pecli.schemes.arithmetic import ARITHMETICS, check_arithmetic, held

if TYPE_CHECKING:
    from pecli.schemes.spec import TableSpec

__all__ = ["FULL_ROWS", "PrecisionErrors", "alias_position", "precision_errors", "table_error"]

#: tables up to this many rows are computed whole (in blocks); longer ones are sampled
FULL_ROWS = 65536
#: rows computed at once (bounded memory: BLOCK_ROWS × d float64 per array)
BLOCK_ROWS = 8192
#: a long table's sample: this many blocks of SAMPLE_ROWS consecutive rows, at log-spaced starts
SAMPLE_BLOCKS = 64
SAMPLE_ROWS = 512
#: a table of more values than this (wide, long or both) is sampled, in fewer rows per block when
#: wide, so the work stays bounded whatever d is (64 × 512 rows of d 1024: what a long table cost)
MAX_VALUES = SAMPLE_BLOCKS * SAMPLE_ROWS * 1024
#: a table of at most FULL_ROWS rows and this many values is computed whole
FULL_VALUES = FULL_ROWS * 1024
#: the bytes of one float64 block of rows while an error is computed (a wide table: fewer rows at once)
_ERROR_BLOCK_BYTES = 16 << 20
#: position bins of the heatmap and the curve (log-spaced)
POSITION_BINS = 256
#: the reduced arithmetics compared side by side
REDUCED = tuple(name for name in ARITHMETICS if name != "float64")


def alias_position(arithmetic: str) -> int | None:
    """The first position that the arithmetic holds as the same value as the position before it.

    That is the first integer it cannot represent, ``2^(significand bits) + 1``; None for float64
    (beyond any table).

    >>> [alias_position(name) for name in ("float64", "float32", "bfloat16", "float16")]
    [None, 16777217, 257, 2049]
    """
    arithmetic = check_arithmetic(arithmetic)
    if arithmetic == "float64":
        return None
    for bits in range(2, 64):
        candidate = float(2**bits + 1)
        if held(np.array([candidate]), arithmetic)[0] != candidate:
            return 2**bits + 1
    return None  # pragma: no cover - every reduced dtype has fewer than 64 significand bits


def _in_arithmetic(spec: TableSpec, arithmetic: str) -> list[TableSpec]:
    """The spec's parts (RoPE's cos and sin) in ``arithmetic``, computed as float64 values."""
    return [replace(part, params={**part.params, "arithmetic": arithmetic}, dtype="float64") for part in spec.parts()]


def table_error(spec: TableSpec, arithmetic: str, rows: range) -> np.ndarray:
    """``|table in arithmetic − float64 table|`` at ``rows``, (rows, d); the largest over the spec's parts.

    >>> from pecli.schemes.spec import TableSpec
    >>> spec = TableSpec.resolve("rope", None, {"part": "sin"}, length=300, dim=4)
    >>> round(float(table_error(spec, "bfloat16", range(257, 258))[0, 0]), 4)  # 257 held as 256
    0.4259
    >>> round(float(abs(np.sin(256.0) - np.sin(257.0))), 4)
    0.4259
    >>> bool(table_error(spec, "bfloat16", range(256, 257)).max() < 1e-4)
    True
    """
    from pecli.memory import check_fits_in_memory

    dim = int(spec.shape[1])
    check_fits_in_memory(len(rows) * dim * 8 + _ERROR_BLOCK_BYTES * 4, what="table's float64 errors")
    error = np.empty((len(rows), dim))
    pairs = list(zip(_in_arithmetic(spec, arithmetic), _in_arithmetic(spec, "float64"), strict=True))
    for block in _row_blocks(rows, dim):  # the reduced and exact tables of a block of rows at a time
        out = error[block.start - rows.start : block.stop - rows.start]
        for index, (reduced, exact) in enumerate(pairs):
            part = np.subtract(np.asarray(reduced.rows(block), dtype=np.float64), exact.rows(block))
            np.abs(part, out=part)
            if index == 0:
                out[...] = part
            else:
                np.maximum(out, part, out=out)
            del part
    return error


def _row_blocks(rows: range, dim: int) -> list[range]:
    """``rows`` in blocks of at most :data:`_ERROR_BLOCK_BYTES` of float64 each (at least a row)."""
    step = max(1, _ERROR_BLOCK_BYTES // (8 * max(dim, 1)))
    return [range(start, min(start + step, rows.stop)) for start in range(rows.start, rows.stop, step)]


@dataclass(frozen=True)
class PrecisionErrors:
    """The error of a table in reduced arithmetic against float64, binned by position."""

    arithmetic: str
    length: int
    dim: int
    offset: int  #: the position of row 0
    bin_edges: np.ndarray  #: (bins + 1,) row indices: bin i holds rows bin_edges[i] ≤ r < bin_edges[i + 1]
    heatmap: np.ndarray  #: (bins, d) max |error| per bin and column, of ``arithmetic`` (NaN: no row sampled)
    bin_max: dict[str, np.ndarray]  #: per reduced arithmetic, (bins,) max |error| per bin
    max_error: dict[str, float]  #: per reduced arithmetic, the largest |error| over the rows computed
    rows_computed: int
    sampled: bool
    sample_rows: int = SAMPLE_ROWS  #: consecutive rows per sampled block (fewer for a wide table)

    @property
    def alias_position(self) -> int | None:
        """The first position held as its predecessor in :attr:`arithmetic` (may lie beyond the table)."""
        return alias_position(self.arithmetic)

    @property
    def bin_positions(self) -> np.ndarray:
        """The first position of each bin."""
        return self.bin_edges[:-1] + self.offset

    def sampling_note(self) -> str | None:
        """How the rows were chosen, when not all were computed."""
        if not self.sampled:
            return None
        return (f"sampled: {self.rows_computed} of {self.length} rows "
                f"({SAMPLE_BLOCKS} blocks of {self.sample_rows} consecutive rows, log-spaced)")  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain data (``--json``)."""
        alias = self.alias_position
        return {
            "arithmetic": self.arithmetic,
            "length": self.length,
            "d": self.dim,
            "offset": self.offset,
            "alias_position": alias,
            "aliases_in_table": alias is not None and alias < self.offset + self.length,
            "max_error": dict(self.max_error),
            "alias_positions": {name: alias_position(name) for name in self.max_error},
            "rows_computed": self.rows_computed,
            "sampled": self.sampled,
            "per_position": {
                "position": self.bin_positions.tolist(),
                "max_error": {
                    name: [None if np.isnan(v) else float(v) for v in values] for name, values in self.bin_max.items()
                },
            },
        }


def _block_rows(dim: int) -> int:
    """Rows per sampled block: :data:`SAMPLE_ROWS`, fewer for a wide table (at least one)."""
    return max(1, min(SAMPLE_ROWS, MAX_VALUES // (SAMPLE_BLOCKS * max(dim, 1))))


def _sample_rows(length: int, dim: int = 1) -> list[range]:
    """The row blocks computed: all rows in blocks when short, else log-spaced blocks (and row 0's)."""
    if length <= FULL_ROWS and length * dim <= FULL_VALUES:
        return [range(start, min(start + BLOCK_ROWS, length)) for start in range(0, length, BLOCK_ROWS)]
    sample = _block_rows(dim)
    last = max(1, length - sample)
    starts = np.unique(np.concatenate([[0], np.geomspace(1, last, SAMPLE_BLOCKS - 1).astype(int)]))
    blocks: list[range] = []
    for start in starts.tolist():
        begin = max(start, blocks[-1].stop if blocks else 0)
        if begin < length:
            blocks.append(range(begin, min(begin + sample, length)))
    return blocks


def _bin_edges(length: int, bins: int) -> np.ndarray:
    """Log-spaced row edges from 0 to ``length`` (row 0 in the first bin), unique integers."""
    if length <= 1:
        return np.array([0, max(length, 1)])
    edges = np.unique(np.concatenate([[0], np.geomspace(1, length, bins).astype(int)[:-1], [length]]))
    return edges


def precision_errors(spec: TableSpec, arithmetic: str, *, compare: tuple[str, ...] = REDUCED) -> PrecisionErrors:
    """The error of ``spec``'s table in ``arithmetic`` against float64, with ``compare``'s maxima beside it.

    ``spec`` is any table whose scheme takes ``arithmetic``; its own arithmetic is ignored. An
    arithmetic of ``compare`` that cannot hold the table's positions (float16 past 65504) is left out.
    """
    arithmetic = check_arithmetic(arithmetic)
    names = tuple(dict.fromkeys((arithmetic, *compare)))
    length = int(spec.shape[0])
    dim = int(spec.shape[1])
    edges = _bin_edges(length, POSITION_BINS)
    from pecli.memory import check_fits_in_memory

    check_fits_in_memory((len(edges) - 1) * dim * 8 * 2 + _ERROR_BLOCK_BYTES * 6, what="precision heatmap")
    heatmap = np.full((len(edges) - 1, dim), np.nan)
    bin_max = {name: np.full(len(edges) - 1, np.nan) for name in names}
    max_error = dict.fromkeys(names, 0.0)
    computed = 0
    skipped: set[str] = set()
    blocks = [block for rows in _sample_rows(length, dim) for block in _row_blocks(rows, dim)]
    for rows in blocks:
        computed += len(rows)
        # the bin of each row, and the start of each bin's run within the block
        bins = np.searchsorted(edges, np.arange(rows.start, rows.stop), side="right") - 1
        starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
        for name in names:
            if name in skipped:
                continue
            try:
                error = table_error(spec, name, rows)
            except ParameterError:  # float16 cannot hold positions past 65504
                if name == arithmetic:
                    raise
                skipped.add(name)
                continue
            per_row = error.max(axis=1)
            max_error[name] = max(max_error[name], float(per_row.max()))
            run_max = np.maximum.reduceat(per_row, starts)
            bin_max[name][bins[starts]] = np.fmax(bin_max[name][bins[starts]], run_max)
            if name == arithmetic:
                cells = np.maximum.reduceat(error, starts, axis=0)
                heatmap[bins[starts]] = np.fmax(heatmap[bins[starts]], cells)
    for name in skipped:
        del bin_max[name], max_error[name]
    return PrecisionErrors(
        arithmetic, length, dim, int(spec.params.get("offset") or 0), edges, heatmap, bin_max, max_error,
        computed, computed < length, _block_rows(dim),
    )  # fmt: skip
