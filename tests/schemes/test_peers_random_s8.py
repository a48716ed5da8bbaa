"""Seeded random valid parameters, pecli's tables against the libraries' own live output (issue 30).

Each library's table is float32 arithmetic; pecli's is float64 rounded once, compared with compare's
own float32-noise tolerance (each row's angles at its own position). Fixed cases live in
test_conventions.py and test_peer_corpus.py; these draw the parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_tables
from pecli.schemes.grid import sincos2d_row_positions

CASES = 40


def _agree(ours: np.ndarray, library: object, positions: np.ndarray | None = None) -> None:
    table = np.asarray(library.detach().numpy() if hasattr(library, "detach") else library, dtype=np.float32)
    result = compare_tables(ours, table, positions=positions)
    assert result.agree, (result.max_abs, result.worst)


def _draws(seed: int) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, case]) for case in range(CASES)]


@pytest.mark.parametrize("rng", _draws(1))
def test_diffusers_get_2d_sincos_pos_embed(rng):
    embeddings = pytest.importorskip("diffusers.models.embeddings")
    dim, height, width = 4 * int(rng.integers(1, 33)), int(rng.integers(1, 20)), int(rng.integers(1, 20))
    cls, extra = bool(rng.random() < 0.4), int(rng.integers(0, 4))
    scale = float(rng.choice([1.0, 0.5, 2.0, round(float(rng.uniform(0.2, 4)), 3)]))
    base_size = int(rng.choice([7, 8, 16, 32, 64]))
    output_type = str(rng.choice(["np", "pt"]))
    library = embeddings.get_2d_sincos_pos_embed(dim, (height, width), cls_token=cls, extra_tokens=extra,
                                                 interpolation_scale=scale, base_size=base_size,
                                                 output_type=output_type)  # fmt: skip
    leading = {"cls_token": True, "extra_tokens": extra} if cls and extra else {}
    spec = {"grid": (height, width), "base_size": float(base_size), "interpolation_scale": scale, **leading}
    ours = pecli.encode("sincos2d", None, dim, dtype="float64", **spec)
    # float32 noise at the tokens' coordinates (compare of the spec knows them)
    _agree(ours, library, sincos2d_row_positions(None, dim, **spec))
    text = ",".join(f"{k}={v}" for k, v in spec.items() if k != "grid")
    assert pecli.compare(f"sincos2d:grid={height},{width},{text}", np.asarray(library, np.float32)).agree


def test_compare_allows_float32_noise_at_a_grid_tokens_scaled_coordinates():
    """Coordinates 64/11/0.5 ≈ 11.6× the token index: the row-number tolerance called diffusers' table different."""
    embeddings = pytest.importorskip("diffusers.models.embeddings")
    library = embeddings.get_2d_sincos_pos_embed(24, (15, 11), interpolation_scale=0.5, base_size=64)
    report = pecli.compare("sincos2d:grid=15,11,base_size=64,interpolation_scale=0.5", library.numpy())
    assert report.agree and report.result.max_abs > 1e-6
    assert not pecli.compare("sincos2d:grid=15,11,base_size=64,interpolation_scale=0.6", library.numpy()).agree


@pytest.mark.parametrize("rng", _draws(2))
def test_diffusers_patch_embed_cropped_pos_embed(rng):
    embeddings = pytest.importorskip("diffusers.models.embeddings")
    patch, side = int(rng.choice([1, 2, 4])), int(rng.integers(4, 24))
    dim, sample = 4 * int(rng.integers(1, 17)), int(rng.integers(2, side + 1))
    scale = float(rng.choice([1.0, 0.5, 2.0]))
    module = embeddings.PatchEmbed(height=sample * patch, width=sample * patch, patch_size=patch, in_channels=1,
                                   embed_dim=dim, interpolation_scale=scale, pos_embed_max_size=side)  # fmt: skip
    height, width = int(rng.integers(1, side + 1)), int(rng.integers(1, side + 1))
    library = module.cropped_pos_embed(height * patch, width * patch)[0]
    spec = {"grid": (height, width), "base_size": float(sample), "interpolation_scale": scale,
            "pos_embed_max_size": side}  # fmt: skip
    ours = pecli.encode("sincos2d", None, dim, dtype="float64", **spec)
    _agree(ours, library, sincos2d_row_positions(None, dim, **spec))
