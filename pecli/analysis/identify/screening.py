"""The screen: every candidate measured on the table's first and last rows, ranked by its excess over the noise.

The ranking is a stable sort by ``max(excess, 1)``: within the noise the search's order of preference
wins, beyond it the closest. A wide table's sinusoidal candidates are first measured on a sample of
its columns (:func:`screen_columns`): each entry's error and noise are its own, so the excess over a
sample is at most the excess over every column, and a candidate whose sampled excess ranks it after
the candidates already measured at full width need not be measured yet. The ranking is handed out
lazily, a candidate measured at full width when the next place in it may be its: every place handed
out, and the excess and error there, are the full width's, so no answer depends on the sample (it
only sets how many candidates are measured at full width). A 1 × 10^6 table's few hundred
candidates cost each a few hundred columns, not 10^6.

>>> import pecli
>>> from pecli.analysis.identify.candidates import candidates
>>> table = pecli.encode("sinusoidal", 2, 4096)
>>> ranking = screen(table, candidates(table), [range(0, 2)], "float32", 1.0, lambda text: None)
>>> excess, best = next(iter(ranking))
>>> best.scheme, best.params["base"], excess <= 1.0
('sinusoidal', 10000.0, True)
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.identify.result import Candidate
from pecli.analysis.identify.verify import Progress, _errors, computed_directly
from pecli.errors import PecliError

__all__ = ["Ranking", "screen", "screen_columns"]

#: columns sampled at each end of a wide table (the highest frequencies and the lowest, either layout)
_EDGE_COLUMNS = 64
#: columns sampled evenly over the whole width, the ends included
_SPREAD_COLUMNS = 128
#: tables at most this wide are screened at full width (a sample would save little)
_FULL_WIDTH = 1024

#: a place in the ranking: (max(excess, 1), the candidate's order among those screened)
_Key = tuple[float, int]


def screen_columns(dim: int) -> np.ndarray | None:
    """The columns a table ``dim`` wide is first screened on (ascending), or None where it is screened whole.

    >>> screen_columns(1024) is None
    True
    >>> columns = screen_columns(10**6)
    >>> len(columns), columns[:2].tolist(), columns[-2:].tolist()
    (254, [0, 1], [999998, 999999])
    """
    if dim <= _FULL_WIDTH:
        return None
    edges = np.r_[0:_EDGE_COLUMNS, dim - _EDGE_COLUMNS : dim]
    spread = np.linspace(0, dim - 1, _SPREAD_COLUMNS).astype(np.int64)
    return np.unique(np.concatenate([edges, spread]))


class Ranking:
    """The screened candidates as ``(excess, candidate)``, in rank order, each measured at full width when
    the ranking reaches it; iterate (more than once) for as many places as needed."""

    def __init__(self, values: np.ndarray, rows: list[range], precision: str, scale: float) -> None:
        self._values, self._rows, self._precision, self._scale = values, rows, precision, scale
        self._measured: list[tuple[_Key, float, Candidate]] = []  # a heap: full width, not yet placed
        self._bounded: list[tuple[_Key, Candidate]] = []  # a heap: the sample's key, at most the full one
        self._placed: list[tuple[float, Candidate]] = []
        #: candidates screened (those measured on a sample only are counted too)
        self.count = 0

    def add(self, order: int, candidate: Candidate, columns: np.ndarray | None) -> None:
        """Measure ``candidate`` (the ``order``-th screened) on the rows, on ``columns`` only when given;
        a candidate that does not exist at this shape is left out."""
        try:
            error, excess = _errors(self._values, candidate, self._rows, self._precision, self._scale, columns=columns)
        except PecliError:
            return  # e.g. d too small for its frequency shift
        self.count += 1
        key = (max(excess, 1.0), order)
        if columns is None:
            heapq.heappush(self._measured, (key, excess, replace(candidate, max_error=error)))
        else:
            heapq.heappush(self._bounded, (key, candidate))

    def __iter__(self) -> Iterator[tuple[float, Candidate]]:
        place = 0
        while place < len(self._placed) or self._place_next():
            yield self._placed[place]
            place += 1

    def _place_next(self) -> bool:
        """Place the next candidate; False when none is left."""
        # a bounded candidate may come first until the least measured key is at most its bound
        while self._bounded and (not self._measured or self._bounded[0][0] < self._measured[0][0]):
            (_, order), candidate = heapq.heappop(self._bounded)
            try:
                error, excess = _errors(self._values, candidate, self._rows, self._precision, self._scale)
            except PecliError:
                self.count -= 1
                continue
            heapq.heappush(self._measured, ((max(excess, 1.0), order), excess, replace(candidate, max_error=error)))
        if not self._measured:
            return False
        _, excess, candidate = heapq.heappop(self._measured)
        self._placed.append((excess, candidate))
        return True


def screen(
    values: np.ndarray,
    found: Iterable[tuple[str, dict[str, Any]]],
    rows: list[range],
    precision: str,
    scale: float,
    report: Progress,
) -> Ranking:
    """The ranking of the distinct candidates ``found`` on ``rows`` of the table (:class:`Ranking`)."""
    columns = screen_columns(values.shape[1])
    ranking = Ranking(values, rows, precision, scale)
    seen: set[tuple[str, tuple]] = set()
    for scheme, params in found:
        key = (scheme, tuple(sorted(params.items(), key=lambda item: item[0])))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) % 64 == 0:
            report(f"screening candidates ({len(seen)} so far)")
        sampled = columns is not None and computed_directly(scheme, params, rows)
        ranking.add(len(seen), Candidate(scheme, params), columns if sampled else None)
    return ranking
