"""Write tests/data/conventions/: small tables the real libraries computed, for the conventions pecli adds.

Run with an environment that has torch, transformers, x-transformers, diffusers, vit-pytorch, timm
and positional-encodings (the tests need none of them):

    /work/venvs/conventions/bin/python tests/data/make_convention_tables.py

Each case becomes ``conventions/<name>.npy`` (float32: the libraries compute in float32) and an
entry in ``conventions/conventions.json`` recording the library and version, the exact call, and
the pecli parameters that must reproduce it (``tests/test_conventions.py`` reads them).
RoPE cases are HF's whole rotary embedding, ``LlamaRotaryEmbedding(config)(x, position_ids)``:
``[cos, sin]`` stacked, with the attention scaling and the dynamic (LongRoPE) frequency update.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "conventions"
HEAD_DIM = 32
PHI3_SHORT = [1.0 + 0.05 * i for i in range(HEAD_DIM // 2)]
PHI3_LONG = [1.0 + 0.5 * i for i in range(HEAD_DIM // 2)]

#: (name, rope_parameters, max_position_embeddings, first position, length, pecli parameters)
ROPE_CASES = [
    (
        "rope_longrope_short",
        {
            "rope_type": "longrope",
            "short_factor": PHI3_SHORT,
            "long_factor": PHI3_LONG,
            "original_max_position_embeddings": 64,
        },
        256,
        0,
        48,
        {
            "scaling": "longrope",
            "short_factor": PHI3_SHORT,
            "long_factor": PHI3_LONG,
            "original_max_position": 64,
            "factor": 4.0,
            "apply_attention_factor": True,
        },
    ),
    (
        "rope_longrope_long",
        {
            "rope_type": "longrope",
            "short_factor": PHI3_SHORT,
            "long_factor": PHI3_LONG,
            "original_max_position_embeddings": 64,
        },
        256,
        0,
        100,
        {
            "scaling": "longrope",
            "short_factor": PHI3_SHORT,
            "long_factor": PHI3_LONG,
            "original_max_position": 64,
            "factor": 4.0,
            "apply_attention_factor": True,
        },
    ),
    (
        "rope_yarn_no_truncate",
        {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64, "truncate": False},
        512,
        0,
        40,
        {
            "scaling": "yarn",
            "factor": 8.0,
            "original_max_position": 64,
            "truncate": False,
            "apply_attention_factor": True,
        },
    ),
    (
        "rope_yarn_mscale",
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 64,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
        },
        2560,
        0,
        40,
        {
            "scaling": "yarn",
            "factor": 40.0,
            "original_max_position": 64,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
            "apply_attention_factor": True,
        },
    ),
    (
        "rope_yarn_attention_factor",
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "attention_factor": 1.25},
        256,
        0,
        40,
        {
            "scaling": "yarn",
            "factor": 4.0,
            "original_max_position": 64,
            "attention_factor": 1.25,
            "apply_attention_factor": True,
        },
    ),
    (
        "rope_partial_rotary",
        {"rope_type": "linear", "factor": 1.0, "partial_rotary_factor": 0.5},
        256,
        0,
        40,
        {"partial_rotary_factor": 0.5},
    ),
    (
        "rope_proportional",
        {"rope_type": "proportional", "factor": 2.0, "partial_rotary_factor": 0.25},
        256,
        0,
        40,
        {"scaling": "proportional", "factor": 2.0, "partial_rotary_factor": 0.25},
    ),
    (
        "rope_offset_million",
        {"rope_type": "linear", "factor": 1.0},
        2_000_000,
        1_000_000,
        16,
        {"offset": 1_000_000},
    ),
]


def rope_cases(records: list[dict]) -> None:
    import torch
    import transformers
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    library = f"transformers {transformers.__version__}, torch {torch.__version__}"
    for name, rope_parameters, max_positions, start, length, pecli_params in ROPE_CASES:
        config = LlamaConfig(
            hidden_size=HEAD_DIM * 4,
            num_attention_heads=4,
            head_dim=HEAD_DIM,
            max_position_embeddings=max_positions,
            rope_parameters={"rope_theta": 10000.0, **rope_parameters},
        )
        positions = torch.arange(start, start + length)[None]
        cos, sin = LlamaRotaryEmbedding(config)(torch.zeros(1, length, HEAD_DIM), positions)
        table = torch.stack([cos[0], sin[0]]).numpy().astype(np.float32)
        call = (
            f"LlamaRotaryEmbedding(LlamaConfig(head_dim={HEAD_DIM}, max_position_embeddings={max_positions}, "
            f"rope_parameters={{'rope_theta': 10000.0, **{rope_parameters!r}}}))(x, position_ids="
            f"arange({start}, {start + length})[None]) -> stack([cos, sin])"
        )
        save(records, name, table, library, call, "rope", length, HEAD_DIM, pecli_params, parts=("cos", "sin"))


def sinusoidal_cases(records: list[dict]) -> None:
    import torch
    import transformers
    from transformers.models.fsmt.modeling_fsmt import SinusoidalPositionalEmbedding
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
    from x_transformers.x_transformers import ScaledSinusoidalEmbedding

    hf = f"transformers {transformers.__version__}, torch {torch.__version__}"
    fairseq_weight = {"layout": "split", "freq_shift": 1.0, "padding_idx": 1}
    for dim in (16, 15):
        weight = M2M100SinusoidalPositionalEmbedding.get_embedding(24, dim, padding_idx=1).numpy()
        call = f"M2M100SinusoidalPositionalEmbedding.get_embedding(24, {dim}, padding_idx=1)"
        save(records, f"m2m100_weight_d{dim}", weight, hf, call, "sinusoidal", 24, dim, fairseq_weight)
    fsmt = SinusoidalPositionalEmbedding.get_embedding(24, 16, padding_idx=1).numpy()
    call = "transformers.models.fsmt.modeling_fsmt.SinusoidalPositionalEmbedding.get_embedding(24, 16, padding_idx=1)"
    save(records, "fsmt_weight_d16", fsmt, hf, call, "sinusoidal", 24, 16, fairseq_weight)
    scaled = ScaledSinusoidalEmbedding(64)(torch.zeros(1, 20, 64)).detach().numpy()
    library = f"x-transformers {version('x-transformers')}, torch {torch.__version__}"
    call = "x_transformers.x_transformers.ScaledSinusoidalEmbedding(64)(torch.zeros(1, 20, 64))"
    params = {"layout": "split", "freq_shift": 0.0, "amplitude": 64**-0.5}
    save(records, "x_transformers_scaled_d64", scaled, library, call, "sinusoidal", 20, 64, params)


def alibi_cases(records: list[dict]) -> None:
    import torch
    import transformers
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor
    from x_transformers.x_transformers import AlibiPositionalBias

    bloom = build_alibi_tensor(torch.ones(1, 8), 12, torch.float32).numpy()  # (heads, 1, keys)
    library = f"transformers {transformers.__version__}, torch {torch.__version__}"
    call = "build_alibi_tensor(torch.ones(1, 8), num_heads=12, dtype=torch.float32), broadcast over 8 queries"
    table = np.broadcast_to(bloom, (12, 8, 8))
    save(records, "bloom_alibi_key_12heads", table, library, call, "alibi", 8, None, {"heads": 12, "form": "key"})
    padded = AlibiPositionalBias(heads=4, total_heads=6)(8, 8).numpy()
    library = f"x-transformers {version('x-transformers')}, torch {torch.__version__}"
    call = "x_transformers.x_transformers.AlibiPositionalBias(heads=4, total_heads=6)(8, 8)"
    save(
        records,
        "x_transformers_alibi_total_heads",
        padded,
        library,
        call,
        "alibi",
        8,
        None,
        {"heads": 4, "total_heads": 6},
    )


def grid_cases(records: list[dict]) -> None:
    import importlib.util

    import torch

    # vit_pytorch/__init__ imports torchvision (for DINO); simple_vit.py itself needs torch and einops only
    path = Path(importlib.util.find_spec("vit_pytorch").submodule_search_locations[0]) / "simple_vit.py"
    spec = importlib.util.spec_from_file_location("simple_vit", path)
    simple_vit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(simple_vit)
    table = simple_vit.posemb_sincos_2d(3, 5, 32).numpy()
    library = f"vit-pytorch {version('vit-pytorch')}, torch {torch.__version__}"
    call = "vit_pytorch/simple_vit.py posemb_sincos_2d(h=3, w=5, dim=32)"
    save(
        records,
        "vit_pytorch_posemb_3x5_d32",
        table,
        library,
        call,
        "sincos2d",
        None,
        32,
        {"grid": "3,5", "layout": "by-axis", "freq_shift": 1.0},
    )
    import diffusers
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    library = f"diffusers {diffusers.__version__}, torch {torch.__version__}"
    for extra in (0, 1, 2):
        table = get_2d_sincos_pos_embed(32, (3, 5), cls_token=True, extra_tokens=extra, output_type="pt").numpy()
        call = f"get_2d_sincos_pos_embed(32, (3, 5), cls_token=True, extra_tokens={extra}, output_type='pt')"
        params = {"grid": "3,5", "layout": "by-axis", "base_size": 16.0, "cls_token": True, "extra_tokens": extra}
        save(records, f"diffusers_sincos2d_extra{extra}", table, library, call, "sincos2d", None, 32, params)


def timm_cases(records: list[dict]) -> None:
    import torch

    sincos = _timm_sincos()
    library = f"timm {version('timm')}, torch {torch.__version__}"
    for name, options, params in [
        ("timm_sincos2d_reverse_3x5_d32", {"reverse_coord": True}, {"layout": "by-function", "reverse_coord": True}),
        ("timm_sincos2d_interleave_3x5_d32", {"interleave_sin_cos": True}, {"layout": "by-axis-h-first"}),
        (
            "timm_sincos2d_interleave_reverse_3x5_d32",
            {"interleave_sin_cos": True, "reverse_coord": True},
            {"layout": "by-axis-h-first", "reverse_coord": True},
        ),
    ]:
        table = sincos.build_sincos2d_pos_embed([3, 5], dim=32, **options).numpy()
        call = f"timm.layers.pos_embed_sincos.build_sincos2d_pos_embed([3, 5], dim=32, {_kwargs(options)})"
        save(records, name, table, library, call, "sincos2d", None, 32, {"grid": "3,5", **params})


def timm_rope_cases(records: list[dict]) -> None:
    import torch

    sincos = _timm_sincos()
    library = f"timm {version('timm')}, torch {torch.__version__}"
    for name, options, params in [
        ("timm_rope2d_ij_3x5_d32", {}, {"grid_indexing": "ij"}),
        ("timm_rope2d_xy_3x5_d32", {"grid_indexing": "xy"}, {}),
    ]:
        sin, cos = sincos.build_rotary_pos_embed([3, 5], dim=32, in_pixels=False, **options)
        call = (
            f"timm.layers.pos_embed_sincos.build_rotary_pos_embed([3, 5], dim=32, in_pixels=False"
            f"{''.join(f', {key}={value!r}' for key, value in options.items())}) -> stack([cos, sin])"
        )
        table = torch.stack([cos, sin]).numpy()
        save(records, name, table, library, call, "rope2d", None, 32, {"grid": "3,5", **params}, parts=("cos", "sin"))
    # EVA-02's module (rope_type 'cat', at its reference grid): get_embed() is cat([sin, cos], -1)
    rope = sincos.RotaryEmbeddingCat(dim=32, in_pixels=False, feat_shape=[4, 4], ref_feat_shape=[4, 4])
    sin, cos = rope.get_embed().chunk(2, dim=-1)
    call = (
        "timm.layers.pos_embed_sincos.RotaryEmbeddingCat(dim=32, in_pixels=False, feat_shape=[4, 4], "
        "ref_feat_shape=[4, 4]).get_embed() -> [sin | cos] -> stack([cos, sin])"
    )
    table = torch.stack([cos, sin]).numpy()
    params = {"grid": "4,4", "grid_indexing": "ij", "layout": "interleaved"}
    save(records, "timm_eva02_rope_cat_4x4_d32", table, library, call, "rope2d", None, 32, params, ("cos", "sin"))


def _timm_sincos():
    """timm's pos_embed_sincos without importing timm (its package import needs torchvision)."""
    import importlib
    import importlib.util
    import sys
    import types

    if "timm.layers.pos_embed_sincos" in sys.modules:
        return sys.modules["timm.layers.pos_embed_sincos"]
    root = Path(importlib.util.find_spec("timm").submodule_search_locations[0]) / "layers"
    for package, path in (("timm", root.parent), ("timm.layers", root)):
        module = types.ModuleType(package)
        module.__path__ = [str(path)]
        sys.modules.setdefault(package, module)
    return importlib.import_module("timm.layers.pos_embed_sincos")


