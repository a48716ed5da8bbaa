"""Argument checks shared by every scheme: one wording for every bad value.

Messages name the Python parameter as a ``{name}`` placeholder (see :mod:`pecli.errors`), which
the CLI spells as its flag.

>>> positive_int("length", 0)
Traceback (most recent call last):
pecli.errors.ParameterError: length must be a positive integer, got 0 (pass e.g. length=64)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any, cast

from pecli.errors import ParameterError, did_you_mean
from pecli.text import literal_repr


def positive_int(name: str, value: object) -> int:
    """``value`` as an int if it is a positive integer, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value <= 0:
        raise ParameterError(
            f"{{{name}}} must be a positive integer, got {literal_repr(value)}", hint=f"pass e.g. {{{name}=64}}"
        )
    return int(value)


def integer(name: str, value: object) -> int:
    """``value`` as an int if it is an integer, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ParameterError(
            f"{{{name}}} must be an integer, got {literal_repr(value)}", hint=f"pass e.g. {{{name}=0}}"
        )
    return int(value)


def finite_above(name: str, value: object, bound: float, *, example: str) -> float:
    """``value`` as a float if it is finite and greater than ``bound``, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= bound:
        raise ParameterError(
            f"{{{name}}} must be a finite number greater than {bound:g}, got {literal_repr(value)}",
            hint=f"pass e.g. {{{name}={example}}}",
        )
    return float(value)


