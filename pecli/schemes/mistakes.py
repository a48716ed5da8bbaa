"""What a scheme knows about the mistakes an implementation of it makes: the diagnosis's per-scheme facts.

A :class:`Mistakes` description names the parameter that is the frequency base, the one that
scales the frequencies (and its "off" value), the one that picks the column pairing, the ones that set a
partial rotary's width, the boolean
parameters whose flip is a known bug, and the constant factors a table may be off by. The
diagnosis (:mod:`pecli.analysis.diagnosis`) reads these and regenerates the variants through
:func:`pecli.encode`; it never branches on a scheme's name.

>>> hints = rope_mistakes({"scaling": "yarn", "factor": 4.0, "original_max_position": 2048})
>>> hints.base, hints.unscaled["scaling"], hints.pairing, hints.rotary_width, hints.rotary_fraction
('base', 'none', 'layout', 'rotary_dim', 'partial_rotary_factor')
>>> round(hints.factors["the attention factor squared (applied twice)"], 6)
1.296477
>>> [changes["original_max_position"] for code, _, changes in hints.swaps if code == "original_max_position"]
[8192, 4096, 1024, 16384, 32768, 65536, 131072]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Mistakes", "alibi_mistakes", "rope_mistakes", "sinusoidal_mistakes", "t5_mistakes", "timestep_mistakes"]


@dataclass(frozen=True)
class Mistakes:
    """The per-scheme facts a diagnosis needs (see the module's docstring)."""

    base: str | None = None  #: the parameter that is the frequency base
    #: the parameter overrides that turn the frequency scaling off (None: no scaling, or it is off already)
    unscaled: Mapping[str, Any] | None = None
    pairing: str | None = None  #: the parameter that picks how columns pair (its choices are the pairings)
    #: the pairing parameter's values and what each pairs (a word first: "halves (NeoX, rotate_half)"): B is the
    #: reference regenerated with another (found whatever the tables' rounding, which may hide the slow columns)
    pairings: tuple[tuple[str, str], ...] = ()
    toggles: tuple[str, ...] = ()  #: boolean parameters whose flip is a known mistake
    factors: Mapping[str, float] = field(default_factory=dict)  #: named constants a table may be scaled by
    #: the other parameter sets a known mistake uses instead: (code, what it is, the parameters it changes)
    swaps: tuple[tuple[str, str, Mapping[str, Any]], ...] = ()
    #: the per-head slopes implementations use, the reference's first: (code, the formula in words, the slopes)
    head_slopes: tuple[tuple[str, str, Any], ...] = ()
    #: the parameter that is row 0's position: the table at negated positions −p (angles taken as −p·ω, positions
    #: subtracted the wrong way: its sin columns negated) is regenerated from it, rows reversed
    position_offset: str | None = None
    #: the parameter that multiplies the positions: negated, it gives the table at −p (when no offset does)
    position_scale: str | None = None
    #: the parameter that holds the frequencies in a dtype (None: exact), and the dtypes an engine holds them in:
    #: the reference regenerated with its frequencies rounded (an engine's ``inv_freq.half()``)
    frequency_dtype: str | None = None
    frequency_dtypes: tuple[str, ...] = ()
    #: partial rotary: the parameter that sets the rotated width (columns) and the one that sets it as a fraction
    #: of the head (its "every column" value 1): an engine's table of another width than the reference's is the
    #: partial rotary ignored or assumed (:func:`pecli.analysis.partial_width.partial_width`); None: every column turns
    rotary_width: str | None = None
    rotary_fraction: str | None = None
    #: the dtypes an engine may hold the base in (a float16 θ): the reference regenerated with its base rounded to
    #: one (50000 → 49984), or, where the base overflows it (float16's largest value is 65504: 1e6 → inf), every
    #: frequency base^(−2i/d) but base^0 = 1 gone to 0
    base_dtypes: tuple[str, ...] = ()
    #: figures a swap's finding reports beside the parameters it changes, by the swap's code (the evidence that
    #: names it: Llama 3's band of wavelengths)
    evidence: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def rope_mistakes(params: Mapping[str, Any]) -> Mistakes:
    """RoPE's: the base, the frequency scaling, the pairing, YaRN's/LongRoPE's attention factor, LongRoPE's sets.

    >>> rope_mistakes({"scaling": "none"}).factors
    {}
    """
    from pecli.schemes.rope_scaling import (
        MSCALE_ALONE,
        SCALING_PARAMETERS,
        _mscale,
        rope_attention_factor,
        scaling_parameters,
    )

    scaling = params.get("scaling") or "none"
    factors: dict[str, float] = {}
    swaps: list[tuple[str, str, Mapping[str, Any]]] = []
    if scaling in ("yarn", "longrope") and params.get("factor"):
        given = {name: params.get(name) for name in SCALING_PARAMETERS}
        attention = rope_attention_factor(scaling, **scaling_parameters(scaling, given))
        if abs(attention - 1.0) > 1e-12 and params.get("apply_attention_factor"):
            factors = {
                "the attention factor (applied twice)": attention,
                "1 / the attention factor (not applied)": 1.0 / attention,
            }
        elif abs(attention - 1.0) > 1e-12:
            factors = {
                "the attention factor (applied where the reference leaves it out)": attention,
                "the attention factor squared (applied twice)": attention**2,
                "1 / the attention factor": 1.0 / attention,
            }
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            # B = cos·mscale(f, mscale) against A = cos·mscale(f, mscale)/mscale(f, mscale_all_dim): the divisor
            factors[MSCALE_ALONE] = _mscale(float(params["factor"]), mscale_all_dim)
    if scaling == "longrope" and params.get("short_factor") is not None and params.get("long_factor") is not None:
        swaps = [
            ("longrope_long_factor", "the long factor set where the short one applies",
             {"short_factor": params["long_factor"]}),
            ("longrope_short_factor", "the short factor set where the long one applies",
             {"long_factor": params["short_factor"]}),
        ]  # fmt: skip
    original = params.get("original_max_position")
    if scaling in ("yarn", "llama3") and original and params.get("factor"):
        # the context the scaling is computed from, taken from another field: the scaled length (the config's
        # max_position_embeddings, factor × it), or a length off by two
        scaled = round(float(params["factor"]) * int(original))
        lengths = [(scaled, f"the scaled length factor × {original}"), (2 * int(original), f"twice {original}"),
                   (int(original) // 2, f"half of {original}")]  # fmt: skip
        # a longer context read from another field (Llama 3.1's max_position_embeddings 131072 = 16 × 8192, not the
        # scaled 8 × 8192): the powers of two times the original context models ship
        lengths += [(times * int(original), f"{times} × {original}, a longer context such as the config's "
                     "max_position_embeddings") for times in (4, 8, 16, 32, 64)]  # fmt: skip
        tried = set()
        for length, why in lengths:
            if length in tried or length == int(original):
                continue
            tried.add(length)
            swaps.append(("original_max_position", f"original_max_position {length} ({why}) where {original} "
                          "applies", {"original_max_position": length}))  # fmt: skip
    evidence: dict[str, Mapping[str, Any]] = {}
    if scaling == "llama3" and original and params.get("factor"):
        for code, meaning, changes, figures in _llama3_unsmoothed(params):
            swaps.append((code, meaning, changes))
            evidence[code] = figures
    part = params.get("part")
    if part in ("cos", "sin"):  # the other of the pair: cos where sin belongs (the two tensors passed in swap)
        other = "sin" if part == "cos" else "cos"
        swaps.append(("part_swapped", f"the {other} table where the {part} one belongs (cos and sin swapped)",
                      {"part": other}))  # fmt: skip
    width, fraction = "rotary_dim", "partial_rotary_factor"
    partial = params.get(fraction)
    if params.get(width) is not None or (partial is not None and float(partial) < 1.0):
        swaps.append(("partial_rotary_ignored", "a rotation of every column, with frequencies over the whole "
                      "width, where only the leading rotary columns turn (partial rotary ignored)",
                      {fraction: 1.0, width: None}))  # fmt: skip
    unscaled = None if scaling == "none" else {"scaling": "none", **dict.fromkeys(SCALING_PARAMETERS)}
    return Mistakes(
        base="base",
        unscaled=unscaled,
        pairing="layout",
        pairings=(("half", "halves (NeoX, rotate_half)"), ("interleaved", "adjacent pairs (GPT-J, rotate every two)")),
        factors=factors,
        swaps=tuple(swaps),
        position_offset="offset",
        frequency_dtype="freqs_dtype",
        frequency_dtypes=("float16", "bfloat16", "float32"),
        rotary_width=width,
        rotary_fraction=fraction,
        base_dtypes=("float16", "bfloat16"),
        evidence=evidence,
    )


#: how much narrower than the medium band the band the smoothing is left out with is (the limit of an empty band:
#: low_freq_factor → high_freq_factor); wide enough for float32's factors and wavelengths to tell its ends apart
_EMPTY_BAND = 1e-5


def _llama3_unsmoothed(params: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
    """Llama 3's smoothing left out: the medium band of wavelengths (original / high_freq_factor to original /
    low_freq_factor) divided by the factor as the long ones are, or kept as the short ones, not interpolated. Each is
    the limit of an empty band, the two factors brought together at one end: what an engine with the two factors
    swapped computes too (transformers' ``_compute_llama3_parameters`` divides every wavelength past original / 4,
    an engine testing the short wavelengths first none short of original / 1).

    >>> found = _llama3_unsmoothed({"factor": 8.0, "original_max_position": 8192})
    >>> [(code, figures["band_wavelengths"], changes) for code, _, changes, figures in found]
    [('llama3_band_scaled', [2048.0, 8192.0], {'low_freq_factor': 3.99996}), \
('llama3_band_unscaled', [2048.0, 8192.0], {'high_freq_factor': 1.00001})]
    """
    original, factor = int(params["original_max_position"]), float(params["factor"])
    low, high = float(params.get("low_freq_factor") or 1.0), float(params.get("high_freq_factor") or 4.0)
    if not 0 < low < high:
        return []
    band = [original / high, original / low]
    figures = {"band_wavelengths": band, "low_freq_factor": low, "high_freq_factor": high, "factor": factor}
    words = (f"the medium band of wavelengths ({band[0]:g} to {band[1]:g}: original_max_position {original} / "
             f"high_freq_factor {high:g} to {original} / low_freq_factor {low:g})")  # fmt: skip
    swapped = f"low_freq_factor and high_freq_factor swapped ({high:g} and {low:g})"
    return [
        ("llama3_band_scaled", f"Llama 3's scaling without its smoothing: {words} divided by the factor {factor:g} as "
         f"the long wavelengths are, not interpolated; what {swapped} gives in transformers' "
         "_compute_llama3_parameters", {"low_freq_factor": high * (1.0 - _EMPTY_BAND)}, figures),
        ("llama3_band_unscaled", f"Llama 3's scaling without its smoothing: {words} left unscaled as the short "
         f"wavelengths are, not interpolated; what {swapped} gives in an engine that tests the short wavelengths first",
         {"high_freq_factor": low * (1.0 + _EMPTY_BAND)}, figures),
    ]  # fmt: skip


def sinusoidal_mistakes(params: Mapping[str, Any]) -> Mistakes:
    """The sinusoids': the base, and the other frequency denominator (tensor2tensor's and fairseq's ``h − 1``
    against Vaswani's ``h``, h = d/2: ``freq_shift``), and the positions negated (the sin columns' sign). Their
    column layouts and sin/cos order are column permutations, which the diagnosis finds in any table.

    >>> sinusoidal_mistakes({}).swaps[0][2]
    {'freq_shift': 1.0}
    >>> sinusoidal_mistakes({"freq_shift": 1.0}).swaps[0][1]
    "Vaswani's frequencies base^(-2i/d) where base^(-i/(d/2 - 1)) apply"
    """
    swap: tuple[str, str, Mapping[str, Any]]
    if params.get("freq_shift") == 1.0:
        swap = ("vaswani_frequencies", "Vaswani's frequencies base^(-2i/d) where base^(-i/(d/2 - 1)) apply",
                {"freq_shift": None})  # fmt: skip
    else:  # None and 0 are one denominator, d/2
        swap = ("freq_shift_1", "tensor2tensor's and fairseq's frequencies base^(-i/(d/2 - 1)) where "
                "Vaswani's base^(-2i/d) apply", {"freq_shift": 1.0})  # fmt: skip
    return Mistakes(base="base", swaps=(swap,), position_offset="offset")


def timestep_mistakes(params: Mapping[str, Any]) -> Mistakes:
    """A timestep embedding's: the max period, diffusers' ``flip_sin_to_cos``, and the other
    ``downscale_freq_shift`` (diffusers' default 1, its pipelines' and guided-diffusion's 0: ``freq_shift``), and
    the timesteps negated (``scale``'s sign: the sin half negated).

    >>> timestep_mistakes({}).toggles
    ('flip_sin_to_cos',)
    >>> [(code, changes) for code, _, changes in timestep_mistakes({"freq_shift": 0.0}).swaps]
    [('freq_shift', {'freq_shift': 1.0})]
    """
    shift = float(params.get("freq_shift") or 0.0)
    other = 1.0 if shift == 0.0 else 0.0
    swap = ("freq_shift", f"downscale_freq_shift {other:g} (ω_i = max_period^(−i/(h − {other:g}))) where "
            f"{shift:g} applies (ω_i = max_period^(−i/(h − {shift:g})), h = d/2)", {"freq_shift": other})  # fmt: skip
    return Mistakes(base="max_period", toggles=("flip_sin_to_cos",), swaps=(swap,), position_scale="scale")


def t5_mistakes(params: Mapping[str, Any]) -> Mistakes:
    """T5's: the encoder's bidirectional buckets where the decoder's causal ones apply, or the reverse (each
    stack of an encoder-decoder model computes its own, ``bidirectional=not is_decoder``).

    Also another ``num_buckets`` or ``max_distance`` than the checkpoint's (T5's 32 and 128; a config's
    ``relative_attention_num_buckets`` and ``relative_attention_max_distance`` read as the defaults, or halved or
    doubled).

    >>> mistakes = t5_mistakes({"num_buckets": 32, "max_distance": 128})
    >>> mistakes.toggles, [changes for _, _, changes in mistakes.swaps][:2]
    (('bidirectional',), [{'num_buckets': 16}, {'num_buckets': 64}])
    """
    swaps: list[tuple[str, str, Mapping[str, Any]]] = []
    for name, default in (("num_buckets", 32), ("max_distance", 128)):
        given = params.get(name)
        if not isinstance(given, int) or isinstance(given, bool) or given < 2:
            continue
        for other in dict.fromkeys((given // 2, given * 2, default)):
            if other != given and other >= 2:
                swaps.append((f"t5_{name}", f"{name} {other} where {given} applies", {name: other}))
    return Mistakes(toggles=("bidirectional",), swaps=tuple(swaps))


def alibi_mistakes(params: Mapping[str, Any]) -> Mistakes:
    """ALiBi's: the slopes of Press et al. (the reference) and, for a head count that is not a power of
    two, the power-of-two formula 2^(−8(i+1)/n) applied to all n heads (ml-explore/mlx#3071).

    >>> sets = alibi_mistakes({"heads": 6}).head_slopes
    >>> [(code, [round(float(s), 4) for s in slopes[-2:]]) for code, _, slopes in sets]
    [('press', [0.5, 0.125]), ('power_of_two', [0.0098, 0.0039])]
    >>> [code for code, _, _ in alibi_mistakes({"heads": 8}).head_slopes]
    ['press']
    """
    import numpy as np

    from pecli.schemes.alibi import MAX_HEADS, alibi_slopes

    heads = params.get("heads")
    if not isinstance(heads, int) or not 0 < heads <= MAX_HEADS:
        return Mistakes()
    power = 2 ** (heads.bit_length() - 1)
    sets: list[tuple[str, str, Any]] = [
        ("press", f"Press et al.'s slopes (those of {power} heads, then every other slope of {2 * power})"
         if power != heads else f"Press et al.'s slopes 2^(-8(i+1)/{heads})", alibi_slopes(heads)),
    ]  # fmt: skip
    if power != heads:
        sets.append((
            "power_of_two",
            f"slopes from the power-of-two formula 2^(-8(i+1)/{heads}) applied to {heads} heads, "
            "which is not a power of two",
            2.0 ** (-8.0 * np.arange(1, heads + 1) / heads),
        ))  # fmt: skip
    return Mistakes(head_slopes=tuple(sets))
