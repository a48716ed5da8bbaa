"""identify on tables the real libraries wrote (issue 30), session 13.

Each case calls the library itself (transformers, diffusers, torch: the test extra installs them), saves what it
returns as a file (float32, some in bfloat16 / float16), and checks the two things ``pecli identify`` promises:

* the convention it names is the one the library implements (or is offered as ``also`` within rounding);
* the command it prints writes the table again: ``pecli compare FILE SPEC`` (SPEC the command's scheme and
  parameters) exits 0; a ``pecli timestep`` command, whose rows' t no spec holds, is run as printed and
  ``pecli compare FILE WRITTEN`` exits 0.

Tables identify does not read today are left out (session 13's report lists them): LongRoPE (Phi-3), a YaRN sin
table alone, diffusers' 3-D sin-cos, timestep rows of t = 0, 8, … in a .npy, MPT's ALiBi row.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import require_module

torch = require_module("torch")
require_module("transformers")
require_module("diffusers")

Tensors = dict[str, Any]  #: name -> torch tensor, saved with its own dtype
Truth = dict[str, Any]  #: the scheme and the parameters the library's convention has


def _rotary(config_class: str, module_path: str, rotary_class: str, *, length: int, **values: Any) -> tuple:
    """transformers' rotary module of a config built from ``values``: its (cos, sin) at positions 0 … length − 1."""
    import importlib

    import transformers

    config = getattr(transformers, config_class)(**values)
    rotary = getattr(importlib.import_module(module_path), rotary_class)(config)
    head_dim = values.get("head_dim") or values["hidden_size"] // values["num_attention_heads"]
    cos, sin = rotary(torch.zeros(1, length, head_dim), torch.arange(length)[None])
    return cos[0], sin[0]


def _llama(rope: dict[str, Any], *, length: int = 128, head_dim: int = 64, **more: Any) -> tuple:
    values = {"hidden_size": 2 * head_dim, "num_attention_heads": 2, "max_position_embeddings": 256, **more}
    return _rotary("LlamaConfig", "transformers.models.llama.modeling_llama", "LlamaRotaryEmbedding",
                   length=length, rope_parameters=rope, **values)  # fmt: skip


# --- absolute sinusoid tables of transformers --------------------------------------------------------------------


def marian(length: int, dim: int) -> Tensors:
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    return {"weight": MarianSinusoidalPositionalEmbedding(length, dim).create_weight()}


def m2m100(length: int, dim: int) -> Tensors:
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    return {"weight": M2M100SinusoidalPositionalEmbedding.get_embedding(length, dim)}


def m2m100_from_offset(length: int, dim: int) -> Tensors:
    """The rows the model reads: fairseq's positions start at padding_idx + 1 = 2."""
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    return {"weight": M2M100SinusoidalPositionalEmbedding(length, dim, padding_idx=1).weights[2:]}


def speech2text(length: int, dim: int) -> Tensors:
    from transformers.models.speech_to_text.modeling_speech_to_text import Speech2TextSinusoidalPositionalEmbedding

    return {"weight": Speech2TextSinusoidalPositionalEmbedding.get_embedding(length, dim)}


def whisper(length: int, dim: int) -> Tensors:
    from transformers.models.whisper.modeling_whisper import sinusoids

    return {"weight": sinusoids(length, dim)}


def distilbert(length: int, dim: int) -> Tensors:
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    out = torch.empty(length, dim)
    create_sinusoidal_embeddings(length, dim, out)
    return {"weight": out}


def gptj(length: int, dim: int) -> Tensors:
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    return {"weight": create_sinusoidal_positions(length, dim)}


