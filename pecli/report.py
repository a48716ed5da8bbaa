"""Results that render themselves: what a computation returns, shown as text or as JSON.

The core returns a :class:`Report`; the run's one output (the CLI's ``Output``) shows it as text
lines, as one JSON document (``--json``) or not at all (``-q``), and a notebook or a script prints
it as the CLI would. No command decides how a result looks.

>>> class Sum:
...     def __init__(self, total): self.total = total
...     def to_json(self): return {"total": self.total}
...     def text_lines(self): return [f"total {self.total}"]
>>> isinstance(Sum(3), Report), render_text(Sum(3))
(True, 'total 3')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["Listing", "Report", "render_text"]


@runtime_checkable
class Report(Protocol):
    """A result that knows its two renderings: JSON-ready data and human text lines."""

    def to_json(self) -> Any:
        """The result as JSON-ready data (dicts, lists, str, numbers, None)."""
        ...

    def text_lines(self) -> list[str]:
        """The result as the lines a person reads, every text from a file escaped."""
        ...


def render_text(report: Report) -> str:
    """The report's text, its lines joined (what ``print`` of a result shows)."""
    return "\n".join(report.text_lines())


@dataclass(frozen=True)
class Listing:
    """A report made of what is already known: its JSON document and its text lines.

    >>> Listing({"names": ["a", "b"]}, ["a", "b"]).text_lines()
    ['a', 'b']
    """

    document: Any
    lines: Sequence[str]

    def to_json(self) -> Any:
        return self.document

    def text_lines(self) -> list[str]:
        return list(self.lines)
