"""Independent float64 re-implementations of the public conventions, written from their sources.

Each follows its source's own arithmetic (loops, np.power, exp-of-log) so that the tests
cross-check pecli's shared angle engine against the formulas as each code base writes them.
"""

from __future__ import annotations

import math

import numpy as np


def vaswani(positions, d, base=10000.0):
    """Vaswani et al. §3.5, literally: PE[p, 2k] = sin(p / base^(2k/d)), PE[p, 2k+1] = cos(...)."""
    table = np.zeros((len(positions), d))
    for row, p in enumerate(positions):
        for j in range(d):
            angle = p / base ** (2 * (j // 2) / d)
            table[row, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return table


def pytorch_tutorial(length, d):
    """pytorch/tutorials PositionalEncoding, in float64 instead of float32."""
    position = np.arange(length, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, d, 2, dtype=np.float64) * (-math.log(10000.0) / d))
    pe = np.zeros((length, d))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def xlm_distilbert(length, d):
    """transformers' create_sinusoidal_embeddings (DistilBERT, XLM)."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / d) for j in range(d)] for pos in range(length)])
    out = np.zeros((length, d))
    out[:, 0::2] = np.sin(enc[:, 0::2])
    out[:, 1::2] = np.cos(enc[:, 1::2])
    return out


def marian(length, d):
    """transformers' MarianSinusoidalPositionalEmbedding._init_weight."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / d) for j in range(d)] for pos in range(length)])
    out = np.zeros((length, d))
    sentinel = d // 2 if d % 2 == 0 else d // 2 + 1
    out[:, :sentinel] = np.sin(enc[:, 0::2])
    out[:, sentinel:] = np.cos(enc[:, 1::2])
    return out


def tensor2tensor(length, d, min_timescale=1.0, max_timescale=1.0e4, start_index=0):
    """tensor2tensor get_timing_signal_1d."""
    position = np.arange(length, dtype=np.float64) + start_index
    num_timescales = d // 2
    increment = math.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv_timescales = min_timescale * np.exp(np.arange(num_timescales, dtype=np.float64) * -increment)
    scaled = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)
    return np.pad(signal, [[0, 0], [0, d % 2]])


def fairseq(num_tokens, d, padding_idx=1):
    """fairseq SinusoidalPositionalEmbedding: get_embedding rows for make_positions' positions."""
    num_embeddings = num_tokens + padding_idx + 1
    half_dim = d // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=np.float64) * -emb)
    emb = np.arange(num_embeddings, dtype=np.float64)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1)
    if d % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1))], axis=1)
    emb[padding_idx, :] = 0
    positions = np.arange(num_tokens) + padding_idx + 1  # make_positions
    return emb[positions]


def guided_diffusion(timesteps, dim, max_period=10000):
    """guided-diffusion / latent-diffusion timestep_embedding."""
    half = dim // 2
    freqs = np.exp(-math.log(max_period) * np.arange(half, dtype=np.float64) / half)
    args = np.asarray(timesteps, dtype=np.float64)[:, None] * freqs[None]
    embedding = np.concatenate([np.cos(args), np.sin(args)], axis=-1)
    if dim % 2:
        embedding = np.concatenate([embedding, np.zeros_like(embedding[:, :1])], axis=-1)
    return embedding


def diffusers(timesteps, embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1, scale=1, max_period=10000):
    """diffusers get_timestep_embedding."""
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * np.arange(half_dim, dtype=np.float64)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = np.asarray(timesteps, dtype=np.float64)[:, None] * np.exp(exponent)[None, :]
    emb = scale * emb
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    if flip_sin_to_cos:
        emb = np.concatenate([emb[:, half_dim:], emb[:, :half_dim]], axis=-1)
    if embedding_dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb


# ---------------------------------------------------------------------------------------------
# RoPE, ALiBi, 2-D sin-cos, NeRF, random Fourier features, CoordConv


