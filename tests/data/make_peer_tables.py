"""Write the peer corpus: position tables computed by the real libraries, with their provenance.

Each table is saved as the library computes it (float32, its own shape) to ``tests/data/peers/NAME.npy``;
``tests/data/peers/PROVENANCE.json`` records, per table, the library and its version, the exact call,
and what ``pecli identify`` should answer: the ``pecli generate``/``pecli timestep`` command that
reproduces it, ``random`` (a learned or Gaussian table), or ``not yet supported: …`` (a convention
pecli lacks). The tables are committed, so the tests never import these libraries.

Run it in a venv that has them (torch 2.13 CPU, transformers, diffusers, timm, x-transformers,
positional-encodings, rotary-embedding-torch, vit-pytorch)::

    /work/venvs/peers/bin/python tests/data/make_peer_tables.py

A library that does not import is skipped with a note; its old tables and records stay. Names on the
command line write those tables only (the others, and their records, stay as they are)::

    /work/venvs/peers/bin/python tests/data/make_peer_tables.py x_transformers_rotary_base500_193x20
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import math
import sys
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np

PEERS = Path(__file__).resolve().parent / "peers"
#: (name, distribution, exact call, expectation, function returning the table)
TABLES: list[tuple[str, str, str, str, Callable[[], object]]] = []


def peer(name: str, distribution: str, call: str, expect: str) -> Callable:
    """Register a table: ``expect`` is a pecli command, ``random`` or ``not yet supported: …``."""

    def register(function: Callable[[], object]) -> Callable[[], object]:
        TABLES.append((name, distribution, call, expect, function))
        return function

    return register


def _timm_sincos():
    """timm's pos_embed_sincos without importing timm (its package import needs torchvision)."""
    if "timm.layers.pos_embed_sincos" in sys.modules:
        return sys.modules["timm.layers.pos_embed_sincos"]
    found = importlib.util.find_spec("timm")
    if found is None:
        raise ImportError("No module named 'timm'")
    root = Path(found.submodule_search_locations[0]) / "layers"
    for package in ("timm", "timm.layers"):
        module = types.ModuleType(package)
        module.__path__ = [str(root if package == "timm.layers" else root.parent)]
        sys.modules.setdefault(package, module)
    return importlib.import_module("timm.layers.pos_embed_sincos")


def _llama_rope(part: str, length: int, max_positions: int, **rope_parameters):
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=4,
        head_dim=64,
        max_position_embeddings=max_positions,
        rope_parameters={"rope_theta": 10000.0, "rope_type": "default", **rope_parameters},
    )
    rotary = LlamaRotaryEmbedding(config)
    cos, sin = rotary(torch.zeros(1, length, 64), torch.arange(length)[None])
    return cos if part == "cos" else sin


# --- huggingface/transformers: sinusoidal position embeddings -----------------------------------


@peer(
    "marian_128x64",
    "transformers",
    "MarianSinusoidalPositionalEmbedding(128, 64).create_weight()",
    "pecli generate --preset marian --d 64 --len 128 -o pe.npy",
)
def marian():
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    return MarianSinusoidalPositionalEmbedding(128, 64).create_weight()


@peer(
    "m2m100_padding1_rows2on_128x64",
    "transformers",
    "M2M100SinusoidalPositionalEmbedding(128, 64, padding_idx=1).weights[2:]",
    "pecli generate --preset fairseq --d 64 --len 128 -o pe.npy",
)
def m2m100_rows():
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    return M2M100SinusoidalPositionalEmbedding(128, 64, padding_idx=1).weights[2:]


@peer(
    "m2m100_padding1_full_130x64",
    "transformers",
    "M2M100SinusoidalPositionalEmbedding(128, 64, padding_idx=1).weights",
    "pecli generate --preset fairseq --offset 0 --padding-idx 1 --d 64 --len 130 -o pe.npy",
)
def m2m100_full():
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    return M2M100SinusoidalPositionalEmbedding(128, 64, padding_idx=1).weights


