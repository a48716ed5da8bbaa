"""``pecli compare -o``: the figure of A, B and A − B."""

from __future__ import annotations

from typing import Any

from pecli.cli.compare_stream import StreamedTable
from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr


def check_figure_path(out: Output, path: str, sources: list[str]) -> None:
    """A figure's path: .png, .svg or .pdf, writable, and none of the compared files (a link to one included)."""
    import os

    from pecli.cli.common import check_output

    if os.path.splitext(path)[1].lower() not in (".png", ".svg", ".pdf"):
        raise ParameterError(
            f"compare draws a figure; {literal_repr(path)} is not .png, .svg or .pdf", hint="e.g. -o diff.png"
        )
    check_output(out, path, sources)


def save_difference_figure(path: str, first: Any, second: Any) -> None:
    """A, B and A − B: the one rendering step of compare (:func:`pecli.render.charts.save_difference`)."""
    import math

    from pecli.render.charts import MOST_DIFFERENCE_ROWS, save_difference

    shape = first.shape if isinstance(first, StreamedTable) else first.array.shape
    if len(shape) > 2 and math.prod(shape[:-2]) > MOST_DIFFERENCE_ROWS:
        raise ParameterError(
            f"-o draws one row of panels per head, at most {MOST_DIFFERENCE_ROWS}; the tables hold "
            f"{math.prod(shape[:-2])} of {shape[-2]} × {shape[-1]}",
            hint="compare them without -o, or write fewer heads",
        )
    if isinstance(first, StreamedTable):  # block means summed chunk by chunk: never both tables whole
        from pecli.analysis.compare_streamed import chunk_pairs
        from pecli.render.charts import save_difference_chunks

        save_difference_chunks(chunk_pairs(first.rows, second.rows), shape, path, labels=(first.label, second.label))
        return
    a, b = first.array, second.array
    if a.ndim == 2 and 1 not in a.shape and a.size > _FIGURE_WHOLE_VALUES:  # drawn from float64 row chunks
        from pecli.analysis.compare_streamed import chunk_rows
        from pecli.render.charts import save_difference_chunks

        step = chunk_rows(a.shape[1])
        save_difference_chunks(
            lambda: ((a[start : start + step], b[start : start + step]) for start in range(0, len(a), step)),
            a.shape, path, labels=(first.label, second.label),
        )  # fmt: skip
        return
    save_difference(a, b, path, labels=(first.label, second.label))


#: a loaded 2-D table of more values is drawn from row chunks: its float64 A, B and A − B whole were 1.5 GB at 64 × 10^6
_FIGURE_WHOLE_VALUES = 1 << 22