def gptj_rotary(length: int, dim: int) -> Tensors:
    """GPT-J's cos and sin as its attention applies them: repeat_interleave'd onto adjacent pairs."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    sin, cos = torch.split(create_sinusoidal_positions(length, dim), dim // 2, dim=-1)
    return {"cos": torch.repeat_interleave(cos, 2, dim=-1), "sin": torch.repeat_interleave(sin, 2, dim=-1)}


# --- RoPE caches of transformers ---------------------------------------------------------------------------------

ROPES: dict[str, dict[str, Any]] = {
    "default": {"rope_type": "default", "rope_theta": 10000.0},
    "default_500k": {"rope_type": "default", "rope_theta": 500000.0},
    "linear": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
    "llama3": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
    "yarn": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 64},
}  # fmt: skip


def llama_part(kind: str, part: str, length: int = 128, head_dim: int = 64) -> Callable[[], Tensors]:
    def build() -> Tensors:
        cos, sin = _llama(ROPES[kind], length=length, head_dim=head_dim)
        return {"cos": cos, "sin": sin}[part] if part != "pair" else {"cos": cos, "sin": sin}

    return lambda: _as_tensors(build())


def _as_tensors(value: Any) -> Tensors:
    return value if isinstance(value, dict) else {"weight": value}


def neox_partial(length: int = 128) -> Tensors:
    rope = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}
    values = {"hidden_size": 128, "num_attention_heads": 2, "max_position_embeddings": 256}
    cos, sin = _rotary("GPTNeoXConfig", "transformers.models.gpt_neox.modeling_gpt_neox", "GPTNeoXRotaryEmbedding",
                       length=length, rope_parameters=rope, **values)  # fmt: skip
    return {"cos": cos, "sin": sin}


def gemma3(layer_type: str, length: int = 128) -> Tensors:
    import transformers
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    # Gemma 3 4B and larger: the full layers' base 1e6 with linear scaling 8, the sliding layers' base 10000
    rope = {
        "full_attention": {"rope_type": "linear", "rope_theta": 1e6, "factor": 8.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    }
    config = transformers.Gemma3TextConfig(hidden_size=128, num_attention_heads=2, head_dim=64, num_hidden_layers=2,
                                           max_position_embeddings=256, rope_parameters=rope,
                                           layer_types=["sliding_attention", "full_attention"])  # fmt: skip
    cos, sin = Gemma3RotaryEmbedding(config)(torch.zeros(1, length, 64), torch.arange(length)[None], layer_type)
    return {"cos": cos[0], "sin": sin[0]}


def qwen2_vl_image(height: int, width: int) -> Tensors:
    """Qwen2-VL's M-RoPE over one image of height × width patches (t = 0): sections 4, 6, 6 of a 32-wide head."""
    import transformers
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding

    config = transformers.Qwen2VLTextConfig(hidden_size=64, num_attention_heads=2, max_position_embeddings=256,
                                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                             "mrope_section": [4, 6, 6]})  # fmt: skip
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    positions = torch.stack([torch.zeros(height * width, dtype=torch.long), rows.flatten(), cols.flatten()])
    # the module takes each section's angles from its own axis of (t, h, w) and places them as cat(freqs, freqs)
    cos, sin = Qwen2VLRotaryEmbedding(config)(torch.zeros(1, height * width, 32), positions[:, None, :])
    return {"cos": cos[0], "sin": sin[0]}


# --- diffusers ---------------------------------------------------------------------------------------------------


def timestep(steps: Any, dim: int, **options: Any) -> Tensors:
    from diffusers.models.embeddings import get_timestep_embedding

    return {"weight": get_timestep_embedding(torch.as_tensor(steps), dim, **options)}


def sincos_2d(dim: int, grid: Any, **options: Any) -> Tensors:
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    return {"weight": get_2d_sincos_pos_embed(dim, grid, output_type="pt", **options).to(torch.float32)}


def diffusers_rope_1d(dim: int, length: int, interleave: bool = True, **options: Any) -> Tensors:
    from diffusers.models.embeddings import get_1d_rotary_pos_embed

    cos, sin = get_1d_rotary_pos_embed(dim, length, use_real=True, repeat_interleave_real=interleave, **options)
    return {"cos": cos, "sin": sin}


def diffusers_rope_2d(dim: int, size: int) -> Tensors:
    from diffusers.models.embeddings import get_2d_rotary_pos_embed

    cos, sin = get_2d_rotary_pos_embed(dim, ((0, 0), (size, size)), (size, size), use_real=True)
    return {"cos": cos, "sin": sin}


def sd3_cropped(dim: int, patches: int, max_size: int) -> Tensors:
    """SD3's PatchEmbed: the centre patches × patches of its pos_embed_max_size² table (base_size = height / patch)."""
    from diffusers.models.embeddings import PatchEmbed

    embed = PatchEmbed(height=8 * patches, width=8 * patches, patch_size=8, embed_dim=dim, pos_embed_max_size=max_size)
    return {"weight": embed.cropped_pos_embed(8 * patches, 8 * patches)[0].to(torch.float32)}


def timesteps_module(dim: int, steps: int, **options: Any) -> Tensors:
    from diffusers.models.embeddings import Timesteps

    return {"weight": Timesteps(dim, **options)(torch.arange(steps))}


def bloom_alibi(heads: int, length: int) -> Tensors:
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    alibi = build_alibi_tensor(torch.ones(1, length), heads, torch.float32)
    return {"weight": alibi.reshape(heads, 1, length)}


def falcon_alibi(heads: int, length: int) -> Tensors:
    from transformers.models.falcon.modeling_falcon import build_alibi_tensor

    return {"weight": build_alibi_tensor(torch.ones(1, length), heads, torch.float32).reshape(heads, 1, length)}


