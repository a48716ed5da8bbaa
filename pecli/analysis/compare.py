"""How two tables differ: difference statistics, the noise model behind the default tolerance, and
a diagnosis when the difference is structural (:mod:`pecli.analysis.diagnose`).

>>> import pecli
>>> a = pecli.encode(None, 16, 8, preset="tensor2tensor")
>>> b = pecli.encode(None, 16, 8, preset="fairseq")
>>> result = compare_tables(a, b)
>>> result.agree, [(found.code, found.figures["shift"]) for found in result.diagnosis]
(False, [('positions_shifted', 2)])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pecli.analysis.diagnose import Diagnosis, diagnose, named_permutations
from pecli.analysis.diagnosis import Finding, Reference, diagnose_difference
from pecli.analysis.value_precision import (
    EPSILON,
    FLOAT32_ANGLE_LIMIT,
    FLOAT32_ANGLE_NOISE,
    SUBNORMAL,
    pairing_radius,
    pairs_on_circle,
    precision_with_rows,
    rounding_tolerance,
    table_precision,
)
from pecli.errors import ParameterError, TableFileError

__all__ = [
    "Comparison",
    "Diagnosis",
    "Finding",
    "Reference",
    "check_tolerances",
    "compare_row_chunks",
    "compare_tables",
    "diagnose",
    "named_permutations",
    "recorded_positions",
]


@dataclass(frozen=True)
class Comparison:
    """Difference statistics of two tables of the same shape (A − B)."""

    shape: tuple[int, ...]  #: (rows, columns), or (heads, rows, columns) for per-head tables
    max_abs: float
    mean_abs: float
    max_rel: float  #: max |A − B| / |B| over the entries where B ≠ 0
    worst: tuple[int, int]  #: (position, dimension) of the largest |A − B|
    cosine_min: float  #: per-position cosine similarity of A[p] and B[p] (NaN where no position has one)
    cosine_mean: float
    atol: float
    rtol: float
    agree: bool  #: |A − B| <= atol + rtol · |B| everywhere (numpy.isclose)
    #: the causes that reproduce B from A within the noise (:mod:`pecli.analysis.diagnosis`), best first
    diagnosis: list[Finding] = field(default_factory=list)
    #: what each table reads as, when both are files (:mod:`pecli.analysis.readings`): not causes of B from A,
    #: but the conventions and parameters that regenerate each (``parameters_differ``…)
    readings: list[Finding] = field(default_factory=list)
    #: how the tolerance was set: "float32 arithmetic" (from the data), "given" (atol/rtol) or "exact"
    tolerance_kind: str = "given"
    tolerance_position: int = 0  #: the row where the data-driven tolerance is largest
    #: that row's own position when the rows are not positions 0, 1, 2, … (a timestep table's t), else None
    tolerance_at: float | None = None
    #: the data-driven tolerance's rounding: the coarsest dtype of the tables not holding exact values ("" when
    #: both hold exact values, integers); and whether float32's angle noise is in it (computed sinusoids)
    tolerance_rounding: str = "float32"
    tolerance_angles: bool = True
    same_nan: int = 0  #: entries NaN in both tables, which count as equal (NaN in one only is a difference)
    #: positions left out of the cosine: a row holding inf, or NaN in one table only, has no direction
    cosine_undefined: int = 0
    #: entries NaN in one table only: a difference, counted here and left out of max_abs, mean_abs and max_rel
    nan_one: int = 0
    #: every entry that is a number in both tables agrees: the NaN in one table only are the whole difference
    values_agree: bool = False
    nan_first: tuple[int, int] = (0, 0)  #: (position, dimension) of the first of them
    worst_head: int | None = None  #: the head of ``worst`` in a (heads, rows, columns) comparison
    #: the name of each axis of ``shape``: (position, dimension); a per-head bias's (head, query, key), or
    #: (head, key) for one query row per head
    axes: tuple[str, ...] = ("position", "dimension")
    nan_first_head: int | None = None  #: the head of ``nan_first`` in a (heads, rows, columns) comparison
    #: the entry furthest beyond its own tolerance, (position, dimension), when they disagree: its head, its
    #: |A − B| and the tolerance there (the data-driven tolerance differs by row: row 0's is not row 127's)
    beyond: tuple[int, int] = (0, 0)
    beyond_head: int | None = None
    beyond_abs: float = 0.0
    beyond_tolerance: float = 0.0
    #: the first position past :data:`FLOAT32_ANGLE_LIMIT` that was held to its rounding, not float32's angle noise
    angle_noise_past: float | None = None

    def where(self, head: int | None, row: int, column: int) -> str:
        """An entry named by its axes: ``position 3, dimension 1``, ``head 2, query 0, key 5``.

        >>> replace(compare_tables(np.ones((2, 2)), np.ones((2, 2))), axes=("head", "key")).where(None, 1, 0)
        'head 1, key 0'
        """
        indices = (row, column) if head is None else (head, row, column)
        return ", ".join(f"{name} {index}" for name, index in zip(self.axes[-len(indices) :], indices, strict=True))

    def cosine_text(self) -> str:
        """The per-row cosine as the report states it (per position, per head, per query row), naming the rows
        left out."""
        one, many = _ROW_NOUNS.get(self.axes[-2], (self.axes[-2], self.axes[-2] + "s"))
        left_out, rows = self.cosine_undefined, math.prod(self.shape[:-1])
        if left_out == rows:
            return f"cosine per {one}: none (every {one} holds inf or NaN)"
        text = f"cosine per {one} min {self.cosine_min:.6g}, mean {self.cosine_mean:.6g}"
        return text + (f" ({left_out} {one if left_out == 1 else many} with inf or NaN left out)" if left_out else "")

    def tolerance_text(self) -> str:
        """The tolerance as the result line states it."""
        if self.tolerance_kind == "exact":
            return "bit for bit"
        if self.tolerance_kind == "given":
            return f"atol {self.atol:g}, rtol {self.rtol:g}"
        if not self.tolerance_rounding or self.atol == 0:
            return "tolerance 0 (both tables hold exact values)"
        where = (
            f"tolerance {self.atol:.2g} at {self.axes[-2]} {self.tolerance_position}"
            if self.tolerance_angles and self.axes[-2] != "head"
            else f"tolerance up to {self.atol:.2g}"
        )  # a bias's: no row is the loosest
        if self.tolerance_at is not None:  # a row that embeds another position: its angle sets the noise
            where = f"tolerance {self.atol:.2g} at position {self.tolerance_at:g}, row {self.tolerance_position}"
        return f"{self.tolerance_name()} ({where}{self._rounding_note()})"

    def beyond_text(self) -> str:
        """The data-driven tolerance broken: where, by how much, and that entry's own tolerance (not the loosest
        row's, which a wide angle sets far from it).

        >>> a = np.linspace(0.1, 0.9, 512).reshape(128, 4)
        >>> compare_tables(a, a + 1e-9).beyond_text()
        'float64 rounding and float32 arithmetic at position 0, dimension 0: |A − B| 1e-09 > tolerance 8.9e-17 there'
        """
        note = self._rounding_note()
        return f"{self.tolerance_name()} {self.beyond_entry_text()}" + (f" ({note[2:]})" if note else "")

    def beyond_entry_text(self) -> str:
        """Where the tolerance is broken and by how much, each figure with the digits that tell them apart
        (|A − B| 0.010000000000000009 against atol 0.01 is beyond it; at two digits both read 0.01).

        >>> compare_tables(np.zeros((1, 2)), np.array([[0.0, 0.1 + 0.2]]), atol=0.3).beyond_entry_text()
        'at position 0, dimension 1: |A − B| 0.30000000000000004 > tolerance 0.3 there'
        """
        row = f"{self.axes[-2]} {self.beyond[0]}"
        if self.tolerance_at is not None and self.beyond_head is None:
            row = f"row {self.beyond[0]}"
        where = self.where(self.beyond_head, *self.beyond).replace(f"{self.axes[-2]} {self.beyond[0]}", row, 1)
        difference, tolerance = _apart(self.beyond_abs, self.beyond_tolerance)
        return f"at {where}: |A − B| {difference} > tolerance {tolerance} there"

    def tolerance_name(self) -> str:
        """The data-driven tolerance's noise model: the coarser table's rounding and float32's angle noise."""
        arithmetic = " and float32 arithmetic" if self.tolerance_angles else ""
        if self.tolerance_rounding not in EPSILON:  # longdouble: its differences exact, float64's slack
            return f"float64 rounding{arithmetic}"
        if self.tolerance_rounding == "float32":  # its rounding is float32 arithmetic's own
            return "float32 arithmetic"
        # the tables' own rounding (float64's: two float64 tables may differ by no more near position 0, where
        # float32's angle noise is nil), plus float32's angle noise for computed sinusoids
        return f"{self.tolerance_rounding} rounding{arithmetic}"

    def _rounding_note(self) -> str:
        if self.tolerance_rounding and self.tolerance_rounding not in EPSILON:
            return f"; {self.tolerance_rounding} values, their differences exact"
        return ""


