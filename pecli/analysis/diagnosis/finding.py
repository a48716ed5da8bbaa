"""A finding of the diagnosis, and the reference a table was generated with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Finding", "Reference", "per_row", "residual", "within"]


@dataclass(frozen=True)
class Finding:
    """One explanation that reproduces B from A: a stable ``code``, the sentence, and its evidence.

    >>> Finding("constant_factor", "B = 2·A", {"factor": 2.0}).to_json()
    {'code': 'constant_factor', 'message': 'B = 2·A', 'figures': {'factor': 2.0}}
    """

    code: str
    message: str
    figures: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "figures": dict(self.figures)}


@dataclass(frozen=True)
class Reference:
    """The scheme and full parameters table A was generated with (a spec side of compare)."""

    scheme: str
    params: Mapping[str, Any]
    dtype: str = "float64"
    #: the whole table's length when the diagnosed rows are only its first rows (a streamed comparison)
    length: int | None = None
    #: the parts the table holds side by side, each its own columns (RoPE's cos, then its sin: an engine's
    #: cache file compared with a spec or a config), generated with ``part=`` each; empty: one table
    parts: tuple[str, ...] = ()


def residual(expected: np.ndarray, b: np.ndarray) -> float:
    """max |expected − b| (inf when the shapes differ).

    >>> residual(np.zeros((2, 2)), np.ones((2, 2)))
    1.0
    """
    if expected.shape != b.shape:
        return float("inf")
    return float(np.abs(expected - b).max(initial=0.0))


def per_row(tolerance: float | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``tolerance`` as one bound per row of a table of ``shape``: a ``shape[:-1] + (1,)`` array.

    A number is every row's bound; an array holds one bound per row (``shape[:-1]`` values, in any shape
    of that size: compare's tolerance grows with the position).

    >>> per_row(0.5, (2, 3)).tolist(), per_row(np.array([1.0, 2.0]), (2, 3)).tolist()
    ([[0.5], [0.5]], [[1.0], [2.0]])
    """
    bound = np.asarray(tolerance, dtype=np.float64)
    rows = (*shape[:-1], 1)
    if bound.ndim == 0:
        return np.full(rows, float(bound))
    if bound.size != int(np.prod(rows)):
        raise ValueError(f"a tolerance per row needs {int(np.prod(rows))} values, got {bound.size}")
    return bound.reshape(rows)


def within(expected: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray) -> bool:
    """Whether every entry of ``expected`` is within its row's ``tolerance`` of ``b`` (False when the shapes differ).

    >>> within(np.zeros((2, 2)), np.array([[0.1, 0.0], [0.3, 0.0]]), np.array([[0.2], [0.2]]))
    False
    >>> within(np.zeros((2, 2)), np.array([[0.1, 0.0], [0.3, 0.0]]), np.array([[0.2], [0.4]]))
    True
    """
    if expected.shape != b.shape:
        return False
    return bool(np.all(np.abs(expected - b) <= tolerance))
