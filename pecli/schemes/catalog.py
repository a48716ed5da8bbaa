"""The scheme registry: every scheme, its parameters and presets, described without numpy.

This module is imported by ``pecli --help`` and by every command to build its options, so it
must stay cheap: plain data only. The implementation of a scheme is named by ``impl``
("module:function") and imported only when a table is actually computed.

Adding a scheme is one function in a family module plus one :class:`Scheme` entry here; its
parameters come from :data:`PARAMS`, so every command (generate, plot, distance, compare…)
accepts its options at once.

>>> get_scheme("sinusoidal").defaults["base"]
10000.0
>>> get_preset("fairseq").params["offset"]
2
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pecli.errors import ParameterError, did_you_mean

__all__ = [
    "PARAMS",
    "PRESETS",
    "SCHEMES",
    "Param",
    "Preset",
    "Scheme",
    "get_preset",
    "get_scheme",
    "resolve",
]


@dataclass(frozen=True)
class Param:
    """A scheme parameter as the command line shows it (one definition for every scheme)."""

    name: str  #: Python keyword argument of the scheme function
    flag: str  #: command-line flag
    kind: type  #: int, float, str or bool (bool parameters become --x/--no-x switches)
    help: str
    metavar: str | None = None
    negative_flag: str | None = None  #: for bool switches: the "off" flag


PARAMS: Mapping[str, Param] = MappingProxyType(
    {
        p.name: p
        for p in (
            Param("base", "--base", float, "Frequency base: ω_k = base^(−2k/d).", "B"),
            Param(
                "layout",
                "--layout",
                str,
                "Column layout: interleaved [sin, cos, sin, cos, …] or split [sin … | cos …].",
                "LAYOUT",
            ),
            Param(
                "cos_first",
                "--cos-first",
                bool,
                "Put cos before sin (guided-diffusion; diffusers' flip_sin_to_cos).",
                negative_flag="--sin-first",
            ),
            Param(
                "freq_shift",
                "--freq-shift",
                float,
                "Frequencies ω_i = base^(−i/(h − S)), h = d // 2 (1: tensor2tensor/fairseq/"
                "diffusers, 0: guided-diffusion); odd d appends a zero column. "
                "Unset: Vaswani's ω_k = base^(−2k/d).",
                "S",
            ),
            Param("offset", "--offset", int, "First position (fairseq: padding_idx + 1 = 2).", "N"),
            Param("std", "--std", float, "Standard deviation of the N(0, std²) initialisation.", "STD"),
            Param("seed", "--seed", int, "Random seed (numpy PCG64): same seed, same table everywhere.", "SEED"),
            # issue 3: diffusion timestep embeddings
            Param(
                "max_period",
                "--max-period",
                float,
                "Longest period of the timestep frequencies: ω_i = max_period^(−i/(h − S)) (10000).",
                "P",
            ),
            Param(
                "flip_sin_to_cos",
                "--flip-sin-to-cos",
                bool,
                "Timestep columns [cos | sin] (latent/guided-diffusion) instead of [sin | cos] (diffusers' default).",
                negative_flag="--no-flip-sin-to-cos",
            ),
            Param("scale", "--scale", float, "Multiply the timestep angles: args = scale · t · ω (diffusers).", "X"),
            Param(
                "repeat_only",
                "--repeat-only",
                bool,
                "Embed t as t repeated d times, no sinusoid (latent-diffusion's repeat_only).",
            ),
        )
    }
)


@dataclass(frozen=True)
class Scheme:
    """One encoding scheme: a pure function ``(length, dim, **params) -> (length, dim) array``."""

    name: str
    impl: str  #: "module:function" of the implementation, imported on first use
    summary: str
    formula: str
    source: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def function(self) -> Callable[..., Any]:
        module_name, function_name = self.impl.split(":")
        return getattr(importlib.import_module(module_name), function_name)


@dataclass(frozen=True)
class Preset:
    """A named parameter set that reproduces one implementation's convention exactly."""

    name: str
    scheme: str
    params: Mapping[str, Any]
    convention: str
    source: str


_SINUSOIDAL = "pecli.schemes.sinusoidal:sinusoidal_table"
_INDEXING = "pecli.schemes.indexing"

