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
from pecli.schemes._checks import fourier_width, grid_shape, positive_int

__all__ = [
    "PARAMS",
    "PRESETS",
    "SCHEMES",
    "Param",
    "Preset",
    "Scheme",
    "Sizes",
    "get_preset",
    "get_scheme",
    "preset_names",
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
                "Column layout. sinusoidal: interleaved [sin, cos, …] or split [sin … | cos …]; "
                "rope: half (HF Llama) or interleaved (GPT-J/Meta pairs); sincos2d: by-axis or by-function.",
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
            # issue 6: modern schemes
            Param(
                "part",
                "--part",
                str,
                "One tensor of a multi-part scheme (rope: cos|sin|angle; alibi: bias|slopes).",
                "PART",
            ),
            Param("heads", "--heads", int, "Number of attention heads (ALiBi).", "H"),
            Param("head", "--head", int, "One head's (len × len) ALiBi bias, 0-based (default: all heads).", "I"),
            Param("grid", "--grid", str, "Grid height and width as H,W; tokens are row-major (rows = H·W).", "H,W"),
            Param(
                "cls_token",
                "--cls-token",
                bool,
                "Prepend a zero row for a [CLS] token (MAE, diffusers).",
                negative_flag="--no-cls-token",
            ),
            Param(
                "base_size",
                "--base-size",
                float,
                "diffusers: positions i / (H / base_size) / interpolation_scale (unset: plain indices).",
                "N",
            ),
            Param("interpolation_scale", "--interpolation-scale", float, "diffusers: divide positions by this.", "S"),
            Param("num_freqs", "--num-freqs", int, "Frequency bands L (d = 2L, + 1 with --include-input).", "L"),
            Param(
                "include_input",
                "--include-input",
                bool,
                "Put the position itself in column 0 (nerf-pytorch's default).",
                negative_flag="--no-include-input",
            ),
            Param(
                "log_sampling",
                "--log-sampling",
                bool,
                "Frequencies 2^0 … 2^(L−1) (log) or evenly spaced between them (linear).",
                negative_flag="--linear-sampling",
            ),
            Param(
                "pi",
                "--pi",
                bool,
                "Multiply frequencies by π (NeRF paper) or not (nerf-pytorch).",
                negative_flag="--no-pi",
            ),
            Param("positions", "--positions", str, "normalized: positions mapped to [−1, 1]; raw: 0, 1, 2, …", "KIND"),
            Param("sigma", "--sigma", float, "Standard deviation σ of the random frequencies B ~ N(0, σ²).", "SIGMA"),
            Param(
                "scaling",
                "--scaling",
                str,
                "RoPE context scaling (HF rope_type): none|linear|dynamic|yarn|llama3.",
                "KIND",
            ),
            Param("factor", "--factor", float, "RoPE scaling factor (linear, dynamic, yarn, llama3).", "F"),
            Param(
                "original_max_position",
                "--original-max-position",
                int,
                "Context length the model was trained with (dynamic, yarn, llama3).",
                "N",
            ),
            Param("low_freq_factor", "--low-freq-factor", float, "llama3: low-frequency wavelength factor (1).", "F"),
            Param(
                "high_freq_factor", "--high-freq-factor", float, "llama3: high-frequency wavelength factor (4).", "F"
            ),
            Param("beta_fast", "--beta-fast", float, "YaRN: rotations where extrapolation stops (32).", "B"),
            Param("beta_slow", "--beta-slow", float, "YaRN: rotations where interpolation starts (1).", "B"),
            Param(
                "apply_attention_factor",
                "--apply-attention-factor",
                bool,
                "YaRN: multiply cos and sin by 0.1·ln(factor) + 1, as HF's rotary embedding does.",
                negative_flag="--no-attention-factor",
            ),
        )
    }
)


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
    missing = [flag for flag, value in (("--d", dim), ("--len", length)) if value is None]
    if missing:
        raise ParameterError(f"missing {' and '.join(missing)}", hint="e.g. pecli generate --d 512 --len 2048")
    length = positive_int("len", length, flag="--len")
    dim = positive_int("d", dim, flag="--d")
    return Sizes(length, dim, (length, dim))