@peer(
    "speech2text_padding1_rows2on_96x32",
    "transformers",
    "Speech2TextSinusoidalPositionalEmbedding(96, 32, padding_idx=1).weights[2:]",
    "pecli generate --preset fairseq --d 32 --len 96 -o pe.npy",
)
def speech2text():
    from transformers.models.speech_to_text.modeling_speech_to_text import Speech2TextSinusoidalPositionalEmbedding

    return Speech2TextSinusoidalPositionalEmbedding(96, 32, padding_idx=1).weights[2:]


@peer(
    "whisper_sinusoids_256x64",
    "transformers",
    "transformers.models.whisper.modeling_whisper.sinusoids(256, 64)",
    "pecli generate --preset tensor2tensor --d 64 --len 256 -o pe.npy",
)
def whisper():
    from transformers.models.whisper.modeling_whisper import sinusoids

    return sinusoids(256, 64)


@peer(
    "distilbert_create_sinusoidal_embeddings_128x64",
    "transformers",
    "create_sinusoidal_embeddings(128, 64, out=torch.empty(128, 64))",
    "pecli generate --preset distilbert --d 64 --len 128 -o pe.npy",
)
def distilbert():
    import torch
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    out = torch.empty(128, 64)
    create_sinusoidal_embeddings(128, 64, out=out)
    return out


# --- huggingface/transformers: Llama's rotary embedding and its scalings -------------------------

for _part in ("cos", "sin"):
    peer(
        f"llama_rope_{_part}_base10000_128x64",
        "transformers",
        f"LlamaRotaryEmbedding(LlamaConfig(head_dim=64, rope_theta=10000))(x, arange(128)) -> {_part}",
        f"pecli generate rope --part {_part} --d 64 --len 128 -o pe.npy",
    )(lambda part=_part: _llama_rope(part, 128, 128))
peer(
    "llama_rope_cos_base500000_128x64",
    "transformers",
    "LlamaRotaryEmbedding(LlamaConfig(head_dim=64, rope_theta=500000))(x, arange(128)) -> cos",
    "pecli generate rope --part cos --base 500000 --d 64 --len 128 -o pe.npy",
)(lambda: _llama_rope("cos", 128, 128, rope_theta=500000.0))
peer(
    "llama_rope_cos_linear4_128x64",
    "transformers",
    "LlamaRotaryEmbedding(rope_parameters={rope_type: linear, factor: 4})(x, arange(128)) -> cos",
    "pecli generate rope --part cos --scaling linear --factor 4 --d 64 --len 128 -o pe.npy",
)(lambda: _llama_rope("cos", 128, 128, rope_type="linear", factor=4.0))
peer(
    "llama_rope_cos_dynamic2_orig64_128x64",
    "transformers",
    "LlamaRotaryEmbedding(max_position_embeddings=64, rope_parameters={rope_type: dynamic, factor: 2})"
    "(x, arange(128)) -> cos",
    "pecli generate rope --part cos --scaling dynamic --factor 2 --original-max-position 64 --d 64 --len 128 -o pe.npy",
)(lambda: _llama_rope("cos", 128, 64, rope_type="dynamic", factor=2.0))
peer(
    "llama_rope_cos_yarn4_orig32_128x64",
    "transformers",
    "LlamaRotaryEmbedding(max_position_embeddings=128, rope_parameters={rope_type: yarn, factor: 4, "
    "original_max_position_embeddings: 32})(x, arange(128)) -> cos",
    "pecli generate rope --part cos --scaling yarn --factor 4 --original-max-position 32 --apply-attention-factor "
    "--d 64 --len 128 -o pe.npy",
)(lambda: _llama_rope("cos", 128, 128, rope_type="yarn", factor=4.0, original_max_position_embeddings=32))
peer(
    "llama_rope_cos_llama3_128x64",
    "transformers",
    "LlamaRotaryEmbedding(rope_parameters={rope_type: llama3, rope_theta: 500000, factor: 8, low_freq_factor: 1, "
    "high_freq_factor: 4, original_max_position_embeddings: 8192})(x, arange(128)) -> cos",
    "pecli generate rope --part cos --base 500000 --scaling llama3 --factor 8 --low-freq-factor 1 "
    "--high-freq-factor 4 --original-max-position 8192 --d 64 --len 128 -o pe.npy",
)(
    lambda: _llama_rope(
        "cos",
        128,
        65536,
        rope_type="llama3",
        rope_theta=500000.0,
        factor=8.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=8192,
    )
)