def finite(name: str, value: object, *, example: str) -> float:
    """``value`` as a float if it is a finite number, else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ParameterError(
            f"{{{name}}} must be a finite number, got {literal_repr(value)}", hint=f"pass e.g. {{{name}={example}}}"
        )
    return float(value)


def row_range(rows: range | None, length: int, *, per_row: int = 0, hint: str | None = None) -> range:
    """The rows to compute: all of ``range(length)`` by default, else a contiguous sub-range of it.

    With ``per_row`` (the values computed for each row), refuse before any allocation a table
    whose float64 working copy would not fit in memory (:func:`check_table_size`).

    >>> row_range([0, 1], 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: rows must be a contiguous range inside 0..4, got [0, 1] (pass ...)
    """
    if rows is None:
        rows = range(length)
    elif not isinstance(rows, range) or rows.step != 1 or not 0 <= rows.start <= rows.stop <= length:
        raise ParameterError(
            f"rows must be a contiguous range inside 0..{length}, got {literal_repr(rows)}",
            hint="pass rows=range(start, stop) with 0 <= start <= stop <= length",
        )
    if per_row:
        check_table_size(len(rows), per_row, hint=hint)
    return rows


def check_table_size(count: int, per_row: int, *, hint: str | None = None) -> None:
    """Refuse ``count`` rows of ``per_row`` values when their float64 working copy exceeds the memory
    available, before anything is allocated (the scheme functions compute in float64, then round).

    >>> check_table_size(10**12, 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: the table, computed in float64, would take 29.1 TiB, more than ...
    """
    from pecli.memory import check_fits_in_memory

    check_fits_in_memory(count * per_row * 8, what="table, computed in float64,", hint=hint)


def grid_shape(grid: object) -> tuple[int, int]:
    """``grid`` as (H, W): a text ``"H,W"`` (or ``"HxW"``), or a pair of positive integers.

    >>> grid_shape("14,16"), grid_shape((2, 3))
    ((14, 16), (2, 3))
    """
    if isinstance(grid, str):
        pieces = grid.replace("x", ",").split(",")
        try:
            sides = tuple(int(piece.strip()) for piece in pieces) if grid.isascii() else ()  # not '٢,٢'
        except ValueError:
            sides = ()
    elif isinstance(grid, (tuple, list)) and all(isinstance(s, Integral) and not isinstance(s, bool) for s in grid):
        sides = tuple(int(s) for s in grid)
    else:
        sides = ()
    if len(sides) != 2 or min(sides) <= 0:
        raise ParameterError(
            f"{{grid}} must be two positive sides H,W, got {literal_repr(grid)}",
            hint="pass e.g. {grid=14,14}",
        )
    return sides[0], sides[1]


def choice(name: str, value: object, allowed: tuple[str, ...], *, scheme: str | None = None) -> str:
    """``value`` if it is one of ``allowed``, else a :class:`ParameterError` listing them.

    >>> choice("layout", "half", ("half", "interleaved"))
    'half'
    >>> choice("layout", "halt", ("half", "interleaved"), scheme="rope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: layout 'halt' is not a valid layout for scheme 'rope' (did you mean 'half'? ...)
    """
    if value not in allowed:
        where = f" for scheme {scheme!r}" if scheme else ""
        raise ParameterError(
            f"{{{name}}} {literal_repr(value)} is not a valid {name.replace('_', ' ')}{where}",
            hint=did_you_mean(str(value), allowed),
        )
    return value


def non_negative_int(name: str, value: object) -> int:
    """``value`` as an int if it is an integer >= 0 (a random seed), else a :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise ParameterError(
            f"{{{name}}} must be a non-negative integer, got {literal_repr(value)}", hint=f"pass e.g. {{{name}=0}}"
        )
    return int(value)


def even_dim(scheme: str, dim: int, why: str) -> int:
    """``dim`` if it is even, else a :class:`ParameterError` saying why ``scheme`` needs it.

    >>> even_dim("rope", 5, "it rotates pairs of columns")
    Traceback (most recent call last):
    pecli.errors.ParameterError: rope needs an even dim (it rotates pairs of columns), got 5 (use dim=6)
    """
    if dim % 2:
        raise ParameterError(f"{scheme} needs an even {{dim}} ({why}), got {dim}", hint=f"use {{dim={dim + 1}}}")
    return dim


def head_index(head: object, heads: int) -> int:
    """``head`` as an int if it names one of ``heads`` attention heads (0-based), else a :class:`ParameterError`.

    >>> head_index(3, 4)
    3
    """
    if isinstance(head, bool) or not isinstance(head, Integral) or not 0 <= int(head) < heads:
        raise ParameterError(
            f"{{head}} must be in 0..{heads - 1}, got {literal_repr(head)}", hint=f"pass e.g. {{head=0}} (of {heads})"
        )
    return int(head)


def no_dim(scheme: str, dim: object) -> None:
    """A :class:`ParameterError` unless ``dim`` is None, for a scheme without an embedding dimension."""
    if dim is not None:
        raise ParameterError(
            f"scheme {literal_repr(scheme)} has no {{dim}} (its biases are len × len per head)", hint="drop {dim}"
        )


def fourier_width(dim: object, num_freqs: object, include_input: bool) -> int:
    """Columns of NeRF features: ``2·L`` plus 1 with the input; either ``dim`` or ``L`` may be given.

    >>> fourier_width(None, 10, True), fourier_width(20, None, False)
    (21, 20)
    """
    extra = int(bool(include_input))
    if num_freqs is None:
        if dim is None:
            raise ParameterError("missing {num_freqs} (or {dim})", hint="pass e.g. {num_freqs=10}")
        dim = positive_int("dim", dim)
        if (dim - extra) % 2 or dim <= extra:
            raise ParameterError(
                f"{{dim={dim}}} is not 2·L{' + 1' if extra else ''} for a number of frequencies L",
                hint=f"use {{dim={2 * max(1, (dim - extra) // 2) + extra}}} or give {{num_freqs}}",
            )
        return dim
    width = 2 * positive_int("num_freqs", num_freqs) + extra
    if dim is not None and dim != width:
        raise ParameterError(
            f"{{dim={dim}}} does not match {{num_freqs={num_freqs}}}, which gives {width} columns",
            hint="drop {dim}: {num_freqs} sets it",
        )
    return width


def positive_floats(name: str, value: object, count: int) -> tuple[float, ...]:
    """``value`` as ``count`` finite positive floats: a sequence of numbers or a text ``"a,b,…"``.

    >>> positive_floats("short_factor", "1,1.5", 2)
    (1.0, 1.5)
    """
    try:
        numbers = tuple(float(piece) for piece in _pieces(value))
    except (TypeError, ValueError):
        numbers = ()
    if not numbers or not all(math.isfinite(n) and n > 0 for n in numbers):
        raise ParameterError(
            f"{{{name}}} must be a comma-separated list of positive numbers, got {literal_repr(value)}",
            hint=f"pass {count} numbers, e.g. {{{name}={','.join(['1.0'] * min(count, 2))}{',…' * (count > 2)}}}",
        )
    if len(numbers) != count:
        raise ParameterError(
            f"{{{name}}} has {len(numbers)} numbers, but the rotary dimension needs {count} (one per frequency)",
            hint=f"pass {count} numbers, one per pair of rotated columns",
        )
    return numbers


def leading_rows(cls_token: object, extra_tokens: object) -> int:
    """The zero rows before a grid's patches: one for ``cls_token``, or ``extra_tokens`` of them (diffusers).

    >>> leading_rows(True, None), leading_rows(True, 2), leading_rows(True, 0), leading_rows(False, 3)
    (1, 2, 0, 0)
    """
    count = None if extra_tokens is None else non_negative_int("extra_tokens", extra_tokens)  # −1 is never valid
    if not cls_token:
        return 0  # diffusers ignores extra_tokens without cls_token
    return 1 if count is None else count


def mrope_sections(sections: object, dim: int) -> tuple[int, int, int]:
    """``sections`` as three positive counts of frequencies (t, h, w) that sum to d/2.

    >>> mrope_sections("16,24,24", 128)
    (16, 24, 24)
    """
    try:
        counts = tuple(int(str(piece).strip()) for piece in _pieces(sections)) if str(sections).isascii() else ()
    except (TypeError, ValueError):
        counts = ()
    if len(counts) != 3 or min(counts) <= 0:
        raise ParameterError(
            f"{{sections}} must be three positive counts t,h,w, got {literal_repr(sections)}",
            hint="pass e.g. {sections=16,24,24} (Qwen2-VL, head dim 128)",
        )
    if sum(counts) != dim // 2:
        raise ParameterError(
            f"{{sections={','.join(map(str, counts))}}} counts {sum(counts)} frequencies, but {{dim={dim}}} "
            f"has {dim // 2} (d/2)",
            hint="the three counts must sum to d/2, e.g. 16,24,24 for d 128",
        )
    return counts[0], counts[1], counts[2]


def axial_grid(grid: object, sections: object) -> tuple[int, ...]:
    """The grid's sides: ``H,W``, or with ``sections`` also ``T,H,W`` (an ``H,W`` image has T = 1).

    >>> axial_grid("4,6", None), axial_grid("4,6", "2,1,1"), axial_grid("2x4x6", "2,1,1")
    ((4, 6), (1, 4, 6), (2, 4, 6))
    """
    if grid is None:
        raise ParameterError("missing {grid}", hint="pass e.g. {grid=16,16} (height, width)")
    text = grid if isinstance(grid, str) else ",".join(map(str, _pieces(grid)))
    try:
        sides = tuple(int(piece.strip()) for piece in text.replace("x", ",").split(",")) if text.isascii() else ()
    except ValueError:
        sides = ()
    allowed = (2, 3) if sections is not None else (2,)
    if len(sides) not in allowed or min(sides) <= 0:
        example = "{grid=H,W} or, with {sections}, {grid=T,H,W}" if sections is not None else "{grid=H,W}"
        raise ParameterError(
            f"{{grid}} must be positive sides {example}, got {literal_repr(grid)}", hint="pass e.g. {grid=16,16}"
        )
    return (1, *sides) if sections is not None and len(sides) == 2 else sides


def _pieces(value: object) -> Iterable[Any]:
    """A text ``"a,b,…"`` split at its commas; any other value as the sequence it should be (iterating
    something else raises TypeError, which the callers report)."""
    return value.split(",") if isinstance(value, str) else cast("Iterable[Any]", value)
