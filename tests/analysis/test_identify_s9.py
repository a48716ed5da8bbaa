"""identify names grid tables at any round base and RoPE at a non-round linear factor (issue 30, s9)."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table


def _vit_pytorch_posemb_sincos_2d(h: int, w: int, dim: int, temperature: float) -> np.ndarray:
    """vit-pytorch's ``posemb_sincos_2d`` (vit_pytorch/simple_vit.py) written out in numpy."""
    y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    omega = np.arange(dim // 4) / (dim // 4 - 1)
    omega = 1.0 / (temperature**omega)
    y = y.flatten()[:, None] * omega[None, :]
    x = x.flatten()[:, None] * omega[None, :]
    return np.concatenate((np.sin(x), np.cos(x), np.sin(y), np.cos(y)), axis=1).astype(np.float32)


@pytest.mark.parametrize("temperature", [100.0, 1000.0, 20000.0])
def test_vit_pytorch_temperature(temperature: float) -> None:
    table = _vit_pytorch_posemb_sincos_2d(8, 8, 64, temperature)
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.scheme == "sincos2d"
    assert found.best.params["base"] == temperature
    assert found.best.params["grid"] == "8,8"
    # pecli's own table of that reading is the library's
    regenerated = pecli.encode("sincos2d", None, 64, preset="vit-pytorch", grid="8,8", base=temperature)
    np.testing.assert_allclose(regenerated, table, atol=1e-6)


def test_mae_cls_token_base_1000() -> None:
    table = pecli.encode("sincos2d", None, 64, preset="mae", grid="14,14", cls_token=True, base=1000.0)
    found = identify_table(table)
    assert found.level == "exact"
    assert (found.best.params["base"], found.best.params["cls_token"]) == (1000.0, True)


@pytest.mark.parametrize("part", ["cos", "angle"])
def test_eva02_axial_rope_theta_100(part: str) -> None:
    table = pecli.encode("rope2d", None, 64, preset="eva02", grid="8,8", base=100.0, part=part)
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.scheme == "rope2d"
    assert (found.best.params["base"], found.best.params["grid_indexing"]) == (100.0, "ij")


def test_rope_linear_factor_beyond_three_digits() -> None:
    """rotary-embedding-torch's interpolate_factor: t / factor, so every ω_k = base^(−2k/d) / factor."""
    factor, positions = 1.2345, np.arange(128, dtype=np.float64)
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 64, 2) / 64)
    angles = np.outer(positions / factor, inv_freq)
    table = np.cos(np.repeat(angles, 2, axis=1)).astype(np.float32)  # interleaved, as rotate_half pairs
    found = identify_table(table)
    assert found.level == "exact"
    assert (found.best.params["scaling"], found.best.params["factor"]) == ("linear", 1.2345)
