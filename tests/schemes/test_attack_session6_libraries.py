"""Session 6 (issue 30, class 1): pecli's presets against the installed libraries at random sizes.

Earlier tests check the presets at a few fixed sizes; these draw sizes and parameters from a fixed
seed (odd widths, d = 2, one to three timesteps, fractional, negative and large t, padding rows, grids
and crops) and compare pecli's table with the library's own output within the library's float32
noise: 8 · (largest |angle| + 1) · eps32, the error a float32 angle carries. A convention slip (layout,
frequency denominator, offset, crop centre) moves values by O(1) and fails every case.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from pecli.errors import ParameterError
from pecli.schemes import encode
from pecli.schemes.timestep import timestep_embedding

torch = pytest.importorskip("torch")
embeddings = pytest.importorskip("diffusers.models.embeddings")
distilbert = pytest.importorskip("transformers.models.distilbert.modeling_distilbert")
marian = pytest.importorskip("transformers.models.marian.modeling_marian")
m2m100 = pytest.importorskip("transformers.models.m2m_100.modeling_m2m_100")

EPS32 = float(np.finfo(np.float32).eps)
SEED = 20261125


def _noise(largest_angle: float) -> float:
    return 8 * (abs(largest_angle) + 1) * EPS32


def _close(ref: object, got: np.ndarray, tol: float) -> None:
    ref = np.asarray(ref, dtype=np.float64)
    assert ref.shape == got.shape
    worst = float(np.abs(ref - np.asarray(got, np.float64)).max()) if ref.size else 0.0
    assert worst <= tol, f"max |library − pecli| = {worst:.3g} > {tol:.3g}"


def _timestep_cases() -> list[tuple[int, list[float], bool, float, float, float]]:
    rng = random.Random(SEED)
    cases = []
    while len(cases) < 40:
        dim = rng.choice([2, 3, rng.randint(2, 40), rng.randint(2, 1030)])
        kind = rng.choice(["int", "frac", "neg", "large"])
        low, high = {"int": (0, 1000), "frac": (0, 1000), "neg": (-1000, 0), "large": (-1e5, 1e5)}[kind]
        times = [
            float(rng.randint(low, high)) if kind == "int" else rng.uniform(low, high) for _ in range(rng.randint(1, 3))
        ]
        shift = rng.choice([0.0, 1.0, 0.5, rng.uniform(-2, 2)])
        if dim // 2 and dim // 2 - shift <= 0:
            continue  # diffusers divides by zero (NaN); pecli refuses, tested below
        scale = rng.choice([1.0, 1000.0, rng.uniform(0.1, 10)])
        period = rng.choice([10000.0, 10.0, rng.uniform(1.5, 1e5)])
        cases.append((dim, [float(np.float32(t)) for t in times], rng.random() < 0.5, shift, scale, period))
    return cases


@pytest.mark.parametrize(("dim", "times", "flip", "shift", "scale", "period"), _timestep_cases())
def test_timestep_embedding_matches_diffusers_get_timestep_embedding(dim, times, flip, shift, scale, period):
    ref = embeddings.get_timestep_embedding(
        torch.tensor(times, dtype=torch.float32),
        dim,
        flip_sin_to_cos=flip,
        downscale_freq_shift=shift,
        scale=scale,
        max_period=period,
    ).numpy()
    tol = _noise(max(abs(t) for t in times) * scale)
    kwargs = {"max_period": period, "flip_sin_to_cos": flip, "freq_shift": shift, "scale": scale}
    _close(ref, timestep_embedding(times, dim, dtype="float64", **kwargs), tol)
    _close(ref, timestep_embedding(times, dim, arithmetic="float32", **kwargs), tol)


def test_timestep_shift_that_zeroes_the_denominator_is_refused_where_diffusers_returns_nan():
    ref = embeddings.get_timestep_embedding(torch.tensor([0.0, 5.5]), 3, downscale_freq_shift=1).numpy()
    assert np.isnan(ref[:, :2]).all()
    with pytest.raises(ParameterError, match="d // 2 − shift = 0"):
        timestep_embedding([0.0, 5.5], 3, freq_shift=1, flip_sin_to_cos=False)


@pytest.mark.parametrize("seed", range(6))
def test_timestep_and_sinusoidal_presets_match_diffusers(seed):
    rng = random.Random(SEED + seed)
    dim, length = rng.choice([4, 5, rng.randint(4, 1030)]), rng.randint(1, 3000)
    for scheme, name, flip, shift in [
        ("timestep", "diffusers", False, 1),
        ("timestep", "ldm", True, 0),
        ("timestep", "guided-diffusion", True, 0),
        ("sinusoidal", "diffusers", False, 1),
        ("sinusoidal", "guided-diffusion", True, 0),
    ]:
        ref = embeddings.get_timestep_embedding(
            torch.arange(length, dtype=torch.float32), dim, flip_sin_to_cos=flip, downscale_freq_shift=shift
        ).numpy()
        _close(ref, encode(scheme, length, dim, preset=name, dtype="float64"), _noise(length))


@pytest.mark.parametrize("seed", range(8))
def test_distilbert_and_marian_presets_match_transformers(seed):
    rng = random.Random(SEED + 100 + seed)
    dim = rng.choice([1, 2, 3, rng.randint(1, 40), rng.randint(1, 300)])
    length = rng.randint(1, max(1, 20000 // dim))  # the libraries build the table in a Python loop
    out = torch.empty(length, dim)
    distilbert._create_sinusoidal_embeddings(length, dim, out)
    _close(out.numpy(), encode("sinusoidal", length, dim, preset="distilbert"), 1e-6)
    ref = marian.MarianSinusoidalPositionalEmbedding(length, dim).create_weight().numpy()
    _close(ref, encode("sinusoidal", length, dim, preset="marian"), 1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_fairseq_preset_and_padding_idx_match_m2m100(seed):
    rng = random.Random(SEED + 200 + seed)
    dim, length, pad = rng.choice([4, 5, rng.randint(4, 1030)]), rng.randint(1, 5000), rng.choice([None, 0, 1])
    ref = m2m100.M2M100SinusoidalPositionalEmbedding.get_embedding(length + 2, dim, pad).numpy()
    tol = _noise(length + 2)
    _close(ref[2:], encode("sinusoidal", length, dim, preset="fairseq", dtype="float64"), tol)
    _close(ref[2:], encode("sinusoidal", length, dim, preset="fairseq", arithmetic="float32"), tol)
    if pad is not None:
        table = encode("sinusoidal", length + 2, dim, layout="split", freq_shift=1.0, padding_idx=pad, dtype="float64")
        _close(ref, table, tol)
        assert not table[pad].any()


@pytest.mark.parametrize("seed", range(8))
def test_diffusers_sincos2d_and_sd3_crop_match_diffusers(seed):
    rng = random.Random(SEED + 300 + seed)
    dim = rng.choice([4, 8, rng.randrange(4, 400, 4)])
    height, width = rng.randint(1, 40), rng.randint(1, 40)
    base_size, scale = rng.choice([16, 64, rng.randint(1, 100)]), rng.choice([1.0, 2.0, rng.uniform(0.3, 4)])
    ref = embeddings.get_2d_sincos_pos_embed(
        dim, (height, width), base_size=base_size, interpolation_scale=scale, output_type="pt"
    ).numpy()
    got = encode(
        "sincos2d",
        None,
        dim,
        preset="diffusers",
        grid=(height, width),
        base_size=float(base_size),
        interpolation_scale=scale,
        dtype="float64",
    )
    largest = max(height, width) * max(1.0, base_size / min(height, width)) / scale
    _close(ref, got, _noise(largest))

    max_size = rng.choice([96, rng.randint(1, 60)])
    sample = rng.choice([128, rng.randrange(2, 300, 2)])
    height, width = rng.randint(1, max_size), rng.randint(1, max_size)
    patch = embeddings.PatchEmbed(
        height=sample, width=sample, patch_size=2, in_channels=1, embed_dim=dim, pos_embed_max_size=max_size
    )
    ref = patch.cropped_pos_embed(2 * height, 2 * width)[0].detach().numpy()
    got = encode(
        "sincos2d",
        None,
        dim,
        preset="sd3",
        grid=(height, width),
        base_size=float(sample // 2),
        pos_embed_max_size=max_size,
        dtype="float64",
    )
    _close(ref, got, _noise(max_size * max(1.0, (sample // 2) / max_size)))


def test_noise_bound_is_far_below_a_convention_slip():
    """The tolerance would catch a one-row offset or a swapped half (a test that can fail)."""
    ref = embeddings.get_timestep_embedding(torch.arange(64, dtype=torch.float32), 32).numpy()
    slipped = encode("timestep", 65, 32, preset="diffusers", dtype="float64")[1:]
    assert np.abs(ref - slipped).max() > 100 * _noise(64)
    swapped = encode("timestep", 64, 32, preset="ldm", dtype="float64")
    assert np.abs(ref - swapped).max() > 100 * _noise(64)
    assert math.isfinite(float(np.abs(ref - encode("timestep", 64, 32, preset="diffusers")).max()))
