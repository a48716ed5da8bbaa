"""The size rules: what a scheme function receives as ``(length, dim)`` and the shape it returns.

Most schemes take ``length`` and ``dim`` and return a ``(length, dim)`` table; grids, NeRF
features and ALiBi derive their sizes from their own parameters.

>>> alibi_sizes(5, None, {"heads": 4, "head": None, "part": "bias"}).shape
(4, 5, 5)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pecli.errors import ParameterError
from pecli.schemes.checks import axial_grid, fourier_width, grid_shape, head_index, leading_rows, no_dim, positive_int

__all__ = [
    "Sizes",
    "alibi_sizes",
    "axial_sizes",
    "coordinate_sizes",
    "fourier_sizes",
    "grid_sizes",
    "query_key_sizes",
    "sequence_sizes",
    "t5_sizes",
]


@dataclass(frozen=True)
class Sizes:
    """What a scheme function receives as ``(length, dim)``, and the shape of the tensor it returns.

    Axis 0 of ``shape`` is the one the ``rows`` argument ranges over (positions, tokens or heads).
    """

    length: int | None
    dim: int | None
    shape: tuple[int, ...]


def sequence_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """The rule of most schemes: ``--len`` and ``--d`` give a ``(len, d)`` table.

    >>> sequence_sizes(8, 4, {}).shape
    (8, 4)
    """
    missing = [f"{{{name}}}" for name, value in (("dim", dim), ("length", length)) if value is None]
    if missing:
        raise ParameterError(f"missing {' and '.join(missing)}", hint="e.g. {dim=512} {length=2048}")
    length = positive_int("length", length)
    dim = positive_int("dim", dim)
    return Sizes(length, dim, (length, dim))


def grid_sizes(
    length: int | None, dim: int | None, params: Mapping[str, Any], *, default_dim: int | None = None
) -> Sizes:
    """Grid schemes: ``--grid H,W`` gives H·W tokens (one more with ``--cls-token``); ``--len`` may repeat it.

    >>> grid_sizes(None, 8, {"grid": "2,3", "cls_token": True}).shape
    (7, 8)
    """
    if params.get("grid") is None:
        raise ParameterError("missing {grid}", hint="pass e.g. {grid=14,14} (height, width)")
    height, width = grid_shape(params["grid"])
    tokens = height * width + leading_rows(params.get("cls_token"), params.get("extra_tokens"))
    if length is not None and length != tokens:
        raise ParameterError(
            f"{{length={length}}} does not match {{grid={height},{width}}}, which has {tokens} tokens",
            hint="drop {length}: the grid sets it",
        )
    if dim is None:
        dim = default_dim
    if dim is None:
        raise ParameterError("missing {dim}", hint="e.g. {dim=768}")
    dim = positive_int("dim", dim)
    return Sizes(tokens, dim, (tokens, dim))


def coordinate_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """CoordConv: the grid's tokens × 2 coordinates (3 with the radius channel, ``--d 3``).

    >>> coordinate_sizes(None, None, {"grid": "4,5"}).shape
    (20, 2)
    """
    return grid_sizes(length, dim, params, default_dim=2)


def fourier_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """NeRF features: ``d = 2·L`` (+ 1 with ``--include-input``); ``--d`` or ``--num-freqs`` sets the other.

    >>> fourier_sizes(5, None, {"num_freqs": 10, "include_input": True}).shape
    (5, 21)
    """
    if length is None:
        raise ParameterError("missing {length}", hint="e.g. {length=64}")
    width = fourier_width(dim, params.get("num_freqs"), bool(params.get("include_input")))
    return Sizes(positive_int("length", length), width, (length, width))


def alibi_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """ALiBi: (heads, len, len) biases, one head's (len, len) with ``--head``, or (heads,) slopes.

    >>> alibi_sizes(5, None, {"heads": 4, "head": None, "part": "bias"}).shape
    (4, 5, 5)
    """
    no_dim("alibi", dim)
    if params.get("heads") is None:
        raise ParameterError("missing {heads}", hint="pass e.g. {heads=8}")
    heads = positive_int("heads", params["heads"])
    if params.get("total_heads") is not None:  # x-transformers pads with unbiased heads
        heads = max(heads, positive_int("total_heads", params["total_heads"]))
    head = params.get("head")
    if head is not None:
        head_index(head, heads)
    if params.get("part") == "slopes":
        if head is not None:
            raise ParameterError("{head} picks one bias matrix, not a slope", hint="drop {head} with {part=slopes}")
        return Sizes(length, None, (heads,))
    if length is None:
        raise ParameterError("missing {length}", hint="e.g. {length=128}")
    length = positive_int("length", length)
    return Sizes(length, None, (length, length) if head is not None else (heads, length, length))


def query_key_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """A relative bias of one head: a (len, len) matrix of query × key, no ``dim``.

    >>> query_key_sizes(5, None, {}).shape
    (5, 5)
    """
    if dim is not None:
        raise ParameterError("a relative bias has no {dim} (it is len × len)", hint="drop {dim}")
    if length is None:
        raise ParameterError("missing {length}", hint="e.g. {length=128}")
    length = positive_int("length", length)
    return Sizes(length, None, (length, length))


def t5_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """T5: the (len, len) bucket matrix, or the (heads, len, len) bias of the table ``bias_from`` holds.

    >>> t5_sizes(5, None, {"part": None}).shape
    (5, 5)
    """
    no_dim("t5", dim)
    if length is None:
        raise ParameterError("missing {length}", hint="e.g. {length=128}")
    length = positive_int("length", length)
    if params.get("part") != "bias":
        return Sizes(length, None, (length, length))
    if params.get("bias_from") is None:
        raise ParameterError("{part=bias} needs the learned table", hint="pass {bias_from=t5.safetensors}")
    from pecli.schemes.t5 import t5_bias_weight

    weight = t5_bias_weight(params["bias_from"], params.get("num_buckets", 32), params.get("bias_key"))
    return Sizes(length, None, (weight.shape[1], length, length))


def axial_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """One row per grid token; ``--len`` may repeat the count.

    >>> axial_sizes(None, 8, {"grid": "2,3"}).shape
    (6, 8)
    """
    tokens = math.prod(axial_grid(params.get("grid"), params.get("sections")))
    if length is not None and length != tokens:
        raise ParameterError(
            f"{{length={length}}} does not match {{grid={params['grid']}}}, which has {tokens} tokens",
            hint="drop {length}: the grid sets it",
        )
    if dim is None:
        raise ParameterError("missing {dim}", hint="e.g. {dim=64} (the head dimension)")
    return Sizes(tokens, positive_int("dim", dim), (tokens, dim))