# --- ALiBi --------------------------------------------------------------------------------------


@peer(
    "bloom_alibi_8heads_64",
    "transformers",
    "transformers.models.bloom.modeling_bloom.build_alibi_tensor(torch.ones(1, 64), 8, torch.float32)",
    "pecli generate alibi --form key --heads 8 --len 64 -o pe.npy",
)
def bloom_alibi():
    import torch
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    return build_alibi_tensor(torch.ones(1, 64), 8, torch.float32)


@peer(
    "mpt_alibi_8heads_64",
    "transformers",
    "transformers.models.mpt.modeling_mpt.build_mpt_alibi_tensor(8, 64)",
    "pecli generate alibi --heads 8 --len 64 -o pe.npy",
)
def mpt_alibi():
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    return build_mpt_alibi_tensor(8, 64)


@peer(
    "x_transformers_alibi_8heads_32x32",
    "x-transformers",
    "AlibiPositionalBias(heads=8, total_heads=8)(32, 32)",
    "pecli generate alibi --heads 8 --len 32 -o pe.npy",
)
def x_transformers_alibi():
    from x_transformers.x_transformers import AlibiPositionalBias

    return AlibiPositionalBias(heads=8, total_heads=8)(32, 32)


# --- huggingface/diffusers ---------------------------------------------------------------------


@peer(
    "diffusers_get_timestep_embedding_default_128x64",
    "diffusers",
    "get_timestep_embedding(torch.arange(128), 64)",
    "pecli generate --preset diffusers sinusoidal --d 64 --len 128 -o pe.npy",
)
def diffusers_default():
    import torch
    from diffusers.models.embeddings import get_timestep_embedding

    return get_timestep_embedding(torch.arange(128), 64)


@peer(
    "diffusers_get_timestep_embedding_flip_shift0_128x64",
    "diffusers",
    "get_timestep_embedding(torch.arange(128), 64, flip_sin_to_cos=True, downscale_freq_shift=0)",
    "pecli generate --preset guided-diffusion sinusoidal --d 64 --len 128 -o pe.npy",
)
def diffusers_flip():
    import torch
    from diffusers.models.embeddings import get_timestep_embedding

    return get_timestep_embedding(torch.arange(128), 64, flip_sin_to_cos=True, downscale_freq_shift=0)


FRACTIONAL_T = (0.0, 0.5, 1.25, 17.75, 99.5, 250.0, 333.3, 500.125, 998.39, 999.0)


@peer(
    "diffusers_get_timestep_embedding_fractional_t_10x32",
    "diffusers",
    f"get_timestep_embedding(torch.tensor({list(FRACTIONAL_T)}), 32)",
    "pecli timestep " + " ".join(map(str, FRACTIONAL_T)) + " --dim 32 --preset diffusers -o t.npy",
)
def diffusers_fractional():
    import torch
    from diffusers.models.embeddings import get_timestep_embedding

    return get_timestep_embedding(torch.tensor(FRACTIONAL_T), 32)


@peer(
    "diffusers_timesteps_module_256_t0to999step37",
    "diffusers",
    "Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0)(torch.arange(0, 1000, 37))",
    "pecli timestep --range 0:1000:37 --dim 256 -o t.npy",
)
def diffusers_timesteps():
    import torch
    from diffusers.models.embeddings import Timesteps

    return Timesteps(256, True, 0)(torch.arange(0, 1000, 37))


@peer(
    "diffusers_timesteps_module_320_first128",
    "diffusers",
    "Timesteps(320, flip_sin_to_cos=True, downscale_freq_shift=0)(torch.arange(128))",
    "pecli generate --preset guided-diffusion sinusoidal --d 320 --len 128 -o pe.npy",
)
def diffusers_timesteps_320():
    import torch
    from diffusers.models.embeddings import Timesteps

    return Timesteps(320, True, 0)(torch.arange(128))