def _kwargs(options: dict) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in options.items())


def patch_embed_cases(records: list[dict]) -> None:
    import diffusers
    import torch
    from diffusers.models.embeddings import PatchEmbed

    library = f"diffusers {diffusers.__version__}, torch {torch.__version__}"
    # (name, PatchEmbed keywords, crop H, W in patches, pecli parameters): base_size = height // patch_size
    cases = [
        (
            "diffusers_patch_embed_max8_3x5",
            {"height": 16, "width": 16, "patch_size": 2, "pos_embed_max_size": 8},
            (3, 5),
            {"base_size": 8.0, "pos_embed_max_size": 8},
        ),
        (
            "diffusers_patch_embed_max9_4x7_scale2",
            {"height": 12, "width": 12, "patch_size": 2, "pos_embed_max_size": 9, "interpolation_scale": 2},
            (4, 7),
            {"base_size": 6.0, "pos_embed_max_size": 9, "interpolation_scale": 2.0},
        ),
        (
            "diffusers_patch_embed_sd3_defaults_5x7",
            {"height": 128, "width": 128, "patch_size": 2, "in_channels": 16, "pos_embed_max_size": 96},
            (5, 7),
            {"base_size": 64.0, "pos_embed_max_size": 96},
        ),
    ]
    for name, keywords, (height, width), params in cases:
        embed = PatchEmbed(embed_dim=32, **keywords)
        patch = keywords["patch_size"]
        table = embed.cropped_pos_embed(height * patch, width * patch)[0].numpy()
        call = f"PatchEmbed(embed_dim=32, {_kwargs(keywords)}).cropped_pos_embed({height * patch}, {width * patch})[0]"
        params = {"grid": f"{height},{width}", "layout": "by-axis", **params}
        save(records, name, table, library, call, "sincos2d", None, 32, params)


