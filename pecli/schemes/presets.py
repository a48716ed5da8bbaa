"""The presets: named parameter sets that each reproduce one implementation's convention exactly.

Each preset cites the repository, file and function whose table it reproduces.

>>> get_preset("fairseq").params["offset"]
2
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pecli.errors import ParameterError, did_you_mean
from pecli.text import literal_repr

__all__ = ["PRESETS", "Preset", "get_preset", "preset_names", "preset_schemes", "presets_of"]


@dataclass(frozen=True)
class Preset:
    """A named parameter set that reproduces one implementation's convention exactly."""

    name: str
    scheme: str
    params: Mapping[str, Any]
    convention: str
    source: str


#: keyed by (scheme, name): a name may mean one convention per scheme (``diffusers`` is a
#: sinusoidal preset and a timestep preset); by name alone, such a name is refused (see get_preset)
PRESETS: Mapping[tuple[str, str], Preset] = MappingProxyType(
    {
        (p.scheme, p.name): p
        for p in (
            Preset(
                "vaswani",
                "sinusoidal",
                {"layout": "interleaved", "cos_first": False, "freq_shift": None, "offset": 0},
                "interleaved [sin, cos, …], ω_k = 10000^(−2k/d), positions from 0",
                "Vaswani et al. 2017, Attention Is All You Need, §3.5 (arXiv:1706.03762)",
            ),
            Preset(
                "pytorch-tutorial",
                "sinusoidal",
                {"layout": "interleaved", "cos_first": False, "freq_shift": None, "offset": 0},
                "interleaved, div_term = exp(arange(0, d, 2)·(−ln 10000 / d)); "
                "the tutorial computes in float32, pecli in float64 then rounds",
                "pytorch/tutorials beginner_source/transformer_tutorial.py, PositionalEncoding",
            ),
            Preset(
                "distilbert",
                "sinusoidal",
                {"layout": "interleaved", "cos_first": False, "freq_shift": None, "offset": 0},
                "interleaved, pos / 10000^(2·(j // 2) / d) (XLM's create_sinusoidal_embeddings)",
                "huggingface/transformers src/transformers/models/distilbert/modeling_distilbert.py, "
                "create_sinusoidal_embeddings",
            ),
            Preset(
                "tensor2tensor",
                "sinusoidal",
                {"layout": "split", "cos_first": False, "freq_shift": 1.0, "offset": 0},
                "split [sin | cos], timescales 10000^(i/(h − 1)); odd d pads a zero column",
                "tensorflow/tensor2tensor tensor2tensor/layers/common_attention.py, get_timing_signal_1d",
            ),
            Preset(
                "fairseq",
                "sinusoidal",
                {"layout": "split", "cos_first": False, "freq_shift": 1.0, "offset": 2},
                "split [sin | cos], ω_i = 10000^(−i/(h − 1)); real tokens start at padding_idx + 1 = 2, "
                "so row 0 is position 2",
                "facebookresearch/fairseq fairseq/modules/sinusoidal_positional_embedding.py, "
                "get_embedding (and fairseq/utils.py, make_positions)",
            ),
            Preset(
                "marian",
                "sinusoidal",
                {"layout": "split", "cos_first": False, "freq_shift": None, "offset": 0},
                "split [sin | cos] of Vaswani's frequencies 10000^(−2k/d); odd d: sin takes ⌈d/2⌉ columns",
                "huggingface/transformers src/transformers/models/marian/modeling_marian.py, "
                "MarianSinusoidalPositionalEmbedding._init_weight",
            ),
            Preset(
                "guided-diffusion",
                "sinusoidal",
                {"layout": "split", "cos_first": True, "freq_shift": 0.0, "offset": 0},
                "split [cos | sin], freqs exp(−ln(10000)·i/h); odd d pads a zero column",
                "openai/guided-diffusion guided_diffusion/nn.py, timestep_embedding "
                "(same in CompVis/latent-diffusion ldm/modules/diffusionmodules/util.py)",
            ),
            Preset(
                "diffusers",
                "sinusoidal",
                {"layout": "split", "cos_first": False, "freq_shift": 1.0, "offset": 0},
                "get_timestep_embedding defaults: flip_sin_to_cos=False, downscale_freq_shift=1 — "
                "split [sin | cos], exp(−ln(10000)·i/(h − 1))",
                "huggingface/diffusers src/diffusers/models/embeddings.py, get_timestep_embedding",
            ),
            # timestep presets (pecli timestep --preset NAME, pecli generate timestep --preset NAME)
            *(
                Preset(
                    name,
                    "timestep",
                    {"max_period": 10000.0, "flip_sin_to_cos": True, "freq_shift": 0.0, "scale": 1.0},
                    "[cos | sin], freqs exp(−ln(max_period)·i/h), odd d pads a zero column; "
                    "also diffusers' UNets (flip_sin_to_cos=True, freq_shift=0)",
                    "openai/guided-diffusion guided_diffusion/nn.py and CompVis/latent-diffusion "
                    "ldm/modules/diffusionmodules/util.py, timestep_embedding",
                )
                for name in ("ldm", "guided-diffusion")
            ),
            Preset(
                "diffusers",
                "timestep",
                {"max_period": 10000.0, "flip_sin_to_cos": False, "freq_shift": 1.0, "scale": 1.0},
                "get_timestep_embedding's defaults: flip_sin_to_cos=False, downscale_freq_shift=1, scale=1, "
                "max_period=10000 — [sin | cos], exp(−ln(max_period)·i/(h − 1))",
                "huggingface/diffusers src/diffusers/models/embeddings.py, get_timestep_embedding",
            ),
            Preset(
                "ddpm",
                "timestep",
                {"max_period": 10000.0, "flip_sin_to_cos": False, "freq_shift": 1.0, "scale": 1.0},
                "Ho et al. 2020: [sin | cos], exp(−ln(10000)·i/(h − 1)), odd d pads a zero column",
                "hojonathanho/diffusion diffusion_tf/nn.py, get_timestep_embedding",
            ),
            # 2-D RoPE conventions
            Preset(
                "eva02",
                "rope2d",
                {"layout": "interleaved", "grid_indexing": "ij", "sections": None},
                "timm's axial RoPE with in_pixels=False, grid_indexing='ij': [RoPE(h) | RoPE(w)], pairs "
                "interleaved, bands 10000^(−k/(d/4)) (EVA-02 at its reference grid; timm's in_pixels=True "
                "pixel bands are another convention)",
                "huggingface/pytorch-image-models timm/layers/pos_embed_sincos.py, build_rotary_pos_embed "
                "(RotaryEmbeddingCat); timm/models/eva.py, Eva (rope_type 'cat')",
            ),
            # 2-D sin-cos conventions
            Preset(
                "mae",
                "sincos2d",
                {"layout": "by-axis", "base_size": None, "interpolation_scale": 1.0},
                "[sin w | cos w | sin h | cos h] (meshgrid(w, h): the first half encodes w), "
                "ω = 10000^(−k/(d/4)); --cls-token prepends a zero row",
                "facebookresearch/mae util/pos_embed.py, get_2d_sincos_pos_embed",
            ),
            Preset(
                "timm",
                "sincos2d",
                {"layout": "by-function", "base_size": None, "interpolation_scale": 1.0, "cls_token": False},
                "build_sincos2d_pos_embed defaults: [sin h | sin w | cos h | cos w], "
                "bands 10000^(−k/(d/4)), ndgrid (h, w) row-major",
                "huggingface/pytorch-image-models timm/layers/pos_embed_sincos.py, build_sincos2d_pos_embed",
            ),
            Preset(
                "timm-interleaved",
                "sincos2d",
                {"layout": "by-axis-h-first", "base_size": None, "interpolation_scale": 1.0, "cls_token": False},
                "build_sincos2d_pos_embed(interleave_sin_cos=True): [sin h | cos h | sin w | cos w], "
                "bands 10000^(−k/(d/4)); --reverse-coord for reverse_coord=True",
                "huggingface/pytorch-image-models timm/layers/pos_embed_sincos.py, build_sincos2d_pos_embed",
            ),
            Preset(
                "positional-encodings",
                "sincos2d",
                {"layout": "interleaved", "base_size": None, "interpolation_scale": 1.0, "cls_token": False},
                "PositionalEncoding2D: [get_emb(x) | get_emb(y)], x the first axis (rows), each sin/cos "
                "interleaved over ⌈d/4⌉ bands 10000^(−k/⌈d/4⌉); channels padded to 4·⌈d/4⌉, the last dropped",
                "tatp22/multidim-positional-encoding positional_encodings/torch_encodings.py, PositionalEncoding2D",
            ),
            Preset(
                "vit-pytorch",
                "sincos2d",
                {"layout": "by-axis", "base_size": None, "interpolation_scale": 1.0, "freq_shift": 1.0},
                "posemb_sincos_2d: [sin x | cos x | sin y | cos y] (x the column), "
                "ω = temperature^(−k/(d/4 − 1)), meshgrid ij row-major",
                "lucidrains/vit-pytorch vit_pytorch/simple_vit.py, posemb_sincos_2d",
            ),
            Preset(
                "diffusers",
                "sincos2d",
                {"layout": "by-axis", "base_size": 16.0, "interpolation_scale": 1.0},
                "MAE's order with positions i / (H / base_size) / interpolation_scale (base_size 16)",
                "huggingface/diffusers src/diffusers/models/embeddings.py, get_2d_sincos_pos_embed",
            ),
            Preset(
                "sd3",
                "sincos2d",
                {"layout": "by-axis", "base_size": 64.0, "interpolation_scale": 1.0, "pos_embed_max_size": 96},
                "SD3Transformer2DModel's defaults (sample_size 128, patch_size 2, pos_embed_max_size 96): the "
                "96 × 96 table with base_size 64, centred H × W crop; SD3-medium's config sets "
                "--pos-embed-max-size 192",
                "huggingface/diffusers src/diffusers/models/embeddings.py, PatchEmbed.cropped_pos_embed; "
                "src/diffusers/models/transformers/transformer_sd3.py, SD3Transformer2DModel",
            ),
        )
    }
)


