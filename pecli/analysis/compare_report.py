"""What ``compare`` shows: two tables' :class:`~pecli.analysis.compare.Comparison`, as text or JSON.

>>> import pecli
>>> from pecli.analysis.compare import compare_tables
>>> a = pecli.encode(None, 16, 8, preset="tensor2tensor")
>>> b = pecli.encode(None, 16, 8, preset="fairseq")
>>> report = CompareReport(Side("t2t", (16, 8), "float64"), Side("fairseq", (16, 8), "float64"), compare_tables(a, b))
>>> report.text_lines()[0], report.to_json()["agree"]
('A: t2t — 16 × 8 float64', False)
>>> [line[:35] for line in report.text_lines() if line.startswith("diagnosis")]
['diagnosis: positions shifted by 2: ']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pecli.analysis.compare import Comparison
from pecli.report import Shown

__all__ = ["CompareReport", "Side"]


@dataclass(frozen=True)
class Side:
    """One of the two tables compared: its label, shape and dtype as stored."""

    source: str
    shape: tuple[int, ...]
    dtype: str

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "shape": list(self.shape), "dtype": self.dtype}


@dataclass(frozen=True)
class CompareReport(Shown):
    """A comparison of table A (``a``) with table B (``b``): the figures, the verdict and its diagnosis."""

    a: Side
    b: Side
    result: Comparison

    @property
    def agree(self) -> bool:
        return self.result.agree

    def to_json(self) -> dict[str, Any]:
        result = self.result
        nan_first = {"position": result.nan_first[0], "dimension": result.nan_first[1]} | (
            {} if result.nan_first_head is None else {"head": result.nan_first_head}
        )
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            # what the worst's "position" and "dimension" (and "head") index: ["head", "query", "key"] for a
            # (heads, L, L) bias, ["head", "key"] for one query row per head
            "axes": list(result.axes),
            "agree": result.agree,
            "atol": result.atol,
            "rtol": result.rtol,
            "tolerance": result.tolerance_text(),
            "max_abs": result.max_abs,
            "mean_abs": result.mean_abs,
            "max_rel": result.max_rel,
            "worst": {"position": result.worst[0], "dimension": result.worst[1]}
            | ({} if result.worst_head is None else {"head": result.worst_head}),
            "cosine": {"min": result.cosine_min, "mean": result.cosine_mean, "undefined": result.cosine_undefined},
            "same_nan": result.same_nan,
            # the entry furthest beyond its own tolerance (the data-driven one differs by row), when they disagree;
            # none when every entry that is a number in both agrees (NaN in one table only is the difference)
            "beyond": None
            if result.agree or result.values_agree
            else {"position": result.beyond[0], "dimension": result.beyond[1]}
            | ({} if result.beyond_head is None else {"head": result.beyond_head})
            | {"abs": result.beyond_abs, "tolerance": result.beyond_tolerance},
            "nan_in_one": {"count": result.nan_one, "first": nan_first if result.nan_one else None},
            # the first position held to its rounding (float32's angle noise past 2^23 determines no value)
            "angle_noise_past": result.angle_noise_past,
            "diagnosis": [found.to_json() for found in result.diagnosis],
            # two files: what each reads as and which parameters set them apart (pecli.analysis.readings)
            "readings": [found.to_json() for found in result.readings],
        }

    def text_lines(self) -> list[str]:
        result = self.result
        lines = [f"{name}: {side.source} — {' × '.join(map(str, side.shape))} {side.dtype}"
                 for name, side in (("A", self.a), ("B", self.b))]  # fmt: skip
        lines.append(f"max |A − B|        {result.max_abs:.6g} ({result.where(result.worst_head, *result.worst)})")
        lines.append(f"mean |A − B|       {result.mean_abs:.6g}")
        lines.append(f"max relative       {result.max_rel:.6g} (where B ≠ 0)")
        lines.append(result.cosine_text())
        if result.nan_one:
            lines.append(
                f"NaN in one table only at {result.nan_one} entr{'ies' if result.nan_one != 1 else 'y'} "
                f"(first at {result.where(result.nan_first_head, *result.nan_first)}; left out of the figures above)"
            )
        if result.same_nan:
            same = result.same_nan
            lines.append(f"NaN at the same {same} position{'s' * (same != 1)} in both (counted as equal)")
        return lines + self._verdict()

    def _verdict(self) -> list[str]:
        """The verdict line, then each finding of the diagnosis with its evidence."""
        result = self.result
        if result.tolerance_kind == "exact":
            lines = ["same, bit for bit" if result.agree else "different: not equal bit for bit"]
        elif result.nan_one and result.values_agree and result.nan_one < math.prod(result.shape):
            # only the NaN differ: say so, not "beyond" a tolerance the numbers keep
            text = f"different: NaN in one table only; the other entries agree within {result.tolerance_text()}"
            return [text]
        elif not result.agree and result.tolerance_kind != "given" and result.tolerance_rounding and result.atol:
            # the data-driven tolerance differs row by row: name the entry beyond its own, not the loosest row's
            lines = [f"different beyond {result.beyond_text()}"]
        elif result.agree or result.values_agree:
            lines = [f"{'same within' if result.agree else 'different beyond'} {result.tolerance_text()}"]
        else:  # a given tolerance, or 0 between exact values: the entry beyond it, as the JSON's "beyond"
            lines = [f"different beyond {result.tolerance_text()} {result.beyond_entry_text()}"]
        if result.angle_noise_past is not None and not result.agree:
            lines.append(
                f"(float32's angle noise 2^-23·p is allowed below position 2^23 only: from position "
                f"{result.angle_noise_past:.10g} on it is a radian and more, under which any two sinusoids would "
                "pass, so those rows are held to their rounding)"
            )
        if result.agree:
            return lines
        if not result.diagnosis:
            lines.append("diagnosis: no known cause explains the difference")
        for label, found in [*(("diagnosis", found) for found in result.diagnosis),
                             *(("reading", found) for found in result.readings)]:  # fmt: skip
            lines.append(f"{label}: {found.message}")
            lines.append(
                "  evidence: " + ", ".join(f"{name} {_figure(value)}" for name, value in found.figures.items())
            )
        return lines


def _figure(value: Any) -> str:
    """One figure of a finding as the text report shows it: a setting's dict as ``name=value`` pairs.

    >>> _figure(0.1 + 0.2), _figure({"base": 1e6, "scaling": "linear", "factor": 8.0}), _figure({})
    ('0.3', '(base=1e+06, scaling=linear, factor=8)', '(none)')
    """
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return "(" + (", ".join(f"{name}={_figure(item)}" for name, item in value.items()) or "none") + ")"
    if isinstance(value, list) and len(value) > 12:
        return "[" + ", ".join(map(str, value[:12])) + ", …]"
    if isinstance(value, dict):  # a reading's parameters: name=value
        return "{" + ", ".join(f"{name}={item}" for name, item in value.items()) + "}"
    return str(value)
