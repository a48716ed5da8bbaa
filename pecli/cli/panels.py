"""Small multiples for ``pecli plot``: the tables of one input drawn side by side with shared colours.

A scheme with several parts (RoPE's cos and sin), a file whose tensors all share one 2-D shape,
and a 3-D table (ALiBi's heads, any ``(n, L, d)``) each give several panels; ``--key`` picks one
tensor and ``--slice`` one slice (for the alibi scheme itself, its ``--head``).
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Optional

import typer

from pecli.cli.drawing import DRAWING_PANEL
from pecli.cli.inputs import InputTable, is_file_input
from pecli.cli.output import Output

SliceOpt = Annotated[
    Optional[int],
    typer.Option(
        "--slice",
        help="Draw only slice I of a 3-D table (an ALiBi head in a file), not one panel per slice.",
        metavar="I",
        rich_help_panel=DRAWING_PANEL,
    ),
]
#: the most panels drawn; a larger stack is drawn in part, with a note
MAX_PANELS = 16


def load_parts(
    out: Output,
    source: str,
    *,
    key: str | None,
    preset: str | None,
    scheme_params: dict[str, Any] | None,
    length: int | None,
    dim: int | None,
    dtype: str,
) -> list[InputTable] | None:
    """The tables of a multi-part scheme or of a file whose tensors share one 2-D shape; None otherwise."""
    if key is not None:
        return None
    if is_file_input(source):
        if source == "-" or os.path.isdir(source):  # stdin is read once; a model directory names its table
            return None
        from pecli.cli.inputs import load_input
        from pecli.io import read_tensors

        entries, _ = read_tensors(source)
        shapes = {shape for shape, _ in entries.values()}
        if len(entries) < 2 or len(shapes) != 1 or len(next(iter(shapes))) != 2:
            return None
        return [load_input(out, source, key=name) for name in entries]
    from pecli.cli.common import build_table
    from pecli.schemes.catalog import SCHEMES

    if source not in SCHEMES:
        return None
    spec = build_table(source, preset, scheme_params or {}, length=length, dim=dim, dtype=dtype, name="pe")
    parts = spec.parts()
    if len(parts) < 2:
        return None
    tables = []
    for part in parts:
        tables.append(InputTable(part.check().array(), part.name, part.metadata(), source))
    return tables


def split_slices(table: InputTable, index: int | None) -> list[InputTable]:
    """A 3-D table as one table per slice (or slice ``index`` alone); any other table as is.

    >>> import numpy as np
    >>> bias = -np.array([0.5, 0.25])[:, None, None] * abs(np.arange(3)[:, None] - np.arange(3))
    >>> tables = split_slices(InputTable(bias, "alibi", {"scheme": "alibi"}), None)
    >>> [t.label for t in tables], tables[0].array.shape
    (['head 0, slope 0.5', 'head 1, slope 0.25'], (3, 3))
    """
    from pecli.errors import ParameterError

    array = table.array
    stacked = getattr(array, "ndim", 0) == 3 and array.shape[0] > 1 and 1 not in array.shape[1:]
    if not stacked:
        if index is not None:
            raise ParameterError(f"--slice picks a slice of a 3-D table, but {table.label} has shape {array.shape}",
                                 hint="drop --slice")  # fmt: skip
        return [table]
    scheme = table.metadata.get("scheme")
    what = "head" if scheme in ("alibi", "t5") else "slice"
    if index is not None:
        if not -array.shape[0] <= index < array.shape[0]:
            raise ParameterError(
                f"--slice {index} is outside the {array.shape[0]} slices of {table.label} (0…{array.shape[0] - 1})",
                hint=f"give --slice 0 to {array.shape[0] - 1}",
            )
        index %= array.shape[0]
        return [InputTable(array[index], f"{table.label}, {what} {index}", table.metadata, table.source)]
    return [InputTable(array[i], _slice_label(what, i, array[i], scheme), table.metadata, table.source)
            for i in range(array.shape[0])]  # fmt: skip


def _slice_label(what: str, index: int, matrix: Any, scheme: str | None) -> str:
    """``head 2``; an ALiBi head with its slope, read off the bias between positions 0 and 1."""
    if scheme != "alibi" or matrix.shape[1] < 2:
        return f"{what} {index}"
    return f"{what} {index}, slope {abs(float(matrix[0, 1]) - float(matrix[0, 0])):.4g}"