def grid_sizes(
    length: int | None, dim: int | None, params: Mapping[str, Any], *, default_dim: int | None = None
) -> Sizes:
    """Grid schemes: ``--grid H,W`` gives H·W tokens (one more with ``--cls-token``); ``--len`` may repeat it.

    >>> grid_sizes(None, 8, {"grid": "2,3", "cls_token": True}).shape
    (7, 8)
    """
    if params.get("grid") is None:
        raise ParameterError("missing --grid", hint="pass e.g. --grid 14,14 (height, width)")
    height, width = grid_shape(params["grid"])
    tokens = height * width + bool(params.get("cls_token"))
    if length is not None and length != tokens:
        raise ParameterError(
            f"--len {length} does not match --grid {height},{width}, which has {tokens} tokens",
            hint="drop --len: the grid sets it",
        )
    if dim is None:
        dim = default_dim
    if dim is None:
        raise ParameterError("missing --d", hint="e.g. --d 768")
    dim = positive_int("d", dim, flag="--d")
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
        raise ParameterError("missing --len", hint="e.g. --len 64")
    width = fourier_width(dim, params.get("num_freqs"), bool(params.get("include_input")))
    return Sizes(positive_int("len", length, flag="--len"), width, (length, width))


def alibi_sizes(length: int | None, dim: int | None, params: Mapping[str, Any]) -> Sizes:
    """ALiBi: (heads, len, len) biases, one head's (len, len) with ``--head``, or (heads,) slopes.

    >>> alibi_sizes(5, None, {"heads": 4, "head": None, "part": "bias"}).shape
    (4, 5, 5)
    """
    if dim is not None:
        raise ParameterError("scheme 'alibi' has no --d (its biases are len × len per head)", hint="drop --d")
    if params.get("heads") is None:
        raise ParameterError("missing --heads", hint="pass e.g. --heads 8")
    heads = positive_int("heads", params["heads"], flag="--heads")
    head = params.get("head")
    if head is not None and (isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < heads):
        raise ParameterError(f"--head must be in 0..{heads - 1}, got {head!r}", hint=f"pass e.g. --head 0 (of {heads})")
    if params.get("part") == "slopes":
        if head is not None:
            raise ParameterError("--head picks one bias matrix, not a slope", hint="drop --head with --part slopes")
        return Sizes(length, None, (heads,))
    if length is None:
        raise ParameterError("missing --len", hint="e.g. --len 128")
    length = positive_int("len", length, flag="--len")
    return Sizes(length, None, (length, length) if head is not None else (heads, length, length))


@dataclass(frozen=True)
class Scheme:
    """One encoding scheme: a pure function ``(length, dim, **params) -> array``.

    Most schemes return a ``(length, dim)`` table; ``sizes`` is the rule that says what a scheme
    takes and returns otherwise (a grid's tokens, ALiBi's heads). A scheme with ``parts`` returns
    one of several tensors, chosen by its ``part`` parameter; ``default_parts`` are written together.
    """

    name: str
    impl: str  #: "module:function" of the implementation, imported on first use
    summary: str
    formula: str
    source: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sizes: Callable[[int | None, int | None, Mapping[str, Any]], Sizes] = sequence_sizes
    parts: tuple[str, ...] = ()
    default_parts: tuple[str, ...] = ()
    #: "module:function" giving derived values to record in a file's metadata, from the parameters
    derived: str | None = None

    @property
    def function(self) -> Callable[..., Any]:
        return _load(self.impl)

    def derived_metadata(self, sizes: Sizes, params: Mapping[str, Any]) -> dict[str, str]:
        """Values the parameters imply (e.g. YaRN's attention factor), as metadata strings.

        >>> get_scheme("rope").derived_metadata(Sizes(8, 4, (8, 4)), {"scaling": "none"})
        {'attention_factor': '1.0'}
        """
        return _load(self.derived)(sizes.length, sizes.dim, **params) if self.derived else {}


