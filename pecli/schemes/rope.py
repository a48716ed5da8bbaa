"""Rotary position embedding (RoPE): frequencies, context scalings, cos/sin tables, the rotation.

The scalings follow HuggingFace transformers' ``rope_type``s, as written in
``src/transformers/modeling_rope_utils.py`` (``_compute_linear_scaling_rope_parameters``,
``_compute_dynamic_ntk_parameters``, ``_compute_yarn_parameters``, ``_compute_llama3_parameters``);
pecli computes them in float64.

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

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import geometric_frequencies, integer_phasors, place_pairs, position_phasors
from pecli.schemes.checks import choice, even_dim, finite_above, positive_int, row_range

#: ``position_phasors`` (exp(i·p·θ) at any positions) is public for code that rotates queries and keys (analysis)
__all__ = [
    "SCALINGS",
    "apply_rotary",
    "position_phasors",
    "rope_attention_factor",
    "rope_frequencies",
    "rope_metadata",
    "rope_table",
]

#: each scaling's parameters and their defaults (None: required), after HF's rope_scaling keys
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
    },
    "llama3": {"factor": None, "original_max_position": None, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
}

#: every parameter some scaling takes
_SCALING_PARAMETERS = tuple(dict.fromkeys(name for takes in SCALINGS.values() for name in takes))


def scaling_parameters(scaling: str, given: dict[str, Any]) -> dict[str, Any]:
    """The parameters of ``scaling`` with defaults filled in; one it does not take, or a missing one, is an error.

    >>> scaling_parameters("llama3", {"factor": 8.0, "original_max_position": 8192})["high_freq_factor"]
    4.0
    """
    scaling = choice("scaling", scaling, tuple(SCALINGS))
    takes = SCALINGS[scaling]
    extra = [f"{{{name}}}" for name, value in given.items() if value is not None and name not in takes]
    if extra:
        allowed = ", ".join(f"{{{name}}}" for name in takes) or "no scaling options"
        raise ParameterError(f"{{scaling={scaling}}} does not take {', '.join(extra)}", hint=f"it takes {allowed}")
    full = {name: given.get(name) if given.get(name) is not None else default for name, default in takes.items()}
    missing = [f"{{{name}}}" for name, value in full.items() if value is None]
    if missing:
        raise ParameterError(f"{{scaling={scaling}}} needs {' and '.join(missing)}", hint="e.g. {factor=4}")
    if "factor" in full:
        full["factor"] = finite_above("factor", full["factor"], 0.0, example="4")
    if "original_max_position" in full:
        full["original_max_position"] = positive_int("original_max_position", full["original_max_position"])
    for name in ("beta_fast", "beta_slow", "low_freq_factor", "high_freq_factor"):
        if name in full:
            full[name] = finite_above(name, full[name], 0.0, example="1")
    if scaling == "llama3" and full["high_freq_factor"] <= full["low_freq_factor"]:
        raise ParameterError(
            "{high_freq_factor} must be greater than {low_freq_factor}",
            hint="e.g. {low_freq_factor=1} {high_freq_factor=4}",
        )
    return full


def rope_attention_factor(scaling: str, factor: float | None) -> float:
    """YaRN's attention (mscale) factor ``0.1·ln(factor) + 1`` (1 for factor ≤ 1 and other scalings).

    >>> round(rope_attention_factor("yarn", 4.0), 10)
    1.1386294361
    """
    if scaling != "yarn" or factor is None or factor <= 1:
        return 1.0
    return 0.1 * math.log(factor) + 1.0


def rope_frequencies(
    dim: int,
    *,
    base: float = 10000.0,
    scaling: str = "none",
    length: int | None = None,
    **scaling_params: Any,
) -> np.ndarray:
    """RoPE's float64 ``inv_freq`` (d/2 values): ``base^(−2i/d)``, then the scaling's adjustment.

    ``length`` is the table length, which dynamic NTK scaling needs (HF recomputes its base for
    the sequence length once it exceeds the original context).

    >>> rope_frequencies(4, scaling="linear", factor=2.0).tolist()
    [0.5, 0.005]
    """
    dim = even_dim("rope", positive_int("dim", dim), "it rotates pairs of columns")
    base = finite_above("base", base, 1.0, example="10000")
    params = scaling_parameters(scaling, scaling_params)
    if scaling == "dynamic":
        # HF _compute_dynamic_ntk_parameters: base·((factor·L/L0) − (factor − 1))^(d/(d−2)), L = max(len, L0)
        original = params["original_max_position"]
        seq_len = max(length or original, original)
        factor = params["factor"]
        base = base * ((factor * seq_len / original) - (factor - 1)) ** (dim / (dim - 2)) if dim > 2 else base
    inv_freq = geometric_frequencies(dim, base, None)
    if scaling == "linear":
        return inv_freq / params["factor"]
    if scaling == "yarn":
        return _yarn(inv_freq, dim, base, **params)
    if scaling == "llama3":
        return _llama3(inv_freq, **params)
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
    apply_attention_factor: bool,
) -> np.ndarray:
    # HF _compute_yarn_parameters (truncate=True): blend interpolation (inv_freq/factor) and
    # extrapolation (inv_freq) with a linear ramp between the dimensions where beta_fast and
    # beta_slow rotations fit in the original context.
    def correction_dim(rotations: float) -> float:
        ratio = original_max_position / (rotations * 2 * math.pi)  # 0 or inf for a beta of 1e308 or 1e-320
        value = dim * math.log(ratio) / (2 * math.log(base)) if 0 < ratio < math.inf else (ratio - 1) * math.inf
        return min(max(value, -(2.0**52)), 2.0**52)  # past every dimension either way, and floor() still works

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), dim - 1)
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


def rope_table(
    length: int,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "half",
    part: str = "cos",
    scaling: str = "none",
    dtype: str = "float32",
    rows: range | None = None,
    **scaling_params: Any,
) -> np.ndarray:
    """One (length, d) RoPE table: ``cos``, ``sin`` or the ``angle`` θ = p·inv_freq, in ``layout``'s columns.

    Args:
        length: number of positions.
        dim: head dimension (even).
        base: θ base (10000; Llama 3 uses 500000).
        layout: ``half`` (HF Llama: cat(freqs, freqs), rotate_half) or ``interleaved``
            (GPT-J, Meta llama, rotary-embedding-torch: pairs of adjacent columns).
        part: ``cos``, ``sin`` or ``angle``.
        scaling: ``none``, ``linear``, ``dynamic``, ``yarn`` or ``llama3``, with its parameters
            (``factor``, ``original_max_position``, ``beta_fast``…; see :data:`SCALINGS`).
        dtype: output dtype; float64 angles, rounded once.
        rows: compute only these positions.

    Example:
        >>> rope_table(2, 4, part="sin", dtype="float64")[1].round(6).tolist()
        [0.841471, 0.01, 0.841471, 0.01]
        >>> rope_table(2, 4, part="sin", layout="interleaved", dtype="float64")[1].round(6).tolist()
        [0.841471, 0.841471, 0.01, 0.01]
    """
    length = positive_int("length", length)
    layout = choice("layout", layout, ("half", "interleaved"))
    part = choice("part", part, ("cos", "sin", "angle"))
    inv_freq = rope_frequencies(dim, base=base, scaling=scaling, length=length, **scaling_params)
    rows = row_range(rows, length)
    placement = "split" if layout == "half" else "interleaved"
    table = np.empty((len(rows), dim), dtype=np.float64)
    if part == "angle":
        angles = np.outer(np.arange(rows.start, rows.stop, dtype=np.float64), inv_freq)
        place_pairs(table, angles, angles, layout=placement)
        return round_to(table, dtype)
    phasors = integer_phasors(rows.start, rows.stop, inv_freq)
    values = phasors.real if part == "cos" else phasors.imag
    place_pairs(table, values, values, layout=placement)
    if scaling_params.get("apply_attention_factor"):
        table *= rope_attention_factor(scaling, scaling_params.get("factor"))
    return round_to(table, dtype)


def rope_metadata(
    length: int, dim: int, *, base: float = 10000.0, scaling: str = "none", **params: Any
) -> dict[str, str]:
    """Derived values a RoPE file records: the attention factor, and dynamic NTK's effective base.

    >>> rope_metadata(4096, 128, scaling="yarn", factor=4.0, original_max_position=2048)["attention_factor"]
    '1.138629436111989'
    """
    scaling_params = {name: params.get(name) for name in _SCALING_PARAMETERS}
    meta = {"attention_factor": repr(rope_attention_factor(scaling, scaling_params.get("factor")))}
    if scaling == "dynamic":
        inv_freq = rope_frequencies(dim, base=base, scaling=scaling, length=length, **scaling_params)
        meta["effective_base"] = repr(float(inv_freq[1] ** (-dim / 2)))
    return meta


def apply_rotary(x: Any, cos: Any, sin: Any, layout: str = "half") -> Any:
    """Rotate ``x`` (…, len, d) by RoPE tables ``cos`` and ``sin`` (len, d): ``x·cos + rotate(x)·sin``.

    ``half`` rotates (x_i, x_{i+d/2}) as HF Llama's ``rotate_half`` does; ``interleaved`` rotates
    (x_{2i}, x_{2i+1}) as GPT-J and Meta's llama do. Works on numpy arrays and torch tensors alike.

    Example:
        >>> cos, sin = rope_table(2, 4, part="cos", dtype="float64"), rope_table(2, 4, part="sin", dtype="float64")
        >>> apply_rotary(np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]), cos, sin)[1].round(10).tolist()
        [-1.9841106486, 1.9599006675, 2.4623779024, 4.0197996683]
    """
    layout = choice("layout", layout, ("half", "interleaved"))
    rotated = x * 0
    if layout == "half":
        half = x.shape[-1] // 2
        rotated[..., :half] = -x[..., half:]
        rotated[..., half:] = x[..., :half]
    else:
        rotated[..., 0::2] = -x[..., 1::2]
        rotated[..., 1::2] = x[..., 0::2]
    return x * cos + rotated * sin