def get_preset(name: str, scheme: str | None = None) -> Preset:
    """The preset called ``name``: the one of ``scheme`` if it has one, else the only one of that name.

    A name several schemes use (``diffusers``) needs its scheme: without it, or with a scheme that has
    no such preset, a :class:`ParameterError` names the candidates. An unknown name is one naming the
    valid presets.

    >>> get_preset("fairseq").scheme, get_preset("diffusers", "timestep").scheme
    ('sinusoidal', 'timestep')
    >>> try:
    ...     get_preset("diffusers")
    ... except ParameterError as error:
    ...     print(error.message)
    preset 'diffusers' belongs to sinusoidal, timestep and sincos2d: name the scheme
    >>> try:
    ...     get_preset("lmd", "timestep")
    ... except ParameterError as error:
    ...     print(error)
    unknown preset 'lmd' for timestep (did you mean 'ldm'? valid: ldm, guided-diffusion, diffusers, ddpm)
    """
    if scheme is not None and (scheme, name) in PRESETS:
        return PRESETS[scheme, name]
    owners = preset_schemes(name) if isinstance(name, str) else []
    if scheme is not None and not presets_of(scheme):  # rope --preset llama3: not a list of other schemes' presets
        raise ParameterError(
            f"scheme {literal_repr(scheme)} has no preset {literal_repr(name)}: it has no presets", hint=_owned_by(name)
        )
    if not owners:
        own = presets_of(scheme) if scheme is not None else []
        if own:  # the scheme's own presets, not every scheme's (timestep --preset lmd)
            raise ParameterError(f"unknown preset {literal_repr(name)} for {scheme}", hint=did_you_mean(name, own))
        raise ParameterError(f"unknown preset {literal_repr(name)}", hint=did_you_mean(name, preset_names()))
    if len(owners) > 1 and scheme is not None:
        raise ParameterError(
            f"scheme {literal_repr(scheme)} has no preset {literal_repr(name)}", hint=f"{and_list(owners)} have one"
        )
    if len(owners) > 1:
        raise ParameterError(
            f"preset {literal_repr(name)} belongs to {and_list(owners)}: name the scheme",
            hint=f"give the scheme too, e.g. {owners[-1]} {{preset={name}}}",
        )
    return PRESETS[owners[0], name]


