"""What a table's values say of their precision, and the noise of the dtypes tables come in: the model behind
compare's default tolerance (:mod:`pecli.analysis.compare`) and identify's checks.

A table read back as float32 or float64 may hold values rounded to a coarser dtype (a bfloat16 checkpoint widened
by safetensors or torch); its values tell which, unless they are exact (small integers, ALiBi's dyadic products),
which fit every dtype without being rounded to any.

>>> value_precision(np.array([0.5, 1.0 + 2.0**-7], dtype=np.float32)), rounding_tolerance("float16", roundings=1.0)
('bfloat16', 0.0009765625)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = [
    "EPSILON",
    "FLOAT32_ANGLE_LIMIT",
    "FLOAT32_ANGLE_NOISE",
    "SUBNORMAL",
    "arithmetic_tolerance",
    "last_bits_used",
    "on_a_dyadic_grid",
    "pairing_radius",
    "pairs_on_circle",
    "precision_flags",
    "precision_name",
    "precision_with_rows",
    "rounding_tolerance",
    "table_precision",
    "value_precision",
    "value_precision_of_chunks",
]

#: unit roundoff of the dtypes tables come in; a table rounded once is within half of it times |value|
EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


#: a float32 implementation rounds the angle p·ω (and the frequency ω) to float32, so its sin/cos are
#: off by up to about eps32·|p·ω|: over the peer corpus (tests/data/peers) the largest error is
#: 0.7·eps32·p·ω_max, so one eps32 per unit of angle is the noise model
FLOAT32_ANGLE_NOISE = 2.0**-23
#: the position from which float32's angle noise (2^-23 · p, a radian and more) no longer determines a sin or
#: cos at all: beyond it "within float32 arithmetic" would take any two tables for the same, so rows there are
#: held to their rounding (a float32 engine at such positions is itself the bug compare should show)
FLOAT32_ANGLE_LIMIT = 2.0**23


#: the spacing of each dtype's subnormals: the absolute floor of its rounding near zero
SUBNORMAL = {"float64": 2.0**-1074, "float32": 2.0**-149, "float16": 2.0**-24, "bfloat16": 2.0**-133}


def rounding_tolerance(*dtypes: str, scale: float = 1.0, roundings: float = 4.0) -> float:
    """``roundings`` units of roundoff of the coarsest of ``dtypes`` at ``scale``: four, the slack of a table
    computed and rounded; one against exact values, which the other table can only round.

    >>> rounding_tolerance("float32", "float16"), rounding_tolerance("float16", roundings=1.0)
    (0.00390625, 0.0009765625)
    """
    return roundings * max(EPSILON.get(str(name), EPSILON["float64"]) for name in dtypes) * max(scale, 1e-30)


def arithmetic_tolerance(
    length: int, *dtypes: str, scale: float = 1.0, positions: np.ndarray | None = None, frequency: float = 1.0
) -> np.ndarray:
    """Per-row noise of a table computed in float32 arithmetic and stored in ``dtypes``: a ``(length, 1)`` column.

    Row p may be off by the rounding of the coarsest dtype at ``scale`` plus float32's angle noise
    ``eps32 · |p| · frequency`` (``positions`` default to the row indices; ``frequency`` is the
    largest angular frequency, 1 for every sinusoidal convention).

    >>> tolerance = arithmetic_tolerance(2048, "float32")
    >>> f"{tolerance[-1, 0]:.2g}", f"{tolerance[0, 0]:.2g}"
    ('0.00024', '4.8e-07')
    """
    rows = np.arange(length, dtype=np.float64) if positions is None else np.abs(np.asarray(positions, np.float64))
    return (rounding_tolerance(*dtypes, scale=scale) + FLOAT32_ANGLE_NOISE * rows * frequency)[:, None]


def value_precision(table: np.ndarray) -> str:
    """The coarsest dtype that holds every value of ``table`` exactly: how finely it was rounded.

    A bfloat16 table read back as float32 (safetensors and torch widen it) or a float16 table
    saved as float32 still carries its coarser rounding; comparisons should allow for it.

    >>> value_precision(np.array([0.5, 1.0 + 2.0**-7], dtype=np.float32))
    'bfloat16'
    >>> value_precision(np.array([1.0 + 2.0**-10])), value_precision(np.array([0.1], dtype=np.float32))
    ('float16', 'float32')
    >>> value_precision(-(2.0 ** -np.arange(1, 9))[:, None] * np.arange(256))  # exact: ALiBi, 8 heads
    'float32'
    """
    table = np.asarray(table)
    name = table.dtype.name
    if name not in ("float32", "float64"):
        return name
    # most tables show their precision in the first rows: look there before scanning everything
    for rows in (table[:64], table):
        precision = precision_name(precision_flags(rows))
        if precision == "float32":
            return precision
    # exact values on a grid (ALiBi's for power-of-two slopes) fit bfloat16 without being rounded to it
    return "float32" if table.ndim and on_a_dyadic_grid(table) else precision


def value_precision_of_chunks(chunks: Iterable[np.ndarray]) -> str:
    """:func:`value_precision` of a table given as row chunks (its first 64 rows first, as there).

    >>> table = np.array([[0.5], [1.0 + 2.0**-7], [1.0 + 2.0**-10]], dtype=np.float32)
    >>> value_precision_of_chunks(table[i : i + 1] for i in range(3)), value_precision(table)
    ('float16', 'float16')
    """
    known: tuple[bool, ...] | None = None
    for chunk in chunks:
        if chunk.dtype.name not in ("float32", "float64"):
            return chunk.dtype.name
        if known is None and precision_name(precision_flags(chunk[:64])) == "float32":
            return "float32"  # as value_precision: the first rows show most tables' precision
        flags = precision_flags(chunk)
        known = flags if known is None else (known[0] or flags[0], known[1] and flags[1], known[2] and flags[2])
    return "float32" if known is None else precision_name(known)


def precision_flags(rows: np.ndarray) -> tuple[bool, bool, bool]:
    """(holds values float32 cannot, every value is a bfloat16, every value is a float16) for float rows."""
    with np.errstate(over="ignore"):  # a value beyond float32's range: inf, so not float32 (below)
        single = rows.astype(np.float32) if rows.dtype == np.float64 else rows
    if rows.dtype == np.float64 and not np.array_equal(single.astype(np.float64), rows):
        return True, False, False
    with np.errstate(over="ignore"):
        float16 = np.array_equal(single.astype(np.float16).astype(np.float32), single)
    return False, not (single.view(np.uint32) & np.uint32(0xFFFF)).any(), float16


def last_bits_used(rows: np.ndarray, flags: tuple[bool, bool, bool]) -> tuple[bool, bool]:
    """Whether some value of ``rows`` needs bfloat16's, and float16's, last bit, where every value fits that
    dtype (``flags``: :func:`precision_flags`). Values that fit a coarser format still (k/128, small integers
    times a step) are no evidence of rounding to the coarse dtype, and taking them for it would let its slack
    swallow real differences; a table judged finer gets a stricter tolerance, never a looser one.

    >>> steps = np.arange(12, dtype=np.float32)[:, None] / 128 * np.ones((1, 8), np.float32)
    >>> last_bits_used(steps, precision_flags(steps))  # fits both, needs 4 bits of either
    (False, False)
    >>> rounded = np.sin(np.arange(64, dtype=np.float32)).astype(np.float16).astype(np.float32)
    >>> last_bits_used(rounded, precision_flags(rounded))
    (False, True)
    """
    _, bfloat16, float16 = flags
    if not (bfloat16 or float16):
        return False, False
    single = np.asarray(rows, np.float32).ravel()
    single = single[np.isfinite(single)]
    if bfloat16:
        bfloat16 = bool((single.view(np.uint32) & np.uint32(0x10000)).any())
    if float16:
        with np.errstate(over="ignore"):
            float16 = bool((single.astype(np.float16).view(np.uint16) & np.uint16(1)).any())
    return bfloat16, float16


def precision_name(flags: tuple[bool, ...]) -> str:
    wide, bfloat16, float16 = flags[:3]
    return "float64" if wide else "bfloat16" if bfloat16 else "float16" if float16 else "float32"


def precision_with_rows(known: str | tuple[bool, ...] | None, rows: np.ndarray) -> str | tuple[bool, ...]:
    """What the rows so far say of a table's precision: :func:`precision_flags`, whether every value is a small
    integer (held exactly: no rounding), and :func:`last_bits_used` (some value needs the coarse dtype's last
    bit: evidence of rounding to it); or a non-float dtype's name."""
    if rows.dtype.name not in ("float32", "float64"):
        return rows.dtype.name
    # once not, never again
    integral = (not isinstance(known, tuple) or known[3]) and (_integral(rows) or on_a_dyadic_grid(rows))
    if isinstance(known, tuple) and not (known[1] or known[2]):  # float32 or wider: only float64 can follow
        return (
            known[0] or (rows.dtype == np.float64 and not np.array_equal(rows.astype(np.float32), rows)),
            False,
            False,
            known[3] and integral,
            False,
            False,
        )
    precision = precision_flags(rows)
    flags = (*precision, integral, *last_bits_used(rows, precision))
    if not isinstance(known, tuple):
        return flags
    fits = (known[0] or flags[0], known[1] and flags[1], known[2] and flags[2], known[3] and integral)
    return (*fits, known[4] or flags[4], known[5] or flags[5])  # fits every chunk; needs the last bit in one