def _apart(larger: float, smaller: float) -> tuple[str, str]:
    """``larger`` and ``smaller`` at 2 significant digits, or at as many more as tell them apart.

    >>> _apart(1e-9, 8.9e-17), _apart(0.010000000000000009, 0.01)
    (('1e-09', '8.9e-17'), ('0.01000000000000001', '0.01'))
    """
    for digits in range(2, 18):
        texts = f"{larger:.{digits}g}", f"{smaller:.{digits}g}"
        if texts[0] != texts[1]:
            return texts
    return f"{larger:.17g}", f"{smaller:.17g}"


#: what one row of a table is called, by the name of its row axis (singular, plural)
_ROW_NOUNS = {"query": ("query row", "query rows")}


def check_tolerances(atol: float, rtol: float) -> None:
    """A :class:`ParameterError` unless both tolerances are finite and >= 0.

    >>> check_tolerances(1e-6, 0.0)
    """
    for name, value in (("atol", atol), ("rtol", rtol)):
        if not value >= 0 or value == float("inf"):
            raise ParameterError(
                f"{{{name}}} must be a finite number >= 0, got {value:g}", hint=f"e.g. {{{name}=1e-6}}"
            )


def _row_cosines(a: np.ndarray, b: np.ndarray, *, all_finite: bool = False) -> np.ndarray:
    """cos(A[p], B[p]) for every p; 1 where both rows are zero, 0 where only one is; NaN where a row
    holds inf or NaN (no direction). Rows of huge or tiny values, whose squares overflow or underflow
    float64, are scaled first (a cosine does not change when a row is).

    >>> a = np.array([[1e300, 1e300], [1e-300, 0.0], [np.inf, 1.0]])
    >>> _row_cosines(a, np.array([[1e300, 0], [2e-300, 0], [1, 1]]))
    array([0.70710678, 1.        ,        nan])
    """
    # ``all_finite``: the caller knows every value is: a row of ones, without two passes to say so
    finite = np.ones(len(a), bool) if all_finite else np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        squares_a, squares_b = np.einsum("ij,ij->i", a, a), np.einsum("ij,ij->i", b, b)
        tiny = np.finfo(np.float64).tiny / np.finfo(np.float64).eps  # below this, squares have lost digits
        awkward = ~((squares_a < np.inf) & (squares_b < np.inf)) | (squares_a < tiny) | (squares_b < tiny)
        awkward &= finite
        if awkward.any():  # scale those rows by their largest |value|: squares stay in range
            a, b = a.copy(), b.copy()
            for table in (a, b):
                largest = np.abs(table[awkward]).max(axis=1, keepdims=True)
                table[awkward] /= np.where(largest > 0, largest, 1.0)
            squares_a[awkward] = np.einsum("ij,ij->i", a[awkward], a[awkward])
            squares_b[awkward] = np.einsum("ij,ij->i", b[awkward], b[awkward])
        dots = np.einsum("ij,ij->i", a, b)
        norms = np.sqrt(squares_a) * np.sqrt(squares_b)
        cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    both_zero = (norms == 0) & ~a.any(axis=1) & ~b.any(axis=1)
    cosines[both_zero] = 1.0
    cosines[~finite] = np.nan
    return np.clip(cosines, -1.0, 1.0)


