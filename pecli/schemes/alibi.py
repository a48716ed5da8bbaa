"""ALiBi: attention biases that penalise distance linearly, with one slope per head."""

from __future__ import annotations

import math

import numpy as np

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes.checks import choice, head_index, no_dim, positive_int, row_range

__all__ = ["MAX_HEADS", "alibi_slopes", "alibi_table"]

#: the most heads pecli computes slopes for (models have at most a few hundred)
MAX_HEADS = 1 << 16


def alibi_slopes(heads: int) -> np.ndarray:
    """The float64 slopes ``m_h`` of ``heads`` heads.

    For a power of two n: the geometric sequence 2^(−8/n), 2^(−16/n), …, 2^(−8). Otherwise the
    closest smaller power of two's slopes, then every other slope of twice that power — the
    interleaving of ofirpress/attention_with_linear_biases (fairseq/models/transformer.py, get_slopes).

    >>> (-np.log2(alibi_slopes(12))).tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.5, 1.5, 2.5, 3.5]
    """
    heads = positive_int("heads", heads)
    if heads > MAX_HEADS:  # every row block recomputes the slopes: 3e8 heads would take gigabytes before a byte
        raise ParameterError(f"{{heads}} is {heads}, more than the {MAX_HEADS} pecli computes", hint="e.g. {heads=64}")
    power = 2 ** math.floor(math.log2(heads))
    slopes = 2.0 ** (-8.0 * np.arange(1, power + 1) / power)
    if power == heads:
        return slopes
    return np.concatenate([slopes, alibi_slopes(2 * power)[0::2][: heads - power]])


def alibi_table(
    length: int | None,
    dim: None = None,
    *,
    heads: int,
    head: int | None = None,
    part: str = "bias",
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """ALiBi's symmetric biases ``bias[h, i, j] = −|i − j|·m_h``, or the slopes.

    Args:
        length: number of positions (the bias is len × len per head; unused for slopes).
        dim: unused (ALiBi has no embedding dimension); must be None.
        heads: number of heads H.
        head: one head's (len, len) matrix instead of all heads' (H, len, len).
        part: ``bias`` or ``slopes`` (shape (H,)).
        dtype: output dtype.
        rows: rows of axis 0: heads for (H, len, len) and slopes, query positions for one head.

    Example:
        >>> alibi_table(3, heads=2, head=0, dtype="float64").tolist()
        [[0.0, -0.0625, -0.125], [-0.0625, 0.0, -0.0625], [-0.125, -0.0625, 0.0]]
        >>> alibi_table(None, heads=2, part="slopes", dtype="float64").tolist()
        [0.0625, 0.00390625]
    """
    no_dim("alibi", dim)
    slopes = alibi_slopes(heads)
    part = choice("part", part, ("bias", "slopes"))
    if part == "slopes":
        rows = row_range(rows, len(slopes))
        return round_to(slopes[rows.start : rows.stop], dtype)
    length = positive_int("length", length)
    positions = np.arange(length, dtype=np.float64)
    if head is not None:
        head = head_index(head, len(slopes))
        rows = row_range(rows, length)
        distance = np.abs(positions[rows.start : rows.stop, None] - positions[None, :])
        return round_to(0.0 - distance * slopes[head], dtype)  # 0.0 − x: the diagonal is +0, not −0
    rows = row_range(rows, len(slopes))
    distance = np.abs(positions[:, None] - positions[None, :])
    return round_to(0.0 - distance[None, :, :] * slopes[rows.start : rows.stop, None, None], dtype)
