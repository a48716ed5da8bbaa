"""An engine's RoPE table in the layouts engines keep it, read as the reference's cos and sin.

Engines keep a rotary table as a ``(cos, sin)`` pair at the full rotary width (transformers' rotary
modules), as one ``cos_sin_cache`` (vLLM: positions × rotary_dim, the cos of the rotary_dim/2
frequencies, then their sin) or as complex numbers (``freqs_cis``, Llama's reference code:
positions × rotary_dim/2, e^{i·p·θ}). The last two hold each frequency once; placed as the reference
places its frequencies (halves, or adjacent pairs: read from the reference's own cos), they compare
column for column with the reference's pair.

>>> import numpy as np
>>> import pecli
>>> cos, sin = (pecli.encode("rope", 4, 8, part=part, dtype="float64") for part in ("cos", "sin"))
>>> cache = np.hstack([cos[:, :4], sin[:, :4]])  # vLLM's cos_sin_cache of the same table
>>> read = engine_cache_as_pair(cache, cos)
>>> read.layout, np.array_equal(read.cos, cos), np.array_equal(read.sin, sin)
('cos_sin_cache', True, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "EngineCache",
    "ModuleLayout",
    "as_halves",
    "cache_parts",
    "engine_cache_as_pair",
    "frequency_placement",
    "in_module_layout",
    "on_one_circle",
    "placed",
]


@dataclass(frozen=True)
class EngineCache:
    """An engine's cache read as a pair: its ``layout`` (``cos_sin_cache``, ``complex (freqs_cis)``), the
    frequencies it holds, and its cos and sin placed at the reference's full width as ``placement`` says."""

    layout: str
    frequencies: int
    placement: str
    cos: np.ndarray
    sin: np.ndarray

    def describe(self) -> str:
        """The reading in words, for a note.

        >>> EngineCache("cos_sin_cache", 32, "halves", np.zeros((1, 64)), np.zeros((1, 64))).describe()
        "read as vLLM's cos_sin_cache ([cos | sin] of 32 frequencies), each placed as the reference's halves"
        """
        what = {
            "cos_sin_cache": f"vLLM's cos_sin_cache ([cos | sin] of {self.frequencies} frequencies)",
            "complex (freqs_cis)": f"complex e^(i·p·θ) of {self.frequencies} frequencies (Llama's freqs_cis)",
        }
        return f"read as {what[self.layout]}, each placed as the reference's {self.placement}"


def cache_parts(array: np.ndarray) -> tuple[str, np.ndarray, np.ndarray]:
    """The layout's name and the cos and sin of the frequencies a one-table cache holds (positions × frequencies).

    >>> name, cos, sin = cache_parts(np.array([[1.0, 2.0, 0.0, 3.0]]))
    >>> name, cos.tolist(), sin.tolist()
    ('cos_sin_cache', [[1.0, 2.0]], [[0.0, 3.0]])
    >>> cache_parts(np.array([[1 + 0j, 0.5 + 0.5j]]))[0]
    'complex (freqs_cis)'
    """
    if np.iscomplexobj(array):  # freqs_cis: e^{i p θ}, positions × rotary_dim/2
        return "complex (freqs_cis)", array.real, array.imag
    half = array.shape[1] // 2  # vLLM's cos_sin_cache: [cos | sin] of the rotary_dim/2 frequencies
    return "cos_sin_cache", array[:, :half], array[:, half:]


def placed(values: np.ndarray, placement: str) -> np.ndarray:
    """A table of one column per frequency at the full rotary width: as two halves, or as adjacent pairs.

    >>> placed(np.array([[1, 2]]), "halves").tolist(), placed(np.array([[1, 2]]), "adjacent pairs").tolist()
    ([[1, 2, 1, 2]], [[1, 1, 2, 2]])
    """
    return np.concatenate([values, values], axis=1) if placement == "halves" else np.repeat(values, 2, axis=1)


def frequency_placement(cos: np.ndarray) -> str | None:
    """How a reference's cos table places its frequencies: ``halves`` (rotate_half: the second half repeats the
    first), ``adjacent pairs`` (columns 2i and 2i + 1 equal), or None (neither: no single placement).

    >>> import pecli
    >>> frequency_placement(pecli.encode("rope", 4, 8, part="cos", layout="interleaved"))
    'adjacent pairs'
    """
    width = cos.shape[1]
    if width % 2 or not width:
        return None
    half = width // 2
    if np.array_equal(cos[:, :half], cos[:, half:]):
        return "halves"
    if np.array_equal(cos[:, 0::2], cos[:, 1::2]):
        return "adjacent pairs"
    return None