# (id, build, truth): the truth is the library's convention, as scheme and the parameters that name it
SINUSOID_SPLIT: Truth = {"scheme": "sinusoidal", "layout": "split"}
FAIRSEQ: Truth = {"scheme": "sinusoidal", "layout": "split", "freq_shift": 1.0}
CASES: list[tuple[str, Callable[[], Tensors], Truth]] = [
    ("marian_128x64", lambda: marian(128, 64), {**SINUSOID_SPLIT, "freq_shift": 0.0, "base": 10000.0}),
    ("m2m100_rows_from_2_128x64", lambda: m2m100_from_offset(128, 64), {**FAIRSEQ, "offset": 2}),
    ("speech2text_96x32", lambda: speech2text(96, 32), {**FAIRSEQ, "offset": 0}),
    ("whisper_256x64", lambda: whisper(256, 64), FAIRSEQ),
    ("distilbert_64x32", lambda: distilbert(64, 32), {"scheme": "sinusoidal", "layout": "interleaved"}),
    ("gptj_embed_positions_128x64", lambda: gptj(128, 64), {**SINUSOID_SPLIT, "freq_shift": 0.0}),
    ("llama_default_cos", llama_part("default", "cos"), {"scheme": "rope", "part": "cos", "base": 10000.0}),
    ("llama_linear_pair", llama_part("linear", "pair"), {"scheme": "rope", "scaling": "linear", "factor": 4.0}),
    ("llama_llama3_sin", llama_part("llama3", "sin"), {"scheme": "rope", "scaling": "llama3", "factor": 8.0}),
    ("llama_yarn_pair", llama_part("yarn", "pair"), {"scheme": "rope", "scaling": "yarn", "factor": 4.0}),
    # the module returns the rotary columns alone (16 of the head's 64): a rope of d = 16 at base 10000
    ("gpt_neox_partial_pair", neox_partial, {"scheme": "rope", "base": 10000.0}),
    (
        "gemma3_full_pair",
        lambda: gemma3("full_attention"),
        {"scheme": "rope", "base": 1000000.0, "scaling": "linear", "factor": 8.0},
    ),
    ("qwen2_vl_image_6x10", lambda: qwen2_vl_image(6, 10), {"scheme": "rope2d", "grid": "6,10", "sections": "4,6,6"}),
    ("diffusers_timestep_default", lambda: timestep(np.arange(128), 64), {"freq_shift": 1.0}),
    (
        "diffusers_timestep_flip_shift0",
        lambda: timestep(np.arange(128), 64, flip_sin_to_cos=True, downscale_freq_shift=0),
        {"freq_shift": 0.0},
    ),
    # scale 2: the rows of timesteps 0, 2, 4, …
    (
        "diffusers_timestep_scale",
        lambda: timestep(np.arange(64), 32, scale=2.0),
        {"scheme": "timestep", "flip_sin_to_cos": False, "freq_shift": 1.0},
    ),
    ("diffusers_2d_sincos_6x10", lambda: sincos_2d(32, (6, 10)), {"scheme": "sincos2d"}),
    ("diffusers_2d_sincos_cls", lambda: sincos_2d(64, 8, cls_token=True, extra_tokens=1), {"scheme": "sincos2d"}),
    ("diffusers_rope_1d_half", lambda: diffusers_rope_1d(64, 128, False), {"scheme": "rope", "layout": "half"}),
    ("bloom_alibi_12heads", lambda: bloom_alibi(12, 64), {"scheme": "alibi"}),
    ("marian_odd_64x63", lambda: marian(64, 63), {**SINUSOID_SPLIT, "base": 10000.0}),
    ("gptj_rotary_pair", lambda: gptj_rotary(128, 64), {"scheme": "rope", "layout": "interleaved"}),
    (
        "llama_dynamic_past_max_cos",
        lambda: _as_tensors(_llama(ROPES["dynamic"], max_position_embeddings=64)[0]),
        {"scheme": "rope", "scaling": "dynamic", "factor": 2.0, "original_max_position": 64},
    ),
    (
        "diffusers_rope_1d_theta_linear",
        lambda: diffusers_rope_1d(64, 128, theta=500000.0, linear_factor=2.0),
        {"scheme": "rope", "base": 500000.0, "scaling": "linear", "factor": 2.0},
    ),
    # ntk_factor multiplies the base: theta · ntk_factor
    ("diffusers_rope_1d_ntk", lambda: diffusers_rope_1d(64, 128, ntk_factor=2.0), {"scheme": "rope", "base": 20000.0}),
    ("diffusers_rope_2d_8x8", lambda: diffusers_rope_2d(64, 8), {"scheme": "rope2d", "grid": "8,8"}),
    (
        "sd3_cropped_8x8_of_16",
        lambda: sd3_cropped(64, 8, 16),
        {"scheme": "sincos2d", "grid": "8,8", "pos_embed_max_size": 16, "base_size": 8.0},
    ),
    (
        "diffusers_Timesteps_flip_shift0",
        lambda: timesteps_module(64, 128, flip_sin_to_cos=True, downscale_freq_shift=0),
        {"layout": "split", "cos_first": True, "freq_shift": 0.0},
    ),
    (
        "diffusers_timestep_max_period_1000",
        lambda: timestep(np.arange(128), 64, max_period=1000),
        {"base": 1000.0, "freq_shift": 1.0},
    ),
    ("falcon_alibi_8heads", lambda: falcon_alibi(8, 64), {"scheme": "alibi", "heads": 8}),
]