def _load(impl: str) -> Callable[..., Any]:
    module_name, function_name = impl.split(":")
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
            # issue 6: modern schemes
            Scheme(
                "rope",
                "pecli.schemes.rope:rope_table",
                "rotary position embedding: cos and sin tables that rotate query/key pairs",
                "θ[p, i] = p·base^(−2i/d) (scaled per HF rope_type); q' = q·cos + rotate(q)·sin",
                "Su et al. 2021, RoFormer (arXiv:2104.09864); huggingface/transformers "
                "src/transformers/modeling_rope_utils.py (scalings) and models/llama/modeling_llama.py",
                defaults={
                    "base": 10000.0,
                    "layout": "half",
                    "part": None,
                    "scaling": "none",
                    "factor": None,
                    "original_max_position": None,
                    "low_freq_factor": None,
                    "high_freq_factor": None,
                    "beta_fast": None,
                    "beta_slow": None,
                    "apply_attention_factor": None,
                },
                choices={
                    "layout": ("half", "interleaved"),
                    "part": ("cos", "sin", "angle"),
                    "scaling": ("none", "linear", "dynamic", "yarn", "llama3"),
                },
                parts=("cos", "sin", "angle"),
                default_parts=("cos", "sin"),
                derived="pecli.schemes.rope:rope_metadata",
            ),
            Scheme(
                "alibi",
                "pecli.schemes.alibi:alibi_table",
                "ALiBi attention biases: a per-head linear penalty on distance",
                "bias[h, i, j] = −|i − j|·m_h, m_h = 2^(−8(h+1)/H) for H a power of two",
                "Press et al. 2022, Train Short, Test Long (arXiv:2108.12409); "
                "ofirpress/attention_with_linear_biases fairseq/models/transformer.py, get_slopes",
                defaults={"heads": None, "head": None, "part": None},
                choices={"part": ("bias", "slopes")},
                sizes=alibi_sizes,
                parts=("bias", "slopes"),
                default_parts=("bias",),
            ),
            Scheme(
                "sincos2d",
                "pecli.schemes.grid:sincos2d_table",
                "2-D sin-cos over an H × W grid of patches (ViT/MAE), tokens row-major",
                "by-axis: [sin(w·ω) | cos(w·ω) | sin(h·ω) | cos(h·ω)], ω_k = base^(−k/(d/4))",
                "facebookresearch/mae util/pos_embed.py, get_2d_sincos_pos_embed",
                defaults={
                    "grid": None,
                    "cls_token": False,
                    "base": 10000.0,
                    "layout": "by-axis",
                    "base_size": None,
                    "interpolation_scale": 1.0,
                },
                choices={"layout": ("by-axis", "by-function")},
                sizes=grid_sizes,
            ),
            Scheme(
                "fourier",
                "pecli.schemes.fourier:fourier_table",
                "NeRF positional encoding γ(x) of positions normalised to [−1, 1]",
                "γ(x) = [x, sin(2^0·x), cos(2^0·x), …, sin(2^(L−1)·x), cos(2^(L−1)·x)] (·π with --pi)",
                "Mildenhall et al. 2020, NeRF (arXiv:2003.08934) §5.1; yenchenlin/nerf-pytorch "
                "run_nerf_helpers.py, Embedder",
                defaults={
                    "num_freqs": None,
                    "include_input": True,
                    "log_sampling": True,
                    "pi": False,
                    "positions": "normalized",
                },
                choices={"positions": ("normalized", "raw")},
                sizes=fourier_sizes,
            ),
            Scheme(
                "gaussian",
                "pecli.schemes.fourier:gaussian_table",
                "random Fourier features with Gaussian frequencies",
                "[sin(2π·B·x) | cos(2π·B·x)], B ~ N(0, σ²) (d/2 frequencies, numpy PCG64 default_rng(seed))",
                "Tancik et al. 2020, Fourier Features Let Networks Learn High Frequency Functions "
                "(arXiv:2006.10739), input_mapping in the authors' demo notebook",
                defaults={"sigma": 10.0, "seed": 0, "positions": "normalized"},
                choices={"positions": ("normalized", "raw")},
            ),
            Scheme(
                "coordconv",
                "pecli.schemes.grid:coordconv_table",
                "CoordConv coordinate channels: row and column in [−1, 1] (d 3 adds the radius)",
                "[2i/(H−1) − 1, 2j/(W−1) − 1, √((x − 0.5)² + (y − 0.5)²)] for token (i, j)",
                "Liu et al. 2018, An Intriguing Failing of CNNs and the CoordConv Solution "
                "(arXiv:1807.03247), AddCoords (with_r)",
                defaults={"grid": None},
                sizes=coordinate_sizes,
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
            # issue 6: 2-D sin-cos conventions
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
                "diffusers",
                "sincos2d",
                {"layout": "by-axis", "base_size": 16.0, "interpolation_scale": 1.0},
                "MAE's order with positions i / (H / base_size) / interpolation_scale (base_size 16)",
                "huggingface/diffusers src/diffusers/models/embeddings.py, get_2d_sincos_pos_embed",
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
    raise ParameterError(f"unknown preset {name!r}", hint=did_you_mean(name, preset_names()))


def preset_names() -> list[str]:
    """Every preset name once, in registration order (presets are registered per scheme).

    >>> preset_names().count("diffusers")
    1
    """
    return list(dict.fromkeys(preset.name for preset in PRESETS.values()))


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
    default = chosen_preset.scheme if chosen_preset else "sinusoidal"
    resolved = get_scheme(scheme if scheme is not None else default)
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
        if full.get(name) is None and resolved.defaults.get(name) is None:
            continue  # an optional parameter left unset
        if full.get(name) not in allowed:
            flag = PARAMS[name].flag if name in PARAMS else name
            raise ParameterError(
                f"{flag} {full.get(name)!r} is not a valid {name} for scheme {resolved.name!r}",
                hint=did_you_mean(str(full.get(name)), allowed),
            )
    return resolved, full
