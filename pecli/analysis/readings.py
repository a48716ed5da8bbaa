"""What each of two compared tables *is*: a reading of each side (the scheme and parameters that regenerate it
within rounding), and the finding that names which parameters set them apart.

A side is read from the scheme and parameters pecli recorded in its file, when they regenerate it; else by
:func:`pecli.analysis.identify.identify_table` (a RoPE file's cos and sin together). A reading is claimed
only when it regenerates the values within their rounding; a large table is read on its first rows only
(:data:`READ_VALUES`), and the finding says so.

>>> import pecli
>>> a = np.hstack([pecli.encode("rope", 32, 16, part=part) for part in ("cos", "sin")])
>>> b = np.hstack([pecli.encode("rope", 32, 16, base=500000.0, part=part) for part in ("cos", "sin")])
>>> found = readings_finding(read_table(a, paired=True), read_table(b, paired=True))
>>> found.code, found.figures["differs"], found.figures["b_values"]
('parameters_differ', ['base'], [500000.0])
>>> print(found.message)
A reads as rope, B as rope (base=500000.0): base differs (base 10000.0 in A, 500000.0 in B; both read by identify)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pecli.analysis.compare import Comparison
from pecli.analysis.diagnosis import Finding
from pecli.analysis.identify import identify_rope_pair, identify_table
from pecli.analysis.value_precision import rounding_tolerance
from pecli.errors import PecliError
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.spec import TableSpec

__all__ = ["READ_VALUES", "Reading", "read_table", "readable", "readings_finding", "rows_to_read", "with_readings"]

#: a table of at most this many values is read whole; a larger one on its first rows, this many values
#: (identify on a 256 × 128 RoPE cos table: about 2 s on a loaded 2-core machine, 7 s on 1024 × 128)
READ_VALUES = 1 << 15
#: the fewest rows a sampled table is read on (fewer cannot tell the frequencies apart)
_LEAST_ROWS = 16


@dataclass(frozen=True)
class Reading:
    """A scheme and its full parameters that regenerate a table (or its first ``rows``) within rounding."""

    scheme: str
    params: Mapping[str, Any]
    read_from: str  #: "pecli metadata" (what the file records) or "identify" (read off the values)
    error: float  #: the largest |table − regenerated| over the rows read
    tolerance: float  #: the rounding it is within
    rows: int  #: the rows read
    total_rows: int  #: the table's rows
    presets: tuple[str, ...] = field(default=())

    def changed(self) -> dict[str, Any]:
        """The parameters that differ from the scheme's defaults (unset ones left out).

        >>> Reading("rope", {"base": 5e5, "layout": "half", "factor": None}, "identify", 0.0, 0.0, 4, 4).changed()
        {'base': 500000.0}
        """
        defaults = SCHEMES[self.scheme].defaults
        return {
            name: value
            for name, value in self.params.items()
            if value is not None and not (name in defaults and _same(value, defaults[name]))
        }

    def describe(self) -> str:
        """``scheme (preset …; param=value, …)``: the scheme, its presets and its parameters off their defaults."""
        inside = [f"preset {', '.join(self.presets)}"] if self.presets else []
        changed = ", ".join(f"{name}={value}" for name, value in self.changed().items())
        inside += [changed] if changed else []
        return self.scheme + (f" ({'; '.join(inside)})" if inside else "")

    def how(self) -> str:
        """How it was read: from the file's metadata or by identify, on every row or on the first ones."""
        rows = "" if self.rows == self.total_rows else f" on its first {self.rows} of {self.total_rows} rows"
        return ("from its pecli metadata" if self.read_from == "pecli metadata" else "by identify") + rows

    def figures(self, side: str) -> dict[str, Any]:
        return {
            f"{side}_read_from": self.read_from,
            f"{side}_rows": self.rows,
            f"{side}_error": self.error,
            f"{side}_tolerance": self.tolerance,
        }


