"""What ``pecli compare`` compares and how, built once from its options: the two tables, their keys, the
shape and dtype a scheme spec takes, the tolerances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CompareRequest:
    """Two tables to compare (files, - or specs) and the options that shape, read and judge them."""

    texts: tuple[str, str]  #: A and B as given
    keys: tuple[str | None, str | None] = (None, None)  #: the tensor to read from each (--key-a/--key-b, else --key)
    key_given: tuple[str | None, str | None] = (None, None)  #: --key-a and --key-b themselves (a spec refuses one)
    d: int | None = None  #: --d: a spec's width
    length: int | None = None  #: --len: a spec's (or a config's) length
    dtype: str | None = None  #: --dtype: a spec's (or a config's) dtype
    layer_type: str | None = None  #: --layer-type: a config's layer type
    atol: float | None = None  #: --atol (None: the data-driven tolerance)
    rtol: float = 0.0  #: --rtol
    exact: bool = False  #: --exact

    @property
    def tolerances(self) -> dict[str, Any]:
        """``atol``, ``rtol`` and ``exact``, as :func:`~pecli.analysis.compare.compare_tables` takes them."""
        return {"atol": self.atol, "rtol": self.rtol, "exact": self.exact}

    @property
    def shaped(self) -> bool:
        """Whether --d, --len or --dtype is given."""
        return self.d is not None or self.length is not None or self.dtype is not None