def _owned_by(name: Any) -> str:
    """A hint for a preset name given to a scheme without presets: the schemes that have it (in any case), or the fix.

    >>> _owned_by("FAIRSEQ")
    "'fairseq' is a preset of sinusoidal: e.g. sinusoidal {preset=fairseq}"
    >>> _owned_by("llama3")
    'drop {preset}, or give its parameters as options'
    """
    folded = name.casefold() if isinstance(name, str) else None
    found = [(scheme, preset) for scheme, preset in PRESETS if preset.casefold() == folded]
    if not found:
        return "drop {preset}, or give its parameters as options"
    preset = found[0][1]
    return f"{preset!r} is a preset of {and_list([s for s, _ in found])}: e.g. {found[-1][0]} {{preset={preset}}}"


def preset_schemes(name: str) -> list[str]:
    """The schemes that have a preset called ``name``, in registration order (more than one: ambiguous).

    >>> preset_schemes("diffusers"), preset_schemes("fairseq"), preset_schemes("nope")
    (['sinusoidal', 'timestep', 'sincos2d'], ['sinusoidal'], [])
    """
    return [scheme for scheme, preset in PRESETS if preset == name]


def presets_of(scheme: str) -> list[str]:
    """The names of ``scheme``'s presets, in registration order.

    >>> presets_of("timestep")
    ['ldm', 'guided-diffusion', 'diffusers', 'ddpm']
    """
    return [preset for owner, preset in PRESETS if owner == scheme]


def and_list(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``.

    >>> and_list(["sinusoidal", "timestep", "sincos2d"])
    'sinusoidal, timestep and sincos2d'
    """
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def preset_names() -> list[str]:
    """Every preset name once, in registration order (presets are registered per scheme).

    >>> preset_names().count("diffusers")
    1
    """
    return list(dict.fromkeys(preset.name for preset in PRESETS.values()))
