"""ALiBi: attention biases that penalise distance linearly, with one slope per head.

Two parameters reproduce a model's own bias rather than the paper's float64 one:

- ``arithmetic="bfloat16"``: HF Falcon's ``build_alibi_tensor`` (transformers
  ``models/falcon/modeling_falcon.py``): the slopes as float32 (``torch.pow`` of a float32 base), held in
  bfloat16 (``slopes[..., None].bfloat16()``), times the position held in bfloat16, the product rounded
  to bfloat16. BLOOM's ``build_alibi_tensor`` has no bfloat16 step: its table is the float64 default.
- ``head_dim=D``: the bias divided by √D, as FalconModel's ``alibi / math.sqrt(hidden_size // num_heads)``
  (the attention mask SDPA adds to q·k/√D). With a reduced arithmetic the division is the model's: in the
  output dtype (float32 arithmetic for bfloat16 and float16 outputs, as torch's opmath), else float64.

>>> alibi_table(3, heads=32, head=0, form="key", arithmetic="bfloat16", head_dim=64, dtype="float64").tolist()[0]
[0.0, 0.10498046875, 0.2099609375]
"""

from __future__ import annotations

import math

import numpy as np

from pecli.dtypes import numpy_dtype, round_to
from pecli.errors import ParameterError
from pecli.schemes.arithmetic import held
from pecli.schemes.checks import choice, head_index, no_dim, positive_int, row_range

__all__ = ["ALIBI_ARITHMETICS", "MAX_HEADS", "alibi_bias", "alibi_head_names", "alibi_slopes", "alibi_table"]

#: the arithmetics of ALiBi's product m·j: pecli's float64, or HF Falcon's bfloat16
ALIBI_ARITHMETICS = ("float64", "bfloat16")

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


def alibi_bias(
    offsets: np.ndarray,
    *,
    heads: int,
    head: int | None = None,
    arithmetic: str | None = None,
    head_dim: int | None = None,
    **_: object,
) -> np.ndarray:
    """The bias −m_h·|offset| of each head (or of head ``head``) at key − query ``offsets``: (heads, *offsets.shape).

    The relative view of ``pecli distance`` (the registry's ``bias``); float64: the product m·|offset| in
    ``arithmetic``, divided by √``head_dim`` in float64.

    >>> alibi_bias(np.array([0, -1, 2]), heads=2).tolist()
    [[0.0, -0.0625, -0.125], [0.0, -0.00390625, -0.0078125]]
    >>> alibi_bias(np.array([3]), heads=32, arithmetic="bfloat16", head_dim=64)[0].tolist()
    [-0.314453125]
    """
    arithmetic = _arithmetic(arithmetic)
    slopes = _held_slopes(heads, arithmetic)
    if head is not None:
        slopes = slopes[[head_index(head, len(slopes))]]
    distances = _held(np.abs(np.asarray(offsets)).astype(np.float64), arithmetic)
    biases = _held(np.multiply.outer(slopes, distances), arithmetic)
    if head_dim is not None:
        biases = biases / math.sqrt(positive_int("head_dim", head_dim))
    # 0.0 − x, as alibi_table: the bias at offset 0 is +0, not −0
    return 0.0 - biases


def alibi_head_names(
    *, heads: int, head: int | None = None, arithmetic: str | None = None, head_dim: int | None = None, **_: object
) -> list[str]:
    """The name of each head :func:`alibi_bias` returns: its index and the slope its values follow.

    With ``arithmetic`` and ``head_dim`` (Falcon's), the slope as held in that arithmetic, over √head_dim:
    the bias of key j is about that slope × j (0.8398/√64 for Falcon's first of 32 heads).

    >>> alibi_head_names(heads=4, head=2)
    ['head 2, slope 0.01562']
    >>> alibi_head_names(heads=32, head=0, arithmetic="bfloat16", head_dim=64)
    ['head 0, slope 0.105']
    """
    arithmetic = _arithmetic(arithmetic)
    slopes = _held_slopes(heads, arithmetic)
    shown = range(len(slopes)) if head is None else [head_index(head, len(slopes))]
    if head_dim is None:
        return [f"head {index}, slope {slopes[index]:.4g}" for index in shown]
    root = math.sqrt(positive_int("head_dim", head_dim))
    return [f"head {index}, slope {slopes[index] / root:.4g}" for index in shown]


