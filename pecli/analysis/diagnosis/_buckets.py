"""T5's relative-position bias read off two (heads, L, L) tables without the learned weights: head h at (query i, key
j) is W[bucket(j − i), h], so the cells of one bucket share a value in every head. Which cells share one is the
table's bucket structure; it is compared with the structure of T5's bucket function
(:func:`pecli.schemes.t5.t5_relative_position_bucket`, transformers' ``T5Attention._relative_position_bucket``) for
a small set of settings, and the settings each side fits are the evidence: causal buckets where bidirectional ones
apply, another ``num_buckets`` or ``max_distance``. When both fit the same settings, each bucket's value is read off
each side (W's rows that L positions reach): B's bucket k holding A's bucket k ± 1 is the bucket index off by one.
B holding A's value one diagonal over (B[:, i, j] = A[:, i, j ± 1]: the bucket taken of j − i ± 1) is the relative
position off by one, whatever structure B's cut-off diagonal leaves. A table that fits none of the settings (noise,
another bias) is no T5 bias: nothing is named."""

from __future__ import annotations

from typing import Any

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, per_row, residual
from pecli.errors import PecliError
from pecli.schemes.t5 import t5_relative_position_bucket

__all__ = ["bucket_findings", "bucket_settings", "relative_values"]

#: the settings tried: libraries ship 32 buckets up to 128 (T5, mT5, LongT5, UMT5); halved, doubled, and beyond
_NUM_BUCKETS = (32, 16, 64, 8, 128)
_MAX_DISTANCES = (128, 64, 256, 32, 512, 16, 1024)
#: the codes of one setting changed, as against a T5 spec (:func:`pecli.schemes.mistakes.t5_mistakes`)
_CODES = {"bidirectional": "bidirectional", "num_buckets": "t5_num_buckets", "max_distance": "t5_max_distance"}


def relative_values(table: np.ndarray, bound: np.ndarray) -> np.ndarray | None:
    """Each head's value at each relative position j − i = −(L − 1) … L − 1 ((heads, 2L − 1)), when every head of the
    square ``table`` (heads, L, L) depends on j − i alone within its rows' ``bound`` ((heads, L, 1)); else None.

    >>> table = np.array([[[0.0, 1.0], [2.0, 0.0]]])
    >>> relative_values(table, np.zeros((1, 2, 1))).tolist()
    [[2.0, 0.0, 1.0]]
    >>> relative_values(np.array([[[0.0, 1.0], [2.0, 3.0]]]), np.zeros((1, 2, 1))) is None
    True
    """
    if table.ndim != 3 or table.shape[1] != table.shape[2] or table.shape[1] < 2:
        return None
    length = table.shape[1]
    values = np.concatenate([table[:, ::-1, 0], table[:, 0, 1:]], axis=1)  # column 0 from row L − 1 up, then row 0
    index = np.arange(length)[None, :] - np.arange(length)[:, None] + (length - 1)  # j − i + L − 1
    for head in range(len(table)):  # one head at a time: a long table's (L, L) is never held twice per head
        if not np.all(np.abs(values[head][index] - table[head]) <= bound[head]):
            return None
    return values


def _fits(values: np.ndarray, buckets: np.ndarray, noise: np.ndarray) -> bool:
    """Whether the cells sharing a bucket share a value in every head (within each head's ``noise``) and cells of two
    buckets differ in some head beyond it: the table's structure is these buckets', neither finer nor coarser."""
    seen, first, classes = np.unique(buckets, return_index=True, return_inverse=True)
    held = values[:, first]  # each bucket's value: its first cell's (a mean would round where all cells agree)
    if not np.all(np.abs(values - held[:, classes]) <= noise[:, None]):
        return False
    apart = np.abs(held[:, :, None] - held[:, None, :]) > noise[:, None, None]
    return bool(np.all(apart.any(axis=0) | np.eye(len(seen), dtype=bool)))


