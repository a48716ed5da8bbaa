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

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Deferred", "Listing", "Report", "Shown", "render_text"]


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


class Shown:
    """What a result is to a person: ``print(result)`` shows the CLI's text, a notebook the same, preformatted.

    >>> class Total(Shown):
    ...     def to_json(self): return {"total": 3}
    ...     def text_lines(self): return ["total 3 < 4"]
    >>> print(Total()), Total()._repr_html_()
    total 3 < 4
    (None, '<pre>total 3 &lt; 4</pre>')
    """

    def text_lines(self) -> list[str]:
        raise NotImplementedError

    def __str__(self) -> str:
        return "\n".join(self.text_lines())

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self))}</pre>"


class Listing(Shown):
    """A report made of what is already known: its JSON document, its text lines, and the notes that
    follow the text on stderr (``wrote x.npy``; none with JSON). A plain class: it is built on every
    command's path, where a dataclass's generated methods cost start-up time.

    >>> Listing({"names": ["a", "b"]}, ["a", "b"]).text_lines()
    ['a', 'b']
    """

    __slots__ = ("document", "lines", "notes")

    def __init__(self, document: Any, lines: Sequence[str], notes: Sequence[str] = ()) -> None:
        self.document, self.lines, self.notes = document, lines, notes

    def to_json(self) -> Any:
        return self.document

    def text_lines(self) -> list[str]:
        return list(self.lines)

    def text_notes(self) -> list[str]:
        return list(self.notes)


class Deferred(Shown):
    """A report whose renderings are computed only when shown: a matrix is listed for JSON, drawn
    for a terminal, and the work (and the memory) of the one not asked for is never spent.

    >>> report = Deferred(lambda: {"sum": 3}, lambda: ["sum 3"])
    >>> report.to_json(), report.text_lines()
    ({'sum': 3}, ['sum 3'])
    """

    __slots__ = ("json", "text")

    def __init__(self, json: Callable[[], Any], text: Callable[[], Sequence[str]]) -> None:
        self.json, self.text = json, text

    def to_json(self) -> Any:
        return self.json()

    def text_lines(self) -> list[str]:
        return list(self.text())