def read_table(
    values: np.ndarray,
    *,
    metadata: Mapping[str, str] | None = None,
    dtype: str | None = None,
    key: str | None = None,
    paired: bool = False,
    total_rows: int | None = None,
) -> Reading | None:
    """What ``values`` reads as: the scheme and parameters ``metadata`` records when they regenerate it
    within rounding, else identify's exact reading; None when neither holds.

    Args:
        values: the table (2-D; or ALiBi's per-head 3-D biases, read only when small).
        metadata: the file's metadata (pecli's records its scheme and parameters).
        dtype: the dtype the values were stored in, when ``values`` is a widened copy (bfloat16 as float32).
        key: the file's tensor the table is (``cos`` of a RoPE file: the part it holds).
        paired: the table is a RoPE pair's cos and sin side by side (cos columns, then sin columns).
        total_rows: the table's rows, when ``values`` holds only its first :func:`rows_to_read` (a file read
            row by row).

    >>> import pecli
    >>> read_table(pecli.encode(None, 64, 32, preset="fairseq")).describe()
    'sinusoidal (preset fairseq; layout=split, freq_shift=1.0, offset=2)'
    >>> read_table(np.random.default_rng(0).normal(size=(64, 32))) is None
    True
    """
    values = np.asarray(values)
    if not readable(values.shape) or values.size == 0 or np.iscomplexobj(values):
        return None  # a large per-head bias: its first heads could not name its head count
    total = len(values) if total_rows is None else total_rows
    rows = rows_to_read(total, values.shape[-1]) if values.ndim == 2 else total
    if rows > len(values):
        return None  # fewer rows given than read_table reads: the caller's mistake, no reading
    head = values[:rows]
    stored = dtype or values.dtype.name
    reading = _from_metadata(head, metadata or {}, stored, key, paired)
    if reading is None:
        reading = _from_identify(head, stored, paired)
    return None if reading is None else replace(reading, total_rows=total)