def hf_rope_default(base, dim):
    """transformers _compute_default_rope_parameters: 1 / base^(arange(0, dim, 2) / dim)."""
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def hf_rope_linear(base, dim, factor):
    """transformers _compute_linear_scaling_rope_parameters."""
    return hf_rope_default(base, dim) / factor


def hf_rope_dynamic(base, dim, factor, seq_len, max_position_embeddings):
    """transformers _compute_dynamic_ntk_parameters (seq_len at least the original context)."""
    seq_len = max(seq_len, max_position_embeddings)
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return hf_rope_default(base, dim), base


def hf_rope_yarn(base, dim, factor, original_max_position_embeddings, beta_fast=32, beta_slow=1):
    """transformers _compute_yarn_parameters (truncate=True): (inv_freq, attention_factor)."""
    attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0

    def find_correction_dim(num_rotations):
        return (dim * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(find_correction_dim(beta_fast)), 0)
    high = min(math.ceil(find_correction_dim(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    extrapolation_factor = 1 - ramp
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (1.0 / pos_freqs) * extrapolation_factor
    return inv_freq, attention_factor


def hf_rope_llama3(base, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    """transformers _compute_llama3_parameters, loop by loop as the original Meta code wrote it."""
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new = []
    for freq in hf_rope_default(base, dim):
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new.append(freq)
        elif wavelen > low_freq_wavelen:
            new.append(freq / factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new.append((1 - smooth) * freq / factor + smooth * freq)
    return np.array(new)


def llama_rotate(q, positions, inv_freq):
    """HF Llama: emb = cat(freqs, freqs); q·cos + rotate_half(q)·sin, rotate_half = cat(−x2, x1)."""
    freqs = np.outer(positions, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    half = q.shape[-1] // 2
    rotated = np.concatenate([-q[..., half:], q[..., :half]], axis=-1)
    return q * np.cos(emb) + rotated * np.sin(emb)


def meta_rotate(q, positions, inv_freq):
    """Meta llama apply_rotary_emb (GPT-J pairs): view adjacent pairs as complex, times polar(1, freqs)."""
    pairs = q.reshape(*q.shape[:-1], -1, 2)
    z = (pairs[..., 0] + 1j * pairs[..., 1]) * np.exp(1j * np.outer(positions, inv_freq))
    return np.stack([z.real, z.imag], axis=-1).reshape(q.shape)


def alibi_get_slopes(n):
    """ofirpress/attention_with_linear_biases get_slopes, as written."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    extra = alibi_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    return get_slopes_power_of_2(closest_power_of_2) + extra


def _mae_1d(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=np.float64) / (embed_dim / 2.0)
    omega = 1.0 / 10000**omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def mae_2d(embed_dim, grid_h, grid_w, cls_token=False):
    """facebookresearch/mae util/pos_embed.py get_2d_sincos_pos_embed (generalised to H ≠ W)."""
    grid = np.meshgrid(np.arange(grid_w, dtype=np.float64), np.arange(grid_h, dtype=np.float64))
    emb_h = _mae_1d(embed_dim // 2, grid[0])  # MAE's "emb_h" is built from grid[0], the w coordinate
    emb_w = _mae_1d(embed_dim // 2, grid[1])
    pos_embed = np.concatenate([emb_h, emb_w], axis=1)
    if cls_token:
        pos_embed = np.concatenate([np.zeros([1, embed_dim]), pos_embed], axis=0)
    return pos_embed


def diffusers_2d(embed_dim, grid_h, grid_w, base_size=16, interpolation_scale=1.0):
    """diffusers get_2d_sincos_pos_embed (numpy version)."""
    h = np.arange(grid_h, dtype=np.float64) / (grid_h / base_size) / interpolation_scale
    w = np.arange(grid_w, dtype=np.float64) / (grid_w / base_size) / interpolation_scale
    grid = np.meshgrid(w, h)
    return np.concatenate([_mae_1d(embed_dim // 2, grid[0]), _mae_1d(embed_dim // 2, grid[1])], axis=1)


def timm_2d(feat_shape, dim, temperature=10000.0):
    """timm build_sincos2d_pos_embed defaults (reverse_coord=False, interleave_sin_cos=False)."""
    pos_dim = dim // 4
    bands = 1.0 / (temperature ** (np.arange(0, pos_dim, dtype=np.float64) / pos_dim))
    coords = np.stack(np.meshgrid(*[np.arange(s, dtype=np.float64) for s in feat_shape], indexing="ij"))
    grid = coords.reshape(2, -1).T[:, :, None] * bands[None, None, :]  # (N, 2, pos_dim)
    return np.stack([np.sin(grid), np.cos(grid)], axis=1).reshape(grid.shape[0], -1)


def nerf_embed(x, multires, include_input=True, log_sampling=True):
    """nerf-pytorch run_nerf_helpers.py Embedder: [x?, sin(f0 x), cos(f0 x), sin(f1 x), …]."""
    max_freq = multires - 1
    if log_sampling:
        freq_bands = 2.0 ** np.linspace(0.0, max_freq, multires)
    else:
        freq_bands = np.linspace(2.0**0.0, 2.0**max_freq, multires)
    fns = [lambda v: v] if include_input else []
    for freq in freq_bands:
        for p_fn in (np.sin, np.cos):
            fns.append(lambda v, p_fn=p_fn, freq=freq: p_fn(v * freq))
    return np.concatenate([fn(x[:, None]) for fn in fns], axis=-1)


def tancik_input_mapping(x, b):
    """Tancik et al.'s demo: x_proj = (2π·x) @ B.T; [sin(x_proj), cos(x_proj)]."""
    x_proj = (2.0 * np.pi * x[:, None]) @ b[None, :]
    return np.concatenate([np.sin(x_proj), np.cos(x_proj)], axis=-1)


def add_coords(x_dim, y_dim, with_r=False):
    """CoordConv AddCoords (mkocabas' PyTorch port of Uber's), channels-last for one image."""
    xx = np.repeat(np.arange(x_dim, dtype=np.float64)[:, None], y_dim, axis=1) / (x_dim - 1) * 2 - 1
    yy = np.repeat(np.arange(y_dim, dtype=np.float64)[None, :], x_dim, axis=0) / (y_dim - 1) * 2 - 1
    channels = [xx, yy]
    if with_r:
        channels.append(np.sqrt((xx - 0.5) ** 2 + (yy - 0.5) ** 2))
    return np.stack(channels, axis=-1).reshape(x_dim * y_dim, -1)


def uber_add_coords(x_dim, y_dim, with_r=True):
    """uber-research/CoordConv CoordConv.py AddCoords.call, op by op in numpy: (x_dim·y_dim, 2 or 3) row-major."""
    xx_channel = np.ones((x_dim, 1)) @ np.arange(y_dim)[None, :]  # matmul(xx_ones, xx_range)
    yy_channel = np.arange(x_dim)[:, None] @ np.ones((1, y_dim))  # matmul(yy_range, yy_ones)
    xx_channel = xx_channel / (x_dim - 1) * 2 - 1
    yy_channel = yy_channel / (y_dim - 1) * 2 - 1
    channels = [xx_channel, yy_channel] + ([np.sqrt(xx_channel**2 + yy_channel**2)] if with_r else [])
    return np.stack(channels, axis=-1).reshape(x_dim * y_dim, -1)


def llama3_rope_freqs(base: float, dim: int, factor: float, low: float, high: float, old: int) -> np.ndarray:
    """llama.cpp's ``rope_freqs`` for Llama 3.1's scaling, as convert_hf_to_gguf.py's
    LlamaModel.generate_extra_tensors writes it: one divisor per rotated pair, in float32."""
    freqs = 1.0 / (np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / float(freq)
        if wavelen < old / high:
            factors.append(1.0)
        elif wavelen > old / low:
            factors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)
