"""A finding of the diagnosis, and the reference a table was generated with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Finding", "Reference", "residual"]


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


def residual(expected: np.ndarray, b: np.ndarray) -> float:
    """max |expected − b| (inf when the shapes differ).

    >>> residual(np.zeros((2, 2)), np.ones((2, 2)))
    1.0
    """
    if expected.shape != b.shape:
        return float("inf")
    return float(np.abs(expected - b).max(initial=0.0))
