"""A finding of the diagnosis, and the reference a table was generated with."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli.analysis.value_precision import EPSILON, SUBNORMAL
from pecli.dtypes import held_values
from pecli.errors import PecliError

__all__ = [
    "ConfigFacts", "Finding", "Reference", "entry_rounding", "held_precision", "per_row", "reproduced", "residual",
    "row_blocks", "within",
]  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One explanation that reproduces B from A: a stable ``code``, the sentence, and its evidence.

    >>> Finding("constant_factor", "B = 2·A", {"factor": 2.0}).to_json()
    {'code': 'constant_factor', 'message': 'B = 2·A', 'figures': {'factor': 2.0}}
    """

    code: str
    message: str
    figures: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "figures": dict(self.figures)}


@dataclass(frozen=True)
class ConfigFacts:
    """What a model's config says beyond the parameters of the one table compared, for the diagnosis to try the
    mistakes an engine makes reading it (:func:`pecli.models.from_config.config_facts`).

    >>> facts = ConfigFacts(("head_dim", 256), ("hidden_size/num_attention_heads", "1152/4", 288))
    >>> facts.head_dim, facts.hidden_over_heads[2]
    (('head_dim', 256), 288)
    """

    #: the head width the config sets explicitly, with its key (``("head_dim", 256)``); None: none set
    head_dim: tuple[str, int] | None = None
    #: the width of hidden_size / num_attention_heads, its keys and values (``("hidden_size/…", "1152/4", 288)``)
    hidden_over_heads: tuple[str, str, int] | None = None
    #: the layer type the table is of (``sliding_attention``), None for all layers
    layer_type: str | None = None
    #: each layer type's parameters, when the config's layer types have their own (Gemma 3's full and sliding)
    layers: tuple[tuple[str, Mapping[str, Any]], ...] = ()


@dataclass(frozen=True)
class Reference:
    """The scheme and full parameters table A was generated with (a spec side of compare)."""

    scheme: str
    params: Mapping[str, Any]
    dtype: str = "float64"
    #: the whole table's length when the diagnosed rows are only its first rows (a streamed comparison)
    length: int | None = None
    #: the parts the table holds side by side, each its own columns (RoPE's cos, then its sin: an engine's
    #: cache file compared with a spec or a config), generated with ``part=`` each; empty: one table
    parts: tuple[str, ...] = ()
    #: what the model's config says beyond ``params``, when the reference is a config's table
    config: ConfigFacts | None = None


def residual(expected: np.ndarray, b: np.ndarray) -> float:
    """max |expected − b| (inf when the shapes differ).

    >>> residual(np.zeros((2, 2)), np.ones((2, 2)))
    1.0
    """
    if expected.shape != b.shape:
        return float("inf")
    return max((float(np.abs(e - o).max(initial=0.0)) for e, o, _ in row_blocks(expected, b)), default=0.0)


