"""Whether decimal text was printed from float32 or float16, as pecli writes them: decided a block at a time.

A float32 value printed with 9 significant digits parses to a float64 that is not that float32
(0.841470957 is not float32's 0.84147095680…): read as float64, a table would show float64 precision
and sit 3e-8 off every float32 convention. The evidence is the text's: with more digits than the dtype
pins down (6 for float32, 3 for float16) a float64 value truncated to them agrees with its dtype's
rounding by chance in about one value of ten, pecli's own output in every one. Text holding 8 or 9
(4 or 5) significant digits somewhere, each value the rounding of its float32 (float16) at its own
digits, was printed from that dtype.

Both steps run on numpy arrays, not value by value: :func:`significant_digits` counts digits in the
bytes of a block of lines, and :func:`reprinted` decides each value by comparing its distance to the
float32 (float16) against half a step of its digits, formatting in Python only the few values within
a rounding error of the half step (ties among them).

>>> printed = PrintedDtype()
>>> text = b"0.841470957,1\\n0.540302277,-0.5"
>>> printed.add(np.array([[0.841470957, 1.0], [0.540302277, -0.5]]), significant_digits(text, b",").reshape(2, 2))
>>> printed.dtype
'float32'
>>> printed.add(np.array([[0.8414709848078965]]), np.array([[16]], dtype=np.uint8))  # a float64's 16 digits
>>> printed.dtype
'float64'
"""

from __future__ import annotations

import numpy as np

__all__ = ["PrintedDtype", "reprinted", "significant_digits"]

#: (dtype, the significant digits pecli writes it with): text holding that many digits somewhere (or one
#: fewer: a trailing zero is not printed), each value the rounding of its own value in that dtype at the
#: digits written, was written from that dtype
WRITTEN_DIGITS = (("float16", 5), ("float32", 9))

#: bytes counted per pass of :func:`significant_digits` (its int32 running sums take 4 bytes per byte)
_PASS_BYTES = 1 << 20

#: the bytes a number's mantissa may start with before its first non-zero digit (spaces as str.strip and
#: numpy strip them)
_LEADING = np.zeros(256, dtype=bool)
_LEADING[[*b"0+-.", *(byte for byte in range(256) if chr(byte).isspace())]] = True
#: leading bytes stepped over one at a time (``-0.0000316`` has 7); a field with more is searched
_LEADING_STEPS = 12

#: 10**k as Python parses it (correctly rounded), k from -300 to 308: a value's decade is found among them
_DECADE_FROM = -300
_DECADES = np.array([float(f"1e{power}") for power in range(_DECADE_FROM, 309)])
#: below this a value's digit step is no normal float64: such values are decided by formatting them
_SMALLEST_DECIDED = 1e-280
#: the relative error of the float64 comparison, far above its worst case (2e-6 at 9 digits): values of
#: :func:`reprinted` this close to half a step are formatted instead
_MARGIN = 1e-4


def significant_digits(text: bytes, delimiter: bytes) -> np.ndarray:
    """The significant digits of each field of ``text`` (fields end at ``delimiter`` or a line end ``\\n``), as
    the mantissa writes them: from the first non-zero digit to the exponent, leading and trailing spaces,
    sign and point not counted; 0 for a field with no non-zero digit (``0``, ``nan``, ``inf``).

    >>> significant_digits(b"-0.000316227757,8.41e-01\\n1.500,nan\\n0, 1e5 ", b",").tolist()
    [9, 3, 4, 0, 0, 1]
    """
    data = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero((data == delimiter[0]) | (data == ord("\n")))
    counts = np.empty(ends.size + 1, dtype=np.uint8)
    start = field = 0
    while True:  # a pass ends at a field's end (or the text's): no field is split between passes
        last = int(np.searchsorted(ends, start + _PASS_BYTES, side="right")) - 1
        if last < field or start + _PASS_BYTES >= data.size:
            counts[field:] = _piece_digits(data[start:], ends[field:] - start)
            return counts
        counts[field : last + 1] = _piece_digits(data[start : ends[last] + 1], ends[field : last + 1] - start)[:-1]
        start, field = int(ends[last]) + 1, last + 1


