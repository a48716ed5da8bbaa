"""A table's values as text, summarised as numpy's repr does: the first and last rows and columns.

``generate`` and ``timestep`` print it when no output is given. Only the rows shown are computed,
so a table of 10^15 rows previews at once.

>>> import numpy as np
>>> table = np.arange(48.0).reshape(12, 4) / 8
>>> print("\\n".join(preview_lines(lambda rows: table[rows.start : rows.stop], 12, 4)))
    [0]    [1]   [2]    [3]
 0    0  0.125  0.25  0.375
 1  0.5  0.625  0.75  0.875
 2    1  1.125  1.25  1.375
 3  1.5  1.625  1.75  1.875
 …    …      …     …      …
 8    4  4.125  4.25  4.375
 9  4.5  4.625  4.75  4.875
10    5  5.125  5.25  5.375
11  5.5  5.625  5.75  5.875
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["preview_lines"]

#: rows shown at each end of a long table (all of them up to 2 × this + 1)
EDGE_ROWS = 4
#: columns shown first and last in a wide table (all of them up to their sum + 1)
HEAD_COLUMNS, TAIL_COLUMNS = 4, 2


def preview_lines(
    rows_of: Callable[[range], np.ndarray],
    length: int,
    width: int,
    *,
    row_label: str = "",
    row_labels: Callable[[range], Sequence[str]] | None = None,
) -> list[str]:
    """The lines of a ``length`` × ``width`` table's preview, its rows computed by ``rows_of(range)``.

    Rows are labelled by index (or by ``row_labels(range)``, e.g. the timesteps), columns by
    ``[index]``; an ellipsis stands for the rows and columns left out. Values share one format,
    as numpy's: integers as integers, else six significant digits; each column is as wide as its
    widest text.
    """
    short = length <= 2 * EDGE_ROWS + 1
    blocks = [range(length)] if short else [range(EDGE_ROWS), range(length - EDGE_ROWS, length)]
    if width <= HEAD_COLUMNS + TAIL_COLUMNS + 1:
        columns: list[int | None] = list(range(width))
    else:
        columns = [*range(HEAD_COLUMNS), None, *range(width - TAIL_COLUMNS, width)]
    labels = row_labels or (lambda rows: [str(row) for row in rows])
    shown = [c for c in columns if c is not None]
    cells: list[tuple[str, list[str]] | None] = []
    for number, block in enumerate(blocks):
        if number:
            cells.append(None)  # the rows left out
        values = np.asarray(rows_of(block), dtype=np.float64).reshape(len(block), width)[:, shown]
        texts = iter(_format(values.reshape(-1)))
        for label in labels(block):
            row = [next(texts) for _ in shown]
            if None in columns:
                row.insert(HEAD_COLUMNS, "…")
            cells.append((label, row))
    header = [f"[{c}]" if c is not None else "…" for c in columns]
    label_width = max([len(row_label)] + [len(cell[0]) for cell in cells if cell is not None])
    rows = [cell[1] for cell in cells if cell is not None]
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(columns))]

    def line(label: str, texts: Sequence[str]) -> str:
        return f"{label:>{label_width}}  " + "  ".join(f"{t:>{w}}" for t, w in zip(texts, widths, strict=True))

    lines = [line(row_label, header)]
    for cell in cells:
        lines.append(line(*cell) if cell is not None else line("…", ["…"] * len(columns)))
    return lines


def _format(values: np.ndarray) -> list[str]:
    """Each value as text, in the one format the whole preview shares (``6g``-like, as numpy prints).

    >>> _format(np.array([0.0, 1.0, 65535.0])), _format(np.array([0.5, -1e-7, np.nan]))
    (['0', '1', '65535'], ['0.5', '-1e-07', 'nan'])
    """
    finite = values[np.isfinite(values)]
    if finite.size and np.all(finite == np.round(finite)) and np.all(np.abs(finite) < 1e15):
        return [str(int(v)) if np.isfinite(v) else str(v) for v in values]
    return [f"{v:.6g}" for v in values]
