"""compare names the cause of a difference for mistakes that a seeded random attack (session 8) found unnamed:
each engine table is computed here with numpy, independently of pecli's own mistake code."""

from __future__ import annotations

import numpy as np
import pytest

import pecli


def _codes(spec: str, table: np.ndarray) -> list[str]:
    report = pecli.compare(spec, table)
    assert not report.agree
    return [found.code for found in report.result.diagnosis]


def _timestep(length: int, dim: int, shift: float, flip: bool = False) -> np.ndarray:
    """diffusers' get_timestep_embedding in float32, as its code computes it."""
    half = dim // 2
    exponent = -np.log(np.float32(10000)) * np.arange(half, dtype=np.float32) / np.float32(half - shift)
    angles = np.arange(length, dtype=np.float32)[:, None] * np.exp(exponent)[None, :]
    parts = [np.cos(angles), np.sin(angles)] if flip else [np.sin(angles), np.cos(angles)]
    return np.concatenate(parts, axis=1).astype(np.float32)


def _rope(length: int, dim: int, part: str, *, base: float = 10000.0, scale: float = 1.0) -> np.ndarray:
    """HF's rotate_half layout: the angles of d/2 frequencies, repeated over both halves."""
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    angles = np.arange(length)[:, None] * inv_freq[None, :]
    values = np.cos(angles) if part == "cos" else np.sin(angles)
    return (scale * np.concatenate([values, values], axis=1)).astype(np.float32)


@pytest.mark.parametrize(("shift", "spec_shift"), [(1.0, 0), (0.0, 1)])
def test_timestep_downscale_freq_shift_named(shift: float, spec_shift: int) -> None:
    # the engine's downscale_freq_shift is the other one: was "no known mistake explains it"
    table = _timestep(300, 64, shift)
    codes = _codes(f"timestep:flip_sin_to_cos=false,freq_shift={spec_shift}", table)
    assert codes == ["freq_shift"]


@pytest.mark.parametrize("dim", [128, 320])
def test_transposed_timestep_named_despite_float32_noise(dim: int) -> None:
    # B's row p spans every position: its float32 angle noise is that of the last rows, not of position p
    table = np.ascontiguousarray(_timestep(dim, dim, 1.0, flip=True).T)
    assert "transposed" in _codes("timestep:flip_sin_to_cos=true,freq_shift=1", table)


def test_rope_cos_where_sin_belongs_named() -> None:
    codes = _codes("rope:part=sin,layout=half", _rope(200, 32, "cos"))
    assert codes == ["part_swapped"]


def test_rope_partial_rotary_ignored_named() -> None:
    # the model rotates the first half of the columns only; the engine rotates all of them over d
    codes = _codes("rope:part=cos,layout=half,partial_rotary_factor=0.5", _rope(400, 64, "cos"))
    assert codes == ["partial_rotary_ignored"]


def test_yarn_frequencies_unscaled_with_attention_factor_kept_named() -> None:
    spec = "rope:part=cos,layout=half,scaling=yarn,factor=4,original_max_position=256,apply_attention_factor=true"
    attention = 0.1 * np.log(4.0) + 1.0  # HF's get_mscale(4)
    found = pecli.compare(spec, _rope(600, 64, "cos", scale=attention)).result.diagnosis
    assert found[0].code == "unscaled"
    assert found[0].figures["factor"] == pytest.approx(attention, rel=1e-12)


def test_alibi_power_of_two_slopes_named_in_a_float64_table() -> None:
    # 5 heads: the power-of-two formula's slopes are no powers of two, and float64's rounding of −|i − j|·m
    # exceeded the bound of ALiBi's exact values: "no known mistake" where the cause is the slope formula
    from pecli.analysis.compare import Reference, compare_tables

    length, heads = 41, 5
    reference = pecli.encode("alibi", length, None, heads=heads, part="bias", dtype="float64")
    slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)
    distance = np.abs(np.arange(length)[:, None] - np.arange(length)[None, :])
    table = -distance[None, :, :] * slopes[:, None, None]
    params = {"heads": heads, "part": "bias", "form": "distance", "head": None, "total_heads": None}
    result = compare_tables(reference, table, atol=None, rtol=0.0, reference=Reference("alibi", params))
    assert not result.agree
    assert [found.code for found in result.diagnosis][:1] == ["alibi_slopes_power_of_two"]
