"""ALiBi: attention biases that penalise distance linearly, with one slope per head."""

from __future__ import annotations

import math

import numpy as np

from pecli.dtypes import numpy_dtype, round_to
from pecli.errors import ParameterError
from pecli.schemes.checks import choice, head_index, no_dim, positive_int, row_range

__all__ = ["MAX_HEADS", "alibi_bias", "alibi_head_names", "alibi_slopes", "alibi_table"]

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


def alibi_bias(offsets: np.ndarray, *, heads: int, head: int | None = None, **_: object) -> np.ndarray:
    """The bias −m_h·|offset| of each head (or of head ``head``) at key − query ``offsets``: (heads, *offsets.shape).

    The relative view of ``pecli distance`` (the registry's ``bias``); float64.

    >>> alibi_bias(np.array([0, -1, 2]), heads=2).tolist()
    [[0.0, -0.0625, -0.125], [0.0, -0.00390625, -0.0078125]]
    """
    slopes = alibi_slopes(heads)
    if head is not None:
        slopes = slopes[[head_index(head, len(slopes))]]
    # 0.0 − x, as alibi_table: the bias at offset 0 is +0, not −0
    return 0.0 - np.multiply.outer(slopes, np.abs(np.asarray(offsets)).astype(np.float64))


def alibi_head_names(*, heads: int, head: int | None = None, **_: object) -> list[str]:
    """The name of each head :func:`alibi_bias` returns: its index and slope.

    >>> alibi_head_names(heads=4, head=2)
    ['head 2, slope 0.01562']
    """
    slopes = alibi_slopes(heads)
    shown = range(len(slopes)) if head is None else [head_index(head, len(slopes))]
    return [f"head {index}, slope {slopes[index]:.4g}" for index in shown]


def alibi_table(
    length: int | None,
    dim: None = None,
    *,
    heads: int,
    head: int | None = None,
    part: str = "bias",
    form: str = "distance",
    total_heads: int | None = None,
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """ALiBi's biases ``bias[h, i, j] = −|i − j|·m_h`` (or BLOOM's ``m_h·j``), or the slopes.

    Args:
        length: number of positions (the bias is len × len per head; unused for slopes).
        dim: unused (ALiBi has no embedding dimension); must be None.
        heads: number of heads H with a slope.
        head: one head's (len, len) matrix instead of all heads' (H, len, len).
        part: ``bias`` or ``slopes`` (shape (H,)).
        form: ``distance``, the symmetric −|i − j|·m (the paper's fairseq code, x-transformers),
            or ``key``, m·j of the key position alone (HF BLOOM's ``build_alibi_tensor``): on
            causal rows (j ≤ i) the two differ by m·i per row, which softmax ignores. MPT's
            ``build_alibi_bias`` is the key form less the constant m·(len − 1).
        total_heads: pad to this many heads with zero biases and slopes (x-transformers'
            ``AlibiPositionalBias(heads, total_heads)``: the extra heads get no ALiBi).
        dtype: output dtype.
        rows: rows of axis 0: heads for (H, len, len) and slopes, query positions for one head.

    Example:
        >>> alibi_table(3, heads=2, head=0, dtype="float64").tolist()
        [[0.0, -0.0625, -0.125], [-0.0625, 0.0, -0.0625], [-0.125, -0.0625, 0.0]]
        >>> alibi_table(None, heads=2, part="slopes", total_heads=3, dtype="float64").tolist()
        [0.0625, 0.00390625, 0.0]
        >>> alibi_table(3, heads=2, head=0, form="key", dtype="float64").tolist()[0]
        [0.0, 0.0625, 0.125]
    """
    no_dim("alibi", dim)
    slopes = alibi_slopes(heads)
    part = choice("part", part, ("bias", "slopes"))
    form = choice("form", form, ("distance", "key"))
    if total_heads is not None:
        if positive_int("total_heads", total_heads) < len(slopes):
            raise ParameterError(
                f"{{total_heads={total_heads}}} is fewer than {{heads={heads}}}",
                hint=f"pass {{total_heads}} of at least {heads}, or drop it",
            )
        slopes = np.concatenate([slopes, np.zeros(total_heads - len(slopes))])
    if part == "slopes":
        rows = row_range(rows, len(slopes))
        return round_to(slopes[rows.start : rows.stop], dtype)
    length = positive_int("length", length)
    positions = np.arange(length, dtype=np.float64)
    if head is not None:
        head = head_index(head, len(slopes))
        rows = row_range(rows, length, per_row=length, hint="use a smaller {length}")
        return round_to(_biases(positions[rows.start : rows.stop], positions, form) * slopes[head], dtype)
    rows = row_range(rows, len(slopes), per_row=length * length, hint="use a smaller {length}, or one {head}")
    out = np.empty((len(rows), length, length), dtype=numpy_dtype(dtype))
    block = max(1, _BLOCK_VALUES // length)  # float64 temporaries of a block of query rows, never a whole head
    for first in range(0, length, block):
        biases = _biases(positions[first : first + block], positions, form)
        for index, head in enumerate(rows):
            out[index, first : first + block] = round_to(biases * slopes[head], dtype)
    return out


#: values in one float64 block of biases that :func:`alibi_table` computes at a time
_BLOCK_VALUES = 1 << 20


def _biases(queries: np.ndarray, keys: np.ndarray, form: str) -> np.ndarray:
    """The slope-1 bias of each (query, key): −|i − j| (as 0.0 − x, so the diagonal is +0) or j."""
    if form == "key":
        return np.broadcast_to(keys[None, :], (len(queries), len(keys)))
    return 0.0 - np.abs(queries[:, None] - keys[None, :])
