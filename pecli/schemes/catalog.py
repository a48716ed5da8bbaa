"""The scheme registry: every scheme described without numpy, and :func:`resolve`.

This module is imported by ``pecli --help`` and by every command to build its options, so it
must stay cheap: plain data only. The implementation of a scheme is named by ``impl``
("module:function") and imported only when a table is actually computed. The parameters live
in :mod:`pecli.schemes.params`, the presets in :mod:`pecli.schemes.presets`, the size rules in
:mod:`pecli.schemes._sizes`.

Adding a scheme is one function in a family module plus one :class:`Scheme` entry here; its
parameters come from :data:`~pecli.schemes.params.PARAMS`, so every command (generate, plot,
distance, compare…) accepts its options at once. CONTRIBUTING.md lists the files.

>>> get_scheme("sinusoidal").defaults["base"]
10000.0
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pecli.errors import ParameterError, did_you_mean, respelled
from pecli.schemes._sizes import (
    Sizes,
    alibi_sizes,
    axial_sizes,
    coordinate_sizes,
    fourier_sizes,
    grid_sizes,
    query_key_sizes,
    sequence_sizes,
    t5_sizes,
)
from pecli.schemes.checks import choice
from pecli.schemes.presets import get_preset, presets_of
from pecli.text import literal_repr

__all__ = [
    "SCHEMES",
    "Scheme",
    "find_scheme",
    "get_scheme",
    "option_taking",
    "resolve",
    "schemes_where",
    "value_elsewhere",
]


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
    #: "module:function" ``(length, dim, **params) -> array``: each row's largest position, when a row's
    #: angles are not bounded by its row number (a grid's scaled coordinates); the float32 noise compare allows
    row_positions: str | None = None
    #: "module:Class" of the table description a file of this scheme reads back as
    spec: str = "pecli.schemes.spec:TableSpec"
    kind: str = "table"
    axes: str = "positions"
    column_segments: int = 1
    bounds: tuple[float, float] | None = None
    length_independent: bool = False
    angles: bool = False
    #: the arithmetics its tables can be computed in (``arithmetic`` parameter); () for float64 only
    arithmetics: tuple[str, ...] = ()
    search: str = "choices"
    relative: str | None = None
    #: a relative view "bias"/"buckets": "module:function" ``(offsets, **params) -> (heads, *offsets.shape)``,
    #: float64, of key − query offsets (the parameters it does not use go to its ``**_``)
    bias: str | None = None
    #: "module:function" ``(**params) -> list[str]``: the name of each head ``bias`` returns (its panels' titles)
    bias_heads: str | None = None
    #: "module:function" ``(params) -> pecli.schemes.mistakes.Mistakes``: the known mistakes in its tables
    mistakes: str | None = None
    #: for a per-head scheme: the parameters its bias at one query row per head, a (heads, 1, len) table,
    #: takes unless a spec sets them (ALiBi: the key form m·j, HF BLOOM's ``build_alibi_tensor``)
    query_row: Mapping[str, Any] = field(default_factory=dict)

    @property
    def takes_dim(self) -> bool:
        """Whether the table has an embedding dimension: a bias over query and key positions has none.

        >>> SCHEMES["sinusoidal"].takes_dim, SCHEMES["alibi"].takes_dim
        (True, False)
        """
        return self.axes != "query-key"

    @property
    def function(self) -> Callable[..., Any]:
        return _load(self.impl)

    def known_mistakes(self, params: Mapping[str, Any]) -> Any:
        """What :attr:`mistakes` says of tables made with ``params`` (None when the scheme names none).

        >>> get_scheme("rope").known_mistakes({}).base
        'base'
        """
        return None if self.mistakes is None else _load(self.mistakes)(params)

    @property
    def bias_function(self) -> Callable[..., Any]:
        """The function ``bias`` names (imported now)."""
        if self.bias is None:
            raise ValueError(f"{self.name} has no relative bias")
        return _load(self.bias)

    def relative_bias(self, offsets: Any, params: Mapping[str, Any]) -> Any:
        """The bias (heads, *offsets.shape), float64, at key − query ``offsets`` (``bias``'s function).

        >>> get_scheme("alibi").relative_bias([0, -1, 2], {"heads": 2}).tolist()
        [[0.0, -0.0625, -0.125], [0.0, -0.00390625, -0.0078125]]
        """
        import numpy as np

        return self.bias_function(np.asarray(offsets), **params)

    def head_names(self, params: Mapping[str, Any]) -> list[str]:
        """The name of each head :meth:`relative_bias` returns, for the panels' titles.

        >>> get_scheme("alibi").head_names({"heads": 2})
        ['head 0, slope 0.0625', 'head 1, slope 0.003906']
        """
        if self.bias_heads is None:
            raise ValueError(f"{self.name} has no relative bias")
        return list(_load(self.bias_heads)(**params))

    @property
    def is_sequence(self) -> bool:
        """True for a plain scheme: ``(length, dim)`` in, a ``(length, dim)`` table out.

        >>> get_scheme("binary").is_sequence, get_scheme("alibi").is_sequence
        (True, False)
        """
        return self.sizes is sequence_sizes

    @property
    def spec_class(self) -> Any:
        """The :class:`~pecli.schemes.spec.TableSpec` (sub)class of this scheme's files (imported now).

        >>> get_scheme("timestep").spec_class.__name__
        'TimestepSpec'
        """
        return _load(self.spec)

    def derived_metadata(self, sizes: Sizes, params: Mapping[str, Any]) -> dict[str, str]:
        """Values the parameters imply (e.g. YaRN's attention factor), as metadata strings.

        >>> yarn = {"scaling": "yarn", "factor": 4.0, "original_max_position": 4}
        >>> get_scheme("rope").derived_metadata(Sizes(8, 4, (8, 4)), yarn)
        {'attention_factor': '1.1386294361119891'}
        """
        return _load(self.derived)(sizes.length, sizes.dim, **params) if self.derived else {}

    def positions_of_rows(self, length: int | None, dim: int | None, params: Mapping[str, Any]) -> Any:
        """Each row's largest position (:attr:`row_positions`), or None when rows are bounded by their number.

        >>> get_scheme("sincos2d").positions_of_rows(None, 4, {"grid": "1,2", "base_size": 4.0}).tolist()
        [0.0, 2.0]
        """
        return _load(self.row_positions)(length, dim, **params) if self.row_positions else None


def _load(impl: str) -> Callable[..., Any]:
    module_name, function_name = impl.split(":")
    return getattr(importlib.import_module(module_name), function_name)


_SINUSOIDAL = "pecli.schemes.sinusoidal:sinusoidal_table"
_INDEXING = "pecli.schemes.indexing"
_ARITHMETICS = ("float64", "float32", "bfloat16", "float16")  # pecli.schemes.arithmetic.ARITHMETICS

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
                    "padding_idx": None,
                    "amplitude": 1.0,
                    "pad_dim": False,
                    "arithmetic": None,
                },
                choices={"layout": ("interleaved", "split"), "arithmetic": _ARITHMETICS},
                arithmetics=_ARITHMETICS,
                bounds=(-1.0, 1.0),
                angles=True,
                search="sinusoids",
                length_independent=True,
                mistakes="pecli.schemes.mistakes:sinusoidal_mistakes",
            ),
            Scheme(
                "learned",
                "pecli.schemes.learned:learned_table",
                "a learned position-embedding table as initialised before training",
                "PE[p, i] ~ N(0, std²), numpy PCG64 default_rng(seed), drawn row-major",
                "BERT (Devlin et al. 2018; initializer_range 0.02); ConvS2S (Gehring et al. 2017; N(0, 0.1²))",
                defaults={"std": 0.02, "seed": 0},
                search="none",
                length_independent=True,
            ),
            Scheme(
                "count",
                f"{_INDEXING}:count_table",
                "simple count indexing: every column holds the position",
                "PE[p, :] = p",
                "Dufter et al. 2022, Position Information in Transformers: An Overview, §3.1",
                length_independent=True,
            ),
            Scheme(
                "count-normalized",
                f"{_INDEXING}:count_normalized_table",
                "count indexing normalised by the table length (changes with len)",
                "PE[p, :] = p / len",
                "Dufter et al. 2022, Position Information in Transformers: An Overview, §3.1",
                bounds=(0.0, 1.0),
            ),
            Scheme(
                "binary",
                f"{_INDEXING}:binary_table",
                "binary indexing: the bits of the position, least (lsb) or most (msb) significant first",
                "PE[p, k] = (p >> k) & 1 (lsb); (p >> (d − 1 − k)) & 1 (msb)",
                "Kazemnejad 2019, Transformer Architecture: The Positional Encoding (blog post)",
                defaults={"bit_order": "lsb"},
                choices={"bit_order": ("lsb", "msb")},
                bounds=(0.0, 1.0),
                length_independent=True,
            ),
            Scheme(
                "binary-sine",
                f"{_INDEXING}:binary_sine_table",
                "the continuous relative of binary indexing",
                "PE[p, k] = sin(p·π / 2^(k+1))",
                "Kazemnejad 2019, Transformer Architecture: The Positional Encoding (blog post)",
                bounds=(-1.0, 1.0),
                angles=True,
                length_independent=True,
            ),
            Scheme(
                "memn2n",
                f"{_INDEXING}:memn2n_table",
                "position encoding of End-to-End Memory Networks",
                "l[j, k] = (1 − j/J) − (k/d)(1 − 2j/J), j = 1..J (J = len), k = 1..d",
                "Sukhbaatar et al. 2015, End-To-End Memory Networks, §4.1 (arXiv:1503.08895)",
                bounds=(-1.0, 1.0),
            ),
            # diffusion timestep embeddings; row p embeds t = p (pecli timestep takes any real t)
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
                    "arithmetic": None,
                },
                choices={"arithmetic": _ARITHMETICS},
                arithmetics=_ARITHMETICS,
                spec="pecli.schemes.timestep:TimestepSpec",
                mistakes="pecli.schemes.mistakes:timestep_mistakes",
                axes="timesteps",
                column_segments=2,
                bounds=(-1.0, 1.0),
                angles=True,
                length_independent=True,
            ),
            # rotary, attention-bias, 2-D grid and Fourier-feature schemes
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
                    "truncate": None,
                    "mscale": None,
                    "mscale_all_dim": None,
                    "attention_factor": None,
                    "short_factor": None,
                    "long_factor": None,
                    "offset": 0,
                    "partial_rotary_factor": 1.0,
                    "rotary_dim": None,
                    "arithmetic": None,
                    "freqs_dtype": None,
                },
                choices={
                    "layout": ("half", "interleaved"),
                    "part": ("cos", "sin", "angle"),
                    "scaling": ("none", "linear", "dynamic", "yarn", "llama3", "longrope", "proportional"),
                    "arithmetic": _ARITHMETICS,
                    "freqs_dtype": ("float32", "bfloat16", "float16"),  # pecli.schemes.rope.FREQS_DTYPES
                },
                arithmetics=_ARITHMETICS,
                parts=("cos", "sin", "angle"),
                default_parts=("cos", "sin"),
                derived="pecli.schemes.rope:rope_metadata",
                mistakes="pecli.schemes.mistakes:rope_mistakes",
                kind="rotary",
                bounds=(-1.0, 1.0),
                angles=True,
                search="rotary",
                relative="score",
            ),
            Scheme(
                "rope2d",
                "pecli.schemes.rope2d:rope2d_table",
                "axial RoPE over an H × W grid (diffusers), or Qwen2-VL's t,h,w sections (--sections)",
                "2-D: [RoPE_{d/2}(w) | RoPE_{d/2}(h)], θ_i = base^(−2i/(d/2)), pairs interleaved; "
                "--sections t,h,w: θ_k = base^(−2k/d), frequency k turns with its section's coordinate",
                "huggingface/diffusers src/diffusers/models/embeddings.py, get_2d_rotary_pos_embed; "
                "huggingface/pytorch-image-models timm/layers/pos_embed_sincos.py, build_rotary_pos_embed "
                "(--grid-indexing ij); "
                "huggingface/transformers src/transformers/models/qwen2_vl/modeling_qwen2_vl.py, "
                "Qwen2VLRotaryEmbedding (mrope_section)",
                defaults={
                    "grid": None,
                    "base": 10000.0,
                    "layout": None,
                    "part": None,
                    "sections": None,
                    "offset": 0,
                    "grid_indexing": None,
                },
                choices={
                    "layout": ("interleaved", "half"),
                    "part": ("cos", "sin", "angle"),
                    "grid_indexing": ("xy", "ij"),
                },
                sizes=axial_sizes,
                parts=("cos", "sin", "angle"),
                default_parts=("cos", "sin"),
                kind="rotary",
                axes="grid",
                bounds=(-1.0, 1.0),
                angles=True,
                search="grid",
            ),
            Scheme(
                "alibi",
                "pecli.schemes.alibi:alibi_table",
                "ALiBi attention biases: a per-head linear penalty on distance",
                "bias[h, i, j] = −|i − j|·m_h, m_h = 2^(−8(h+1)/H) for H a power of two",
                "Press et al. 2022, Train Short, Test Long (arXiv:2108.12409); "
                "ofirpress/attention_with_linear_biases fairseq/models/transformer.py, get_slopes",
                defaults={
                    "heads": None,
                    "head": None,
                    "part": None,
                    "form": "distance",
                    "total_heads": None,
                    "arithmetic": None,
                    "head_dim": None,
                },
                choices={
                    "part": ("bias", "slopes"),
                    "form": ("distance", "key"),
                    "arithmetic": ("float64", "bfloat16"),
                },
                sizes=alibi_sizes,
                parts=("bias", "slopes"),
                default_parts=("bias",),
                kind="bias",
                axes="query-key",
                bounds=(-math.inf, 0.0),
                search="biases",
                relative="bias",
                bias="pecli.schemes.alibi:alibi_bias",
                bias_heads="pecli.schemes.alibi:alibi_head_names",
                mistakes="pecli.schemes.mistakes:alibi_mistakes",
                query_row={"form": "key"},
            ),
            Scheme(
                "sincos2d",
                "pecli.schemes.grid:sincos2d_table",
                "2-D sin-cos over an H × W grid of patches (ViT/MAE), tokens row-major",
                "by-axis: [sin(w·ω) | cos(w·ω) | sin(h·ω) | cos(h·ω)], ω_k = base^(−k/(d/4)); "
                "by-function [sin h | sin w | cos h | cos w]; by-axis-h-first [sin h | cos h | sin w | cos w]; "
                "interleaved [sin h₀, cos h₀, … | sin w₀, cos w₀, …] (any d: ⌈d/4⌉ frequencies per axis)",
                "facebookresearch/mae util/pos_embed.py, get_2d_sincos_pos_embed; huggingface/pytorch-image-models "
                "timm/layers/pos_embed_sincos.py, build_sincos2d_pos_embed; huggingface/diffusers "
                "src/diffusers/models/embeddings.py, PatchEmbed.cropped_pos_embed; tatp22/multidim-positional-encoding "
                "positional_encodings/torch_encodings.py, PositionalEncoding2D",
                defaults={
                    "grid": None,
                    "cls_token": False,
                    "extra_tokens": None,
                    "base": 10000.0,
                    "layout": "by-axis",
                    "base_size": None,
                    "interpolation_scale": 1.0,
                    "freq_shift": None,
                    "reverse_coord": False,
                    "pos_embed_max_size": None,
                },
                choices={"layout": ("by-axis", "by-function", "by-axis-h-first", "interleaved")},
                sizes=grid_sizes,
                axes="patches",
                column_segments=4,
                bounds=(-1.0, 1.0),
                angles=True,
                search="grid",
                row_positions="pecli.schemes.grid:sincos2d_row_positions",
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
                bounds=(-1.0, 1.0),
                search="fourier",
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
                bounds=(-1.0, 1.0),
                search="none",
            ),
            Scheme(
                "coordconv",
                "pecli.schemes.grid:coordconv_table",
                "CoordConv coordinate channels: row and column in [−1, 1] (d 3 adds the radius)",
                "mkocabas: [2i/(H−1) − 1, 2j/(W−1) − 1, √((x − 0.5)² + (y − 0.5)²)]; "
                "uber: [2j/(H−1) − 1, 2i/(W−1) − 1, √(xx² + yy²)] for token (i, j)",
                "Liu et al. 2018, An Intriguing Failing of CNNs and the CoordConv Solution "
                "(arXiv:1807.03247); layout mkocabas: mkocabas/CoordConv-pytorch coordconv.py, AddCoords "
                "(with_r); layout uber: uber-research/CoordConv CoordConv.py, AddCoords (with_r)",
                defaults={"grid": None, "layout": "mkocabas"},
                choices={"layout": ("mkocabas", "uber")},
                sizes=coordinate_sizes,
                axes="pixels",
                bounds=(-1.0, 1.5 * math.sqrt(2.0)),  # the radius of a corner, √(1.5² + 1.5²)
                search="grid",
            ),
            # relative-position bias schemes
            Scheme(
                "t5",
                "pecli.schemes.t5:t5_table",
                "T5's relative-position buckets (len × len), or the learned per-head bias they index",
                "bucket(j − i): exact below num_buckets/4 (per direction), then log-spaced up to max_distance",
                "Raffel et al. 2020, T5 (arXiv:1910.10683) §2.1; huggingface/transformers "
                "src/transformers/models/t5/modeling_t5.py, T5Attention._relative_position_bucket",
                defaults={
                    "num_buckets": 32,
                    "max_distance": 128,
                    "bidirectional": True,
                    "part": None,
                    "bias_from": None,
                    "bias_key": None,
                },
                choices={"part": ("buckets", "bias")},
                sizes=t5_sizes,
                parts=("buckets", "bias"),
                default_parts=("buckets",),
                kind="bias",
                axes="query-key",
                bounds=(0.0, math.inf),  # bucket indices (a learned bias is unbounded)
                search="biases",  # its relative "buckets": the bucket matrix read off (identify)
                relative="buckets",
                mistakes="pecli.schemes.mistakes:t5_mistakes",
                bias="pecli.schemes.t5:t5_bias_at",
                bias_heads="pecli.schemes.t5:t5_head_names",
            ),
            Scheme(
                "kerple",
                "pecli.schemes.kerple:kerple_table",
                "KERPLE's logarithmic bias: a distance penalty that flattens with the log of the distance",
                "bias[i, j] = −r1·log(1 + r2·|i − j|), r1, r2 > 0 (learned per head in a model)",
                "Chi et al. 2022, KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation "
                "(arXiv:2205.09921), the log variant; github.com/chijames/KERPLE megatron/mpu/layers.py, "
                "ParallelKerpleLog (bias −p·log(1 + a·|m − n|), p and a clamped at ≥ 1e-2 per head)",
                defaults={"r1": 1.0, "r2": 1.0},
                sizes=query_key_sizes,
                kind="bias",
                axes="query-key",
                bounds=(-math.inf, 0.0),
                length_independent=True,
                search="none",
                relative="bias",
                bias="pecli.schemes.kerple:kerple_bias",
                bias_heads="pecli.schemes.kerple:kerple_head_names",
            ),
        )
    }
)


def find_scheme(name: object) -> Scheme | None:
    """The registered scheme called ``name``, or None (a file's metadata may name anything, or nothing).

    >>> find_scheme("alibi").kind, find_scheme("nope"), find_scheme(None)
    ('bias', None, None)
    """
    return SCHEMES.get(name) if isinstance(name, str) else None


def schemes_where(**fields: Any) -> tuple[str, ...]:
    """The names of the schemes whose fields have these values, in registration order.

    >>> schemes_where(kind="bias")
    ('alibi', 't5', 'kerple')
    """
    return tuple(
        name for name, scheme in SCHEMES.items() if all(getattr(scheme, key) == value for key, value in fields.items())
    )


def get_scheme(name: str) -> Scheme:
    """The registered scheme called ``name`` (a :class:`ParameterError` naming the valid ones if none).

    >>> get_scheme("binary").defaults
    {'bit_order': 'lsb'}
    """
    scheme = SCHEMES.get(name) if isinstance(name, str) else None  # a list or a number names none
    if scheme is None:
        raise ParameterError(
            f"unknown scheme {literal_repr(name)}", hint=value_elsewhere(name) or did_you_mean(name, SCHEMES)
        )
    return scheme


def resolve(scheme: str | None, preset: str | None, params: Mapping[str, Any]) -> tuple[Scheme, dict[str, Any]]:
    """Combine a scheme name, a preset and explicit parameters into the scheme and its full parameters.

    Explicit ``params`` override the preset's, which override the scheme's defaults. A parameter
    the scheme does not take is an error, not silently ignored.

    >>> scheme, params = resolve(None, "tensor2tensor", {"base": 500.0})
    >>> scheme.name, params["layout"], params["freq_shift"], params["base"]
    ('sinusoidal', 'split', 1.0, 500.0)
    """
    if scheme is not None:
        get_scheme(scheme)  # an unknown scheme is named as such before its preset is looked for
    try:
        chosen_preset = get_preset(preset, scheme) if preset is not None else None
    except ParameterError as error:  # rope --preset llama3: a value of its --scaling
        raise _value_of_another_option(error, scheme, "preset", preset) from None
    if chosen_preset is not None and scheme is not None and scheme != chosen_preset.scheme:
        raise ParameterError(
            f"preset {literal_repr(chosen_preset.name)} is a {literal_repr(chosen_preset.scheme)} "
            f"preset, not {literal_repr(scheme)}",
            hint=f"{scheme}'s presets: {', '.join(own)}"
            if (own := presets_of(scheme))
            else f"drop the scheme or use {literal_repr(chosen_preset.scheme)}",
        )
    default = chosen_preset.scheme if chosen_preset else "sinusoidal"
    resolved = get_scheme(scheme if scheme is not None else default)
    unknown = [name for name in params if name not in resolved.defaults]
    if unknown:
        takes = ", ".join(f"{{{name}}}" for name in resolved.defaults) or "none"
        raise ParameterError(
            f"scheme {literal_repr(resolved.name)} does not take {', '.join(f'{{{name}}}' for name in unknown)}",
            hint=f"its options: {takes}",
        )
    full = dict(resolved.defaults)
    if chosen_preset is not None:
        full.update(chosen_preset.params)
    full.update(params)
    for name, allowed in resolved.choices.items():
        if full.get(name) is None and resolved.defaults.get(name) is None:
            continue  # an optional parameter left unset
        try:
            choice(name, full.get(name), allowed, scheme=resolved.name)
        except ParameterError as error:  # rope --layout llama3: a value of its --scaling
            raise _value_of_another_option(error, resolved.name, name, full.get(name)) from None
    return resolved, full


def _value_of_another_option(error: ParameterError, scheme: str | None, name: str, value: object) -> ParameterError:
    """``error`` (a bad value of option ``name``), its hint replaced by :func:`value_elsewhere`'s if it has one."""
    hint = value_elsewhere(value, scheme, besides=name)
    if hint is None:
        return error
    return ParameterError(respelled(error, lambda *_: None)[0], hint=hint)


def value_elsewhere(value: object, scheme: str | None = None, *, besides: str | None = None) -> str | None:
    """The hint for ``value`` given where it does not belong, when it is a value of one of ``scheme``'s options.

    Its option, from :func:`option_taking`, with an example that runs (the options the value needs
    too). None when no option takes ``value``.

    >>> value_elsewhere("llama3", "rope", besides="preset")
    "'llama3' is a value of {scaling}: e.g. {scaling=llama3} {factor=4} {original_max_position=4096}"
    >>> value_elsewhere("split")
    "'split' is a value of sinusoidal's {layout}: e.g. sinusoidal {layout=split}"
    """
    found = option_taking(value, scheme, besides=besides)
    if found is None:
        return None
    owner, option = found
    whose, named = ("", "") if scheme in SCHEMES else (f"{owner}'s ", f"{owner} ")
    example = " ".join(filter(None, (f"{{{option}={value}}}", _needed_with(option, str(value)))))
    return f"{literal_repr(value)} is a value of {whose}{{{option}}}: e.g. {named}{example}"


def option_taking(value: object, scheme: str | None = None, *, besides: str | None = None) -> tuple[str, str] | None:
    """(scheme, option) of the first option of ``scheme`` (of any scheme, when none is named) that takes ``value``.

    The options are the scheme's choices and its presets (``preset``); not ``besides`` (the option
    ``value`` was given to), nor an option whose values share one with ``besides``' (``arithmetic`` and
    ``freqs_dtype`` hold the same kind of value: a bad one there is no misplaced one).

    >>> option_taking("llama3"), option_taking("fairseq", "sinusoidal", besides="layout")
    (('rope', 'scaling'), ('sinusoidal', 'preset'))
    >>> option_taking("float64", "rope", besides="freqs_dtype"), option_taking("nope")
    (None, None)
    """
    if not isinstance(value, str):
        return None
    for owner in [SCHEMES[scheme]] if scheme is not None and scheme in SCHEMES else SCHEMES.values():
        options = {**owner.choices, "preset": tuple(presets_of(owner.name))}
        own = set(options.get(besides, ())) if besides else set()
        for option, values in options.items():
            if option != besides and value in values and not own.intersection(values):
                return owner.name, option
    return None


def _needed_with(name: str, value: str) -> str:
    """The options a value of parameter ``name`` cannot do without, with examples (``scaling=llama3``: its factor).

    >>> _needed_with("scaling", "yarn"), _needed_with("scaling", "none"), _needed_with("layout", "split")
    ('{factor=4} {original_max_position=4096}', '', '')
    """
    if name != "scaling":
        return ""
    from pecli.schemes.rope_scaling import scaling_parameters  # numpy: only on this error's way

    try:
        scaling_parameters(value, {})
    except ParameterError as needs:  # "{scaling=yarn} needs {factor} … (e.g. {factor=4} …)"
        return (respelled(needs, lambda *_: None)[1] or "").removeprefix("e.g. ")
    return ""