def _candidates(length: int) -> list[tuple[dict[str, Any], np.ndarray]]:
    """Each setting tried, with its bucket at each relative position −(L − 1) … L − 1."""
    offsets = np.arange(-(length - 1), length)
    tried = []
    for bidirectional in (True, False):
        for num_buckets in _NUM_BUCKETS:
            for max_distance in _MAX_DISTANCES:
                try:
                    buckets = t5_relative_position_bucket(offsets, bidirectional, num_buckets, max_distance)
                except PecliError:  # max_distance within the exact buckets: no setting T5 takes
                    continue
                settings = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
                tried.append((settings, buckets))
    return tried


def bucket_settings(values: np.ndarray, noise: np.ndarray) -> list[tuple[dict[str, Any], np.ndarray]]:
    """The settings (with their buckets) whose structure is that of ``values`` (:func:`relative_values`).

    >>> from pecli.schemes.t5 import t5_bucket_table
    >>> weight = np.random.default_rng(0).normal(size=(32, 2))
    >>> table = np.moveaxis(weight[t5_bucket_table(40, bidirectional=False)], -1, 0)
    >>> [s for s, _ in bucket_settings(relative_values(table, np.zeros((2, 40, 1))), np.zeros(2))][0]
    {'bidirectional': False, 'num_buckets': 32, 'max_distance': 128}
    """
    return [(settings, buckets) for settings, buckets in _candidates(values.shape[1] // 2 + 1)
            if _fits(values, buckets, noise)]  # fmt: skip


def _words(settings: dict[str, Any]) -> str:
    direction = "bidirectional" if settings["bidirectional"] else "causal"
    return f"{direction}, num_buckets {settings['num_buckets']}, max_distance {settings['max_distance']}"


def _listed(fits: list[tuple[dict[str, Any], np.ndarray]]) -> list[str]:
    return [_words(settings) for settings, _ in fits]


def _bucket_values(values: np.ndarray, buckets: np.ndarray) -> dict[int, np.ndarray]:
    """Each bucket's value in every head (its first cell's: the cells of a bucket agree within the noise)."""
    seen, first = np.unique(buckets, return_index=True)
    return {int(bucket): values[:, index] for bucket, index in zip(seen, first, strict=True)}


def _off_by_one(
    values_a: np.ndarray, values_b: np.ndarray, buckets: np.ndarray, noise: np.ndarray
) -> tuple[int, int] | None:
    """The shift s (±1) with B's bucket k holding A's bucket k + s in every head, for every bucket both show (at
    least three), with the number of buckets checked; None when neither does."""
    of_a, of_b = _bucket_values(values_a, buckets), _bucket_values(values_b, buckets)
    for shift in (1, -1):
        shared = [k for k in of_b if k + shift in of_a]
        if len(shared) >= 3 and all(np.all(np.abs(of_b[k] - of_a[k + shift]) <= noise) for k in shared):
            return shift, len(shared)
    return None


def _position_shift(values_a: np.ndarray, values_b: np.ndarray, noise: np.ndarray) -> tuple[int, float] | None:
    """The shift s (±1) with B at relative position r holding A at r + s in every head (B[:, i, j] = A[:, i, j + s] on
    every cell whose j + s is a key), with the largest difference over those cells; None when neither does.

    >>> values = np.array([[5.0, 1.0, 2.0, 3.0, 3.0]])
    >>> _position_shift(values, np.array([[1.0, 2.0, 3.0, 3.0, 4.0]]), np.zeros(1))
    (1, 0.0)
    >>> _position_shift(values, values[:, ::-1], np.zeros(1)) is None
    True
    """
    for shift in (1, -1):
        held_b, held_a = (values_b[:, :-1], values_a[:, 1:]) if shift > 0 else (values_b[:, 1:], values_a[:, :-1])
        off = np.abs(held_b - held_a)
        if np.all(off <= noise[:, None]):
            return shift, float(off.max())
    return None


def bucket_findings(
    a: np.ndarray, b: np.ndarray, tolerance: float | np.ndarray, reference: Reference | None
) -> list[Finding]:
    """What tells T5 bias B from A by their bucket structures: the settings each fits, B's buckets shifted by one, or
    its relative positions shifted by one.

    >>> from pecli.schemes.t5 import t5_bias, t5_bucket_table
    >>> weight = np.random.default_rng(0).normal(size=(32, 3))
    >>> a = t5_bias(t5_bucket_table(48), weight, dtype="float64")
    >>> b = t5_bias(t5_bucket_table(48, max_distance=64), weight, dtype="float64")
    >>> found = bucket_findings(a, b, 1e-9, None)
    >>> found[0].code, found[0].figures["b_settings"][0]
    ('t5_max_distance', 'bidirectional, num_buckets 32, max_distance 64')
    >>> bucket_findings(a, b + np.random.default_rng(1).normal(size=b.shape) * 1e-3, 1e-9, None)
    []
    """
    if a.ndim != 3 or a.shape != b.shape:
        return []
    bound = per_row(tolerance, b.shape)
    values_a, values_b = relative_values(a, bound), relative_values(b, bound)
    if values_a is None or values_b is None:
        return []
    noise = bound.reshape(len(b), -1).max(axis=1)
    fits_a = bucket_settings(values_a, noise)
    if not fits_a:
        return []  # A is no T5 bias of the settings tried: its structure names no cause
    moved = _position_shift(values_a, values_b, noise)  # A's structure has distinct exact buckets: B ≠ A
    if moved is not None:
        return [_shifted_finding(fits_a, moved, a.shape[1], len(a))]
    fits_b = bucket_settings(values_b, noise)
    if not fits_b:
        return []  # B is no T5 bias of the settings tried: its structure names no cause
    evidence: dict[str, Any] = {"a_settings": _listed(fits_a), "b_settings": _listed(fits_b)}
    same = [(settings, buckets) for settings, buckets in fits_a if settings in [s for s, _ in fits_b]]
    if same:
        shifted = _off_by_one(values_a, values_b, same[0][1], noise)
        if shifted is None:
            return []  # one structure, other values: the learned weights (or some heads) differ, no setting
        shift, checked = shifted
        message = (
            f"B's bucket k holds A's bucket k {'+' if shift > 0 else '−'} 1 in every head (the bucket index off by "
            f"one; {checked} buckets seen on both sides); both have the bucket structure of T5's {_words(same[0][0])}"
        )
        return [Finding("t5_bucket_off_by_one", message, {**evidence, "shift": shift, "buckets_checked": checked,
                                                           "residual": 0.0})]  # fmt: skip

    def differences(pair: tuple[dict[str, Any], dict[str, Any]]) -> list[str]:
        return [name for name in _CODES if pair[0][name] != pair[1][name]]

    def default(settings: dict[str, Any]) -> bool:
        return settings["num_buckets"] == 32 and settings["max_distance"] == 128

    pairs = [(sa, sb) for sa, _ in fits_a for sb, _ in fits_b]
    best = min(pairs, key=lambda pair: (len(differences(pair)), not default(pair[0]), not default(pair[1])))
    changed = differences(best)
    code = _CODES[changed[0]] if len(changed) == 1 else "t5_bucket_settings"
    message = (
        f"the bucket structures differ (the cells that share a value in every head): A's is T5's {_words(best[0])}, "
        f"B's is T5's {_words(best[1])}"
    )
    return [Finding(code, message, {**evidence, "changed": changed, "residual": residual(a, b)})]


def _shifted_finding(
    fits_a: list[tuple[dict[str, Any], np.ndarray]], moved: tuple[int, float], length: int, heads: int
) -> Finding:
    """B's relative position off by one (``moved``: the shift s and the largest difference), with its evidence: the
    cells B[:, i, j] = A[:, i, j + s] holds on (every cell whose j + s is a key), of ``heads`` (L, L) heads."""
    shift, off = moved
    sign = "+" if shift > 0 else "−"
    cells = length * (length - 1)
    message = (
        f"the relative position off by one (relative positions shifted by {shift}): B[:, i, j] = A[:, i, j {sign} 1] "
        f"in all {heads} heads, on all {cells} cells of each where j {sign} 1 is a key (B is A one diagonal over: "
        f"B's bucket taken of j − i {sign} 1, not j − i); A has the bucket structure of T5's {_words(fits_a[0][0])}"
    )
    figures = {"a_settings": _listed(fits_a), "shift": shift, "cells_checked": cells, "residual": off}
    return Finding("t5_relative_position_shifted", message, figures)
