"""The property report: the conditions the articles give for an ideal positional encoding, measured.

Kazemnejad (2019, "Transformer Architecture: The Positional Encoding") and Dufter et al. (2022,
"Position Information in Transformers: An Overview", §3) ask of an encoding that it be
deterministic, give every position its own vector, stay bounded, not depend on the sequence
length, have distances that depend on the offset only, and let PE[p + k] follow from PE[p] by a
linear map (the sinusoidal table's rotation, Vaswani et al. 2017 §3.5). Each check computes the
scheme in float64 and reports the figure it decided on.

>>> import pecli
>>> from pecli.schemes.spec import TableSpec
>>> checks = check_properties(TableSpec.resolve("count", None, {}, length=64, dim=8))
>>> [(c.name, c.holds) for c in checks][:3]
[('deterministic', True), ('unique', True), ('bounded', False)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pecli.analysis.distance import offset_profile
from pecli.report import Shown

__all__ = ["PROPERTIES", "PropertyCheck", "PropertyReport", "check_properties"]

#: the six properties, in the order of the report
PROPERTIES: tuple[str, ...] = (
    "deterministic",
    "unique",
    "bounded",
    "length-independent",
    "translation-invariant",
    "linear-relative",
)
#: a quantity that exact arithmetic makes 0 counts as 0 below this, relative to the table's scale
_NUMERICAL_ZERO = 1e-9
#: "bounded": max |PE| may grow by at most this factor when len grows 16× (N(0, σ²) samples grow ~1.15×)
_BOUNDED_GROWTH = 1.25
#: "linear-relative": the shifts k of PE[p] -> PE[p + k]
_SHIFTS = (1, 4, 16)


@dataclass(frozen=True)
class PropertyCheck:
    """One property: whether it holds, and the measured figure behind the verdict."""

    name: str
    holds: bool
    figure: float
    detail: str

    def to_json(self) -> dict:
        return {"name": self.name, "holds": self.holds, "figure": self.figure, "detail": self.detail}


def _max_abs(spec) -> float:
    """max |PE| of a table computed chunk by chunk (a 16× longer table need not fit in memory)."""
    return max(float(np.abs(chunk).max()) for chunk in spec.chunks())


def _powers_of_two_below(limit: int) -> list[int]:
    offsets, h = [], 1
    while h < limit:
        offsets.append(h)
        h *= 2
    return offsets


def _grows(spec) -> bool:
    """Whether the table can be made longer: a grid's length is its tokens, set by the grid.

    >>> from pecli.schemes.spec import TableSpec
    >>> _grows(TableSpec.resolve("sinusoidal", None, {}, length=8, dim=4))
    True
    >>> _grows(TableSpec.resolve("sincos2d", None, {"grid": "3x3"}, length=None, dim=8))
    False
    """
    from pecli.errors import ParameterError

    try:
        return bool(replace(spec, length=2 * spec.length).shape)
    except ParameterError:
        return False


def check_properties(spec) -> list[PropertyCheck]:
    """Measure the six properties of :data:`PROPERTIES` for a scheme at ``spec``'s shape.

    Args:
        spec: a :class:`~pecli.schemes.spec.TableSpec` (its dtype is ignored: the checks use float64).

    Returns:
        One :class:`PropertyCheck` per property, in the order of :data:`PROPERTIES`.

    Example:
        >>> from pecli.schemes.spec import TableSpec
        >>> spec = TableSpec.resolve("sinusoidal", None, {}, length=128, dim=16)
        >>> all(check.holds for check in check_properties(spec))
        True
    """
    spec = replace(spec, dtype="float64")
    length = spec.length
    table = spec.array()
    scale = max(float(np.abs(table).max()), 1e-300)
    checks = []

    repeat = spec.array()
    difference = float(np.abs(table - repeat).max())
    checks.append(
        PropertyCheck("deterministic", difference == 0.0, difference, f"two generations differ by {difference:.3g}")
    )

    profile = offset_profile(table, "euclidean")
    if length > 1:
        nearest_offset = int(np.argmin(profile.min[1:])) + 1
        nearest = float(profile.min[nearest_offset])
        detail = f"closest two positions are {nearest:.3g} apart (offset {nearest_offset})"
    else:
        nearest, detail = float("inf"), "a single position"
    checks.append(PropertyCheck("unique", nearest > _NUMERICAL_ZERO * scale, nearest, detail))

    if _grows(spec):  # a grid's tokens are set by its grid: no longer table to measure (n/a in the report)
        longer = _max_abs(replace(spec, length=16 * length))
        growth = longer / scale
        checks.append(
            PropertyCheck(
                "bounded",
                growth <= _BOUNDED_GROWTH,
                longer,
                f"max |PE| {scale:.4g} at len {length}, {longer:.4g} at len {16 * length} (×{growth:.3g})",
            )
        )

        doubled = replace(spec, length=2 * length).rows(range(length))
        change = float(np.abs(doubled - table).max())
        checks.append(
            PropertyCheck(
                "length-independent",
                change <= _NUMERICAL_ZERO * scale,
                change,
                f"rows 0..{length - 1} change by {change:.3g} when len doubles",
            )
        )

    offsets = _powers_of_two_below(max(2, length // 2 + 1))[:10] if length > 1 else []
    spreads = [float(profile.spread[h] / max(profile.mean[h], 1e-300)) for h in offsets]
    worst = max(spreads, default=0.0)
    shown = ", ".join(map(str, offsets[:4])) + (", …" if len(offsets) > 4 else "")
    checks.append(
        PropertyCheck(
            "translation-invariant",
            worst <= _NUMERICAL_ZERO**0.5,
            worst,
            f"distance(x, x+h) varies over x by {worst:.3g} of its mean (h = {shown})",
        )
    )

    residuals = []
    for shift in (k for k in _SHIFTS if k < length // 2):
        source, target = table[:-shift], table[shift:]
        linear_map = np.linalg.lstsq(source, target, rcond=None)[0]
        norm = max(float(np.linalg.norm(target)), 1e-300)
        residuals.append(float(np.linalg.norm(source @ linear_map - target)) / norm)
    residual = max(residuals, default=0.0)
    checks.append(
        PropertyCheck(
            "linear-relative",
            residual <= _NUMERICAL_ZERO**0.5,
            residual,
            f"best linear map PE[p] -> PE[p+k] leaves {residual:.3g} of the norm "
            f"(k = {', '.join(str(k) for k in _SHIFTS if k < length // 2) or 'none'})"
            # with no more positions than dimensions any table has such a map: the check says nothing
            + (
                f"; with len − k <= d = {spec.dim} any table fits, use a longer table" if length - 1 <= spec.dim else ""
            ),
        )
    )
    return checks


@dataclass(frozen=True)
class PropertyReport(Shown):
    """The properties of several schemes at ``dim`` × ``length``: a table of ✓/✗ and figures, then each check.

    >>> from pecli.schemes.spec import TableSpec
    >>> checks = check_properties(TableSpec.resolve("sinusoidal", None, {}, length=64, dim=16))
    >>> report = PropertyReport(16, 64, [("sinusoidal", checks)])
    >>> report.text_lines()[0], report.to_json()["schemes"][0]["spec"]
    ('properties at d = 16, len = 64 (float64)', 'sinusoidal')
    """

    dim: int
    length: int
    schemes: Sequence[tuple[str, Sequence[Any]]]  #: (spec text, its checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "d": self.dim,
            "len": self.length,
            "schemes": [
                {"spec": text, "checks": [check.to_json() for check in checks]} for text, checks in self.schemes
            ],
        }

    def text_lines(self) -> list[str]:
        # rope and alibi have the properties that apply to a score or bias ("decay"; no "unique")
        names = list(dict.fromkeys([*PROPERTIES, *(check.name for _, checks in self.schemes for check in checks)]))
        column = max(14, *(len(text) + 2 for text, _ in self.schemes))
        lines = [f"properties at d = {self.dim}, len = {self.length} (float64)"]
        lines.append(f"{'':<22}" + "".join(f"{text:<{column}}" for text, _ in self.schemes).rstrip())
        for name in names:
            found = [next((check for check in checks if check.name == name), None) for _, checks in self.schemes]
            cells = "".join(
                f"{('✓ ' if check.holds else '✗ ') + f'{check.figure:.3g}' if check else 'n/a':<{column}}"
                for check in found
            )
            lines.append(f"{name:<22}{cells}".rstrip())
        lines.append("")
        for text, checks in self.schemes:
            lines.append(f"{text}:")
            lines += [f"  {'✓' if check.holds else '✗'} {check.name}: {check.detail}" for check in checks]
        return lines