#: a few cases written again in a half type: identify then holds the table to that type's rounding
HALF_CASES: list[tuple[str, str]] = [
    ("marian_128x64", "bfloat16"),
    ("whisper_256x64", "float16"),
    ("llama_linear_pair", "bfloat16"),
    ("diffusers_timestep_flip_shift0", "bfloat16"),
    ("diffusers_2d_sincos_6x10", "float16"),
]


def _save(tensors: Tensors, path: Path, dtype: Any) -> Path:
    from safetensors.torch import save_file

    tensors = {name: value.detach().to(dtype).contiguous() for name, value in tensors.items()}
    if len(tensors) == 1 and dtype == torch.float32:
        path = path.with_suffix(".npy")
        np.save(path, next(iter(tensors.values())).numpy())
    else:
        path = path.with_suffix(".safetensors")
        save_file(tensors, str(path))
    return path


def _spec(command: str) -> str:
    """The scheme spec of ``pecli generate [--preset P] [SCHEME] --option value … --d D --len L -o FILE``:
    ``SCHEME:preset=P,option=value…``, or ``P:option=value…`` where the preset names the scheme."""
    argv = shlex.split(command)[2:]
    scheme, preset, params = "", "", []
    while argv:
        word = argv.pop(0)
        if not word.startswith("-"):
            scheme = word
            continue
        value = argv.pop(0) if argv and not argv[0].startswith("--") else "true"
        if word == "--preset":
            preset = value
        elif word not in ("--d", "--len", "-o", "--dtype"):
            params.append(f"{word.lstrip('-').replace('-', '_')}={value}")
    if scheme and preset:
        params.insert(0, f"preset={preset}")
    return f"{scheme or preset}:{','.join(params)}".rstrip(":")


def _agrees(candidate: dict[str, Any], truth: Truth) -> bool:
    params = candidate["params"]
    for name, value in truth.items():
        if name == "scheme":
            if candidate["scheme"] != value:
                return False
        elif isinstance(value, float) and isinstance(params.get(name), (int, float)):
            if not math.isclose(params[name], value, rel_tol=1e-6):
                return False
        elif params.get(name) != value and not (params.get(name) is None and value in (0, "none")):
            return False  # None: the scheme's default (freq_shift 0, no scaling)
    return True


def _check(cli, tmp_path: Path, name: str, tensors: Tensors, truth: Truth, dtype: Any = None) -> None:
    path = _save(tensors, tmp_path / name, dtype or torch.float32)
    result = cli("identify", str(path), "--json")
    assert result.code == 0, f"{name}: identify exit {result.code}\n{result.out}\n{result.stderr}"
    found = json.loads(result.out)
    readings = [found["best"], *([found["also"]] if "also" in found else [])]
    assert any(_agrees(reading, truth) for reading in readings), f"{name}: named {found['best']}, truth {truth}"
    command = found["command"]
    argv = shlex.split(command)
    if argv[1] == "generate":
        spec = _spec(command)
        compared = cli("compare", str(path), spec)
        assert compared.code == 0, f"{name}: compare {spec}\n{compared.out}{compared.stderr}"
    else:  # a timestep command: its rows' t are no spec's parameter; run it and compare the files
        again = tmp_path / ("again" + Path(argv[argv.index("-o") + 1]).suffix)
        argv[argv.index("-o") + 1] = str(again)
        assert cli(*argv[1:]).code == 0, command
        regenerated = cli("compare", str(path), str(again))
        assert regenerated.code == 0, f"{name}: {command}\n{regenerated.out}{regenerated.stderr}"


@pytest.mark.parametrize(("name", "build", "truth"), CASES, ids=[case[0] for case in CASES])
def test_identify_names_a_library_table_and_writes_it_again(name, build, truth, cli, tmp_path):
    _check(cli, tmp_path, name, build(), truth)


@pytest.mark.parametrize(("name", "dtype"), HALF_CASES, ids=[f"{name}-{dtype}" for name, dtype in HALF_CASES])
def test_identify_names_a_library_table_in_a_half_type(name, dtype, cli, tmp_path):
    _, build, truth = next(case for case in CASES if case[0] == name)
    _check(cli, tmp_path, name, build(), truth, getattr(torch, dtype))