def _piece_digits(data: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The digit count of each field of ``data``, whose fields end at the offsets ``ends`` (one more field
    than ends: the last runs to the end of ``data``).

    A number's mantissa runs from its first non-zero digit to its exponent (or its end): its digits are
    that span less the points and spaces in it (no other byte is there in a number numpy reads). Each
    field's exponent is found among the few exponents, its first non-zero digit by stepping over the few
    zeros, signs, points and spaces before it, and the points and spaces by binary search: every field at
    once, no pass over the bytes but a few comparisons.
    """
    if not data.size:
        return np.zeros(1, dtype=np.uint8)
    field_end = np.append(ends, data.size)
    mantissa_end = field_end.copy()
    exponents = np.flatnonzero((data | 0x20) == ord("e"))  # e or E
    fields = np.searchsorted(ends, exponents)
    first_in_field = np.diff(fields, prepend=-1) != 0
    mantissa_end[fields[first_in_field]] = exponents[first_in_field]
    first = np.concatenate(([0], ends + 1))
    stepping = np.flatnonzero(first < mantissa_end)
    for _ in range(_LEADING_STEPS):
        at = first[stepping]
        stepping = stepping[_LEADING[data[np.minimum(at, data.size - 1)]] & (at < mantissa_end[stepping])]
        if not stepping.size:
            break
        first[stepping] += 1
    else:  # a field led by more than _LEADING_STEPS such bytes: its first non-zero digit, searched
        nonzero = np.append(np.flatnonzero((data - np.uint8(ord("1"))) < 9), data.size)
        first[stepping] = nonzero[np.searchsorted(nonzero, first[stepping])]
    first = np.minimum(first, mantissa_end)
    led = (data[np.minimum(first, data.size - 1)] - np.uint8(ord("1"))) < 9  # by a digit, not nan's or inf's n, i
    not_digits = np.flatnonzero((data == ord(".")) | _is_space(data))
    counts = mantissa_end - first - (np.searchsorted(not_digits, mantissa_end) - np.searchsorted(not_digits, first))
    return np.where(led, np.minimum(counts, 255), 0).astype(np.uint8)


def _is_space(data: np.ndarray) -> np.ndarray:
    """Whether each byte is a space as ``str.strip`` (and numpy's parser) takes it in latin-1 text."""
    return (
        (data == ord(" "))
        | ((data - np.uint8(9)) < 5)  # tab, line feed, vertical tab, form feed, carriage return
        | ((data - np.uint8(0x1C)) < 4)  # the four separators
        | (data == 0x85)
        | (data == 0xA0)
    )


def reprinted(rounded: np.ndarray, digits: np.ndarray, parsed: np.ndarray) -> bool:
    """Whether each finite value of ``rounded`` (float32 or float16), printed with its ``digits`` significant
    digits (``"%.{digits}g"``), is the value ``parsed`` (as a float64), for ``digits`` of at most 9.

    The text T that ``parsed`` was read from is the printing of the value r of ``rounded`` exactly when r
    lies within half a step of T's last digit (a tenth of that below a power of ten, whose lower neighbours
    are printed a digit finer). That distance is measured in float64; the few values within its rounding
    error of the bound (a tie among them) are formatted, as the definition says.

    >>> parsed = np.array([0.841470957, 0.5, 0.84147096, 0.841471])
    >>> reprinted(parsed.astype(np.float32), np.array([9, 1, 8, 6]), parsed)
    True
    >>> reprinted(parsed[3:].astype(np.float32), np.array([9]), parsed[3:])  # float32 prints 0.841471016
    False
    """
    finite = np.isfinite(parsed) & (parsed != 0)  # a zero prints as a zero in any dtype
    value = np.abs(parsed[finite])
    printed = np.abs(rounded[finite].astype(np.float64))
    count = digits[finite].astype(np.intp)
    decade = np.searchsorted(_DECADES, value, side="right") - 1  # 10**decade <= value < 10**(decade + 1)
    half_step = _DECADES[np.maximum(decade - count + 1, 0)] / 2
    below_power = (value == _DECADES[np.maximum(decade, 0)]) & (printed < value)
    bound = np.where(below_power, half_step / 10, half_step)
    distance = np.abs(value - printed)
    undecided = (value < _SMALLEST_DECIDED) | (count == 0)
    if np.any((distance > bound * (1 + _MARGIN)) & ~undecided):
        return False
    unsure = (distance >= bound * (1 - _MARGIN)) | undecided
    return all(
        float(f"{float(one):.{int(places)}g}") == written
        for one, places, written in zip(rounded[finite][unsure], count[unsure], parsed[finite][unsure], strict=True)
    )


class PrintedDtype:
    """The dtype a table of text was printed from, its blocks (parsed float64 values and their significant
    digits) given one by one: ``"float16"`` or ``"float32"`` (:data:`WRITTEN_DIGITS`), else ``"float64"``."""

    def __init__(self) -> None:
        self._most_digits = 0
        self._possible = {dtype: True for dtype, _ in WRITTEN_DIGITS}

    def add(self, parsed: np.ndarray, digits: np.ndarray) -> None:
        """Take one block: ``parsed`` values (float64) and the ``digits`` each was written with."""
        self._most_digits = max(self._most_digits, int(digits.max(initial=0)))
        for dtype, written in WRITTEN_DIGITS:
            if not self._possible[dtype] or self._most_digits > written:
                self._possible[dtype] = False
                continue
            with np.errstate(over="ignore"):
                rounded = parsed.astype(dtype)
            self._possible[dtype] = np.array_equal(np.isfinite(rounded), np.isfinite(parsed)) and reprinted(
                rounded, digits, parsed
            )

    def unknown(self) -> None:
        """A block whose digits could not be counted: the text is read as float64 (what it parses to)."""
        self._possible = dict.fromkeys(self._possible, False)

    @property
    def dtype(self) -> str:
        """The dtype the blocks so far were printed from."""
        for dtype, written in WRITTEN_DIGITS:
            if self._possible[dtype] and written - 1 <= self._most_digits <= written:
                return dtype
        return "float64"
