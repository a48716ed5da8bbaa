"""A generated table shown as a result: its summary (scheme, shape, dtype, size, parameters, values)
and a preview of its first and last rows, as text or as JSON.

>>> from pecli.schemes.spec import TableSpec
>>> spec = TableSpec.resolve("sinusoidal", None, {}, length=6, dim=4)
>>> report = TableSummary(spec.summary(with_values=True))
>>> for line in report.text_lines(): print(line)
sinusoidal: 6 × 4 float32, 96 B
  parameters: base=10000.0 layout=interleaved cos_first=False offset=0 amplitude=1.0 pad_dim=False
  values: min -0.989992, max 1
>>> report.to_json()["shape"]
[6, 4]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pecli.dtypes import format_bytes
from pecli.report import Shown

__all__ = ["TableSummary", "summary_lines"]

#: the largest table whose min and max a printed summary computes: beyond it, work the user did not ask for
VALUES_LIMIT = 64 << 20


class TableSummary(Shown):
    """A table's :meth:`~pecli.schemes.spec.TableSpec.summary`, with what is shown after it.

    ``details`` are text lines under the summary (timestep's list of t), ``previews`` each part's
    preview lines (its name, or "" for the one tensor), ``extra`` what JSON adds (the file written,
    the first rows; a callable when costly, called only for JSON: timestep's first rows as lists took 30
    bytes a value, 1.3 GB for a 2 × 10^7 table whose text shows a few columns). ``text=False``: the
    result is for JSON only (a table written to a file says so on stderr). ``hint``: a note on stderr
    after the text (how to save the table); none with JSON. A plain class: it is built on generate's
    path, where a dataclass's generated methods cost start-up.
    """

    __slots__ = ("details", "extra", "hint", "previews", "summary", "text")

    def __init__(
        self,
        summary: Mapping[str, Any],
        *,
        details: Sequence[str] = (),
        previews: Sequence[tuple[str, Sequence[str]]] = (),
        extra: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
        text: bool = True,
        hint: str | None = None,
    ) -> None:
        self.summary, self.details, self.previews = summary, details, previews
        self.extra, self.text, self.hint = extra or {}, text, hint

    def text_notes(self) -> list[str]:
        return [self.hint] if self.hint and self.text else []

    def to_json(self) -> dict[str, Any]:
        return {**self.summary, **(self.extra() if callable(self.extra) else self.extra)}

    def text_lines(self) -> list[str]:
        if not self.text:
            return []
        lines = summary_lines(self.summary) + list(self.details)
        for name, preview in self.previews:
            lines.append("")
            if name:
                lines.append(f"{name}:")
            lines += preview
        return lines


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    """The lines of a table's summary: scheme and shape, parameters, values (or why they were not computed)."""
    params = " ".join(f"{k}={v}" for k, v in summary["params"].items() if v is not None) or "(none)"
    preset = f" (preset {summary['preset']})" if summary.get("preset") else ""
    shapes = summary.get("parts") or {"": summary["shape"]}
    shape = ", ".join(f"{name} " * bool(name) + " × ".join(map(str, dims)) for name, dims in shapes.items())
    lines = [f"{summary['scheme']}{preset}: {shape} {summary['dtype']}, {summary['size']}"]
    if summary.get("tables"):  # several tables in one file (a model's per layer type): each one's parameters
        for name, table_params in summary["tables"].items():
            shown = " ".join(f"{k}={v}" for k, v in table_params.items() if v is not None and k != "part")
            lines.append(f"  {name}: {shown or '(none)'}")
    else:
        lines.append(f"  parameters: {params}")
    if "min" not in summary:
        limit = format_bytes(VALUES_LIMIT)
        return [*lines, f"  values: not computed for a table over {limit}"]  # the hint says where it can go
    nan = f"{summary['nan']} NaN" if summary.get("nan") else ""
    if summary["min"] is None:
        return [*lines, f"  values: {nan or 'none'}"]
    return [*lines, f"  values: min {summary['min']:.6g}, max {summary['max']:.6g}" + f", {nan}" * bool(nan)]
