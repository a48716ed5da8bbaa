"""Axial RoPE over a grid of patches: 2-D (diffusers, HunyuanDiT) and Qwen2-VL's multimodal sections.

Two conventions, chosen by ``sections``:

* unset — diffusers' ``get_2d_rotary_pos_embed(embed_dim, ((0, 0), (H, W)), (H, W), use_real=True)``
  (huggingface/diffusers src/diffusers/models/embeddings.py, get_2d_rotary_pos_embed and
  get_2d_rotary_pos_embed_from_grid): the first d/2 columns are a d/2-wide RoPE of the token's
  column w, the last d/2 one of its row h (``np.meshgrid(grid_w, grid_h)`` puts w first),
  each pair interleaved (get_1d_rotary_pos_embed's ``repeat_interleave_real=True``), with
  θ_i = base^(−2i/(d/2)). ``grid_indexing="ij"`` puts the row h first: timm's
  ``build_rotary_pos_embed(feat_shape, dim=d, in_pixels=False)`` (huggingface/pytorch-image-models
  timm/layers/pos_embed_sincos.py; EVA-02's ``RotaryEmbeddingCat``), whose ``grid_indexing="xy"``
  is diffusers' order.
* ``t,h,w`` — Qwen2-VL's M-RoPE (huggingface/transformers src/transformers/models/qwen2_vl/
  modeling_qwen2_vl.py, Qwen2VLRotaryEmbedding.recomposition_frequencies and get_rope_index): the
  head's d/2 frequencies θ_k = base^(−2k/d) are split into sections of t, h and w frequencies
  (Qwen2-VL: 16,24,24 of 64); frequency k turns with its section's coordinate of the token, and
  the angles are placed as HF's cat(freqs, freqs) (``layout=half``). A ``T,H,W`` grid is a video,
  ``H,W`` one image (t = 0).

Tokens are row-major over the grid (t, then h, then w); ``offset`` is added to every coordinate
(Qwen2-VL's text tokens before the image).

>>> rope2d_table(None, 8, grid="2,2", part="angle", dtype="float64")[3].tolist()  # token (h=1, w=1)
[1.0, 1.0, 0.01, 0.01, 1.0, 1.0, 0.01, 0.01]
>>> rope2d_table(None, 8, grid="2,3", part="angle", grid_indexing="ij", dtype="float64")[2].tolist()  # (0, 2)
[0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 0.02, 0.02]
>>> # token 5 is (t=0, h=1, w=2); frequencies 1 and 0.1 turn with t, 0.01 with h, 0.001 with w
>>> rope2d_table(None, 8, grid="1,2,3", sections="2,1,1", part="angle", dtype="float64")[5].round(4).tolist()
[0.0, 0.0, 0.01, 0.002, 0.0, 0.0, 0.01, 0.002]
"""

from __future__ import annotations

import numpy as np

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import place_pairs
from pecli.schemes.checks import axial_grid, choice, finite_above, integer, mrope_sections, positive_int, row_range

__all__ = ["rope2d_table"]


def rope2d_table(
    length: int | None,
    dim: int,
    *,
    grid: object = None,
    base: float = 10000.0,
    layout: str | None = None,
    part: str = "cos",
    sections: object = None,
    offset: int = 0,
    grid_indexing: str | None = None,
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """One (tokens, d) axial RoPE table: ``cos``, ``sin`` or the ``angle``, for the grid's tokens.

    Args:
        length: the token count (optional; the grid sets it).
        dim: head dimension: a multiple of 4 (2-D), even with ``sections``.
        grid: ``H,W`` (or ``T,H,W`` with ``sections``).
        base: θ base (10000).
        layout: ``interleaved`` (diffusers' default) or ``half`` (Qwen2-VL's default, HF's rotate_half).
        part: ``cos``, ``sin`` or ``angle``.
        sections: Qwen2-VL's mrope_section ``t,h,w`` (frequency counts summing to d/2); unset: 2-D axial.
        offset: added to every coordinate (text tokens before the image).
        grid_indexing: 2-D only: ``xy`` (unset) the column w's RoPE first (diffusers; timm's
            ``grid_indexing="xy"``), ``ij`` the row h's first (timm's default ``grid_indexing="ij"``).
        dtype: output dtype; float64 angles, rounded once.
        rows: compute only these tokens.

    Example:
        >>> rope2d_table(None, 4, grid="1,2", part="sin", dtype="float64").round(6).tolist()
        [[0.0, 0.0, 0.0, 0.0], [0.841471, 0.841471, 0.0, 0.0]]
    """
    sides = axial_grid(grid, sections)
    part = choice("part", part, ("cos", "sin", "angle"), scheme="rope2d")
    base = finite_above("base", base, 1.0, example="10000")
    offset = integer("offset", offset)
    dim = positive_int("dim", dim)
    tokens = int(np.prod(sides))
    rows = row_range(rows, tokens, per_row=dim, hint="use a smaller {grid} or {dim}")
    # the row-major coordinates of each token: (h, w), or (t, h, w)
    coordinates = np.stack(np.unravel_index(np.arange(rows.start, rows.stop), sides), axis=1).astype(np.float64)
    coordinates += offset
    if sections is None:
        if dim % 4:
            raise ParameterError(
                f"rope2d needs {{dim}} divisible by 4 (two axes of pairs), got {dim}", hint="pass e.g. {dim=64}"
            )
        layout = choice("layout", layout or "interleaved", ("interleaved", "half"), scheme="rope2d")
        first, second = (0, 1) if choice("grid_indexing", grid_indexing or "xy", ("xy", "ij")) == "ij" else (1, 0)
        half = dim // 2
        inv_freq = base ** (-np.arange(0, half, 2, dtype=np.float64) / half)
        axes = np.concatenate([np.full(half // 2, first), np.full(half // 2, second)])  # xy: w, then h
        blocks = [(slice(0, half), axes[: half // 2]), (slice(half, dim), axes[half // 2 :])]
        freqs = np.concatenate([inv_freq, inv_freq])
    else:
        if dim % 2:
            raise ParameterError(
                f"rope2d needs an even {{dim}} (it rotates pairs), got {dim}", hint="pass e.g. {dim=128}"
            )
        if grid_indexing is not None:
            raise ParameterError(
                "{grid_indexing} orders the two axes of the 2-D table; {sections} gives each frequency its axis",
                hint="drop {grid_indexing}",
            )
        counts = mrope_sections(sections, dim)
        layout = choice("layout", layout or "half", ("interleaved", "half"), scheme="rope2d")
        freqs = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
        axes = np.repeat(np.arange(3), counts)  # t, h, w frequencies
        blocks = [(slice(0, dim), axes)]
    angles = coordinates[:, axes] * freqs
    table = np.empty((len(rows), dim), dtype=np.float64)
    placement = "split" if layout == "half" else "interleaved"
    start = 0
    for columns, block_axes in blocks:
        block = angles[:, start : start + len(block_axes)]
        start += len(block_axes)
        values = block if part == "angle" else np.cos(block) if part == "cos" else np.sin(block)
        place_pairs(table[:, columns], values, values, layout=placement)
    return round_to(table, dtype)
