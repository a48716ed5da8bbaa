"""T5's relative position buckets and the learned bias they index.

T5 adds to every attention logit a learned scalar per head, looked up by a bucket of the
relative position ``memory_position − query_position``: exact buckets for small distances, then
logarithmically wider ones up to ``max_distance``, beyond which everything shares the last bucket.
This reproduces HuggingFace transformers' ``T5Attention._relative_position_bucket`` and
``T5Attention.compute_bias`` (``src/transformers/models/t5/modeling_t5.py``) bit for bit,
including the float32 arithmetic of its logarithmic buckets (``tests/data/make_t5_references.py``
records the check against transformers).

>>> t5_bucket_table(4, num_buckets=8, max_distance=16).tolist()
[[0, 5, 6, 6], [1, 0, 5, 6], [2, 1, 0, 5], [2, 2, 1, 0]]
"""

from __future__ import annotations

import math

import numpy as np

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes.checks import positive_int, row_range

__all__ = [
    "t5_bias",
    "t5_bias_at",
    "t5_bias_weight",
    "t5_bucket_table",
    "t5_head_names",
    "t5_relative_position_bucket",
    "t5_table",
]


def t5_relative_position_bucket(
    relative_position: np.ndarray | int,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """The bucket (int64) of each relative position ``memory_position − query_position``.

    Bidirectional: half the buckets for keys after the query (positive positions), half for the
    rest. Causal: positive positions (future keys) fall in bucket 0 with the query itself. In each
    half, distances below ``max_exact = half // 2`` get a bucket each; larger ones
    ``max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact) · (half − max_exact))``,
    computed in float32 as transformers does, capped at ``half − 1``. Float32 matters where the
    exact value is a whole number: causal, 9 buckets, distance 128 puts 16 in bucket 6, float64 in 5.
    The float32 log here is correctly rounded; torch's is not always (1 ulp above at 1.5 on x86),
    so at such a boundary the two can still differ (96 buckets, distance 81: distance 36).

    Args:
        relative_position: integer array (any shape) of ``memory_position − query_position``.
        bidirectional: encoder self-attention (True) or decoder/causal attention (False).
        num_buckets: buckets in all (T5: 32).
        max_distance: distance from which every position shares the last bucket (T5: 128).

    Example:
        >>> t5_relative_position_bucket(np.array([-200, -16, -15, -1, 0, 1, 8, 200])).tolist()
        [15, 10, 9, 1, 0, 17, 24, 31]
        >>> t5_relative_position_bucket(np.array([-200, -16, -15, -1, 0, 1]), bidirectional=False).tolist()
        [31, 16, 15, 1, 0, 0]
    """
    num_buckets = positive_int("num_buckets", num_buckets)
    max_distance = positive_int("max_distance", max_distance)
    relative_position = np.asarray(relative_position)
    if relative_position.dtype.kind not in "iu":
        raise ParameterError(
            f"relative_position must hold integers, got dtype {relative_position.dtype}",
            hint="pass memory_position − query_position as an integer array",
        )
    relative_position = relative_position.astype(np.int64)
    half = num_buckets // 2 if bidirectional else num_buckets
    max_exact = half // 2
    if max_exact < 1:
        raise ParameterError(
            f"{{num_buckets}} {num_buckets} leaves no exact bucket{' per direction' if bidirectional else ''}",
            hint=f"use {{num_buckets={4 if bidirectional else 2}}} or more",
        )
    if max_distance <= max_exact:
        raise ParameterError(
            f"{{max_distance}} {max_distance} must exceed the exact buckets' reach {max_exact} ({{num_buckets}} "
            f"{num_buckets} // {4 if bidirectional else 2})",
            hint=f"use a smaller {{num_buckets}} or a larger {{max_distance={max(128, 2 * max_exact)}}}",
        )
    if bidirectional:
        buckets = np.where(relative_position > 0, half, 0).astype(np.int64)
        distance = np.abs(relative_position)
    else:
        buckets = np.zeros(relative_position.shape, dtype=np.int64)
        distance = -np.minimum(relative_position, 0)
    # transformers: max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
    # * (half − max_exact)).to(torch.long), all in float32 (the Python float is cast to float32).
    # float32(log(float64(x))) is the correctly rounded float32 log (torch's matches it on T5's settings).
    with np.errstate(divide="ignore"):
        ratio = distance.astype(np.float32) / np.float32(max_exact)
        log_ratio = np.log(ratio.astype(np.float64)).astype(np.float32)
    scaled = log_ratio / np.float32(math.log(max_distance / max_exact)) * np.float32(half - max_exact)
    large = max_exact + np.trunc(np.where(distance < max_exact, 0, scaled)).astype(np.int64)
    return buckets + np.where(distance < max_exact, distance, np.minimum(large, half - 1))


def t5_bucket_table(
    length: int,
    *,
    num_buckets: int = 32,
    max_distance: int = 128,
    bidirectional: bool = True,
    rows: range | None = None,
) -> np.ndarray:
    """The (length, length) int64 bucket matrix: row = query position i, column = key position j.

    Entry (i, j) is the bucket of ``j − i``, as ``T5Attention.compute_bias`` builds it
    (``memory_position − context_position``). Only the 2·length − 1 distinct offsets are bucketed.

    Args:
        length: number of positions.
        num_buckets, max_distance, bidirectional: as :func:`t5_relative_position_bucket`.
        rows: compute only these query positions.

    Example:
        >>> t5_bucket_table(3, bidirectional=False).tolist()
        [[0, 0, 0], [1, 0, 0], [2, 1, 0]]
    """
    length = positive_int("length", length)
    rows = row_range(rows, length, per_row=length, hint="use a smaller {length}")
    offsets = np.arange(-(length - 1), length, dtype=np.int64)
    buckets = t5_relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    # offset j − i sits at index j − i + length − 1
    index = np.arange(length)[None, :] - np.arange(rows.start, rows.stop)[:, None] + (length - 1)
    return buckets[index]


def t5_bias(buckets: np.ndarray, bias_weight: np.ndarray, *, dtype: str = "float32") -> np.ndarray:
    """Expand a learned (num_buckets, heads) bias table into the (heads, L, L) bias T5 adds to the logits.

    ``bias_weight`` is a checkpoint's ``relative_attention_bias.weight`` (an ``nn.Embedding`` of
    num_buckets rows and one column per head); ``buckets`` is a :func:`t5_bucket_table`.

    Example:
        >>> weight = np.array([[0.0, 10.0], [1.0, 11.0], [2.0, 12.0], [3.0, 13.0]])
        >>> t5_bias(t5_bucket_table(2, num_buckets=4, max_distance=4), weight, dtype="float64").tolist()
        [[[0.0, 3.0], [1.0, 0.0]], [[10.0, 13.0], [11.0, 10.0]]]
    """
    weight = np.asarray(bias_weight)
    buckets = np.asarray(buckets)
    if weight.ndim != 2 or 0 in weight.shape:
        raise ParameterError(
            f"bias_weight must have shape (num_buckets, heads), got {weight.shape}",
            hint="pass a T5 checkpoint's relative_attention_bias.weight",
        )
    if buckets.dtype.kind not in "iu" or buckets.ndim != 2:
        raise ParameterError(
            f"buckets must be a 2-D integer bucket table, got a {buckets.ndim}-D {buckets.dtype} array",
            hint="pass t5_bucket_table(...)",
        )
    if buckets.size and (int(buckets.min()) < 0 or int(buckets.max()) >= weight.shape[0]):
        raise ParameterError(
            f"buckets run up to {int(buckets.max())} but bias_weight has {weight.shape[0]} rows (num_buckets)",
            hint="use the num_buckets of the checkpoint the bias comes from",
        )
    # gathering copies values: one rounding from the weights' own values
    return round_to(np.moveaxis(weight.astype(np.float64)[buckets], -1, 0), dtype)


def t5_bias_weight(bias_from: str | None, num_buckets: int, bias_key: str | None = None) -> np.ndarray:
    """The learned (num_buckets, heads) bias table stored in file ``bias_from`` (tensor ``bias_key``), float64.

    Read through :func:`pecli.io.read_table`, imported here: a file is read only for ``part="bias"``.
    """
    if bias_from is None:
        raise ParameterError("{part=bias} needs the learned table", hint="pass {bias_from=t5.safetensors}")
    from pecli.io import read_table

    weight = np.asarray(read_table(bias_from, key=bias_key).array, dtype=np.float64)
    if weight.ndim != 2 or weight.shape[0] != num_buckets:
        raise ParameterError(
            f"the bias table in {{bias_from}} must have shape (num_buckets = {num_buckets}, heads), got {weight.shape}",
            hint="pass a T5 checkpoint's relative_attention_bias.weight, or set {num_buckets} to its rows",
        )
    return weight


def t5_bias_at(
    offsets: np.ndarray,
    *,
    num_buckets: int = 32,
    max_distance: int = 128,
    bidirectional: bool = True,
    part: str | None = None,
    bias_from: str | None = None,
    bias_key: str | None = None,
    **_: object,
) -> np.ndarray:
    """At key − query ``offsets``: the bucket (one "head", ``part`` buckets) or each head's learned bias, float64.

    The relative view of ``pecli distance`` (the registry's ``bias``): (heads, *offsets.shape).

    >>> t5_bias_at(np.array([-2, 0, 2]), num_buckets=4, max_distance=4).tolist()
    [[1.0, 0.0, 3.0]]
    """
    buckets = t5_relative_position_bucket(offsets, bidirectional, num_buckets, max_distance)
    if part != "bias":
        return buckets[None].astype(np.float64)
    weight = t5_bias_weight(bias_from, num_buckets, bias_key)
    return np.moveaxis(weight[buckets], -1, 0)


def t5_head_names(
    *,
    num_buckets: int = 32,
    part: str | None = None,
    bias_from: str | None = None,
    bias_key: str | None = None,
    **_: object,
) -> list[str]:
    """The name of each head :func:`t5_bias_at` returns: ``bucket``, or ``head 0`` … of the learned table.

    >>> t5_head_names()
    ['bucket']
    """
    if part != "bias":
        return ["bucket"]
    weight = t5_bias_weight(bias_from, num_buckets, bias_key)
    return [f"head {head}" for head in range(weight.shape[1])]


def t5_table(
    length: int,
    dim: None = None,
    *,
    num_buckets: int = 32,
    max_distance: int = 128,
    bidirectional: bool = True,
    part: str | None = None,
    bias_from: str | None = None,
    bias_key: str | None = None,
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """T5's (len, len) bucket matrix (``part="buckets"``), or the (heads, len, len) bias of a learned table.

    ``part="bias"`` expands the (num_buckets, heads) table in file ``bias_from`` (tensor
    ``bias_key``) with :func:`t5_bias`; ``rows`` ranges over query positions for the buckets and
    over heads for the bias. Bucket indices are whole numbers in any float dtype up to 2^24.

    Example:
        >>> t5_table(3, num_buckets=4, max_distance=4, dtype="float64").tolist()
        [[0.0, 3.0, 3.0], [1.0, 0.0, 3.0], [1.0, 1.0, 0.0]]
    """
    if part in (None, "buckets"):
        if bias_from is not None:
            raise ParameterError("{bias_from} gives the bias table", hint="add {part=bias}, or drop {bias_from}")
        buckets = t5_bucket_table(
            length, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional, rows=rows
        )
        return round_to(buckets, dtype)
    weight = t5_bias_weight(bias_from, num_buckets, bias_key)
    heads = row_range(rows, weight.shape[1])
    buckets = t5_bucket_table(length, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional)
    return t5_bias(buckets, weight[:, heads.start : heads.stop], dtype=dtype)