#: integers up to this magnitude are exact in float32 and wider: a table of them carries no rounding
_EXACT_INTEGERS = 2.0**24


def _integral(rows: np.ndarray) -> bool:
    """Whether every finite value of ``rows`` is an integer float32 holds exactly (NaN and inf aside).

    >>> _integral(np.array([0.0, 3.0, -7.0, np.nan])), _integral(np.array([0.5])), _integral(np.array([2.0**30]))
    (True, False, False)
    """
    if len(rows) > 1 and not _integral(rows[:1]):  # the first row most often tells
        return False
    finite = rows[np.isfinite(rows)]
    return bool(np.all((finite == np.round(finite)) & (np.abs(finite) <= _EXACT_INTEGERS)))


def on_a_dyadic_grid(rows: np.ndarray) -> bool:
    """Whether each row's finite values are integer multiples of a power of two (its smallest nonzero
    magnitude), fewer than 2^24 of them: exact values, as ALiBi's -m·|i − j| for power-of-two slopes m.

    Such values also fit a coarse dtype (bfloat16) exactly, which would otherwise be taken for that
    dtype's rounding, and its slack would swallow real differences. Rounding leaves no such grid: a
    rounded row's smallest value is almost never a power of two, nor the others its multiples.

    >>> slopes = 2.0 ** -np.arange(1, 9)
    >>> on_a_dyadic_grid(-slopes[:, None] * np.arange(256))  # ALiBi's key rows of 8 heads
    True
    >>> on_a_dyadic_grid(np.array([[0.5, 1.0 + 2.0**-7]])), on_a_dyadic_grid(np.array([[0.25, 0.75, 0.0]]))
    (False, True)
    """
    if rows.ndim > 1 and len(rows) > 1 and not on_a_dyadic_grid(rows[:1]):  # the first row most often tells
        return False
    table = np.abs(rows.reshape(-1, rows.shape[-1]) if rows.ndim > 1 else rows.reshape(1, -1)).astype(np.float64)
    table[~np.isfinite(table)] = 0.0
    smallest = np.where(table > 0, table, np.inf).min(axis=1, initial=np.inf)
    smallest[np.isinf(smallest)] = 1.0  # a row of zeros is on every grid
    if not np.all(np.frexp(smallest)[0] == 0.5):
        return False
    steps = table / smallest[:, None]
    return bool(np.all((steps == np.round(steps)) & (steps <= _EXACT_INTEGERS)))