def positional_encodings_cases(records: list[dict]) -> None:
    import torch
    from positional_encodings.torch_encodings import PositionalEncoding1D, PositionalEncoding2D

    library = f"positional-encodings {version('positional-encodings')}, torch {torch.__version__}"
    for height, width, dim in ((3, 5, 32), (4, 6, 6), (3, 5, 7), (5, 2, 10)):
        table = PositionalEncoding2D(dim)(torch.zeros(1, height, width, dim)).reshape(height * width, dim).numpy()
        call = f"PositionalEncoding2D({dim})(torch.zeros(1, {height}, {width}, {dim})).reshape({height * width}, {dim})"
        params = {"grid": f"{height},{width}", "layout": "interleaved"}
        save(
            records,
            f"positional_encodings_2d_{height}x{width}_d{dim}",
            table,
            library,
            call,
            "sincos2d",
            None,
            dim,
            params,
        )
    for dim in (7, 15):
        table = PositionalEncoding1D(dim)(torch.zeros(1, 20, dim))[0].numpy()
        call = f"PositionalEncoding1D({dim})(torch.zeros(1, 20, {dim}))[0]"
        save(
            records,
            f"positional_encodings_1d_20x{dim}",
            table,
            library,
            call,
            "sinusoidal",
            20,
            dim,
            {"layout": "interleaved", "pad_dim": True},
        )


