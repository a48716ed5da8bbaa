"""The scheme parameters: one definition of each, shared by every scheme and every command.

Each :class:`Param` is a Python keyword argument of the scheme functions and the command-line
option that sets it, so ``pecli generate``, ``plot``, ``distance``… accept every parameter at once
and the CLI can name a parameter by its flag.

>>> PARAMS["base"].flag
'--base'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["PARAMS", "Param"]


@dataclass(frozen=True)
class Param:
    """A scheme parameter as the command line shows it (one definition for every scheme)."""

    name: str  #: Python keyword argument of the scheme function
    flag: str  #: command-line flag
    kind: type  #: int, float, str or bool (bool parameters become --x/--no-x switches)
    help: str
    metavar: str | None = None
    negative_flag: str | None = None  #: for bool switches: the "off" flag
    #: other flags for the same parameter, on commands that have no option of that name themselves
    aliases: tuple[str, ...] = ()


PARAMS: Mapping[str, Param] = MappingProxyType(
    {
        p.name: p
        for p in (
            Param("base", "--base", float, "Frequency base: ω_k = base^(−2k/d).", "B"),
            Param(
                "layout",
                "--layout",
                str,
                "Column layout: interleaved pairs [sin, cos, …] (rope: GPT-J/Meta), split halves "
                "[sin … | cos …], half (rope: HF Llama's rotate_half); coordconv: mkocabas (the PyTorch "
                "port) or uber (Uber's CoordConv.py: xx along the second axis).",
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
            Param(
                "offset", "--offset", int, "Position of row 0 (fairseq: padding_idx + 1 = 2; rope: positions N…).", "N"
            ),
            Param(
                "padding_idx",
                "--padding-idx",
                int,
                "Zero row P, as fairseq/FSMT/M2M100's full weight zeroes the padding token's row (P = 1).",
                "P",
            ),
            Param(
                "amplitude",
                "--amplitude",
                float,
                "Multiply the table by A (x-transformers' ScaledSinusoidalEmbedding: A = d^−0.5).",
                "A",
            ),
            Param(
                "pad_dim",
                "--pad-dim",
                bool,
                "Odd d: take the frequencies of d + 1 and drop the last column (positional-encodings' "
                "PositionalEncoding1D).",
                negative_flag="--no-pad-dim",
            ),
            Param(
                "arithmetic",
                "--arithmetic",
                str,
                "Compute as a library does in this precision: float64 (pecli: round once), float32 (transformers' "
                "rotary modules, diffusers, fairseq), bfloat16 or float16 (float32 with the positions held in that "
                "dtype, as position_ids.to(bfloat16) or timesteps.half()); alibi: bfloat16 is HF Falcon's "
                "slopes times positions in bfloat16.",
                "DTYPE",
            ),
            Param(
                "freqs_dtype",
                "--freqs-dtype",
                str,
                "RoPE: hold the inverse frequencies in this dtype, float32, bfloat16 or float16 (an engine's "
                "inv_freq.half(); diffusers' freqs_dtype): each angle p·θ drifts with p. Default: exact.",
                "DTYPE",
            ),
            Param("std", "--std", float, "Standard deviation of the N(0, std²) initialisation.", "STD"),
            Param("seed", "--seed", int, "Random seed (numpy PCG64): same seed, same table everywhere.", "SEED"),
            # diffusion timestep embeddings
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
            # rotary, attention-bias, 2-D grid and Fourier-feature schemes
            Param(
                "part",
                "--part",
                str,
                "One tensor of a multi-part scheme (default: all of its tensors).",
                "PART",
            ),
            Param("heads", "--heads", int, "Number of attention heads (ALiBi).", "H"),
            Param(
                "form",
                "--form",
                str,
                "ALiBi bias: distance −|i − j|·m (fairseq, x-transformers) or key m·j (HF BLOOM; same softmax "
                "on causal rows).",
                "FORM",
            ),
            Param(
                "total_heads",
                "--total-heads",
                int,
                "ALiBi: pad to this many heads with zero biases (x-transformers' total_heads).",
                "N",
            ),
            Param(
                "head_dim",
                "--head-dim",
                int,
                "ALiBi: divide the bias by √D (HF Falcon's alibi / math.sqrt(hidden_size // heads)).",
                "D",
            ),
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
                "extra_tokens",
                "--extra-tokens",
                int,
                "With --cls-token: this many leading zero rows instead of one (diffusers' extra_tokens; 0: none).",
                "N",
            ),
            Param(
                "base_size",
                "--base-size",
                float,
                "diffusers: positions i / (H / base_size) / interpolation_scale (unset: plain indices).",
                "N",
            ),
            Param("interpolation_scale", "--interpolation-scale", float, "diffusers: divide positions by this.", "S"),
            Param(
                "reverse_coord",
                "--reverse-coord",
                bool,
                "timm's reverse_coord: the table of the W,H grid (tokens down the columns, the column coordinate "
                "first).",
                negative_flag="--no-reverse-coord",
            ),
            Param(
                "pos_embed_max_size",
                "--pos-embed-max-size",
                int,
                "diffusers' PatchEmbed (SD3): build the M × M table, take the centred H × W crop.",
                "M",
            ),
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
            Param("positions", "--positions", str, "Positions normalized to [−1, 1], or raw (0, 1, 2, …).", "KIND"),
            Param(
                "bit_order",
                "--bit-order",
                str,
                "Binary columns: lsb puts bit k in column k; msb the most significant bit first, "
                "so a row reads as the position in binary (Kazemnejad's table).",
                "ORDER",
            ),
            Param("sigma", "--sigma", float, "Standard deviation σ of the random frequencies B ~ N(0, σ²).", "SIGMA"),
            Param(
                "scaling",
                "--scaling",
                str,
                "RoPE context scaling (HF rope_type).",
                "KIND",
            ),
            Param("factor", "--factor", float, "RoPE scaling factor: inv_freq / F (and the scalings' own uses).", "F"),
            Param(
                "original_max_position",
                "--original-max-position",
                int,
                "Context length the model was trained with (dynamic, yarn, llama3, longrope).",
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
                "YaRN, LongRoPE: multiply cos and sin by the attention factor, as HF's rotary embedding does.",
                negative_flag="--no-attention-factor",
            ),
            Param(
                "truncate",
                "--truncate",
                bool,
                "YaRN: round the ramp's correction range to whole dimensions (HF's default; gpt-oss: off).",
                negative_flag="--no-truncate",
            ),
            Param("mscale", "--mscale", float, "YaRN (DeepSeek): attention factor mscale(f, M) / mscale(f, A).", "M"),
            Param(
                "mscale_all_dim",
                "--mscale-all-dim",
                float,
                "YaRN (DeepSeek): the divisor's A in mscale(f, M) / mscale(f, A), mscale(f, x) = 0.1·x·ln f + 1.",
                "A",
            ),
            Param(
                "attention_factor",
                "--attention-factor",
                float,
                "YaRN, LongRoPE: the attention factor itself (unset: HF's formula from the factor).",
                "A",
            ),
            Param(
                "sections",
                "--sections",
                str,
                "rope2d: Qwen2-VL's mrope_section t,h,w: how many of the d/2 frequencies turn with the "
                "token's time, row and column (they sum to d/2; Qwen2-VL: 16,24,24).",
                "T,H,W",
            ),
            Param(
                "grid_indexing",
                "--grid-indexing",
                str,
                "rope2d: which axis's RoPE comes first, xy the column (diffusers) or ij the row (timm's default).",
                "ORDER",
            ),
            Param(
                "short_factor",
                "--short-factor",
                str,
                "LongRoPE: d/2 comma-separated frequency divisors for positions within the original context.",
                "F,F,…",
            ),
            Param(
                "long_factor",
                "--long-factor",
                str,
                "LongRoPE: d/2 comma-separated frequency divisors once positions pass the original context.",
                "F,F,…",
            ),
            Param(
                "partial_rotary_factor",
                "--partial-rotary-factor",
                float,
                "RoPE: rotate the first int(d·F) columns only (GPT-NeoX, Phi); proportional: int(F·d/2) frequencies.",
                "F",
            ),
            Param(
                "rotary_dim",
                "--rotary-dim",
                int,
                "RoPE: the width R the frequencies are computed over, base^(−2i/R) for i < ⌈R/2⌉, turning the first "
                "2⌈R/2⌉ columns (an odd R as transformers computes it: GLM-4 MoE's 21 → 22); default int(d·F).",
                "R",
            ),
            # KERPLE's logarithmic bias
            Param("r1", "--r1", float, "KERPLE: the bias's scale r1 > 0 in −r1·log(1 + r2·|i − j|).", "R"),
            Param("r2", "--r2", float, "KERPLE: the distance's scale r2 > 0 in −r1·log(1 + r2·|i − j|).", "R"),
            # T5 relative-position buckets
            Param("num_buckets", "--num-buckets", int, "T5: relative-position buckets in all (32).", "N"),
            Param("max_distance", "--max-distance", int, "T5: distance from which all share the last bucket.", "N"),
            Param(
                "bidirectional",
                "--bidirectional",
                bool,
                "T5: buckets for both directions (encoder) or past keys only (decoder).",
                negative_flag="--causal",
            ),
            Param(
                "bias_from",
                "--bias-from",
                str,
                "T5 --part bias: a file holding the learned (num_buckets, heads) bias table.",
                "FILE",
            ),
            Param(
                "bias_key",
                "--bias-key",
                str,
                "T5: the bias table's tensor in the --bias-from file (its name, or a part only it contains).",
                "KEY",
                aliases=("--key",),  # plot and distance read their own --key as this for a scheme that reads a file
            ),
        )
    }
)