def per_row(tolerance: float | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``tolerance`` as one bound per row of a table of ``shape``: a ``shape[:-1] + (1,)`` array.

    A number is every row's bound; an array holds one bound per row (``shape[:-1]`` values, in any shape
    of that size: compare's tolerance grows with the position).

    >>> per_row(0.5, (2, 3)).tolist(), per_row(np.array([1.0, 2.0]), (2, 3)).tolist()
    ([[0.5], [0.5]], [[1.0], [2.0]])
    """
    bound = np.asarray(tolerance, dtype=np.float64)
    rows = (*shape[:-1], 1)
    if bound.ndim == 0:
        return np.full(rows, float(bound))
    if bound.size != int(np.prod(rows)):
        raise ValueError(f"a tolerance per row needs {int(np.prod(rows))} values, got {bound.size}")
    return bound.reshape(rows)


def within(expected: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray) -> bool:
    """Whether every entry of ``expected`` is within its row's ``tolerance`` of ``b`` (False when the shapes differ).

    >>> within(np.zeros((2, 2)), np.array([[0.1, 0.0], [0.3, 0.0]]), np.array([[0.2], [0.2]]))
    False
    >>> within(np.zeros((2, 2)), np.array([[0.1, 0.0], [0.3, 0.0]]), np.array([[0.2], [0.4]]))
    True
    """
    if expected.shape != b.shape:
        return False
    bound = np.asarray(tolerance, dtype=np.float64)
    if bound.ndim == expected.ndim and bound.shape[0] == len(expected) > 1:  # one bound per row: cut with the rows
        return all(bool(np.all(np.abs(e - o) <= bound[rows])) for e, o, rows in row_blocks(expected, b))
    return all(bool(np.all(np.abs(e - o) <= bound)) for e, o, _ in row_blocks(expected, b))


#: values per block when two tables are compared (float64: 4 MiB a temporary), so a long table's difference is
#: never held whole
_BLOCK_VALUES = 1 << 19


def row_blocks(expected: np.ndarray, b: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, slice]]:
    """``expected`` and ``b`` (one shape) in blocks of whole rows along the first axis, with each block's rows.

    >>> [(rows.start, rows.stop) for _, _, rows in row_blocks(np.zeros((3, 2)), np.zeros((3, 2)))]
    [(0, 3)]
    """
    if expected.ndim == 0 or len(expected) == 0:
        yield expected, b, slice(None)
        return
    step = max(1, _BLOCK_VALUES // max(1, expected[0].size))
    for start in range(0, len(expected), step):
        rows = slice(start, min(start + step, len(expected)))
        yield expected[rows], b[rows], rows


#: the unit roundoff of each precision a table's values may carry: half its machine epsilon
_UNIT_ROUNDOFF = {name: epsilon / 2 for name, epsilon in EPSILON.items()}


def held_precision(table: np.ndarray) -> str:
    """The coarsest of bfloat16, float16, float32 that holds every value of ``table`` exactly (else float64).

    >>> held_precision(np.array([0.5, 1.0 + 2.0**-10])), held_precision(np.array([0.1]))
    ('float16', 'float64')
    """
    for name in ("bfloat16", "float16", "float32"):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                rounded = held_values(table, name) if name == "bfloat16" else table.astype(name)
        except PecliError:  # beyond the dtype's range: not held by it
            continue
        if np.array_equal(np.asarray(rounded, np.float64), table):
            return name
    return "float64"


def entry_rounding(a: np.ndarray, b: np.ndarray, coarser: str | None = None) -> np.ndarray:
    """Each entry's rounding in the coarser table's precision (``coarser``: that precision, when known): its unit
    roundoff times the larger |value| (at least its smallest subnormal).

    >>> entry_rounding(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]])).tolist()  # both hold bfloat16 values
    [[0.00390625, 9.183549615799121e-41]]
    """
    if coarser is None:
        coarser = max((held_precision(a), held_precision(b)), key=_UNIT_ROUNDOFF.__getitem__)
    return _UNIT_ROUNDOFF[coarser] * np.maximum(np.abs(a), np.abs(b)) + SUBNORMAL[coarser]


def reproduced(expected: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray) -> bool:
    """Whether a table regenerated with a mistake (``expected``) reproduces ``b``: within each row's ``tolerance``,
    and each entry within two of its own roundings plus the row's noise beyond rounding (its angle noise: the bound
    less compare's four roundings at the tables' scale). The coarser precision of the two, at least float32's: an
    explanation is regenerated in float64, the table it explains computed in float32. The row's bound alone is at
    the table's scale: a regeneration that misses B's small entries by many of their roundings (frequencies rounded
    to bfloat16 where B has another base: 0.0144 off where B's rounding is 0.0004) is no reproduction.

    >>> b = np.array([[1.0, 0.01171875]])  # both bfloat16 values
    >>> reproduced(np.array([[1.0, 0.0117]]), b, 0.03125), reproduced(np.array([[1.0, 0.0125]]), b, 0.03125)
    (True, False)
    """
    bound = per_row(tolerance, b.shape)
    if not within(expected, b, bound):
        return False
    coarser = max((held_precision(expected), held_precision(b), "float32"), key=_UNIT_ROUNDOFF.__getitem__)
    scale = max(float(np.abs(expected).max(initial=0.0)), float(np.abs(b).max(initial=0.0)))
    # compare's bound: four roundings (machine epsilon, 2 units) at the tables' scale, then each row's angle noise
    rounding = min(8.0 * _UNIT_ROUNDOFF[coarser] * scale, float(bound.min(initial=np.inf)))
    noise = bound - rounding
    for e, o, rows in row_blocks(expected, b):
        allowed = np.minimum(bound[rows], 2.0 * entry_rounding(e, o, coarser) + noise[rows])
        if not np.all(np.abs(e - o) <= allowed):
            return False
    return True
