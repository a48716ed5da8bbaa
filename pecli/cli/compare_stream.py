"""``pecli compare`` of large files: two .npy/.safetensors files, or one and a scheme spec of its shape,
compared row chunk by row chunk (:mod:`pecli.analysis.compare_streamed`), never loaded whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pecli.cli.compare_request import CompareRequest
from pecli.cli.compare_sides import with_heads
from pecli.cli.output import printable

#: two files whose tables together pass this in float64 are compared in row chunks, never loaded whole
STREAM_BYTES = 1 << 30
#: the same for per-head (heads, L, L') tables, compared head by head: the loading path holds about 12 copies
STREAM_HEAD_BYTES = 1 << 26


@dataclass
class StreamedTable:
    """A side of a streamed comparison: the file's rows, read chunk by chunk (a per-head table's heads stacked)."""

    rows: Any  # pecli.io.rows.RowReader, or SpecRows: shape, tensor_shape, heads, dtype and chunks(step)
    label: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.rows.tensor_shape)

    @property
    def dtype(self) -> str:
        return self.rows.dtype


def compare_large(request: CompareRequest) -> tuple[StreamedTable, StreamedTable, Any] | None:
    """Two large files of one shape, or a large file and a spec of its shape, compared row chunk by row chunk:
    both sides and the :class:`~pecli.analysis.compare.Comparison` (two files that differ: what each is, read on
    its first rows); None when neither pair streams, for the loading path."""
    from pecli.analysis.compare_streamed import compare_streamed

    streamed = _large_files(request.texts, request.keys)
    if streamed is not None:
        first, second = streamed
        result = compare_streamed(first.rows, second.rows, **request.tolerances)
        if not result.agree:  # two large files: what each is, read on its first rows (a per-head one if small)
            from pecli.analysis.compare_streamed import first_rows
            from pecli.analysis.readings import with_readings

            result = with_readings(
                result, [first_rows(table.rows, key) for table, key in zip(streamed, request.keys, strict=True)]
            )
        return first, second, result
    streamed_spec = _large_file_and_spec(request)
    if streamed_spec is None:
        return None
    (first, second), reference, side = streamed_spec
    result = compare_streamed(
        first.rows, second.rows, **request.tolerances, reference=reference, reference_side="ab"[side]
    )
    return first, second, result


def _streams(shape: tuple[int, ...]) -> bool:
    """Whether two tables of ``shape`` (2-D, or per-head 3-D) are large enough to compare chunk by chunk."""
    import math

    return 2 * 8 * math.prod(shape) >= (STREAM_HEAD_BYTES if len(shape) == 3 else STREAM_BYTES)


def _large_files(texts: tuple[str, str], keys: tuple[str | None, str | None]) -> list[StreamedTable] | None:
    """Both tables as row readers when both are large .npy/.safetensors files of one shape (2-D, or per-head
    (heads, L, L') read head by head), else None."""
    import os

    from pecli.io.rows import open_rows
    from pecli.sources import kind_of_source

    if len(texts) != 2 or not all(kind_of_source(text).name == "file" for text in texts):
        return None
    opened = [open_rows(text, key, heads=True) for text, key in zip(texts, keys, strict=True)]
    readers = [reader for reader in opened if reader is not None]
    if len(readers) != 2 or readers[0].tensor_shape != readers[1].tensor_shape:
        return None
    if not _streams(readers[0].tensor_shape):
        return None
    labels = [printable(os.path.basename(text)) for text in texts]  # names from the filesystem: escaped
    return [StreamedTable(reader, label) for reader, label in zip(readers, labels, strict=True)]


def _large_file_and_spec(request: CompareRequest) -> tuple[list[StreamedTable], Any, int] | None:
    """A large .npy/.safetensors file's table and a spec's table of its shape, both read block by block of rows
    (a per-head (heads, L, L') file against a per-head spec such as alibi: head by head), with the spec's
    scheme and parameters (for the diagnosis) and its side; None when either cannot stream."""
    import os

    from pecli.analysis.compare import Reference
    from pecli.analysis.compare_streamed import SpecRows, chunk_rows
    from pecli.analysis.value_precision import value_precision_of_chunks
    from pecli.dtypes import DTYPES
    from pecli.io import read_tensors
    from pecli.io.rows import open_rows
    from pecli.schemes.specs import looks_like_spec, parse_spec
    from pecli.sources import kind_of_source

    texts, keys, d, length = request.texts, request.keys, request.d, request.length
    is_spec = [looks_like_spec(text) for text in texts]
    if sum(is_spec) != 1:
        return None
    side = is_spec.index(True)
    path, file_key = texts[1 - side], keys[1 - side]
    if request.key_given[side] is not None or kind_of_source(path).name != "file":
        return None  # a key for the spec is refused on the loading path, with its message
    reader = open_rows(path, file_key, heads=True)
    if reader is None or (file_key is None and len(read_tensors(path)[0]) != 1):
        return None  # a pair of tensors (RoPE's cos and sin) is compared side by side on the loading path
    spec = parse_spec(texts[side])
    if reader.heads is not None:  # a per-head spec: heads and length from the file, as the loading path takes them
        shape: tuple[int, ...] = reader.tensor_shape
        spec, spec_length, spec_dim = with_heads(spec, reader.heads), shape[2] if length is None else length, d
    else:
        rows, cols = reader.shape
        shape = (rows if length is None else length, cols if d is None else d)
        spec_length, spec_dim = shape
    if shape != reader.tensor_shape or not _streams(shape):
        return None
    step = chunk_rows(reader.shape[1], least=64)
    other_dtype = reader.metadata.get("dtype") or value_precision_of_chunks(reader.chunks(step, reuse=True))
    other_dtype = other_dtype if other_dtype in DTYPES else "float32"
    table = spec.table(length=spec_length, dim=spec_dim, dtype=request.dtype or other_dtype)
    parts = table.parts()
    if len(parts) != 1 or tuple(parts[0].shape) != shape:
        return None
    pair = [StreamedTable(reader, printable(os.path.basename(path))), StreamedTable(SpecRows(parts[0]), spec.text)]
    if side == 0:
        pair.reverse()
    return pair, Reference(table.scheme, dict(table.params)), side