def alibi_table(
    length: int | None,
    dim: None = None,
    *,
    heads: int,
    head: int | None = None,
    part: str = "bias",
    form: str = "distance",
    total_heads: int | None = None,
    arithmetic: str | None = None,
    head_dim: int | None = None,
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
        arithmetic: ``float64`` (None: round once) or ``bfloat16``, HF Falcon's slopes and positions
            held in bfloat16 and their product rounded to it (see the module's text).
        head_dim: divide the bias by √head_dim (Falcon's ``alibi / math.sqrt(head_dim)``).
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
    arithmetic = _arithmetic(arithmetic)
    slopes = _held_slopes(heads, arithmetic)
    divisor = None if head_dim is None else math.sqrt(positive_int("head_dim", head_dim))
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
        biases = _biases(positions[rows.start : rows.stop], positions, form)
        return _scaled(biases, slopes[head], arithmetic, divisor, dtype)
    rows = row_range(rows, len(slopes), per_row=length * length, hint="use a smaller {length}, or one {head}")
    out = np.empty((len(rows), length, length), dtype=numpy_dtype(dtype))
    block = max(1, _BLOCK_VALUES // length)  # float64 temporaries of a block of query rows, never a whole head
    for first in range(0, length, block):
        biases = _biases(positions[first : first + block], positions, form)
        for index, head in enumerate(rows):
            out[index, first : first + block] = _scaled(biases, slopes[head], arithmetic, divisor, dtype)
    return out


#: values in one float64 block of biases that :func:`alibi_table` computes at a time
_BLOCK_VALUES = 1 << 20


def _biases(queries: np.ndarray, keys: np.ndarray, form: str) -> np.ndarray:
    """The slope-1 bias of each (query, key): −|i − j| (as 0.0 − x, so the diagonal is +0) or j."""
    if form == "key":
        return np.broadcast_to(keys[None, :], (len(queries), len(keys)))
    return 0.0 - np.abs(queries[:, None] - keys[None, :])


def _arithmetic(arithmetic: str | None) -> str:
    return "float64" if arithmetic is None else choice("arithmetic", arithmetic, ALIBI_ARITHMETICS)


def _held(values: np.ndarray, arithmetic: str) -> np.ndarray:
    """``values`` as ``arithmetic`` holds them (float64: unchanged)."""
    return values if arithmetic == "float64" else held(values, arithmetic)


def _held_slopes(heads: int, arithmetic: str) -> np.ndarray:
    """The slopes as ``arithmetic`` holds them: Falcon's are float32 (torch.pow) then bfloat16."""
    slopes = alibi_slopes(heads)
    return slopes if arithmetic == "float64" else held(held(slopes, "float32"), arithmetic)


def _scaled(biases: np.ndarray, slope: float, arithmetic: str, divisor: float | None, dtype: str) -> np.ndarray:
    """The slope-1 ``biases`` times ``slope`` (and over ``divisor``) in ``arithmetic``, rounded to ``dtype``.

    float64 arithmetic rounds once at the end. bfloat16 (Falcon) holds the positions in bfloat16 and rounds
    the product (exact in float64) to it; the division is then the model's own in ``dtype``: float64 for a
    float64 table, else float32 (torch's opmath for bfloat16 and float16) with the divisor as float32.
    """
    if arithmetic == "float64":
        values = biases * slope if divisor is None else biases * slope / divisor
        return round_to(values, dtype)
    values = held(held(biases, arithmetic) * slope, arithmetic)
    if divisor is not None:
        if dtype == "float64":
            values = values / divisor
        else:
            values = (values.astype(np.float32) / np.float32(divisor)).astype(np.float64)
    return round_to(values, dtype)
