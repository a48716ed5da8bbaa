"""Two sides of a comparison of other widths: a RoPE reference and an engine's table, brought to one width
(:func:`~pecli.analysis.partial_width.partial_width`) before they are compared, the width mistake then first in
the diagnosis. The CLI (``pecli compare``) and the Python API (:func:`pecli.compare`) take this one step.

>>> import pecli
>>> from pecli.analysis.diagnosis import Reference
>>> from pecli.sources import resolve_parts
>>> params = {**resolve_parts("rope", dim=8, length=4)[0].params, "part": "cos"}
>>> narrow = pecli.encode("rope", 4, 8, part="cos", dtype="float64")
>>> engine = pecli.encode("rope", 4, 32, part="cos", dtype="float64")
>>> side, found = one_width([None, Reference("rope", params)], [engine, narrow], [None, "float64"])
>>> side, found.finding.code
(1, 'partial_rotary_ignored')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.compare import Comparison
from pecli.analysis.diagnosis import Reference
from pecli.analysis.partial_width import PartialWidth, partial_width
from pecli.analysis.value_precision import value_precision
from pecli.dtypes import DTYPES
from pecli.errors import TableFileError

__all__ = ["compared_at", "one_width", "width_finding_first"]


def one_width(
    references: Sequence[Reference | None],
    tables: Sequence[Any],
    recorded_dtypes: Sequence[str | None],
    *,
    engine_pairs: Sequence[bool] = (False, False),
) -> tuple[int, PartialWidth] | None:
    """The side of a RoPE reference (a config, a spec) against an engine's table of another width (partial rotary
    ignored, or assumed), and the two brought to one width; None when the widths match or no width applies.

    ``tables`` are the two sides' values; ``recorded_dtypes`` the dtype each side's file records (else its values
    say); ``engine_pairs`` which side holds its cos and sin side by side. A width mistake that does not reproduce
    the engine's table is the shape mismatch, its widths in words (:class:`~pecli.errors.TableFileError`).
    """
    for side in (0, 1):
        reference, mine, engine = references[side], tables[side], tables[1 - side]
        if reference is None or references[1 - side] is not None:
            continue
        if engine.shape == mine.shape and not np.iscomplexobj(engine):
            return None
        dtype = recorded_dtypes[side] or value_precision(mine)
        found = partial_width(
            reference, mine, engine, engine_pair=engine_pairs[1 - side],
            dtype=dtype if dtype in DTYPES else "float32", engine_side="AB"[1 - side],
        )  # fmt: skip
        if found is None:
            _one_part_of_two(reference, mine, engine, side)
            return None
        if found.finding is None:
            shapes = [" × ".join(map(str, table.shape)) for table in tables]
            raise TableFileError(
                f"shape mismatch: A is {shapes[0]}, B is {shapes[1]} ({found.widths}), and partial rotary does not "
                "explain the difference",
                hint="compare tables of one head width (a config's or spec's rotary columns: check its "
                "partial rotary and head_dim)",
            )
        return side, found
    return None


def _one_part_of_two(reference: Reference, mine: np.ndarray, engine: np.ndarray, side: int) -> None:
    """Refuse an engine's one real table against a reference of two parts compared side by side (a config's
    cos | sin) that no width explains: no cache of both (vLLM's cos_sin_cache), no partial rotary of both
    parts. Which part it is, only the user knows — a cos
    table taken for the sin, or the reverse, is the very mistake compare looks for. Named by the key that picks
    one part, not by the sizes of a scheme spec."""
    parts = reference.parts
    if len(parts) != 2 or np.iscomplexobj(engine) or engine.ndim != 2 or mine.ndim != 2:
        return
    if engine.shape[0] != mine.shape[0]:
        return
    each, width, key = mine.shape[1] // 2, engine.shape[1], "key_a" if side == 0 else "key_b"
    cache = f" that is no cache of both ({parts[0]} | {parts[1]} on one circle)" if width == each else ""
    raise TableFileError(
        f"shape mismatch: {'AB'[side]} holds {parts[0]} and {parts[1]} side by side ({each} columns each), "
        f"{'BA'[side]} one table of {width} columns{cache}",
        hint=f"compare it with one part: {{{key}={parts[0]}}} or {{{key}={parts[1]}}}",
    )


def width_finding_first(result: Comparison, found: PartialWidth | None) -> Comparison:
    """``result`` with ``found``'s width mistake first in its diagnosis (the diagnosis at one width may name it
    too) and none it explains better, when the tables differ; else ``result`` as it is."""
    if found is None or found.finding is None or result.agree:
        return result
    dropped = {found.finding.code, *found.supersedes}
    others = [finding for finding in result.diagnosis if finding.code not in dropped]
    return replace(result, diagnosis=[found.finding, *others])


def compared_at(found: PartialWidth) -> str:
    """The width ``found`` compares at, in words for the two tables' titles (``at 32 columns a part``).

    >>> compared_at(PartialWidth(np.zeros((4, 64)), np.zeros((4, 64)), Reference("rope", {}, parts=("cos", "sin")),
    ...                          None, ""))
    'at 32 columns a part'
    """
    parts = found.reference.parts
    width = found.reference_table.shape[1] // max(1, len(parts))
    return f"at {width} columns a part" if parts else f"at {width} columns"
