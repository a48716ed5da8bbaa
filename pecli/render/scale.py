"""Value ranges and colour limits shared by the terminal and image renderers."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pecli.errors import ParameterError

__all__ = [
    "ColorScale",
    "ValueRange",
    "color_limits",
    "color_scale",
    "finite_sample",
    "merge_ranges",
    "sample_step",
    "spanless",
    "value_range",
]

#: the largest colour limit: matplotlib's colourbar spans high − low, which must stay finite
_LARGEST_REACH = float(np.finfo(np.float64).max) / 4


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
    reach = min(reach, _LARGEST_REACH) if reach > 0 else 1.0
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


#: robust limits cover this percentile of |x| (signed data) or of x (non-negative data)
ROBUST_PERCENTILE = 99.0
#: robust limits replace the full range when the full range reaches this many times further
WASHOUT_RATIO = 2.0
#: percentiles are taken over at most this many values (an even stride through the table)
_SAMPLE = 1 << 20


class ColorScale(NamedTuple):
    """How values map to colours: the limits, the colormap, and what a reader must be told about them.

    ``diverging``: signed data, centred on 0; else sequential (non-negative data). ``robust``: the
    limits are a percentile, and ``clipped`` is the share of values beyond them; ``full`` is the
    range the limits would have been without.
    """

    low: float
    high: float
    cmap: str
    diverging: bool
    robust: bool = False
    clipped: float = 0.0
    full: tuple[float, float] = (0.0, 0.0)
    flat: float | None = None
    #: False where the values hold no finite value (all NaN or ±inf): the limits are only a placeholder
    finite: bool = True
    #: where each of (low, high) came from: "given" (the caller's vmin/vmax), "percentile" (robust), or "extent"
    #: (the values' own smallest or largest)
    origins: tuple[str, str] = ("extent", "extent")

    @property
    def centred(self) -> bool:
        """Whether 0 sits at the middle of the colormap (a diverging map between limits ±x).

        >>> color_scale(np.eye(2) - 0.5).centred, color_scale(np.eye(2) - 0.5, vmin=0).centred
        (True, False)
        """
        return self.diverging and math.isclose(-self.low, self.high)

    @property
    def spanless(self) -> str | None:
        """What a colourbar says in place of a scale, where the values span none: one value, or no finite one.

        >>> color_scale(np.zeros((2, 2))).spanless, color_scale(np.full((2, 2), np.nan)).spanless
        ('all 0', 'all NaN or ±inf')
        >>> color_scale(np.eye(2)).spanless is None, color_scale(np.zeros((2, 2)), vmin=-1, vmax=1).spanless is None
        (True, True)
        """
        if not self.finite:
            return spanless(ValueRange(float("nan"), float("nan"), 1))
        return None if self.flat is None else spanless(ValueRange(self.flat, self.flat, 0))

    @property
    def caption(self) -> str:
        """A colourbar label saying what the colour shows: the value, and where 0 or its limits lie.

        >>> color_scale(np.arange(4.0).reshape(2, 2)).caption, color_scale(-np.arange(9.0).reshape(3, 3)).caption
        ('value (0 … 3)', 'value (-8 … 0)')
        >>> color_scale(np.eye(2) - 0.5).caption
        'value, 0 at the centre colour'
        >>> color_scale(np.full((2, 2), 3.0)).caption  # not "3 … 4": the unit span only gives the map a width
        'value: every one 3'
        """
        if not self.finite:
            text = "value: none finite"
        elif self.flat is not None:
            text = f"value: every one {self.flat + 0.0:.4g}"
        elif self.centred:
            text = "value, 0 at the centre colour"
        else:
            text = f"value ({self.low + 0.0:.4g} … {self.high + 0.0:.4g})"  # + 0.0: no "-0"
        return text + (f"; {self.percentile_limits} at the {ROBUST_PERCENTILE:g}th percentile" if self.robust else "")

    @property
    def percentile_limits(self) -> str:
        """Which limits a percentile set: "limits", "lower limit" or "upper limit" (the others given or the extent).

        >>> outlier = np.concatenate([np.linspace(-0.1, 0.1, 999), [1.9]])
        >>> color_scale(outlier).caption
        'value, 0 at the centre colour; limits at the 99th percentile'
        >>> color_scale(outlier, vmax=0.5).caption
        'value (-0.0992 … 0.5); lower limit at the 99th percentile'
        >>> color_scale(np.abs(outlier)).caption
        'value (0 … 0.0992); upper limit at the 99th percentile'
        """
        chosen = [side for side, origin in zip(("lower", "upper"), self.origins, strict=True) if origin == "percentile"]
        return "limits" if len(chosen) == 2 else f"{chosen[0]} limit" if chosen else "no limit"


def spanless(data: ValueRange) -> str | None:
    """What a colourbar over ``data`` says instead of ticks, where it spans no range: its one value, or that no value
    is finite; None where there is a range to show.

    >>> spanless(ValueRange(0.0, 0.0, 0)), spanless(ValueRange(-0.0, -0.0, 3)), spanless(ValueRange(1.0, 2.0, 0))
    ('all 0', 'all 0 (and NaN/±inf)', None)
    >>> spanless(ValueRange(float("nan"), float("nan"), 5))
    'all NaN or ±inf'
    """
    if not np.isfinite(data.low):
        return "all NaN or ±inf"
    if data.low != data.high:
        return None
    return f"all {data.low + 0.0:.4g}" + (" (and NaN/±inf)" if data.nonfinite else "")


def sample_step(size: int) -> int:
    """The stride of the percentile sample through ``size`` values (every value up to :data:`_SAMPLE`).

    >>> sample_step(1000), sample_step(3 << 20)
    (1, 3)
    """
    return size // _SAMPLE if size > _SAMPLE else 1


def finite_sample(matrix: np.ndarray, step: int | None = None, offset: int = 0) -> np.ndarray:
    """The finite values of ``matrix`` (flattened; in its own float dtype, else float64) at every ``step`` th
    place of a longer run in which ``matrix`` starts at place ``offset`` (default: ``matrix`` alone,
    :func:`sample_step`).

    The samples of tables taken in turn (each with the places before it as ``offset``) join into the
    sample of the tables joined, so colour limits over many panels need only one panel at a time.

    >>> whole = np.arange(10.0)
    >>> joined = np.concatenate([finite_sample(whole[:4], 3, 0), finite_sample(whole[4:], 3, 4)])
    >>> joined.tolist() == finite_sample(whole, 3).tolist() == [0.0, 3.0, 6.0, 9.0]
    True
    """
    flat = np.asarray(matrix).reshape(-1)
    step = sample_step(flat.size) if step is None else step
    if step > 1:
        flat = flat[(-offset) % step :: step]
    if flat.dtype.kind != "f":  # a float table keeps its dtype: its order statistics are exact in it
        flat = flat.astype(np.float64)
    return flat[np.isfinite(flat)]


def _percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` (linear interpolation, numpy's own formula) by a partial sort.

    np.percentile also deduplicates its indices with np.unique, which imports numpy.ma (~20 ms of
    a terminal plot's start); interpolating in float64 from the two order statistics gives the
    same value.

    >>> values = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], dtype=np.float32)
    >>> _percentile(values, 99.0) == float(np.percentile(values.astype(np.float64), 99.0))
    True
    """
    index = q / 100.0 * (values.size - 1)
    below = math.floor(index)
    above = min(below + 1, values.size - 1)
    ordered = np.partition(values, (below, above)) if above != below else np.partition(values, below)
    a, b, t = float(ordered[below]), float(ordered[above]), index - below
    difference = b - a
    return b - difference * (1 - t) if t >= 0.5 else a + difference * t


