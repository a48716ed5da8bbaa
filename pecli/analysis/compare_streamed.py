"""Two tables compared row chunk by row chunk, never whole: a scheme's table computed a block of rows at a
time (:class:`SpecRows`, read as :class:`~pecli.io.rows.RowReader` reads a file), the rows held at once,
and the leading rows a disagreement is diagnosed on."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["CHUNK_BYTES", "SpecRows", "chunk_pairs", "chunk_rows", "compare_streamed", "first_rows"]


#: rows of each table held at once while streaming (float64 bytes of one chunk)
CHUNK_BYTES = 8 << 20
#: a streamed disagreement is diagnosed on this many leading rows
DIAGNOSE_ROWS = 4096
#: a streamed per-head disagreement is diagnosed on the first rows of each head, this many values in all
DIAGNOSE_HEAD_VALUES = 1 << 20


def chunk_rows(columns: int, *, least: int = 1) -> int:
    """The rows of a table ``columns`` wide held at once (:data:`CHUNK_BYTES` of float64), at least ``least``.

    >>> chunk_rows(1024), chunk_rows(1 << 20, least=64)
    (1024, 64)
    """
    return max(least, CHUNK_BYTES // (8 * columns))


def chunk_pairs(first: Any, second: Any) -> Callable[[], Iterator[tuple[Any, Any]]]:
    """Two row readers' chunks side by side, afresh at each call (a file's chunks may be reused buffers)."""
    step = chunk_rows(first.shape[1])
    return lambda: zip(first.chunks(step, reuse=True), second.chunks(step, reuse=True), strict=True)


class SpecRows:
    """A scheme spec's table computed block by block of rows, as :class:`~pecli.io.rows.RowReader` reads a file;
    a per-head (heads, L, L') table as its heads' rows stacked, computed a block of one head's rows at a time."""

    def __init__(self, table: Any) -> None:
        import math

        self.table = table
        self.tensor_shape: tuple[int, ...] = tuple(int(n) for n in table.shape)
        self.heads: int | None = self.tensor_shape[0] if len(self.tensor_shape) == 3 else None
        self.shape: tuple[int, int] = (math.prod(self.tensor_shape[:-1]), self.tensor_shape[-1])
        self.dtype: str = table.dtype
        self._head: tuple[int, Any] | None = None  # a scheme without ``head``: the last head computed whole

    def chunks(self, step: int, *, reuse: bool = False) -> Any:
        """The rows, ``step`` at a time, each computed afresh (``reuse``: as a file's, which the caller allows)."""
        import numpy as np

        for start in range(0, self.shape[0], step):
            stop = min(start + step, self.shape[0])
            if self.heads is None:
                yield self.table.rows(range(start, stop))
                continue
            per_head, pieces = self.tensor_shape[1], []
            for head in range(start // per_head, (stop - 1) // per_head + 1):
                first, last = max(start - head * per_head, 0), min(stop - head * per_head, per_head)
                pieces.append(self._head_rows(head, range(first, last)))
            yield pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def _head_rows(self, head: int, rows: range) -> Any:
        """Rows ``rows`` of head ``head``: the scheme computes one head's rows when it takes ``head`` (ALiBi)."""
        from dataclasses import replace

        if "head" in self.table.params:
            return replace(self.table, params={**self.table.params, "head": head}).rows(rows)
        if self._head is None or self._head[0] != head:
            self._head = head, self.table.rows(range(head, head + 1))[0]
        return self._head[1][rows.start : rows.stop]


def first_rows(reader: Any, key: str | None) -> dict[str, Any] | None:
    """A streamed file's (``reader``'s) first rows, as many as :func:`pecli.analysis.readings.read_table` reads,
    and its record; a per-head table whole when it is read at all (else None)."""
    import numpy as np

    from pecli.analysis.readings import readable, rows_to_read

    if reader.heads is None:
        rows = rows_to_read(*reader.shape)
        values = np.array(next(iter(reader.chunks(rows)))[:rows])
    elif readable(reader.tensor_shape):
        values = np.concatenate(list(reader.chunks(reader.shape[0]))).reshape(reader.tensor_shape)
    else:
        return None
    return {
        "values": values,
        "metadata": reader.metadata,
        "dtype": reader.dtype,
        "key": key,
        "total_rows": len(values) if reader.heads is not None else reader.shape[0],
    }


def compare_streamed(first: Any, second: Any, **tolerances: Any) -> Any:
    """Two row readers (:class:`~pecli.io.rows.RowReader`, :class:`SpecRows`) of one shape compared chunk by chunk
    (:func:`~pecli.analysis.compare.compare_row_chunks`), a disagreement diagnosed on their leading rows."""
    from pecli.analysis.compare import DIAGNOSE_VALUES, compare_row_chunks

    heads, cols = first.heads, first.shape[1]
    # a per-head table: the first rows of each head, enough to fit each head's slope and name its formula
    # a wide table: as many rows as compare_tables diagnoses of a loaded one (72 × 10^6 diagnosed whole took 3.5 GB)
    wide_rows = max(2, DIAGNOSE_VALUES // cols)
    diagnose_rows = min(DIAGNOSE_ROWS, wide_rows) if heads is None else max(1, DIAGNOSE_HEAD_VALUES // (heads * cols))
    return compare_row_chunks(
        chunk_pairs(first, second),
        diagnose_rows=diagnose_rows,
        heads=heads,
        **tolerances,
    )
