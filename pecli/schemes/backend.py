"""Where the sin/cos schemes compute their phasors: numpy by default, or a backend the caller passes in.

The angles and their sin/cos are the only heavy step of the sin/cos schemes; the column layout
and the single rounding stay in numpy, so a backend changes where, not what, is computed. The
core never imports a backend: the caller (``pecli generate --device``) builds one, e.g.
:class:`pecli.torch_backend.TorchPhasors`, and hands it to :func:`angles_on`.

>>> import numpy as np
>>> from pecli.schemes.sinusoidal import sinusoidal_table
>>> class Doubling:  # any object with ``device`` and ``phasors(positions, freqs)``
...     device = "example"
...     def phasors(self, positions, freqs):
...         return np.exp(2j * np.outer(positions, freqs))
>>> with angles_on(Doubling()) as placement:
...     table = sinusoidal_table(2, 2, dtype="float64")
>>> placement.used, table[1].round(6).tolist()
(True, [0.909297, -0.416147])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

__all__ = ["AnglePlacement", "PhasorBackend", "angles_on", "claim_backend"]


class PhasorBackend(Protocol):
    """Computes ``exp(i·p·ω)`` somewhere other than numpy (a torch device), returned as numpy complex128."""

    device: str

    def phasors(self, positions: np.ndarray, freqs: np.ndarray) -> np.ndarray: ...


@dataclass
class AnglePlacement:
    """The backend phasors are computed on (None: numpy), and whether any were computed."""

    backend: PhasorBackend | None
    used: bool = False


#: set inside :func:`angles_on`; None outside: numpy, nothing recorded
_PLACEMENT: ContextVar[AnglePlacement | None] = ContextVar("pecli_angle_placement", default=None)


@contextlib.contextmanager
def angles_on(backend: PhasorBackend | None) -> Iterator[AnglePlacement]:
    """Compute every phasor inside the block with ``backend`` (numpy for None).

    The placement yielded tells afterwards whether the block computed any phasors at all (a
    scheme without sin/cos, such as ``binary``, computes none).

    >>> from pecli.schemes.indexing import binary_table
    >>> with angles_on(None) as placement:
    ...     _ = binary_table(2, 2)
    >>> placement.used
    False
    """
    placement = AnglePlacement(backend)
    token = _PLACEMENT.set(placement)
    try:
        yield placement
    finally:
        _PLACEMENT.reset(token)


def claim_backend() -> PhasorBackend | None:
    """Record that phasors are being computed; the backend to compute them with (None: numpy)."""
    placement = _PLACEMENT.get()
    if placement is None:
        return None
    placement.used = True
    return placement.backend
