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
