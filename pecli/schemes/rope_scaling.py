"""RoPE's context scalings: the scaled ``inv_freq`` and the attention factor, per HF ``rope_type``.

Each follows HuggingFace transformers' ``src/transformers/modeling_rope_utils.py``
(``_compute_linear_scaling_rope_parameters``, ``_compute_dynamic_ntk_parameters``,
``_compute_yarn_parameters``, ``_compute_llama3_parameters``, ``_compute_longrope_parameters``,
``_compute_proportional_rope_parameters``),
computed in float64.

>>> rope_frequencies(4).tolist()
[1.0, 0.01]
>>> inv_freq = rope_frequencies(128, scaling="dynamic", factor=2.0, original_max_position=2048, length=4096)
>>> round(float(inv_freq[1] ** (-128 / 2)), 4)  # the dynamic-NTK base
30527.7367
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pecli.errors import ParameterError
from pecli.schemes._angles import geometric_frequencies
from pecli.schemes.checks import choice, even_dim, finite_above, positive_floats, positive_int
from pecli.text import literal_repr

__all__ = [
    "LAST_POSITION",
    "MSCALE_ALONE",
    "SCALINGS",
    "rope_attention_factor",
    "rope_frequencies",
    "scaling_parameters",
    "stretches_past_last_position",
]

#: the last position a model is run at: llama.cpp's ``llama_pos`` is an ``int32_t`` (include/llama.h)
LAST_POSITION = 2**31 - 1

#: the largest attention factor transformers' table holds: it multiplies cos and sin by it in float32
_LARGEST_ATTENTION_FACTOR = float(np.finfo(np.float32).max)

#: each scaling's parameters and their defaults (None: required, except the names in ``_OPTIONAL``),
#: after HF's rope_scaling keys
SCALINGS: dict[str, dict[str, Any]] = {
    "none": {},
    "linear": {"factor": None},
    "dynamic": {"factor": None, "original_max_position": None},
    "yarn": {
        "factor": None,
        "original_max_position": None,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "apply_attention_factor": False,
        "truncate": True,
        "mscale": None,
        "mscale_all_dim": None,
        "attention_factor": None,
    },
    "llama3": {"factor": None, "original_max_position": None, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "longrope": {
        "original_max_position": None,
        "short_factor": None,
        "long_factor": None,
        "factor": 1.0,
        "attention_factor": None,
        "apply_attention_factor": False,
    },
    "proportional": {"factor": 1.0},
}

#: parameters that may stay None: HF derives the attention factor when they are absent
_OPTIONAL = ("mscale", "mscale_all_dim", "attention_factor")

#: an example value of each parameter a scaling cannot do without, for the hint that names it
_EXAMPLES = {"factor": "4", "original_max_position": "4096", "short_factor": "1,…", "long_factor": "1,…"}

#: every parameter some scaling takes
SCALING_PARAMETERS = tuple(dict.fromkeys(name for takes in SCALINGS.values() for name in takes))


def stretches_past_last_position(factor: float, context: int = 1) -> bool:
    """Whether a scaling ``factor`` (or one LongRoPE divisor) over ``context`` positions is corrupt, not a model.

    A factor stretches a context of ``context`` positions to ``factor · context``: past :data:`LAST_POSITION`
    no engine gives a token that position (llama.cpp's positions are 32-bit). A factor below 1 multiplies every
    frequency by ``1 / factor``, as absurd past the same bound (at 1e-308 transformers' angles overflow to inf).
    The one rule for a GGUF file's, a config's and a spec's factors.

    >>> stretches_past_last_position(40.0, 4096), stretches_past_last_position(1e308, 4096)
    (False, True)
    >>> stretches_past_last_position(0.25), stretches_past_last_position(1e-308)
    (False, True)
    """
    return factor * context > LAST_POSITION or factor * LAST_POSITION < 1


def _check_stretch(name: str, factor: float, context: int) -> None:
    """A ParameterError naming ``{name}`` when :func:`stretches_past_last_position`."""
    if not stretches_past_last_position(factor, context):
        return
    if factor < 1:
        does = f"multiplies the frequencies by {1 / factor:.6g}, as if it stretched positions"
    elif context > 1:
        does = f"stretches the {{original_max_position}} of {context:,} positions {factor:.6g}-fold,"
    else:
        does = f"stretches the positions {factor:.6g}-fold,"
    raise ParameterError(
        f"{{{name}}} = {factor:.6g} {does} past the last position a model is run at "
        f"({LAST_POSITION:,}: llama.cpp's positions are 32-bit integers)",
        hint=f"a model's scaling factors are a few to a few hundred, e.g. {{{name}=4}}",
    )


def scaling_parameters(scaling: str, given: dict[str, Any]) -> dict[str, Any]:
    """The parameters of ``scaling`` with defaults filled in; one it does not take, or a missing one, is an error.

    >>> scaling_parameters("llama3", {"factor": 8.0, "original_max_position": 8192})["high_freq_factor"]
    4.0
    """
    scaling = choice("scaling", scaling, tuple(SCALINGS))
    takes = SCALINGS[scaling]
    extra = [f"{{{name}}}" for name, value in given.items() if value is not None and name not in takes]
    if extra and not takes:  # no scaling chosen (none, the default): say which scalings take them
        wanted = {name for name, value in given.items() if value is not None}
        takers = [name for name, params in SCALINGS.items() if wanted <= params.keys()]
        are = "is a parameter" if len(extra) == 1 else "are parameters"
        raise ParameterError(
            f"{', '.join(extra)} {are} of a RoPE scaling, but no {{scaling}} is chosen (the default is none)",
            hint=f"pick one: {', '.join(f'{{scaling={name}}}' for name in takers)}"
            if takers
            else "drop them, or pick a {scaling}",
        )
    if extra:
        allowed = ", ".join(f"{{{name}}}" for name in takes) or "no scaling options"
        raise ParameterError(f"{{scaling={scaling}}} does not take {', '.join(extra)}", hint=f"it takes {allowed}")
    full: dict[str, Any] = {
        name: given.get(name) if given.get(name) is not None else default for name, default in takes.items()
    }
    missing = [name for name, value in full.items() if value is None and name not in _OPTIONAL]
    if missing:
        example = " ".join(f"{{{name}={_EXAMPLES.get(name, '1')}}}" for name in missing)
        needs = " and ".join(f"{{{name}}}" for name in missing)
        raise ParameterError(f"{{scaling={scaling}}} needs {needs}", hint=f"e.g. {example}")
    if "factor" in full:
        full["factor"] = finite_above("factor", full["factor"], 0.0, example="4")
    if "original_max_position" in full:
        full["original_max_position"] = positive_int("original_max_position", full["original_max_position"])
        if scaling == "longrope" and full["original_max_position"] < 2:  # its attention factor divides by ln of it
            raise ParameterError(
                f"{{original_max_position}} must be at least 2 for longrope, got {full['original_max_position']} "
                "(its attention factor is √(1 + ln factor / ln original_max_position))",
                hint="e.g. {original_max_position=4096}",
            )
    if "factor" in full:
        _check_stretch("factor", full["factor"], full.get("original_max_position") or 1)
    for name in ("beta_fast", "beta_slow", "low_freq_factor", "high_freq_factor", *_OPTIONAL):
        if full.get(name) is not None:
            full[name] = finite_above(name, full[name], 0.0, example="1")
    if scaling == "yarn":
        _check_betas(full)
    if scaling in ("yarn", "longrope"):
        _check_attention_factor(scaling, full)
    if scaling == "llama3" and full["high_freq_factor"] <= full["low_freq_factor"]:
        raise ParameterError(
            "{high_freq_factor} must be greater than {low_freq_factor}",
            hint="e.g. {low_freq_factor=1} {high_freq_factor=4}",
        )
    return full


def _check_betas(full: dict[str, Any]) -> None:
    """Refuse a YaRN beta whose correction dimension transformers cannot compute: ``original / (β·2π)`` is 0 when
    β·2π overflows (``math.log(0)``: ValueError), and infinite when β is a subnormal, which ``truncate``'s
    ``math.floor``/``math.ceil`` cannot round (OverflowError); a table no model loads is no reference.

    >>> try:
    ...     _check_betas({"beta_fast": 1e308, "beta_slow": 1.0, "original_max_position": 4096, "truncate": True})
    ... except ParameterError as error:
    ...     print(str(error)[:49])
    beta_fast = 1e+308 puts the ramp's end at log(0):
    """
    for name in ("beta_fast", "beta_slow"):
        beta = full.get(name)
        if beta is None:
            continue
        ratio = full["original_max_position"] / (beta * 2 * math.pi)
        if ratio == 0.0:
            why = "puts the ramp's end at log(0)"
            raised = (
                f"{name}·2π) underflows to 0, and transformers' _compute_yarn_parameters raises (math domain error)"
            )
        elif ratio == math.inf and full.get("truncate", True):
            why = "puts the ramp's end at an infinite dimension"
            raised = (f"{name}·2π) overflows, and transformers' truncate cannot round it (math.floor/ceil of inf: "
                      "OverflowError)")  # fmt: skip
        else:
            continue
        raise ParameterError(
            f"{{{name}}} = {literal_repr(beta)} {why}: original_max_position / ({raised}",
            hint=f"a model's betas are about 1 to 32: e.g. {{{name}={32 if name == 'beta_fast' else 1}}}",
        )


def _check_attention_factor(scaling: str, full: dict[str, Any]) -> None:
    """Refuse an attention factor (given, or derived from mscale) that transformers' float32 table cannot hold."""
    attention = rope_attention_factor(scaling, **full)
    if attention > _LARGEST_ATTENTION_FACTOR:
        given = "{attention_factor}" if full.get("attention_factor") is not None else "{mscale}/{mscale_all_dim}"
        raise ParameterError(
            f"{given} gives an attention factor of {attention:.6g}, past float32's largest value "
            f"({_LARGEST_ATTENTION_FACTOR:.6g}): transformers multiplies cos and sin by it in float32, "
            "so its table is infinite",
            hint="a model's attention factor is about 1: YaRN's default is 0.1·ln factor + 1",
        )


#: what an engine gets wrong with DeepSeek's YaRN (rope_scaling.mscale and mscale_all_dim): cos and sin times
#: yarn_get_mscale(factor, mscale) where transformers divides it by yarn_get_mscale(factor, mscale_all_dim); the words
#: of ``pecli info``'s warning and of compare's diagnosis
MSCALE_ALONE = "mscale applied alone, not divided by yarn_get_mscale(factor, mscale_all_dim)"


def _mscale(factor: float, mscale: float = 1.0) -> float:
    # HF's get_mscale (after DeepSeek's yarn_get_mscale)
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def rope_attention_factor(scaling: str, factor: float | None = None, **params: Any) -> float:
    """The factor HF multiplies cos and sin by (``attention_scaling``); 1 for scalings without one.

    YaRN: ``attention_factor`` if given, else ``mscale(f, mscale) / mscale(f, mscale_all_dim)`` when
    both are given (DeepSeek), else ``mscale(f) = 0.1·ln f + 1``. LongRoPE: ``attention_factor`` if
    given, else ``√(1 + ln f / ln original_max_position)`` (1 for f ≤ 1).

    >>> round(rope_attention_factor("yarn", 4.0), 10)
    1.1386294361
    >>> round(rope_attention_factor("yarn", 40.0, mscale=1.0, mscale_all_dim=0.707), 10)
    1.0857263993
    >>> round(rope_attention_factor("longrope", 32.0, original_max_position=4096), 10)
    1.1902380714
    """
    if params.get("attention_factor") is not None and scaling in ("yarn", "longrope"):
        return float(params["attention_factor"])
    if factor is None:
        return 1.0
    if scaling == "yarn":
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            return _mscale(factor, mscale) / _mscale(factor, mscale_all_dim)
        return _mscale(factor)
    if scaling == "longrope" and factor > 1 and params.get("original_max_position"):
        return math.sqrt(1 + math.log(factor) / math.log(params["original_max_position"]))
    return 1.0


#: the scalings whose transformers frequencies take an odd rotary width (YaRN's ramp has d // 2 entries
#: against ⌈d/2⌉ frequencies and fails; proportional divides the whole head)
_ODD_WIDTH_SCALINGS = ("none", "linear", "dynamic", "llama3", "longrope")


def rope_frequencies(
    dim: int,
    *,
    base: float = 10000.0,
    scaling: str = "none",
    length: int | None = None,
    odd: bool = False,
    **scaling_params: Any,
) -> np.ndarray:
    """RoPE's float64 ``inv_freq`` (d/2 values): ``base^(−2i/d)``, then the scaling's adjustment.

    ``dim`` is the rotary dimension; ``odd=True`` accepts an odd one as transformers computes it
    (``arange(0, d, 2) / d``: ⌈d/2⌉ frequencies over d; YaRN's ramp of d // 2 cannot take it).
    ``length`` is the number of positions the model has seen
    (its largest position + 1): dynamic NTK recomputes its base for it once it exceeds the
    original context, and LongRoPE switches from ``short_factor`` to ``long_factor`` there.

    >>> rope_frequencies(4, scaling="linear", factor=2.0).tolist()
    [0.5, 0.005]
    >>> lists = {"short_factor": [1, 2], "long_factor": [4, 8]}
    >>> rope_frequencies(4, scaling="longrope", original_max_position=8, length=9, **lists).tolist()
    [0.25, 0.00125]
    """
    dim = positive_int("dim", dim)
    if not (odd and dim > 2):
        dim = even_dim("rope", dim, "it rotates pairs of columns")
    base = finite_above("base", base, 1.0, example="10000")
    params = scaling_parameters(scaling, scaling_params)
    if dim % 2 and scaling not in _ODD_WIDTH_SCALINGS:
        raise ParameterError(
            f"{{scaling={scaling}}} cannot take an odd rotary width ({dim}): transformers' {scaling} "
            f"frequencies fail there ({(dim + 1) // 2} frequencies, a ramp or factor list of {dim // 2})",
            hint="use an even width, or one of the scalings " + ", ".join(_ODD_WIDTH_SCALINGS),
        )
    if scaling == "dynamic":
        # HF _compute_dynamic_ntk_parameters: base·((factor·L/L0) − (factor − 1))^(d/(d−2)), L = max(len, L0)
        original = params["original_max_position"]
        seq_len = max(length or original, original)
        factor = params["factor"]
        try:
            base = base * ((factor * seq_len / original) - (factor - 1)) ** (dim / (dim - 2)) if dim > 2 else base
        except OverflowError:
            base = math.inf
        if not (math.isfinite(base) and base > 1.0):  # a factor so large that the recomputed base rounds away
            raise ParameterError(
                f"{{factor}} {factor:g} gives dynamic NTK scaling a base of {base:g} at length {seq_len}",
                hint="use a smaller {base} or {factor}" if factor <= 4 else "e.g. {factor=4}",
            )
    inv_freq = geometric_frequencies(dim, base, None)
    if scaling in ("linear", "proportional"):
        return inv_freq / params["factor"]
    if scaling == "yarn":
        return _yarn(inv_freq, dim, base, **params)
    if scaling == "llama3":
        return _llama3(inv_freq, **params)
    if scaling == "longrope":
        # HF _compute_longrope_parameters and _longrope_frequency_update: 1 / (ext_factors · base^(2i/d)),
        # the long factors once the positions go past the original context
        short, long = (positive_floats(name, params[name], (dim + 1) // 2) for name in ("short_factor", "long_factor"))
        for name, divisors in (("short_factor", short), ("long_factor", long)):
            for divisor in divisors:
                _check_stretch(name, divisor, params["original_max_position"])
        use_long = length is not None and length > params["original_max_position"]
        return inv_freq / np.array(long if use_long else short)
    return inv_freq


def _yarn(
    inv_freq: np.ndarray,
    dim: int,
    base: float,
    *,
    factor: float,
    original_max_position: int,
    beta_fast: float,
    beta_slow: float,
    truncate: bool,
    **_attention: Any,
) -> np.ndarray:
    # HF _compute_yarn_parameters: blend interpolation (inv_freq/factor) and extrapolation
    # (inv_freq) with a linear ramp between the dimensions where beta_fast and beta_slow rotations
    # fit in the original context; truncate rounds those dimensions outwards to integers.
    def correction_dim(rotations: float) -> float:
        ratio = original_max_position / (rotations * 2 * math.pi)  # 0 or inf for a beta of 1e308 or 1e-320
        value = dim * math.log(ratio) / (2 * math.log(base)) if 0 < ratio < math.inf else (ratio - 1) * math.inf
        return min(max(value, -(2.0**52)), 2.0**52)  # past every dimension either way, and floor() still works

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # HF's guard against a zero-width ramp
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    return inv_freq / factor * (1.0 - extrapolation) + inv_freq * extrapolation


def _llama3(
    inv_freq: np.ndarray, *, factor: float, original_max_position: int, low_freq_factor: float, high_freq_factor: float
) -> np.ndarray:
    # HF _compute_llama3_parameters: keep short wavelengths, divide long ones by factor, and
    # blend the band between original/high_freq_factor and original/low_freq_factor.
    wavelen = 2 * math.pi / inv_freq
    low_freq_wavelen = original_max_position / low_freq_factor
    high_freq_wavelen = original_max_position / high_freq_factor
    smooth = (original_max_position / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * inv_freq / factor + smooth * inv_freq
    return np.where(
        wavelen < high_freq_wavelen, inv_freq, np.where(wavelen > low_freq_wavelen, inv_freq / factor, blended)
    )