def rows_to_read(rows: int, columns: int) -> int:
    """How many of a (rows × columns) table's first rows are read: all of them, up to :data:`READ_VALUES` values
    (:func:`readable`: enough of them to read).

    >>> rows_to_read(128, 64), rows_to_read(10**6, 64), rows_to_read(10**6, 10**6)
    (128, 512, 0)
    """
    return min(rows, READ_VALUES // max(1, columns))


def _from_metadata(
    values: np.ndarray, metadata: Mapping[str, str], dtype: str, key: str | None, paired: bool
) -> Reading | None:
    """The spec pecli recorded, when its rows regenerate ``values`` within their rounding; else None."""
    if "scheme" not in metadata or "pecli_version" not in metadata:
        return None
    try:
        spec = TableSpec.from_metadata(metadata)
        parts = spec.parts()
        if not paired and len(parts) > 1:  # one tensor of a file of several: the part its key names
            parts = [part for part in parts if part.name == key]
        if not parts or (paired and len(parts) != 2):
            return None
        rows = range(0, len(values))
        expected = np.hstack([np.asarray(part.rows(rows), dtype=np.float64) for part in parts]) if values.ndim == 2 \
            else np.asarray(parts[0].rows(rows), dtype=np.float64)  # fmt: skip
    except (PecliError, KeyError, ValueError, TypeError):  # a record this version cannot read: identify reads it
        return None
    if expected.shape != values.shape:
        return None
    given = values.astype(np.float64)
    if not np.isfinite(given).all():
        return None
    error = float(np.abs(given - expected).max())
    scale = float(np.abs(given).max()) or 1.0
    tolerance = max(rounding_tolerance(dtype, scale=scale), 1e-9 * scale)
    if not error <= tolerance:
        return None
    params = {**spec.params, **({"part": None} if paired else {})}
    presets = (spec.preset,) if spec.preset else ()
    return Reading(spec.scheme, params, "pecli metadata", error, tolerance, len(values), len(values), presets)


def _from_identify(values: np.ndarray, dtype: str, paired: bool) -> Reading | None:
    """identify's reading of ``values`` (a RoPE pair's two halves together), when exact (within rounding)."""
    try:
        if paired:
            half = values.shape[1] // 2
            found = identify_rope_pair(values[:, :half], values[:, half:], dtype=dtype)
        else:
            found = identify_table(values, dtype=dtype)
    except (PecliError, ValueError):  # NaN or inf, a shape identify does not read: no reading
        return None
    if found.level != "exact" or found.best.timesteps is not None:
        return None
    best = found.best
    return Reading(best.scheme, dict(best.params), "identify", best.max_error, found.tolerance, len(values),
                   len(values), tuple(best.presets))  # fmt: skip


def readings_finding(a: Reading | None, b: Reading | None) -> Finding | None:
    """What the two readings say: the parameters that differ (``parameters_differ``), the schemes that
    differ (``schemes_differ``), that both read alike (``same_reading``), or what the one side read is
    (``one_reading``); None when neither side reads as a known convention.

    >>> rope = Reading("rope", {"base": 10000.0}, "identify", 0.0, 1e-6, 8, 8)
    >>> readings_finding(rope, None).message
    'A reads as rope (read by identify); B as no known convention'
    """
    if a is None and b is None:
        return None
    if a is None or b is None:
        side, reading = ("a", a) if a is not None else ("b", b)
        assert reading is not None
        other = "B" if side == "a" else "A"
        message = f"{side.upper()} reads as {reading.describe()} (read {reading.how()}); {other} as no known convention"
        figures = {f"{side}_scheme": reading.scheme, f"{side}_params": reading.changed(), **reading.figures(side)}
        return Finding("one_reading", message, figures)
    evidence = {**a.figures("a"), **b.figures("b")}
    if a.scheme != b.scheme:
        message = f"A reads as {a.describe()}, B as {b.describe()}: the schemes differ ({_how(a, b)})"
        figures = {"a_scheme": a.scheme, "b_scheme": b.scheme, "a_params": a.changed(), "b_params": b.changed()}
        return Finding("schemes_differ", message, figures | evidence)
    names = [name for name in {**a.params, **b.params} if not _same(a.params.get(name), b.params.get(name))]
    how = _how(a, b)
    if not names:
        message = f"A and B both read as {a.describe()}, yet differ: no parameter tells them apart ({how})"
        return Finding("same_reading", message, {"scheme": a.scheme, "params": a.changed()} | evidence)
    values_a, values_b = [a.params.get(name) for name in names], [b.params.get(name) for name in names]
    apart = "; ".join(f"{name} {x} in A, {y} in B" for name, x, y in zip(names, values_a, values_b, strict=True))
    verb = "differs" if len(names) == 1 else "differ"
    message = f"A reads as {a.describe()}, B as {b.describe()}: {', '.join(names)} {verb} ({apart}; {how})"
    figures = {"scheme": a.scheme, "differs": names, "a_values": values_a, "b_values": values_b}
    return Finding("parameters_differ", message, figures | evidence)


def _how(a: Reading, b: Reading) -> str:
    """How both sides were read: ``both read by identify``, ``A read from its pecli metadata, B by identify``."""
    if a.how() != b.how():
        return f"A read {a.how()}, B {b.how()}"
    return f"both read {a.how()}".replace(" its ", " their ")


def readable(shape: tuple[int, ...]) -> bool:
    """Whether a table of ``shape`` is read: a 2-D one always (on its first rows), a per-head one when small.

    >>> readable((10**6, 64)), readable((4, 10**6)), readable((12, 40, 40)), readable((64, 512, 512))
    (True, False, True, False)
    """
    if len(shape) == 2:  # enough rows to tell frequencies apart within the budget (a wide table has not)
        return rows_to_read(*shape) >= min(shape[0], _LEAST_ROWS)
    return len(shape) == 3 and math.prod(shape) <= READ_VALUES


def with_readings(result: Comparison, sides: list[dict[str, Any] | None]) -> Comparison:
    """``result`` with the readings' finding (:attr:`Comparison.readings`), when the tables disagree.

    ``sides``: for A and B, the keyword arguments of :func:`read_table` (``values`` among them); None for a
    side not read (a large per-head table): then neither is.
    """
    if result.agree:
        return result
    given = [side for side in sides if side is not None and readable(np.shape(side["values"]))]
    if len(given) != len(sides):
        return result  # a side too large to read: what the other is would read as "B is none"
    found = readings_finding(*(read_table(**side) for side in given))
    return result if found is None else replace(result, readings=[found])


def _same(value: Any, other: Any) -> bool:
    """Two parameter values alike: numbers within float rounding (10000 and 10000.0), else equal.

    >>> _same(10000, 10000.0), _same(500.0, 500.0000000001), _same("half", "interleaved"), _same(None, 0)
    (True, True, False, False)
    """
    numbers = (int, float)
    if isinstance(value, numbers) and isinstance(other, numbers) and not isinstance(value, bool) \
            and not isinstance(other, bool):  # fmt: skip
        return math.isclose(float(value), float(other), rel_tol=1e-9, abs_tol=0.0)
    try:
        return bool(value == other)
    except (TypeError, ValueError):
        return False
