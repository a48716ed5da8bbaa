"""Two RoPE configurations compared where it matters, and the properties of a relative scheme.

:func:`compare_rope` says which frequency pairs two RoPE configurations treat differently and
by how much (θ_A/θ_B per pair), and from which offset their long-term decay profiles part.
:func:`relative_properties` measures what applies to a score or bias rather than a table of
position vectors: determinism, independence of the length, translation invariance of the
score (exactly: every diagonal of s(m, n) constant), boundedness and decay.

>>> result = compare_rope(64, 512, {"scaling": "linear", "factor": 2.0}, {})
>>> [(band.start, band.stop) for band in result.differing_pairs], round(result.ratio_range[0], 3)
([(0, 32)], 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.analysis.properties import PropertyCheck
from pecli.analysis.relative import check_profile_fits, rope_profile, rope_score_matrix, scaling_options
from pecli.report import Shown
from pecli.schemes.catalog import get_scheme
from pecli.schemes.checks import positive_int
from pecli.schemes.rope import rope_frequencies
from pecli.schemes.rope_scaling import SCALINGS

__all__ = ["PairRun", "RopeComparison", "RopeSpecsReport", "compare_rope", "relative_properties"]

#: two frequencies (or scores) are the same when they agree to this relative precision
_SAME = 1e-12
#: the decay profiles part at the first offset where they differ by more than this (score 1 at h = 0)
PROFILE_TOLERANCE = 1e-3
#: "bounded" (alibi): max |bias| may grow at most this much when len grows 16×, as for the tables' property
_BOUNDED_GROWTH = 1.25


@dataclass(frozen=True)
class PairRun:
    """Consecutive frequency pairs ``start … stop − 1`` whose θ_A/θ_B lies in ``low … high``."""

    start: int
    stop: int
    low: float
    high: float


@dataclass(frozen=True)
class RopeComparison:
    """Where two RoPE configurations differ: per-pair frequencies, and the decay profiles (qk ones).

    Attributes:
        ratio: θ_A/θ_B per pair (1 where the pair is the same; < 1: A turns slower, longer wavelength).
        differing_pairs: the runs of consecutive pairs with θ_A ≠ θ_B.
        offsets, score_a, score_b: the profiles s(h) compared, for h = 0 … length − 1.
        parted_at: the first offset where |s_A − s_B| > :data:`PROFILE_TOLERANCE`, or None.
    """

    ratio: np.ndarray
    differing_pairs: tuple[PairRun, ...]
    offsets: np.ndarray
    score_a: np.ndarray
    score_b: np.ndarray
    parted_at: int | None

    @property
    def ratio_range(self) -> tuple[float, float]:
        return float(self.ratio.min()), float(self.ratio.max())

    @property
    def profile_difference(self) -> np.ndarray:
        return np.abs(self.score_a - self.score_b)

    @property
    def same(self) -> bool:
        """No pair differs and the profiles agree to rounding (an attention factor alone parts them)."""
        return not self.differing_pairs and float(self.profile_difference.max()) <= _SAME

    def to_json(self) -> dict[str, Any]:
        difference = self.profile_difference
        worst = int(np.argmax(difference))
        return {
            "same": self.same,
            "ratio": self.ratio.tolist(),
            "differing_pairs": [vars(run).copy() for run in self.differing_pairs],
            "profile": {
                "offsets": [int(self.offsets[0]), int(self.offsets[-1])],
                "max_abs_difference": float(difference[worst]),
                "at_offset": int(self.offsets[worst]),
                "parted_at": self.parted_at,
                "tolerance": PROFILE_TOLERANCE,
            },
        }


@dataclass(frozen=True)
class RopeSpecsReport(Shown):
    """Two RoPE specs (``a``, ``b``: their text) compared at ``dim`` × ``length``: the frequency pairs that
    differ, where the decay profiles part, and whether the layouts agree.

    >>> params = {"scaling": "linear", "factor": 2.0}
    >>> report = RopeSpecsReport("rope:scaling=linear,factor=2", "rope", 64, 512, params, {},
    ...                          compare_rope(64, 512, params, {}))
    >>> report.same, report.text_lines()[-1]
    (False, 'different')
    """

    a: str
    b: str
    dim: int
    length: int
    params_a: dict[str, Any]
    params_b: dict[str, Any]
    result: RopeComparison

    @property
    def same(self) -> bool:
        """The same encoding: the same rotations on the same column pairs."""
        return self.result.same and self.params_a.get("layout") == self.params_b.get("layout")

    def to_json(self) -> dict[str, Any]:
        layouts = {"layout_a": self.params_a.get("layout"), "layout_b": self.params_b.get("layout")}
        sizes = {"d": self.dim, "len": self.length}
        return {"a": self.a, "b": self.b, **sizes, **self.result.to_json(), **layouts, "same": self.same}

    def text_lines(self) -> list[str]:
        result, dim, length = self.result, self.dim, self.length
        pairs = len(result.ratio)
        lines = [f"A: {self.a}", f"B: {self.b}"]
        if result.differing_pairs:
            runs = "; ".join(
                (f"pair {run.start}: θ_A/θ_B {run.low:.4g}" if run.stop - run.start == 1
                 else f"pairs {run.start}–{run.stop - 1}: θ_A/θ_B {run.low:.4g} … {run.high:.4g}")
                for run in result.differing_pairs
            )  # fmt: skip
            same = pairs - sum(run.stop - run.start for run in result.differing_pairs)
            kept = "none the same" if same == 0 else f"{same} pair{'s' if same != 1 else ''} the same"
            lines.append(f"frequencies (d = {dim}, {pairs} pairs): {runs}; {kept}")
        else:
            lines.append(f"frequencies (d = {dim}, {pairs} pairs): every pair the same")
        difference = result.profile_difference
        worst = int(np.argmax(difference))
        parted = (
            f"part at offset {result.parted_at} (|s_A − s_B| > {PROFILE_TOLERANCE:g})"
            if result.parted_at is not None
            else f"agree within {PROFILE_TOLERANCE:g}"
        )
        lines.append(
            f"decay profiles (qk ones, offsets 0..{length - 1}): {parted}; "
            f"max |s_A − s_B| {difference[worst]:.4g} at offset {result.offsets[worst]}"
        )
        layout_a, layout_b = self.params_a.get("layout"), self.params_b.get("layout")
        if layout_a != layout_b:
            lines.append(f"layouts differ: {layout_a} vs {layout_b} (the same rotations on other column pairs)")
        lines.append("same encoding" if self.same else "different")
        return lines


def _runs(ratio: np.ndarray) -> tuple[PairRun, ...]:
    differs = np.abs(ratio - 1.0) > _SAME
    runs, start = [], None
    for index, flag in enumerate([*differs, False]):
        if flag and start is None:
            start = index
        elif not flag and start is not None:
            part = ratio[start:index]
            runs.append(PairRun(start, index, float(part.min()), float(part.max())))
            start = None
    return tuple(runs)


def compare_rope(dim: int, length: int, params_a: dict[str, Any], params_b: dict[str, Any]) -> RopeComparison:
    """Compare RoPE configurations A and B (``rope_profile``'s keyword arguments) at head dim ``dim``.

    The profiles are RoFormer's long-term decay (``qk="ones"``) for offsets 0 … length − 1, in
    O(length · d) without the score matrix.
    """

    def frequencies(params: dict[str, Any]) -> np.ndarray:
        # every parameter its scaling takes (LongRoPE's factor lists, YaRN's truncate and mscales too)
        scaling = params.get("scaling", "none")
        takes = SCALINGS.get(scaling, {})
        chosen = {name: value for name, value in scaling_options(params).items() if name in takes}
        return rope_frequencies(dim, base=params.get("base", 10000.0), scaling=scaling, length=length, **chosen)

    check_profile_fits(dim, length)  # before the frequencies: --d 10**12 was "out of memory", exit 3
    ratio = frequencies(params_a) / frequencies(params_b)
    profile_a = rope_profile(length, dim, **params_a)
    profile_b = rope_profile(length, dim, **params_b)
    parted = np.flatnonzero(np.abs(profile_a.score - profile_b.score) > PROFILE_TOLERANCE)
    return RopeComparison(
        ratio=ratio,
        differing_pairs=_runs(ratio),
        offsets=profile_a.offsets,
        score_a=profile_a.score,
        score_b=profile_b.score,
        parted_at=int(profile_a.offsets[parted[0]]) if len(parted) else None,
    )


def relative_properties(scheme: str, params: dict[str, Any], *, length: int, dim: int | None) -> list[PropertyCheck]:
    """The properties that apply to the score (rope) or bias (alibi) of a relative scheme, measured.

    ``params`` are ``rope_profile``'s keyword arguments (rope) or the scheme's parameters (a bias: the
    registry entry's ``bias`` function gives it, the scheme's own function the matrix whose diagonals are checked).

    Example:
        >>> [(c.name, c.holds) for c in relative_properties("alibi", {"heads": 4}, length=64, dim=None)]
        [('deterministic', True), ('length-independent', True), ('translation-invariant', True), \
('bounded', False), ('decay', True)]
    """

    entry = get_scheme(scheme)
    score = entry.relative == "score"  # a query/key score (rope), else a bias per head (alibi)

    def curves(size: int) -> np.ndarray:
        if score:
            return rope_profile(size, positive_int("dim", dim), **params).score[None, :]
        return entry.relative_bias(-np.arange(size), params)  # offsets h = 0 … size − 1: key − query = −h

    base = curves(length)
    scale = max(float(np.abs(base).max()), 1e-300)
    checks = []

    def record(name: str, holds: bool, figure: float, detail: str) -> None:
        checks.append(PropertyCheck(name, holds, figure, detail))

    repeat = float(np.abs(curves(length) - base).max())
    record("deterministic", repeat == 0.0, repeat, f"two computations differ by {repeat:.3g}")
    change = float(np.abs(curves(2 * length)[:, :length] - base).max())
    record("length-independent", change <= _SAME * scale, change,
           f"offsets 0..{length - 1} change by {change:.3g} when len doubles")  # fmt: skip
    spread = _diagonal_spread(scheme, params, min(length, 256), dim)
    what = "s(m, n) (random q, k)" if score else "the bias"
    record("translation-invariant", spread <= _SAME * scale, spread,
           f"every diagonal of {what} is constant to {spread:.3g}")  # fmt: skip
    if score:
        profile = rope_profile(length, positive_int("dim", dim), **params)
        worst = float(np.max(np.abs(profile.score) / profile.bound))
        record("bounded", worst <= 1.0 + _SAME, worst, f"|s(h)| ≤ RoFormer's bound everywhere: max |s|/B = {worst:.3g}")
        late = float(profile.relative_bound[length // 2 :].max() / profile.relative_bound[0])
        record("decay", late < 1.0, late, f"the bound past h = {length // 2} is at most {late:.3g} of its value at 0")
    else:
        longer = float(np.abs(curves(16 * length)).max())
        detail = f"max |bias| {scale:.4g} at len {length}, {longer:.4g} at len {16 * length}"
        record("bounded", longer <= _BOUNDED_GROWTH * scale, longer, detail)
        rise = float(np.max(np.diff(base, axis=1))) if length > 1 else 0.0
        record("decay", rise <= 0.0, rise, f"the bias never rises with |h| (largest step {rise:.3g})")
    return checks


def _diagonal_spread(scheme: str, params: dict[str, Any], size: int, dim: int | None) -> float:
    """max over diagonals of (max − min) of the score (random q, k: not even in h) or bias matrix."""
    if get_scheme(scheme).relative == "score":
        matrix = rope_score_matrix(size, positive_int("dim", dim), **{**params, "qk": "random", "seed": 0})[None]
    else:
        matrix = np.asarray(get_scheme(scheme).function(size, None, **params, dtype="float64"))
        matrix = matrix[None] if matrix.ndim == 2 else matrix  # one head's (len, len)
    spread = 0.0
    for offset in range(-(size - 1), size):
        diagonal = np.diagonal(matrix, offset=offset, axis1=1, axis2=2)
        spread = max(spread, float(np.max(diagonal.max(axis=1) - diagonal.min(axis=1))))
    return spread