@peer(
    "diffusers_2d_sincos_8x8_d64",
    "diffusers",
    "get_2d_sincos_pos_embed(64, 8, output_type='pt')",
    "pecli generate --preset diffusers sincos2d --grid 8,8 --d 64 -o pe.npy",
)
def diffusers_2d():
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    return get_2d_sincos_pos_embed(64, 8, output_type="pt")


@peer(
    "diffusers_2d_sincos_8x8_d64_cls",
    "diffusers",
    "get_2d_sincos_pos_embed(64, 8, cls_token=True, extra_tokens=1, output_type='pt')",
    "pecli generate --preset diffusers sincos2d --grid 8,8 --cls-token --d 64 -o pe.npy",
)
def diffusers_2d_cls():
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    return get_2d_sincos_pos_embed(64, 8, cls_token=True, extra_tokens=1, output_type="pt")


@peer(
    "diffusers_2d_sincos_8x8_d64_extra2",
    "diffusers",
    "get_2d_sincos_pos_embed(64, 8, cls_token=True, extra_tokens=2, output_type='pt')",
    "pecli generate --preset diffusers sincos2d --grid 8,8 --cls-token --extra-tokens 2 --d 64 -o pe.npy",
)
def diffusers_2d_extra():
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    return get_2d_sincos_pos_embed(64, 8, cls_token=True, extra_tokens=2, output_type="pt")


# --- timm, vit-pytorch ------------------------------------------------------------------------


@peer(
    "timm_build_sincos2d_pos_embed_8x8_d64",
    "timm",
    "timm.layers.pos_embed_sincos.build_sincos2d_pos_embed([8, 8], dim=64)",
    "pecli generate --preset timm sincos2d --grid 8,8 --d 64 -o pe.npy",
)
def timm_sincos():
    return _timm_sincos().build_sincos2d_pos_embed([8, 8], dim=64)


@peer(
    "timm_build_sincos2d_pos_embed_6x10_d32",
    "timm",
    "timm.layers.pos_embed_sincos.build_sincos2d_pos_embed([6, 10], dim=32)",
    "pecli generate --preset timm sincos2d --grid 6,10 --d 32 -o pe.npy",
)
def timm_sincos_rect():
    return _timm_sincos().build_sincos2d_pos_embed([6, 10], dim=32)


@peer(
    "timm_build_sincos2d_pos_embed_interleaved_8x8_d64",
    "timm",
    "timm.layers.pos_embed_sincos.build_sincos2d_pos_embed([8, 8], dim=64, interleave_sin_cos=True)",
    "pecli generate --preset timm-interleaved --grid 8,8 --d 64 -o pe.npy",
)
def timm_sincos_interleaved():
    return _timm_sincos().build_sincos2d_pos_embed([8, 8], dim=64, interleave_sin_cos=True)


@peer(
    "vit_pytorch_posemb_sincos_2d_8x8_d64",
    "vit-pytorch",
    "vit_pytorch.simple_vit.posemb_sincos_2d(8, 8, 64)",
    "pecli generate --preset vit-pytorch --grid 8,8 --d 64 -o pe.npy",
)
def vit_pytorch_sincos():
    # vit_pytorch/__init__ imports torchvision; simple_vit.py alone needs only torch and einops
    path = Path(importlib.util.find_spec("vit_pytorch").submodule_search_locations[0]) / "simple_vit.py"
    spec = importlib.util.spec_from_file_location("simple_vit", path)
    simple_vit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(simple_vit)
    return simple_vit.posemb_sincos_2d(8, 8, 64)


# --- x-transformers, positional-encodings, rotary-embedding-torch ---------------------------------


@peer(
    "x_transformers_scaled_sinusoidal_128x64",
    "x-transformers",
    "ScaledSinusoidalEmbedding(64)(torch.zeros(1, 128, 64))",
    "pecli generate sinusoidal --layout split --amplitude 0.125 --d 64 --len 128 -o pe.npy",
)
def x_transformers_scaled():
    import torch
    from x_transformers.x_transformers import ScaledSinusoidalEmbedding

    return ScaledSinusoidalEmbedding(64)(torch.zeros(1, 128, 64)).detach()