SCHEMES: Mapping[str, Scheme] = MappingProxyType(
    {
        s.name: s
        for s in (
            Scheme(
                "sinusoidal",
                _SINUSOIDAL,
                "sin/cos of geometrically spaced frequencies (Vaswani et al. 2017) and its variants",
                "PE[p, 2k] = sin(p / base^(2k/d)), PE[p, 2k+1] = cos(p / base^(2k/d))",
                "Vaswani et al. 2017, Attention Is All You Need, §3.5 (arXiv:1706.03762)",
                defaults={
                    "base": 10000.0,
                    "layout": "interleaved",
                    "cos_first": False,
                    "freq_shift": None,
                    "offset": 0,
                },
                choices={"layout": ("interleaved", "split")},
            ),
            Scheme(
                "learned",
                "pecli.schemes.learned:learned_table",
                "a learned position-embedding table as initialised before training",
                "PE[p, i] ~ N(0, std²), numpy PCG64 default_rng(seed), drawn row-major",
                "BERT (Devlin et al. 2018; initializer_range 0.02); ConvS2S (Gehring et al. 2017; N(0, 0.1²))",
                defaults={"std": 0.02, "seed": 0},
            ),
            Scheme(
                "count",
                f"{_INDEXING}:count_table",
                "simple count indexing: every column holds the position",
                "PE[p, :] = p",
                "Dufter et al. 2022, Position Information in Transformers: An Overview, §3.1",
            ),
            Scheme(
                "count-normalized",
                f"{_INDEXING}:count_normalized_table",
                "count indexing normalised by the table length (changes with len)",
                "PE[p, :] = p / len",
                "Dufter et al. 2022, Position Information in Transformers: An Overview, §3.1",
            ),
            Scheme(
                "binary",
                f"{_INDEXING}:binary_table",
                "binary indexing: bit k of the position in column k, least significant first",
                "PE[p, k] = (p >> k) & 1",
                "Kazemnejad 2019, Transformer Architecture: The Positional Encoding (blog post)",
            ),
            Scheme(
                "binary-sine",
                f"{_INDEXING}:binary_sine_table",
                "the continuous relative of binary indexing",
                "PE[p, k] = sin(p·π / 2^(k+1))",
                "Kazemnejad 2019, Transformer Architecture: The Positional Encoding (blog post)",
            ),
            Scheme(
                "memn2n",
                f"{_INDEXING}:memn2n_table",
                "position encoding of End-to-End Memory Networks",
                "l[j, k] = (1 − j/J) − (k/d)(1 − 2j/J), j = 1..J (J = len), k = 1..d",
                "Sukhbaatar et al. 2015, End-To-End Memory Networks, §4.1 (arXiv:1503.08895)",
            ),
            # issue 3: diffusion timestep embeddings; row p embeds t = p (pecli timestep takes any real t)
            Scheme(
                "timestep",
                "pecli.schemes.timestep:timestep_table",
                "diffusion timestep embedding (latent/guided-diffusion, diffusers, DDPM)",
                "ω_i = max_period^(−i/(h − S)), h = d // 2; E[t] = [cos(scale·t·ω) | sin(scale·t·ω)] "
                "([sin | cos] without flip); odd d appends a zero column",
                "openai/guided-diffusion guided_diffusion/nn.py, timestep_embedding; "
                "huggingface/diffusers src/diffusers/models/embeddings.py, get_timestep_embedding",
                defaults={
                    "max_period": 10000.0,
                    "flip_sin_to_cos": True,
                    "freq_shift": 0.0,
                    "scale": 1.0,
                    "repeat_only": False,
                },
            ),
        )
    }
)

#: keyed by (scheme, name): a name may mean one convention per scheme (``diffusers`` is a
#: sinusoidal preset and a timestep preset); by name alone, the first registered one wins
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
            # issue 3: timestep presets (pecli timestep --preset NAME, pecli generate timestep --preset NAME)
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
        )
    }
)


def get_scheme(name: str) -> Scheme:
    """The registered scheme called ``name`` (a :class:`ParameterError` naming the valid ones if none).

    >>> get_scheme("binary").formula
    'PE[p, k] = (p >> k) & 1'
    """
    try:
        return SCHEMES[name]
    except KeyError:
        raise ParameterError(f"unknown scheme {name!r}", hint=did_you_mean(name, SCHEMES)) from None


def get_preset(name: str, scheme: str | None = None) -> Preset:
    """The preset called ``name``: the one of ``scheme`` if it has one, else the first registered.

    A :class:`ParameterError` naming the valid ones if there is none.

    >>> get_preset("diffusers").scheme, get_preset("diffusers", "timestep").scheme
    ('sinusoidal', 'timestep')
    """
    if scheme is not None and (scheme, name) in PRESETS:
        return PRESETS[scheme, name]
    for preset in PRESETS.values():
        if preset.name == name:
            return preset
    names = dict.fromkeys(p.name for p in PRESETS.values())
    raise ParameterError(f"unknown preset {name!r}", hint=did_you_mean(name, names))


def resolve(scheme: str | None, preset: str | None, params: Mapping[str, Any]) -> tuple[Scheme, dict[str, Any]]:
    """Combine a scheme name, a preset and explicit parameters into the scheme and its full parameters.

    Explicit ``params`` override the preset's, which override the scheme's defaults. A parameter
    the scheme does not take is an error, not silently ignored.

    >>> scheme, params = resolve(None, "tensor2tensor", {"base": 500.0})
    >>> scheme.name, params["layout"], params["freq_shift"], params["base"]
    ('sinusoidal', 'split', 1.0, 500.0)
    """
    chosen_preset = get_preset(preset, scheme) if preset is not None else None
    if chosen_preset is not None and scheme is not None and scheme != chosen_preset.scheme:
        raise ParameterError(
            f"preset {chosen_preset.name!r} is a {chosen_preset.scheme!r} preset, not {scheme!r}",
            hint=f"drop the scheme or use {chosen_preset.scheme!r}",
        )
    resolved = get_scheme(scheme or (chosen_preset.scheme if chosen_preset else "sinusoidal"))
    unknown = [name for name in params if name not in resolved.defaults]
    if unknown:
        flags = ", ".join(PARAMS[n].flag if n in PARAMS else n for n in unknown)
        takes = ", ".join(PARAMS[n].flag if n in PARAMS else n for n in resolved.defaults) or "none"
        raise ParameterError(
            f"scheme {resolved.name!r} does not take {flags}",
            hint=f"its options: {takes}",
        )
    full = dict(resolved.defaults)
    if chosen_preset is not None:
        full.update(chosen_preset.params)
    full.update(params)
    for name, allowed in resolved.choices.items():
        if full.get(name) not in allowed:
            flag = PARAMS[name].flag if name in PARAMS else name
            raise ParameterError(
                f"{flag} {full.get(name)!r} is not a valid {name} for scheme {resolved.name!r}",
                hint=did_you_mean(str(full.get(name)), allowed),
            )
    return resolved, full