def pairing_radius(row: np.ndarray, tolerance: float) -> tuple[int, float]:
    """(step, a) when ``row`` is a sinusoid's row: its columns paired ``step`` apart, in blocks of 2·step (adjacent
    columns: 1; halves; quarters), each pair (a·sin θ, a·cos θ) on one circle of radius a > 0. At angle 0 every pair
    is (0, ±a) or (±a, 0), within ``tolerance``·a; at a position p ≠ 0 (a table whose positions start at 1, or an
    offset) x² + y² is within 2·``tolerance``·a² of a² and the angles p·ω differ from pair to pair: pairs all at one
    angle other than 0 (a constant table) are no sinusoid's. (0, 0.0) when it is not.

    >>> pairing_radius(np.array([0.0, 3.0, 0.0, 3.0]), 1e-9), pairing_radius(np.array([0.0, 0.0, 3.0, 3.0]), 1e-9)
    ((1, 3.0), (2, 3.0))
    >>> angles = np.array([1.0, 0.1])  # position 1, frequencies 1 and 0.1
    >>> step, radius = pairing_radius(3 * np.concatenate([np.sin(angles), np.cos(angles)]), 1e-9)
    >>> step, round(radius, 12)
    (2, 3.0)
    >>> pairing_radius(np.ones(4), 1e-9), pairing_radius(np.array([0.1, 2.0, -0.7, 1.3]), 1e-9)
    ((0, 0.0), (0, 0.0))
    """
    width = len(row)
    if not np.all(np.isfinite(row)):
        return 0, 0.0
    for step in sorted({1, width // 2, width // 4} - {0}):
        if width % (2 * step):
            continue
        pairs = row.reshape(width // (2 * step), 2, step)
        larger, smaller = np.abs(pairs).max(axis=1), np.abs(pairs).min(axis=1)
        radius = float(larger.max())
        if not radius > 0:
            continue
        on_axes = float(smaller.max()) <= radius * tolerance  # sin 0 = 0 in each pair
        if on_axes and float(larger.min()) >= radius * (1 - tolerance):
            return step, radius
        found = _common_radius(pairs / radius, tolerance)  # on the unit scale: no square overflows (1e300)
        if found:
            return step, radius * found
    return 0, 0.0


def _common_radius(pairs: np.ndarray, tolerance: float) -> float:
    """The radius r of the circle every pair (x, y) of ``pairs`` ((blocks, 2, step)) lies on, x² + y² within
    2·``tolerance``·r² of r², when the pairs are at more than one angle (their unit vectors a tenth apart, 6°);
    0.0 when not."""
    squares = np.square(pairs[:, 0]) + np.square(pairs[:, 1])
    top = float(squares.max())
    if not top > 0 or float(np.abs(squares - top).max()) > 2.0 * tolerance * top:
        return 0.0
    directions = pairs / np.sqrt(squares)[:, None]
    spread = np.hypot(*(directions - directions[:1, :, :1]).transpose(1, 0, 2)).max()
    return float(np.sqrt(top)) if spread > 0.1 else 0.0


def pairs_on_circle(rows: np.ndarray, step: int, radius: float, tolerance: float) -> bool:
    """Whether every pair of ``rows``'s columns ``step`` apart (x, y) has x² + y² within 2·``tolerance``·a²
    of a² (``radius`` a): a sinusoid's rows, whatever their angles.

    >>> angles = np.arange(8.0)[:, None] * np.array([1.0, 0.1])
    >>> pairs_on_circle(3 * np.concatenate([np.sin(angles), np.cos(angles)], axis=1), 2, 3.0, 1e-12)
    True
    >>> pairs_on_circle(np.array([[0.0, 3.0], [1.0, 2.0]]), 1, 3.0, 1e-12)
    False
    """
    if not np.all(np.isfinite(rows)):
        return False
    if not radius > 0:
        return False
    blocks = rows.reshape(len(rows), -1, 2, step) / radius  # on the unit circle: no square overflows (1e300)
    with np.errstate(over="ignore", invalid="ignore"):  # a value far beyond the radius: inf, off the circle
        squares = np.square(blocks[:, :, 0]) + np.square(blocks[:, :, 1])
        squares -= 1.0
        return bool(np.abs(squares).max(initial=0.0) <= 2.0 * tolerance)


def table_precision(known: str | tuple[bool, ...]) -> tuple[str, bool]:
    """(the dtype a table was rounded to, whether its values are exact) from :func:`precision_with_rows`."""
    if isinstance(known, tuple):
        coarse = (known[0], known[1] and known[4], known[2] and known[5])
        return ("float64" if known[0] else "float32") if known[3] else precision_name(coarse), known[3]
    return known, known.startswith(("int", "uint", "bool"))