def as_halves(table: np.ndarray) -> np.ndarray:
    """A table that places its frequencies as adjacent pairs, laid out as halves instead (``cat(freqs, freqs)``,
    as transformers' rotary modules return cos and sin): the same values, columns moved.

    >>> as_halves(np.array([[1, 1, 2, 2]])).tolist()
    [[1, 2, 1, 2]]
    """
    return placed(table[:, 0::2], "halves")


def on_one_circle(cos: np.ndarray, sin: np.ndarray) -> bool:
    """Whether every (cos, sin) entry pair lies on one circle about 0 (cos² + sin² the same everywhere within 5 %:
    1, or the square of a factor on both, as YaRN's attention factor), as a cache's halves do and a cos table's
    halves (2·cos²) or a sinusoid table's do not, unless they are its sin and cos.

    >>> p = np.arange(6.0)[:, None]
    >>> on_one_circle(1.2 * np.cos(p), 1.2 * np.sin(p)), on_one_circle(np.cos(p), np.cos(p))
    (True, False)
    """
    radius = np.asarray(cos, dtype=np.float64) ** 2 + np.asarray(sin, dtype=np.float64) ** 2
    if not radius.size or not np.isfinite(radius).all():
        return False
    low, high = float(radius.min()), float(radius.max())
    return low > 0.0 and high <= 1.05 * low


def engine_cache_as_pair(array: np.ndarray, reference_cos: np.ndarray) -> EngineCache | None:
    """A one-table engine cache (vLLM's ``cos_sin_cache``, or complex ``freqs_cis``) as a (cos, sin) pair placed
    as ``reference_cos`` places its frequencies; None when its shape or the reference's placement does not fit
    (a real table as wide as the reference's rotary columns; a complex one half as wide), or when a real table's
    halves are no cos and sin (cos² + sin² not one constant: another table, a cos part alone)."""
    if array.ndim != 2 or reference_cos.ndim != 2 or array.shape[0] != reference_cos.shape[0]:
        return None
    width = reference_cos.shape[1]
    if array.shape[1] * (2 if np.iscomplexobj(array) else 1) != width:
        return None
    placement = frequency_placement(reference_cos)
    if placement is None:
        return None
    layout, cos, sin = cache_parts(array)
    if not np.iscomplexobj(array) and not on_one_circle(cos, sin):
        return None
    return EngineCache(layout, cos.shape[1], placement, placed(cos, placement), placed(sin, placement))


@dataclass(frozen=True)
class ModuleLayout:
    """A model's tables relaid as its rotary module returns them (:func:`in_module_layout`)."""

    tables: list[np.ndarray]  #: the tables in the module's layout (halves), in the order given
    changed: Mapping[str, Any]  #: the scheme parameters of a table in that layout
    how: str  #: how the model's attention uses the module's tables, for a note


def in_module_layout(
    module: tuple[Mapping[str, Any], str] | None,
    tables: Sequence[np.ndarray],
    others: Sequence[np.ndarray | None],
) -> ModuleLayout | None:
    """A model's ``tables`` (a config's cos and sin, or one of them) laid out as its rotary module returns them,
    where the model's module returns them in another layout than the pairing its attention rotates (``module``:
    the parameters of the module's layout and how the attention uses it, as
    :func:`pecli.models.rope_family.transformers_cache_layout` says) and the ``others`` an engine wrote are in
    the module's layout: the tables place their frequencies as adjacent pairs, every other one as halves. Both
    are real engine layouts of one rotation; None where nothing is relaid.

    >>> import pecli
    >>> pairs = pecli.encode("rope", 4, 8, part="cos", layout="interleaved", dtype="float64")
    >>> engine = pecli.encode("rope", 4, 8, part="cos", dtype="float64")
    >>> module = ({"layout": "half"}, "its attention re-interleaves the first half")
    >>> relaid = in_module_layout(module, [pairs], [engine])
    >>> dict(relaid.changed), np.array_equal(relaid.tables[0], engine)
    ({'layout': 'half'}, True)
    >>> in_module_layout(module, [pairs], [pairs]) is None  # the engine's are adjacent pairs too
    True
    """
    if module is None or not tables or frequency_placement(np.asarray(tables[0])) != "adjacent pairs":
        return None
    if not all(other is not None and frequency_placement(np.asarray(other)) == "halves" for other in others):
        return None
    changed, how = module
    return ModuleLayout([as_halves(np.asarray(table)) for table in tables], changed, how)
