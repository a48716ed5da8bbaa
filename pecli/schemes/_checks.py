"""Argument checks shared by every scheme: one wording for every bad value."""

from __future__ import annotations

import math
from numbers import Integral, Real

from pecli.errors import ParameterError


def positive_int(name: str, value: object, *, flag: str | None = None) -> int:
    """``value`` as an int if it is a positive integer, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value <= 0:
        raise ParameterError(
            f"{name} must be a positive integer, got {value!r}",
            hint=f"pass e.g. {flag or '--' + name} 64",
        )
    return int(value)


def integer(name: str, value: object, *, flag: str) -> int:
    """``value`` as an int if it is an integer, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ParameterError(f"{name} must be an integer, got {value!r}", hint=f"pass e.g. {flag} 0")
    return int(value)


def finite_above(name: str, value: object, bound: float, *, flag: str, example: str) -> float:
    """``value`` as a float if it is finite and greater than ``bound``, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= bound:
        raise ParameterError(
            f"{name} must be a finite number greater than {bound:g}, got {value!r}",
            hint=f"pass e.g. {flag} {example}",
        )
    return float(value)


def finite(name: str, value: object, *, flag: str, example: str) -> float:
    """``value`` as a float if it is a finite number, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ParameterError(f"{name} must be a finite number, got {value!r}", hint=f"pass e.g. {flag} {example}")
    return float(value)


def row_range(rows: range | None, length: int) -> range:
    """The rows to compute: all of ``range(length)`` by default, else a contiguous sub-range of it."""
    if rows is None:
        return range(length)
    if rows.step != 1 or rows.start < 0 or rows.stop > length or rows.start > rows.stop:
        raise ParameterError(
            f"rows must be a contiguous range inside 0..{length}, got {rows!r}",
            hint="pass rows=range(start, stop) with 0 <= start <= stop <= length",
        )
    return rows