@peer(
    "x_transformers_absolute_positional_embedding_128x64",
    "x-transformers",
    "torch.manual_seed(0); AbsolutePositionalEmbedding(64, 128).emb.weight",
    "random",
)
def x_transformers_absolute():
    import torch
    from x_transformers.x_transformers import AbsolutePositionalEmbedding

    torch.manual_seed(0)
    return AbsolutePositionalEmbedding(64, 128).emb.weight.detach()


@peer(
    "positional_encodings_1d_128x64",
    "positional-encodings",
    "PositionalEncoding1D(64)(torch.zeros(1, 128, 64))",
    "pecli generate --preset vaswani --d 64 --len 128 -o pe.npy",
)
def positional_encodings_1d():
    import torch
    from positional_encodings.torch_encodings import PositionalEncoding1D

    return PositionalEncoding1D(64)(torch.zeros(1, 128, 64))


@peer(
    "positional_encodings_2d_8x8_d64",
    "positional-encodings",
    "PositionalEncoding2D(64)(torch.zeros(1, 8, 8, 64)).reshape(1, 64, 64)",
    "pecli generate --preset positional-encodings --grid 8,8 --d 64 -o pe.npy",
)
def positional_encodings_2d():
    import torch
    from positional_encodings.torch_encodings import PositionalEncoding2D

    return PositionalEncoding2D(64)(torch.zeros(1, 8, 8, 64)).reshape(1, 64, 64)


@peer(
    "rotary_embedding_torch_angle_128x32",
    "rotary-embedding-torch",
    "RotaryEmbedding(dim=32)(torch.arange(128))",
    "pecli generate rope --part angle --layout interleaved --d 32 --len 128 -o pe.npy",
)
def rotary_embedding_torch_angle():
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    return RotaryEmbedding(dim=32)(torch.arange(128)).detach()


@peer(
    "rotary_embedding_torch_cos_base500000_128x32",
    "rotary-embedding-torch",
    "RotaryEmbedding(dim=32, theta=500000)(torch.arange(128)).cos()",
    "pecli generate rope --part cos --layout interleaved --base 500000 --d 32 --len 128 -o pe.npy",
)
def rotary_embedding_torch_cos():
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    return RotaryEmbedding(dim=32, theta=500000)(torch.arange(128)).detach().cos()


# seeded random parameters (issue 30): a base-500 RoPE that llama3's factor 2 leaves alone was named as
# that scaling; identify names the plain RoPE


@peer(
    "rotary_embedding_torch_angle_theta500_155x30",
    "rotary-embedding-torch",
    "RotaryEmbedding(dim=30, theta=500)(torch.arange(155))",
    "pecli generate rope --part angle --layout interleaved --base 500 --d 30 --len 155 -o pe.npy",
)
def rotary_embedding_torch_theta500():
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    return RotaryEmbedding(dim=30, theta=500)(torch.arange(155)).detach()


@peer(
    "x_transformers_rotary_base500_193x20",
    "x-transformers",
    "RotaryEmbedding(20, base=500).forward_from_seq_len(193)[0][0]",
    "pecli generate rope --part angle --layout interleaved --base 500 --d 20 --len 193 -o pe.npy",
)
def x_transformers_rotary_base500():
    from x_transformers.x_transformers import RotaryEmbedding

    return RotaryEmbedding(20, base=500).forward_from_seq_len(193)[0][0]


for _heads, _total, _length in ((6, 8, 68), (10, 18, 41)):
    peer(
        f"x_transformers_alibi_{_heads}heads_total{_total}_{_length}x{_length}",
        "x-transformers",
        f"AlibiPositionalBias(heads={_heads}, total_heads={_total})({_length}, {_length})",
        f"pecli generate alibi --heads {_heads} --total-heads {_total} --len {_length} -o pe.npy",
    )(
        lambda heads=_heads, total=_total, length=_length: __import__(
            "x_transformers.x_transformers", fromlist=["AlibiPositionalBias"]
        ).AlibiPositionalBias(heads=heads, total_heads=total)(length, length)
    )