def timestep_cases(records: list[dict]) -> None:
    import diffusers
    import torch
    from diffusers.models.embeddings import get_timestep_embedding

    table = get_timestep_embedding(torch.arange(8), 1).numpy()
    save(
        records,
        "diffusers_timestep_d1",
        table,
        f"diffusers {diffusers.__version__}, torch {torch.__version__}",
        "get_timestep_embedding(torch.arange(8), 1)",
        "timestep",
        8,
        1,
        {"flip_sin_to_cos": False, "freq_shift": 1.0},
    )


def version(distribution: str) -> str:
    from importlib.metadata import version as installed

    return installed(distribution)


def save(records, name, table, library, call, scheme, length, dim, params, parts=()) -> None:
    np.save(OUT / f"{name}.npy", np.asarray(table, dtype=np.float32))
    records.append(
        {
            "name": name,
            "library": library,
            "call": call,
            "scheme": scheme,
            "length": length,
            "dim": dim,
            "params": params,
            "parts": list(parts),
        }
    )


def main() -> None:
    OUT.mkdir(exist_ok=True)
    records: list[dict] = []
    rope_cases(records)
    sinusoidal_cases(records)
    alibi_cases(records)
    grid_cases(records)
    timestep_cases(records)
    timm_cases(records)
    timm_rope_cases(records)
    patch_embed_cases(records)
    positional_encodings_cases(records)
    (OUT / "conventions.json").write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