def compare_tables(
    a: np.ndarray,
    b: np.ndarray,
    *,
    atol: float | None = None,
    rtol: float = 0.0,
    exact: bool = False,
    reference: Reference | None = None,
    reference_side: str = "a",
    axes: tuple[str, str] | None = None,
    positions: Sequence[float] | np.ndarray | None = None,
    parts: Sequence[str] = (),
) -> Comparison:
    """Compare tables ``a`` and ``b`` entry by entry; diagnose the difference when they disagree.

    Args:
        a, b: 2-D tables of the same shape (any real dtype; compared in float64), or 3-D per-head
            tables (heads, rows, columns), ALiBi's biases: compared as their heads' rows stacked, and
            diagnosed per head.
        atol, rtol: they agree when ``|a − b| <= atol + rtol · |b|`` everywhere. Without ``atol``
            the tolerance follows the data: row p may differ by the rounding of the lower-precision
            operand plus float32 arithmetic's angle noise at position p (:func:`arithmetic_tolerance`).
        exact: agree only when every value is equal (bit for bit, after widening to float64).
        reference: the scheme and parameters A was generated with, when known: the diagnosis then
            also tries that scheme's known mistakes (:mod:`pecli.schemes.mistakes`).
        reference_side: ``"b"`` when ``reference`` describes B instead.
        axes: the names of a 2-D table's rows and columns, when not (position, dimension): ("head",
            "key") for a per-head bias at one query row. A 3-D table's are (head, query, key).
        positions: each row's own position, when the rows are not positions 0, 1, 2, …: a timestep
            table's timesteps t (the angle noise is float32's at t·ω, not at the row number). One per row.
        parts: the parts both tables hold side by side, each its own columns, when a file names them and no
            ``reference`` does (an engine's cos and sin tensors, cos then sin): the diagnosis names those parts.

    Example:
        >>> import numpy as np
        >>> result = compare_tables(np.array([[1.0, 2.0]]), np.array([[1.0, 2.5]]), atol=0.1)
        >>> result.agree, result.max_abs, result.worst, result.max_rel
        (False, 0.5, (0, 1), 0.2)
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 3 and a.shape == b.shape and a.size:  # per-head tables: their heads' rows stacked
        return compare_row_chunks(
            lambda: [(a.reshape(-1, a.shape[2]), b.reshape(-1, b.shape[2]))],
            atol=atol, rtol=rtol, exact=exact, reference=reference, reference_side=reference_side, heads=len(a),
            parts=parts,
        )  # fmt: skip
    if a.ndim != 2 or b.ndim != 2 or a.shape != b.shape:
        raise shape_mismatch(a, b)
    # float64 rows widened at once: bounded memory (at least one row: a row of 10^6 columns is 8 MB, 64 were 512)
    step = max(1, _CHUNK_BYTES // (8 * max(1, a.shape[1])))
    # a wide table is diagnosed on its first rows, as a streamed one (64 × 10^6 diagnosed whole took 3 GB)
    diagnose_rows = None if a.size <= DIAGNOSE_VALUES else max(2, DIAGNOSE_VALUES // max(1, a.shape[1]))
    result = compare_row_chunks(
        lambda: ((a[start : start + step], b[start : start + step]) for start in range(0, max(len(a), 1), step)),
        atol=atol, rtol=rtol, exact=exact, reference=reference, reference_side=reference_side, positions=positions,
        parts=parts, diagnose_rows=diagnose_rows,
    )  # fmt: skip
    return result if axes is None else replace(result, axes=tuple(axes))


def shape_mismatch(a: np.ndarray, b: np.ndarray) -> TableFileError:
    """The error for tables of other shapes; when one is the other transposed (its shape reversed, its values
    the other's within a thousandth of its largest), it says so and how to fix it.

    >>> table = np.arange(6.0).reshape(3, 2)
    >>> error = shape_mismatch(table, table.T)
    >>> error.message
    'shape mismatch: A is 3 × 2, B is 2 × 3: B is A transposed (max |A − Bᵀ| 0)'
    >>> shape_mismatch(table, np.zeros((2, 2))).message
    'shape mismatch: A is 3 × 2, B is 2 × 2'
    """
    message = f"shape mismatch: A is {' × '.join(map(str, a.shape))}, B is {' × '.join(map(str, b.shape))}"
    hint = "compare tables of the same shape (for a scheme spec, {dim} and {length} set its shape)"
    if a.ndim == 2 and b.shape == a.shape[::-1] and a.size and np.isfinite(a).all() and np.isfinite(b).all():
        wide_a, wide_b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        off = max(float(np.abs(wide_a[rows] - wide_b[:, rows].T).max()) for rows in _row_slices(len(a), a.shape[1]))
        scale = max(float(np.abs(wide_a).max()), float(np.abs(wide_b).max()))
        if off <= 1e-3 * scale:
            message += f": B is A transposed (max |A − Bᵀ| {off:.3g})"
            hint = ("pecli reads a table as {length} × {dim} (rows: positions, columns: dimensions): transpose "
                    "the one stored the other way (numpy: table.T) and compare again")  # fmt: skip
    return TableFileError(message, hint=hint)


def _row_slices(rows: int, columns: int) -> list[slice]:
    step = max(1, _CHUNK_BYTES // (8 * max(1, columns)))
    return [slice(start, start + step) for start in range(0, rows, step)]


#: compare_tables diagnoses a disagreement on the first rows of each table, this many values (all of a smaller one)
DIAGNOSE_VALUES = 1 << 24
#: float64 bytes of the rows of each table compare_tables widens at once (whole tables took ~6 float64 copies)
_CHUNK_BYTES = 8 << 20


def compare_row_chunks(
    chunk_pairs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]],
    *,
    atol: float | None = None,
    rtol: float = 0.0,
    exact: bool = False,
    diagnose_rows: int | None = None,
    reference: Reference | None = None,
    reference_side: str = "a",
    heads: int | None = None,
    positions: Sequence[float] | np.ndarray | None = None,
    parts: Sequence[str] = (),
) -> Comparison:
    """:func:`compare_tables` over two tables given as matching row chunks, holding one pair at a time.

    ``chunk_pairs()`` yields (rows of A, the same rows of B) in order; the tolerance follows each
    table's precision, taken from the first chunks: ``chunk_pairs()`` is called again only when the
    later rows show another (or, for ``heads``, to count the rows first). A disagreement is diagnosed on the
    first ``diagnose_rows`` rows (default: all), read again once the tables are found to disagree (a per-head
    table's are kept as they pass: the only rows held in memory). ``heads``: the rows are
    those of ``heads`` per-head tables stacked (a bias, not angles: no angle noise; diagnosed per head,
    on the first ``diagnose_rows`` rows of each head: ALiBi's slopes show in any of its rows).
    ``positions``: each row's own position (a timestep table's t), one per row, and ``parts``, the parts the
    tables hold side by side, as :func:`compare_tables`.

    >>> a = np.arange(12.0).reshape(6, 2)
    >>> result = compare_row_chunks(lambda: ((a[i : i + 4], a[i : i + 4] + 1e-9) for i in (0, 4)), atol=1e-6)
    >>> result.shape, result.agree, f"{result.max_abs:.1g}"
    ((6, 2), True, '1e-09')
    """
    check_tolerances(0.0 if atol is None else atol, rtol)
    row_positions = None if positions is None else _row_positions(positions, heads)
    if heads:  # which rows of each head to keep needs the length first: a pass to count them
        precisions, length = _first_pass(chunk_pairs())
    else:  # one pass, its tolerance from the precision the first chunks show (most tables show theirs there)
        precisions, length = None, None
    settings = _Settings(
        atol, rtol, exact, diagnose_rows, reference, reference_side, heads, row_positions, tuple(parts)
    )
    result = _compare_pass(chunk_pairs, precisions, length, settings)
    if isinstance(result, list):  # the later rows set another tolerance: again, with the whole tables' precision
        result = _compare_pass(chunk_pairs, result, None, settings)
    if not isinstance(result, Comparison):
        raise TableFileError("the tables are empty", hint="give tables with at least one row and column")
    return result


@dataclass(frozen=True)
class _Settings:
    """The options of :func:`compare_row_chunks` that each pass takes."""

    atol: float | None
    rtol: float
    exact: bool
    diagnose_rows: int | None
    reference: Reference | None
    reference_side: str
    heads: int | None
    positions: np.ndarray | None = None  #: |each row's position| (a timestep table's t), when not its index
    parts: tuple[str, ...] = ()  #: the parts the tables hold side by side, named by a file (for the diagnosis)


def recorded_positions(metadatas: Iterable[Mapping[str, str] | None], rows: int) -> np.ndarray | None:
    """The positions the rows of compared tables embed, as their metadata records them, when not 0, 1, 2, …

    A timestep table's rows are its timesteps t: the float32 noise of its angles is at t·ω, not at the
    row number. Where both tables record positions, the larger |t| of each row (the looser noise of the
    two); a record that does not give one position per row is not used.

    >>> meta = {"scheme": "timestep", "dtype": "float32", "d": "4", "timesteps": "0:30:10"}
    >>> recorded_positions([meta, {}], 3).tolist(), recorded_positions([meta], 4)
    ([0.0, 10.0, 20.0], None)
    """
    from pecli.schemes.spec import recorded_row_positions

    found = [recorded_row_positions(meta) for meta in metadatas if meta]
    kept = [np.abs(np.asarray(each, dtype=np.float64)) for each in found if each is not None and len(each) == rows]
    kept = [each for each in kept if np.isfinite(each).all()]
    if not kept:
        return None
    return np.maximum.reduce(kept) if len(kept) > 1 else kept[0]


def _row_positions(positions: Sequence[float] | np.ndarray, heads: int | None) -> np.ndarray:
    """``|positions|`` as float64, checked: one finite real number per row (rows of one table, not heads').

    >>> _row_positions([0, -37.5, 999], None).tolist()
    [0.0, 37.5, 999.0]
    """
    if heads:
        raise ParameterError("positions are a 2-D table's rows, not a per-head table's", hint="leave positions out")
    try:
        values = np.asarray(positions, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("positions must be real numbers, one per row", hint="e.g. positions=[0, 37, 74]") from None
    if values.ndim != 1 or not np.isfinite(values).all():
        raise ParameterError("positions must be finite numbers, one per row", hint="e.g. positions=[0, 37, 74]")
    return np.abs(values)


def _first_pass(pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[list[Any], int]:
    """What the whole tables say of their precision (:func:`precision_with_rows`), and their number of rows."""
    precisions: list[Any] = [None, None]
    length = 0
    for part_a, part_b in pairs:
        precisions = [precision_with_rows(precisions[0], part_a), precision_with_rows(precisions[1], part_b)]
        length += len(part_a)
    return precisions, length


def _compare_pass(
    chunk_pairs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]],
    precisions: list[Any] | None,
    length: int | None,
    settings: _Settings,
) -> Comparison | list[Any] | None:
    """The comparison of ``chunk_pairs()`` with the tolerance of tables of ``precisions`` (None: what the first chunk
    pair shows); or, when the whole tables' precisions set another tolerance than the first chunks', those
    precisions (the figures are to be computed again with them); None for empty tables. ``length``: the
    number of rows, when known (a per-head table's, needed before its rows are kept for the diagnosis)."""
    stats: _DifferenceStats | None = None
    seen: list[Any] = [None, None]
    rows, width, scale = 0, 0, 0.0
    # float64 rows of each side, widened into buffers kept from chunk to chunk: a fresh buffer per chunk
    # costs a page fault per 4 KiB (the rows kept for the diagnosis are copies)
    widened: list[np.ndarray | None] = [None, None]
    for part_a, part_b in chunk_pairs():
        if precisions is None:
            seen = [precision_with_rows(seen[0], part_a), precision_with_rows(seen[1], part_b)]
        rows, width = rows + len(part_a), part_a.shape[1]
        if not part_a.size:
            continue
        if stats is None:
            tables = [table_precision(known) for known in (seen if precisions is None else precisions)]
            # a per-head table's rows to diagnose are kept as they pass; a table's are read again if it disagrees
            diagnose_rows = settings.diagnose_rows or length or 0
            stats = _DifferenceStats(
                length or 0, tables, 0.0, settings.atol, settings.rtol, settings.exact, diagnose_rows
            )
            stats.reference, stats.reference_side = settings.reference, settings.reference_side
            stats.positions, stats.parts = settings.positions, settings.parts
            if settings.heads:
                stats.per_head(settings.heads)
        a, b = (_widen(part, widened, side) for side, part in enumerate((part_a, part_b)))
        # what float64 loses of 64-bit integers beyond 2^53 and of longdouble: the differences are made exact
        error_a, error_b = _widening_error(part_a), _widening_error(part_b)
        correction: np.ndarray | None = None
        if error_a is not None or error_b is not None:
            correction = np.asarray((0.0 if error_a is None else error_a) - (0.0 if error_b is None else error_b))
            stats.widened_inexactly = True
        scale = max(scale, stats.add(a, b, correction))
    if stats is None or rows == 0 or width == 0:
        return None
    if settings.positions is not None and len(settings.positions) != rows:
        raise ParameterError(
            f"{len(settings.positions)} positions for {rows} rows", hint="give each row's position, one per row"
        )
    if precisions is None and [table_precision(known) for known in seen] != stats.tables:
        return seen
    stats.length, stats.scale = rows, scale
    if not stats.agree and not settings.heads:
        widened, stats.buffers = [None, None], {}  # the pass's buffers, given back before the rows and diagnosis
        stats.kept = _leading_rows(chunk_pairs(), settings.diagnose_rows or rows)
    return stats.result()


def _leading_rows(pairs: Iterable[tuple[np.ndarray, np.ndarray]], count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The first ``count`` rows of both tables, as float64 chunk pairs: copies of each chunk but the last read
    (reading the next may overwrite it: a reused buffer)."""
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    total = 0
    for part_a, part_b in pairs:
        rows = min(count - total, len(part_a))
        total += rows
        kept.append(
            (_float64_rows(part_a[:rows], copy=total < count), _float64_rows(part_b[:rows], copy=total < count))
        )
        if total >= count:
            break
    return kept


#: integers beyond this magnitude are not all held by float64
_FLOAT64_INTEGERS = 2**53


def _widening_error(rows: np.ndarray) -> np.ndarray | None:
    """``rows − float64(rows)``, exactly, as float64: what widening to float64 loses of 64-bit integers beyond
    2^53 and of longdouble values; None when float64 holds every value (every other dtype).

    >>> _widening_error(np.array([[2**53 + 1, 3]], np.int64)).tolist(), _widening_error(np.array([[2**53]]))
    ([[1.0, 0.0]], None)
    """
    if rows.dtype.kind in "iu" and rows.dtype.itemsize >= 8 and rows.size:
        if max(int(rows.max()), -int(rows.min())) <= _FLOAT64_INTEGERS:
            return None
        # x = high + low, high a multiple of 2^11 (at most 53 significant bits) and low < 2^11: both exact in
        # float64; high − float64(x) is exact (two close floats), and so is adding low: x − float64(x) is small
        high = np.left_shift(np.right_shift(rows, 11), 11)
        error = high.astype(np.float64) - rows.astype(np.float64)
        error += np.bitwise_and(rows, 2047).astype(np.float64)
    elif rows.dtype.kind == "f" and rows.dtype.itemsize > 8:
        with np.errstate(over="ignore", invalid="ignore"):
            # x − float64(x) has at most the 11 bits float64 lacks: exact in float64 (NaN and inf: no error)
            error = np.nan_to_num(rows - rows.astype(np.float64).astype(rows.dtype), nan=0.0, posinf=0.0, neginf=0.0)
            error = error.astype(np.float64)
    else:
        return None
    return error if error.any() else None


def _float64_rows(rows: np.ndarray, *, copy: bool) -> np.ndarray:
    """``rows`` as float64: a new array when ``copy``, else themselves when they are float64."""
    return np.array(rows, np.float64) if copy else np.asarray(rows, np.float64)


def _widen(rows: np.ndarray, buffers: list[np.ndarray | None], side: int) -> np.ndarray:
    """``rows`` as float64: themselves when they are, else copied into ``buffers[side]`` (grown as needed)."""
    rows = np.asarray(rows)
    if rows.dtype == np.float64:
        return rows
    buffer = buffers[side]
    if buffer is None or buffer.size < rows.size:
        buffer = buffers[side] = np.empty(rows.size, np.float64)
    widened = buffer[: rows.size].reshape(rows.shape)
    np.copyto(widened, rows, casting="unsafe")  # the values of every real dtype, exactly (as np.asarray)
    return widened


class _DifferenceStats:
    """The running figures of :func:`compare_row_chunks`, fed one float64 chunk pair at a time."""

    def __init__(
        self,
        length: int,
        tables: list[tuple[str, bool]],
        scale: float,
        atol: float | None,
        rtol: float,
        exact: bool,
        diagnose_rows: int,
    ) -> None:
        self.length, self.scale, self.rtol, self.exact = length, scale, rtol, exact
        self.tables = tables
        # the rounding that can part the tables: the coarsest of those not holding exact values
        rounded = [name for name, exact_values in tables if not exact_values]
        self.dtypes = tuple(rounded) or ("float64",)
        #: the coarsest of them, which the tolerance names ("" when every table holds exact values)
        self.rounding = max(rounded, key=lambda name: EPSILON.get(name, EPSILON["float64"]), default="")
        # a few roundings of computed values; against exact values (integers) the other table can only be their
        # rounding, within one unit in its last place: 256.5 (a float16) is no rounding of 256
        self.roundings = 1.0 if len(rounded) < len(tables) else 4.0
        self.epsilon = self.roundings * max((EPSILON.get(name, EPSILON["float64"]) for name in rounded), default=0.0)
        self.floor = 4.0 * max((SUBNORMAL.get(name, SUBNORMAL["float64"]) for name in rounded), default=0.0)
        #: float32's angle noise belongs to computed sinusoids; a table of exact integers has none
        self.angles = not any(exact_values for _, exact_values in tables)
        #: the amplitude the angle noise is a part of: a sinusoid a·sin(θ) off by δ in θ is off by up to |a|·δ, so
        #: a table of small values (amplitude 10^-3) is allowed as little and one of amplitude 3 thrice as much.
        #: Only a table that shows itself computed from angles gets its amplitude whole: row 0 of both tables
        #: pairs its columns on one circle x² + y² = a² (at angle 0: (0, a); at a later start, at several
        #: angles), and every row's pairs lie on that circle within rounding. Any other table (learned, a
        #: constant, a bias of values up to 2048, one whose rows leave the circle) is allowed its largest
        #: finite |value| so far, at most 1: the noise of a unit sinusoid, never more
        self.amplitude = 0.0
        #: the amplitude row 0 of both tables shows (:func:`pairing_radius`), and the step of its column pairs;
        #: 0 when none, or once a row is off its circle (:func:`pairs_on_circle`)
        self.radius: float | None = None
        self.pairing = 0
        self.atol = atol
        self.kind = "exact" if exact else "float32 arithmetic" if atol is None else "given"
        self.diagnose_rows = diagnose_rows
        self.row = 0
        self.agree = True
        self.values_agree = True  #: every entry NaN in neither table agrees (NaN in one only aside)
        self.max_abs, self.worst, self.sum_abs, self.max_rel = -1.0, (0, 0), 0.0, 0.0
        self.cosine_min, self.cosine_sum, self.cosine_undefined = np.inf, 0.0, 0
        self.allowed_max, self.allowed_position = 0.0, 0
        self.angle_noise_past: float | None = None
        #: the entry furthest beyond its own tolerance: |A − B| / tolerance there, its (row, column), |A − B|, tolerance
        self.beyond_ratio, self.beyond, self.beyond_abs, self.beyond_tolerance = -1.0, (0, 0), 0.0, 0.0
        self.kept: list[tuple[np.ndarray, np.ndarray]] = []
        self.reference: Reference | None = None
        self.reference_side = "a"
        self.heads: int | None = None
        self.width = 0
        self.same_nan, self.infinite = 0, False  # NaN in both (equal); NaN in one only (an infinite difference)
        self.nan_one, self.nan_first = 0, (0, 0)  # entries NaN in one table only, and the first of them
        #: a table holds values float64 does not (64-bit integers beyond 2^53, longdouble): the differences are
        #: exact, but the float64 rows a diagnosis would see are not the tables
        self.widened_inexactly = False
        self.buffers: dict[str, np.ndarray] = {}  #: scratch of :meth:`_add_finite`, reused chunk after chunk
        #: |each row's position| when the rows are not positions 0, 1, 2, … (a timestep table's t)
        self.positions: np.ndarray | None = None
        #: the parts the tables hold side by side (cos, then sin), named by a file and not by the reference
        self.parts: tuple[str, ...] = ()

    def per_head(self, heads: int) -> None:
        """The rows are those of ``heads`` per-head tables stacked: biases m_h·d, a per-head factor (ALiBi's
        slope) times an exact distance, not angles (no angle noise).

        A float32 or float64 table of such values that is not exact was computed, not rounded from exact
        values (those dtypes hold a power-of-two slope's products exactly): its factor is a power of a rounded
        base, 2^(−8/n) to the k-th (k < 2·heads, as BLOOM's and the paper's code compute it), off by up to k
        half-units in its last place, and so is every product. That is its noise, not one unit in the last place.
        """
        self.heads, self.angles = heads, False
        computed = [name for name, exact_values in self.tables if not exact_values and name in ("float32", "float64")]
        slope_noise = (heads + 1.0) * max((EPSILON[name] for name in computed), default=0.0)
        if slope_noise > self.epsilon:  # beyond the coarsest table's rounding (it is float32 or float64)
            self.epsilon = slope_noise
            self.roundings = slope_noise / max(EPSILON.get(name, EPSILON["float64"]) for name in self.dtypes)

    def _angle_noise(self, positions: np.ndarray) -> np.ndarray:
        """float32 arithmetic's angle noise at ``positions``, a part of the amplitude: 2^-23 · |p| while that leaves
        the value determined (|p| < :data:`FLOAT32_ANGLE_LIMIT`), none beyond (rows there keep their rounding)."""
        past = positions >= FLOAT32_ANGLE_LIMIT
        if self.amplitude and past.any():
            first = float(positions[past].min())
            self.angle_noise_past = first if self.angle_noise_past is None else min(self.angle_noise_past, first)
        return FLOAT32_ANGLE_NOISE * self.amplitude * np.where(past, 0.0, positions)

    def _positions(self, start: int, count: int) -> np.ndarray:
        """The positions of rows ``start`` to ``start + count``: their indices, or :attr:`positions`'s
        (a row beyond them is refused once the rows are counted: its index meanwhile)."""
        rows = np.arange(start, start + count, dtype=np.float64)
        if self.positions is not None:
            known = self.positions[start : start + count]
            rows[: len(known)] = known
        return rows

    def _scratch(self, name: str, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
        """A buffer of ``shape`` kept for the next chunk (its values are overwritten): fresh memory per chunk
        costs a page fault per 4 KiB."""
        size = int(np.prod(shape))
        buffer = self.buffers.get(name)
        if buffer is None or buffer.size < size:
            buffer = self.buffers[name] = np.empty(size, dtype)
        return buffer[:size].reshape(shape)

    def _allowed(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The difference row p, dimension i may show: the given atol, or the data's noise there."""
        if self.kind == "exact":
            return np.zeros((len(a), 1))
        if self.kind == "given":
            return np.full((len(a), 1), self.atol)
        with np.errstate(invalid="ignore"):
            magnitude = np.fmax(np.abs(a), np.abs(b))
        magnitude[~np.isfinite(magnitude)] = 0.0
        allowed = self.epsilon * magnitude + self.floor
        if self.angles:
            self._note_amplitude(a, b, _largest_finite(magnitude))
            allowed += self._angle_noise(self._positions(self.row, len(a)))[:, None]
        return allowed

    def _note_amplitude(self, a: np.ndarray, b: np.ndarray, largest: float) -> None:
        """Set :attr:`amplitude` for the rows ``a`` and ``b`` (the next chunk), whose largest finite |value| is
        ``largest``: the radius row 0 shows while every row pairs on its circle, else the capped largest |value|."""
        tolerance = 4.0 * self.epsilon + 4.0 * FLOAT32_ANGLE_NOISE  # the rounding of a·sin θ and a·cos θ
        if self.radius is None:  # row 0 (of the first chunk): is it a sinusoid's at angle 0 in both tables?
            found = [pairing_radius(rows[0], tolerance) for rows in (a, b)]
            (step, radius), (other_step, other) = found
            same = step == other_step and abs(radius - other) <= tolerance * max(radius, other)
            self.radius, self.pairing = (max(radius, other) if step and same else 0.0), step
        # a radius within the cap of 1 gains nothing from the circle test: row 0 holds ±radius, so the capped
        # largest |value| below is the radius already (the test is a pass over every value: 1.2× compare's time)
        if self.radius and self.radius > 1.0:
            on_circle = largest <= self.radius * (1.0 + tolerance) + self.floor
            if on_circle and all(pairs_on_circle(rows, self.pairing, self.radius, tolerance) for rows in (a, b)):
                self.amplitude = self.radius
                return
            self.radius = 0.0  # a row off the circle: not a sinusoid of that amplitude, whatever row 0 showed
        self.amplitude = min(1.0, max(self.amplitude, largest))

    def _noise(self, magnitude: np.ndarray, a: np.ndarray, b: np.ndarray, largest: float) -> np.ndarray:
        """The data's noise where the larger |value| is ``magnitude`` (a finite chunk's, of rows ``a`` and
        ``b``, whose largest is ``largest``), in place."""
        if self.angles:
            self._note_amplitude(a, b, largest)
        magnitude *= self.epsilon
        magnitude += self.floor
        if self.angles:
            magnitude += self._angle_noise(self._positions(self.row, len(magnitude)))[:, None]
        return magnitude

    def add(self, a: np.ndarray, b: np.ndarray, correction: np.ndarray | None = None) -> float:
        """Take the next rows of both tables in; their largest finite |value| (the scale of the tables).

        ``correction``: what widening to float64 lost of A minus what it lost of B (:func:`_widening_error`):
        added to ``a − b`` it gives the tables' exact difference."""
        rows, self.width = len(a), a.shape[1]
        if self.heads:  # the first diagnose_rows rows of each head
            keep = np.arange(self.row, self.row + rows) % (self.length // self.heads) < self.diagnose_rows
            if keep.all():  # copies but of the last rows: ``a`` and ``b`` may be buffers the next rows overwrite
                self.kept.append((a, b) if self.row + rows >= self.length else (a.copy(), b.copy()))
            elif keep.any():
                self.kept.append((a[keep], b[keep]))
        # most chunks hold no NaN or inf: a finite sum says so in one pass, and their checks are skipped
        with np.errstate(invalid="ignore", over="ignore"):
            finite = bool(np.isfinite(np.add.reduce(a, axis=None)) and np.isfinite(np.add.reduce(b, axis=None)))
        if finite:
            return self._add_finite(a, b, correction)
        scale = max(_largest_magnitude(a), _largest_magnitude(b))
        difference, same_nan = _abs_difference(a, b, correction)
        self.same_nan += int(np.count_nonzero(same_nan))
        nan_one = np.isnan(a) != np.isnan(b)
        if nan_one.any():
            if not self.nan_one:
                flat = int(np.argmax(nan_one))
                self.nan_first = (self.row + flat // self.width, flat % self.width)
            self.nan_one += int(np.count_nonzero(nan_one))
            self.agree = False
        self.infinite = self.infinite or bool(np.isinf(difference).any())
        magnitude = np.abs(b)
        magnitude[~np.isfinite(magnitude)] = 0.0  # NaN or inf in B: equal only to itself (as numpy.isclose)
        allowed = self._allowed(a, b)
        at = int(np.argmax(allowed))
        if allowed.flat[at] > self.allowed_max or self.row == 0:
            self.allowed_max, self.allowed_position = float(allowed.flat[at]), self.row + at // allowed.shape[1]
        relative_allowed = 0.0 if self.exact else self.rtol * magnitude
        within = difference <= allowed + relative_allowed
        self.agree = self.agree and bool(np.all(within))
        if not np.all(within | nan_one):
            self._note_beyond(np.where(nan_one, 0.0, difference), allowed + relative_allowed)
        self.values_agree = self.values_agree and bool(np.all(within | nan_one))
        # the figures below are over the comparable entries: NaN in one table only is counted apart
        difference[nan_one] = -1.0
        flat = int(np.argmax(difference))
        if difference.flat[flat] > self.max_abs:
            self.max_abs = float(difference.flat[flat])
            self.worst = (self.row + flat // self.width, flat % self.width)
        difference[nan_one] = 0.0
        self.sum_abs += float(difference.sum())
        # |A − B| / |B| where B ≠ 0, in place (where B = 0 the 0 of |B| stays); inf where B is finite and A not
        relative = np.divide(difference, magnitude, out=magnitude, where=magnitude > 0)
        relative[np.isinf(difference)] = np.inf
        self.max_rel = max(self.max_rel, float(relative.max()))
        if same_nan.any():  # NaN in both counts as equal: as 0 in both for the cosine
            a, b = np.where(same_nan, 0.0, a), np.where(same_nan, 0.0, b)
        cosines = _row_cosines(a, b)
        defined = ~np.isnan(cosines)
        self.cosine_undefined += rows - int(np.count_nonzero(defined))
        self.cosine_min = min(self.cosine_min, float(cosines.min(initial=np.inf, where=defined)))
        self.cosine_sum += float(cosines.sum(where=defined))
        self.row += rows
        return scale

    def _add_finite(self, a: np.ndarray, b: np.ndarray, correction: np.ndarray | None = None) -> float:
        """:meth:`add` for chunks without NaN or inf: the same figures in fewer passes."""
        difference = np.subtract(a, b, out=self._scratch("difference", a.shape))
        if correction is not None:
            difference += correction
        np.abs(difference, out=difference)
        magnitude = np.abs(b, out=self._scratch("magnitude", a.shape))
        if self.kind == "float32 arithmetic":  # max(|a|, |b|) gives the scale and, scaled, the tolerance
            larger = np.abs(a, out=self._scratch("allowed", a.shape))
            np.maximum(larger, magnitude, out=larger)
            scale = float(larger.max())
            allowed = self._noise(larger, a, b, scale)
        else:
            scale = max(float(magnitude.max()), _largest_magnitude(a))
            allowed = self._allowed(a, b)
        at = int(np.argmax(allowed))
        if allowed.flat[at] > self.allowed_max or self.row == 0:
            self.allowed_max, self.allowed_position = float(allowed.flat[at]), self.row + at // allowed.shape[1]
        if not self.exact and self.rtol:
            allowed = allowed + self.rtol * magnitude
        within = bool(np.all(np.less_equal(difference, allowed, out=self._scratch("within", a.shape, bool))))
        self.agree, self.values_agree = self.agree and within, self.values_agree and within
        if not within:
            self._note_beyond(difference, allowed)
        flat = int(np.argmax(difference))
        if difference.flat[flat] > self.max_abs:
            self.max_abs = float(difference.flat[flat])
            self.worst = (self.row + flat // self.width, flat % self.width)
        self.sum_abs += float(difference.sum())
        relative = np.divide(difference, magnitude, out=magnitude, where=magnitude > 0)
        self.max_rel = max(self.max_rel, float(relative.max()))
        cosines = _row_cosines(a, b, all_finite=True)
        self.cosine_min = min(self.cosine_min, float(cosines.min()))
        self.cosine_sum += float(cosines.sum())
        self.row += len(a)
        return scale

    def _note_beyond(self, difference: np.ndarray, allowed: np.ndarray) -> None:
        """Keep the entry of this chunk furthest beyond its own tolerance (|A − B| / tolerance), if the furthest yet."""
        allowed = np.broadcast_to(allowed, difference.shape)
        # where the tolerance is 0 (--exact, --atol 0, exact values), any difference is infinitely beyond it and
        # an equal entry not at all (inf · 0 was NaN, which argmax picks first: the entry at (0, 0), |A − B| 0)
        ratio = np.where(difference > 0, np.inf, 0.0)
        np.divide(difference, allowed, out=ratio, where=allowed > 0)
        flat = int(np.argmax(ratio))
        if ratio.flat[flat] > self.beyond_ratio:
            self.beyond_ratio = float(ratio.flat[flat])
            self.beyond = (self.row + flat // self.width, flat % self.width)
            self.beyond_abs, self.beyond_tolerance = float(difference.flat[flat]), float(allowed.flat[flat])

    def _row_tolerance(self, kept_rows: int) -> np.ndarray:
        """The diagnosis's noise bound of each kept row: what :meth:`_allowed` lets that row differ by at
        the tables' scale (the given atol, or rounding + float32 angle noise at its position), never
        under the rounding of the coarser table, nor (computed sinusoids) under float32's rounding: an
        explanation is regenerated in float64 and the table it explains was computed in float32."""
        rounding = rounding_tolerance(*self.dtypes, scale=self.scale, roundings=self.roundings)
        if self.kind != "float32 arithmetic":
            return np.full(kept_rows, max(rounding, self.atol if self.kind == "given" and self.atol else 0.0))
        if not self.angles:  # exact values (integers): their rounding only
            return np.full(kept_rows, max(rounding, self.epsilon * self.scale + self.floor))
        rows: np.ndarray = self._positions(0, kept_rows)
        if self.heads:  # the first diagnose_rows rows of each head, at their place in the stacked rows
            rows = np.flatnonzero(np.arange(self.length) % (self.length // self.heads) < self.diagnose_rows)
        floor = max(rounding, rounding_tolerance("float32", scale=self.scale), self.epsilon * self.scale + self.floor)
        return floor + self._angle_noise(rows.astype(np.float64))

    def result(self) -> Comparison:
        diagnosis: list[Finding] = []
        # NaN or inf in one: no layout to diagnose; nor in values float64 does not hold (its rounding is no cause)
        if not self.agree and not self.infinite and not self.nan_one and not self.widened_inexactly:
            head_a = np.concatenate([a for a, _ in self.kept])
            head_b = np.concatenate([b for _, b in self.kept])
            kept_rows = len(head_a)  # all of them, or the first diagnose_rows (of each head of a (heads, …) table)
            tolerance = self._row_tolerance(kept_rows)  # each row judged by its own bound, not the loosest
            if self.heads:
                head_a, head_b = (table.reshape(self.heads, -1, self.width) for table in (head_a, head_b))
            reference = self.reference
            if reference is not None and kept_rows < self.length and not self.heads:
                reference = replace(reference, length=self.length)  # the head of a longer table: regenerate its rows
            with np.errstate(invalid="ignore", over="ignore"):  # inf at the same places: inf − inf matches nothing
                if self.reference_side == "b" and reference is not None:
                    diagnosis = diagnose_difference(
                        head_b, head_a, tolerance=tolerance, reference=reference, swapped=True, parts=self.parts
                    )
                else:
                    diagnosis = diagnose_difference(
                        head_a, head_b, tolerance=tolerance, reference=reference, parts=self.parts
                    )
            if kept_rows < self.length:
                where = f"{kept_rows // self.heads} rows of each head" if self.heads else f"{kept_rows} rows"
                diagnosis = [
                    replace(found, message=f"{found.message} (diagnosed on the first {where})") for found in diagnosis
                ]
        defined = self.length - self.cosine_undefined  # positions with a cosine
        comparable = self.length * self.width - self.nan_one
        shape: tuple[int, ...] = (self.length, self.width)
        worst, worst_head, tolerance_position = self.worst, None, self.allowed_position
        nan_first, nan_first_head = self.nan_first, None
        if self.heads:
            shape = (self.heads, self.length // self.heads, self.width)
            worst_head, worst = self.worst[0] // shape[1], (self.worst[0] % shape[1], self.worst[1])
            nan_first_head, nan_first = self.nan_first[0] // shape[1], (self.nan_first[0] % shape[1], self.nan_first[1])
            tolerance_position %= shape[1]
        beyond, beyond_head = self.beyond, None
        if self.heads:
            beyond_head, beyond = self.beyond[0] // shape[1], (self.beyond[0] % shape[1], self.beyond[1])
        return Comparison(
            shape=shape,
            max_abs=self.max_abs if comparable else np.nan,
            mean_abs=self.sum_abs / comparable if comparable else np.nan,
            max_rel=self.max_rel if comparable else np.nan,
            worst=worst,
            worst_head=worst_head,
            cosine_min=self.cosine_min if defined else np.nan,
            cosine_mean=self.cosine_sum / defined if defined else np.nan,
            cosine_undefined=self.cosine_undefined,
            atol=self.allowed_max,
            rtol=self.rtol,
            agree=self.agree,
            diagnosis=diagnosis,
            tolerance_kind=self.kind,
            tolerance_position=tolerance_position,
            tolerance_at=None if self.positions is None else float(self._positions(tolerance_position, 1)[0]),
            tolerance_rounding=self.rounding,
            tolerance_angles=self.angles,
            same_nan=self.same_nan,
            nan_one=self.nan_one,
            values_agree=self.values_agree,
            nan_first=nan_first,
            nan_first_head=nan_first_head if self.nan_one else None,
            beyond=beyond,
            beyond_head=beyond_head,
            beyond_abs=self.beyond_abs,
            beyond_tolerance=self.beyond_tolerance,
            angle_noise_past=self.angle_noise_past,
            axes=("head", "query", "key") if self.heads else ("position", "dimension"),
        )


def _abs_difference(
    a: np.ndarray, b: np.ndarray, correction: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """|a − b|, with 0 where both hold NaN or the same infinity and inf where one only holds NaN; and
    where both hold NaN.

    >>> a, b = np.array([[np.nan, np.inf, np.nan, 1.0]]), np.array([[np.nan, np.inf, 2.0, 1.5]])
    >>> difference, both_nan = _abs_difference(a, b)
    >>> difference.tolist(), both_nan.tolist()
    ([[0.0, 0.0, inf, 0.5]], [[True, False, False, False]])
    """
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf; 1e308 − −1e308 is beyond float64: inf
        difference = a - b
        if correction is not None:
            difference += correction
    np.abs(difference, out=difference)
    both_nan = np.isnan(a) & np.isnan(b)
    difference[both_nan | (a == b)] = 0.0  # a == b: the same infinity, whose difference is NaN
    difference[np.isnan(difference)] = np.inf
    return difference, both_nan


def _largest_magnitude(values: np.ndarray) -> float:
    """The largest finite |value|, without a temporary when every value is finite (as most tables' are).

    >>> _largest_magnitude(np.array([[1.0, -3.0], [2.0, 0.5]], np.float32))
    3.0
    >>> _largest_magnitude(np.array([np.inf, -2.0, np.nan]))
    2.0
    """
    top, bottom = float(values.max()), float(values.min())
    if math.isfinite(top) and math.isfinite(bottom):
        return max(top, -bottom, 0.0)
    return _largest_finite(np.abs(values))


def _largest_finite(values: np.ndarray) -> float:
    return float(values.max(initial=0.0, where=np.isfinite(values)))