# --- the seed articles' code, copied verbatim in spirit (torch float32 arithmetic) -----------------


@peer(
    "pytorch_tutorial_positional_encoding_2048x64",
    "torch",
    "pytorch/tutorials beginner_source/transformer_tutorial.py PositionalEncoding(64, max_len=2048).pe[:, 0]",
    "pecli generate --preset pytorch-tutorial --d 64 --len 2048 -o pe.npy",
)
def pytorch_tutorial():
    import torch

    d_model, max_len = 64, 2048
    position = torch.arange(max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, 1, d_model)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    return pe[:, 0]


@peer(
    "guided_diffusion_timestep_embedding_128x64",
    "torch",
    "openai/guided-diffusion guided_diffusion/nn.py timestep_embedding(torch.arange(128), 64)",
    "pecli generate --preset guided-diffusion sinusoidal --d 64 --len 128 -o pe.npy",
)
def guided_diffusion():
    import torch

    timesteps, dim, max_period = torch.arange(128), 64, 10000
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


@peer(
    "memn2n_position_encoding_20x16",
    "numpy",
    "Sukhbaatar et al. 2015 §4.1: l[j, k] = (1 − j/J) − (k/d)(1 − 2j/J), float32, J = 20, d = 16",
    "pecli generate memn2n --d 16 --len 20 -o pe.npy",
)
def memn2n():
    sentence, embedding = 20, 16
    j = np.arange(1, sentence + 1, dtype=np.float32)[:, None]
    k = np.arange(1, embedding + 1, dtype=np.float32)[None, :]
    return (1 - j / sentence) - (k / embedding) * (1 - 2 * j / sentence)


@peer(
    "binary_lsb_first_64x8",
    "numpy",
    "((np.arange(64)[:, None] >> np.arange(8)) & 1).astype(np.float32)",
    "pecli generate binary --d 8 --len 64 -o pe.npy",
)
def binary_lsb():
    return ((np.arange(64)[:, None] >> np.arange(8)) & 1).astype(np.float32)


@peer(
    "binary_msb_first_64x8",
    "numpy",
    "((np.arange(64)[:, None] >> np.arange(7, -1, -1)) & 1).astype(np.float32)",
    "pecli generate binary --bit-order msb --d 8 --len 64 -o pe.npy",
)
def binary_msb():
    return ((np.arange(64)[:, None] >> np.arange(7, -1, -1)) & 1).astype(np.float32)


# --- random tables ------------------------------------------------------------------------------


@peer(
    "nn_embedding_init_128x64",
    "torch",
    "torch.manual_seed(0); torch.nn.Embedding(128, 64).weight",
    "random",
)
def nn_embedding():
    import torch

    torch.manual_seed(0)
    return torch.nn.Embedding(128, 64).weight.detach()


@peer(
    "gaussian_std002_128x64",
    "torch",
    "torch.manual_seed(1); torch.randn(128, 64) * 0.02",
    "random",
)
def gaussian():
    import torch

    torch.manual_seed(1)
    return torch.randn(128, 64) * 0.02


# --- timm's axial RoPE (s9 diffrope: cross-check of build_rotary_pos_embed; one block, keep together) ---------


@peer(
    "timm_build_rotary_pos_embed_eva02_6x10_d64_cos",
    "timm",
    "timm.layers.pos_embed_sincos.build_rotary_pos_embed([6, 10], dim=64, in_pixels=False)[1]",
    "pecli generate --preset eva02 --grid 6,10 --part cos --d 64 -o pe.npy",
)
def timm_rope_eva02_cos():
    return _timm_sincos().build_rotary_pos_embed([6, 10], dim=64, in_pixels=False)[1]


