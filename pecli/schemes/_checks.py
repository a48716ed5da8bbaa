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


def grid_shape(grid: object) -> tuple[int, int]:
    """``--grid`` as (H, W): a text ``"H,W"`` (or ``"HxW"``), or a pair of positive integers.

    >>> grid_shape("14,16"), grid_shape((2, 3))
    ((14, 16), (2, 3))
    """
    if isinstance(grid, str):
        pieces = grid.replace("x", ",").split(",")
        try:
            sides = tuple(int(piece.strip()) for piece in pieces)
        except ValueError:
            sides = ()
    elif isinstance(grid, (tuple, list)) and all(isinstance(s, Integral) and not isinstance(s, bool) for s in grid):
        sides = tuple(int(s) for s in grid)
    else:
        sides = ()
    if len(sides) != 2 or min(sides) <= 0:
        raise ParameterError(
            f"grid must be two positive sides H,W, got {grid!r}",
            hint="pass e.g. --grid 14,14",
        )
    return sides  # type: ignore[return-value]


def choice(name: str, value: object, allowed: tuple[str, ...], *, flag: str) -> str:
    """``value`` if it is one of ``allowed``, else a :class:`ParameterError` listing them.

    >>> choice("layout", "half", ("half", "interleaved"), flag="--layout")
    'half'
    """
    if value not in allowed:
        raise ParameterError(f"unknown {name} {value!r}", hint=f"use {flag} " + "|".join(allowed))
    return value  # type: ignore[return-value]


def fourier_width(dim: object, num_freqs: object, include_input: bool) -> int:
    """Columns of NeRF features: ``2·L`` plus 1 with the input; either ``dim`` or ``L`` may be given.

    >>> fourier_width(None, 10, True), fourier_width(20, None, False)
    (21, 20)
    """
    extra = int(bool(include_input))
    if num_freqs is None:
        if dim is None:
            raise ParameterError("missing --num-freqs (or --d)", hint="pass e.g. --num-freqs 10")
        dim = positive_int("d", dim, flag="--d")
        if (dim - extra) % 2 or dim <= extra:
            raise ParameterError(
                f"d = {dim} is not 2·L{' + 1' if extra else ''} for a number of frequencies L",
                hint=f"use --d {2 * max(1, (dim - extra) // 2) + extra} or give --num-freqs",
            )
        return dim
    width = 2 * positive_int("num_freqs", num_freqs, flag="--num-freqs") + extra
    if dim is not None and dim != width:
        raise ParameterError(
            f"--d {dim} does not match --num-freqs {num_freqs}, which gives {width} columns",
            hint="drop --d: --num-freqs sets it",
        )
    return width