def merge_ranges(ranges: list[ValueRange]) -> ValueRange:
    """The :class:`ValueRange` of tables joined, from each one's.

    >>> merge_ranges([ValueRange(-1.0, 2.0, 0), ValueRange(float("nan"), float("nan"), 3), ValueRange(0.0, 5.0, 1)])
    ValueRange(low=-1.0, high=5.0, nonfinite=4)
    """
    finite = [r for r in ranges if np.isfinite(r.low)]
    nonfinite = sum(r.nonfinite for r in ranges)
    if not finite:
        return ValueRange(float("nan"), float("nan"), nonfinite)
    return ValueRange(min(r.low for r in finite), max(r.high for r in finite), nonfinite)


def color_scale(
    matrix: np.ndarray | None,
    *,
    vmin: float | None = None,
    vmax: float | None = None,
    robust: bool | None = None,
    cmap: str | None = None,
    data: ValueRange | None = None,
    sample: np.ndarray | _Negated | None = None,
) -> ColorScale:
    """Colour limits and colormap that show ``matrix``'s structure rather than its outliers.

    Signed data: a diverging map (RdBu) symmetric around 0; non-negative data: a sequential one
    (viridis) from the smallest value, and non-positive data the same up to the largest. With
    ``robust=None`` the limits are the :data:`ROBUST_PERCENTILE` th percentile of |x| whenever the full range reaches
    :data:`WASHOUT_RATIO` times further (a few outliers would wash the rest out);
    ``robust=True``/``False`` force either. ``vmin``/``vmax`` win over both.

    ``data`` and ``sample`` (:func:`value_range` and :func:`finite_sample` of the values, gathered
    a panel at a time with :func:`merge_ranges`) stand for ``matrix``, which may then be None.

    >>> outlier = np.concatenate([np.linspace(-0.1, 0.1, 999), [1.9]])
    >>> scale = color_scale(outlier)
    >>> round(scale.high, 3), scale.cmap, scale.robust, scale.clipped
    (0.099, 'RdBu', True, 0.01)
    >>> color_scale(outlier, robust=False)[:3], color_scale(np.eye(3))[:3], color_scale(-np.eye(3))[:3]
    ((-1.9, 1.9, 'RdBu'), (0.0, 1.0, 'viridis'), (-1.0, -0.0, 'viridis'))
    """
    if data is None:
        if matrix is None:
            raise ValueError("color_scale takes a matrix, or its data and sample")
        data = value_range(matrix)
    if np.isfinite(data.low) and data.low < 0 and data.high <= 0:  # all ≤ 0 (ALiBi's biases): the mirror image
        assert not isinstance(sample, _Negated)  # a mirror's data is ≥ 0
        mirror = color_scale(
            None,
            vmin=None if vmax is None else -vmax,
            vmax=None if vmin is None else -vmin,
            robust=robust,
            cmap=cmap,
            data=ValueRange(-data.high, -data.low, data.nonfinite),
            sample=_Negated(matrix, sample),
        )
        flat = None if mirror.flat is None else -mirror.flat
        return mirror._replace(low=-mirror.high, high=-mirror.low, full=(-mirror.full[1], -mirror.full[0]), flat=flat,
                               origins=mirror.origins[::-1])  # fmt: skip
    # limits given symmetric around 0 centre the map there, whatever the sign of this sample
    centred = vmin is not None and vmax is not None and vmin < 0 < vmax and math.isclose(-vmin, vmax)
    diverging = centred or not (np.isfinite(data.low) and data.low >= 0)
    colormap = cmap or ("RdBu" if diverging else "viridis")
    full = color_limits(data, vmin, vmax) if diverging else _sequential(data, vmin, vmax)
    if data.low == data.high and vmin is None and vmax is None:  # one value: its colour, whatever the limits
        return ColorScale(*full, colormap, diverging, full=full, flat=data.low)
    if (vmin is not None and vmax is not None) or robust is False or not np.isfinite(data.low):
        return ColorScale(*full, colormap, diverging, full=full, finite=bool(np.isfinite(data.low)))
    if isinstance(sample, _Negated):
        sample = sample.values()
    elif sample is None:
        if matrix is None:
            raise ValueError("color_scale takes a matrix, or its data and sample")
        sample = finite_sample(matrix)
    reach = _percentile(np.abs(sample) if diverging else sample, ROBUST_PERCENTILE)
    top = full[1] if diverging else full[1] - full[0]
    span = reach if diverging else reach - full[0]
    if span <= 0 or (robust is None and top < WASHOUT_RATIO * span):
        return ColorScale(*full, colormap, diverging, full=full)
    low = (-reach if vmin is None else float(vmin)) if diverging else full[0]
    high = reach if vmax is None else float(vmax)
    color_limits(ValueRange(0.0, 0.0, 0), low, high)  # checks the limits given with the other
    # limits as float64 scalars: a Python float would be rounded to a float32 sample's dtype first
    origins = (
        "given" if vmin is not None else "percentile" if diverging else "extent",
        "given" if vmax is not None else "percentile",
    )
    if "percentile" not in origins:  # a sequential map's given upper limit: no percentile was drawn
        return ColorScale(low, high, colormap, diverging, full=full)
    beyond = int(np.count_nonzero((sample < np.float64(low)) | (sample > np.float64(high)))) / sample.size
    # full: the values' own range (not a limit given), which the limits cut off
    extent = color_limits(data) if diverging else _sequential(data, None, None)
    return ColorScale(low, high, colormap, diverging, True, round(beyond, 4), extent, origins=origins)


class _Negated:
    """The sample of ``-matrix`` (or ``-sample``), taken only if the limits need it (no copy of the matrix)."""

    def __init__(self, matrix: np.ndarray | None, sample: np.ndarray | None) -> None:
        self.matrix, self.sample = matrix, sample

    def values(self) -> np.ndarray:
        if self.sample is not None:
            return -np.asarray(self.sample)
        assert self.matrix is not None
        return -finite_sample(self.matrix)


def _sequential(data: ValueRange, vmin: float | None, vmax: float | None) -> tuple[float, float]:
    """Limits of non-negative data: its smallest to its largest value (a flat table gets a unit span)."""
    low = data.low if vmin is None else float(vmin)
    high = data.high if vmax is None else float(vmax)
    if vmin is None and vmax is None and high <= low:
        high = low + max(1.0, abs(low) * 2.0**-20)  # 1e19 + 1 is 1e19: a unit span at any magnitude
    return color_limits(ValueRange(0.0, 0.0, 0), low, high)