@peer(
    "timm_build_rotary_pos_embed_eva02_9x4_d40_sin",
    "timm",
    "timm.layers.pos_embed_sincos.build_rotary_pos_embed([9, 4], dim=40, in_pixels=False)[0]",
    "pecli generate --preset eva02 --grid 9,4 --part sin --d 40 -o pe.npy",
)
def timm_rope_eva02_sin():
    return _timm_sincos().build_rotary_pos_embed([9, 4], dim=40, in_pixels=False)[0]


@peer(
    "timm_build_rotary_pos_embed_xy_5x19_d128_sin",
    "timm",
    "timm.layers.pos_embed_sincos.build_rotary_pos_embed([5, 19], dim=128, in_pixels=False, grid_indexing='xy')[0]",
    "pecli generate rope2d --grid 5,19 --part sin --d 128 -o pe.npy",
)
def timm_rope_xy_sin():
    return _timm_sincos().build_rotary_pos_embed([5, 19], dim=128, in_pixels=False, grid_indexing="xy")[0]


@peer(
    "timm_build_rotary_pos_embed_rotate_half_6x10_d64_cos",
    "timm",
    "timm.layers.pos_embed_sincos.build_rotary_pos_embed([6, 10], dim=64, in_pixels=False, rotate_half=True)[1]",
    "not yet supported: timm's rotate_half=True layout [h bands, w bands, h bands, w bands] "
    "(rope2d's 2-D --layout half is [h, h | w, w])",
)
def timm_rope_rotate_half_cos():
    return _timm_sincos().build_rotary_pos_embed([6, 10], dim=64, in_pixels=False, rotate_half=True)[1]


@peer(
    "timm_build_rotary_pos_embed_pixels_8x8_d64_cos",
    "timm",
    "timm.layers.pos_embed_sincos.build_rotary_pos_embed([8, 8], dim=64)[1]",
    "not yet supported: timm's in_pixels=True bands (linspace(-1, 1) grid, π·2^k bands up to max_res / 2)",
)
def timm_rope_pixels_cos():
    return _timm_sincos().build_rotary_pos_embed([8, 8], dim=64)[1]


@peer(
    "timm_rotary_embedding_cat_6x10_d64",
    "timm",
    "timm.layers.pos_embed_sincos.RotaryEmbeddingCat(64, in_pixels=False, feat_shape=[6, 10]).get_embed()",
    "not yet supported: RotaryEmbeddingCat's [sin | cos] in one (N, 2·d) table",
)
def timm_rope_cat():
    return _timm_sincos().RotaryEmbeddingCat(64, in_pixels=False, feat_shape=[6, 10]).get_embed()


@peer(
    "timm_build_fourier_pos_embed_8x8_bands16_sin",
    "timm",
    "timm.layers.pos_embed_sincos.build_fourier_pos_embed([8, 8], num_bands=16)[0].reshape(64, -1)",
    "not yet supported: timm's Fourier features of pixel coordinates (in_pixels=True, log-spaced π·2^k bands)",
)
def timm_fourier_sin():
    return _timm_sincos().build_fourier_pos_embed([8, 8], num_bands=16)[0].reshape(64, -1)


def _version(distribution: str) -> str:
    return importlib.metadata.version(distribution) if distribution != "numpy" else np.__version__


def main() -> None:
    PEERS.mkdir(exist_ok=True)
    record_path = PEERS / "PROVENANCE.json"
    records = json.loads(record_path.read_text()) if record_path.exists() else {}
    import torch

    wanted = set(sys.argv[1:])
    for name, distribution, call, expect, function in TABLES:
        if wanted and name not in wanted:
            continue
        try:
            value = function()
        except ImportError as error:
            print(f"skipped {name}: {error}", file=sys.stderr)
            continue
        array = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        np.save(PEERS / f"{name}.npy", array)
        records[name] = {
            "library": distribution,
            "version": _version(distribution),
            "torch": torch.__version__,
            "call": call,
            "shape": list(array.shape),
            "dtype": array.dtype.name,
            "expect": expect,
        }
    record_path.write_text(json.dumps(dict(sorted(records.items())), indent=1, ensure_ascii=False) + "\n")
    print(f"{len(records)} tables in {PEERS}")


if __name__ == "__main__":
    main()
