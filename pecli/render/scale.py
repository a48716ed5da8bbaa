"""Value ranges and colour limits shared by the terminal and image renderers."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pecli.errors import ParameterError

__all__ = ["ValueRange", "color_limits", "value_range"]


class ValueRange(NamedTuple):
    """The smallest and largest finite value of a table, and how many values are NaN or ±inf."""

    low: float
    high: float
    nonfinite: int


def value_range(matrix: np.ndarray) -> ValueRange:
    """The finite range of ``matrix``; NaN when it holds no finite value.

    >>> value_range(np.array([[-2.0, np.nan], [np.inf, 3.0]]))
    ValueRange(low=-2.0, high=3.0, nonfinite=2)
    """
    matrix = np.asarray(matrix)
    if matrix.size == 0:
        return ValueRange(float("nan"), float("nan"), 0)
    low, high = float(np.min(matrix)), float(np.max(matrix))
    if np.isfinite(low) and np.isfinite(high):  # the common case: two fast passes, no mask
        return ValueRange(low, high, 0)
    finite = np.isfinite(matrix)
    count = int(finite.sum())
    if count == 0:
        return ValueRange(float("nan"), float("nan"), matrix.size)
    values = matrix[finite]
    return ValueRange(float(values.min()), float(values.max()), matrix.size - count)


def color_limits(data: ValueRange, vmin: float | None = None, vmax: float | None = None) -> tuple[float, float]:
    """Colour limits: ``vmin``/``vmax`` where given, else symmetric around 0 (so 0 is RdBu's white).

    >>> color_limits(ValueRange(-0.5, 0.9, 0))
    (-0.9, 0.9)
    >>> color_limits(ValueRange(0.0, 0.0, 0)), color_limits(ValueRange(1.0, 4.0, 0), vmin=0.0)
    ((-1.0, 1.0), (0.0, 4.0))
    """
    reach = max(abs(data.low), abs(data.high)) if np.isfinite(data.low) else 0.0
    reach = reach if reach > 0 else 1.0
    low = -reach if vmin is None else float(vmin)
    high = reach if vmax is None else float(vmax)
    for name, value in (("vmin", low), ("vmax", high)):
        if not np.isfinite(value):
            raise ParameterError(f"{{{name}}} must be a finite number, got {value}", hint=f"e.g. {{{name}=1}}")
    if low >= high:
        raise ParameterError(
            f"{{vmin={low:g}}} must be below {{vmax={high:g}}}", hint="give {vmin} smaller than {vmax}"
        )
    return low, high
