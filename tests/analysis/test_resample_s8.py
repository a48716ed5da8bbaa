"""pecli resample against the libraries on seeded random inputs: the cases that found a disagreement."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.analysis.resample import resample_grid, resample_length
from tests.conftest import require_module


@pytest.mark.parametrize(("dtype", "expected"), [("float32", 28), ("float64", 29)])
def test_nearest_index_follows_torchs_precision_of_the_table(dtype, expected):
    # torch's nearest computes i · (87/339) in its opmath type (float64 for a float64 tensor), then floorf:
    # row 113 reads source 28 from a float32 table, 29 from a float64 one (113 · 87/339 = 29 − 2e-15)
    table = np.arange(87, dtype=dtype)[:, None]
    assert resample_length(table, 339, method="nearest")[113, 0] == expected
    grid = np.arange(87, dtype=dtype).reshape(1, 87, 1).repeat(2, axis=0)  # (C, H, W): the height axis
    assert resample_grid(grid, (339, 1), method="nearest")[0, 113, 0] == expected


def test_nearest_length_equals_torch_for_seeded_float64_and_float32_tables():
    torch = require_module("torch")
    rng = np.random.default_rng(30)
    for _ in range(40):
        source, target, keep = int(rng.integers(50, 300)), int(rng.integers(50, 700)), int(rng.integers(0, 3))
        for dtype in (np.float64, np.float32):
            table = rng.standard_normal((keep + source, 3)).astype(dtype)
            ours = resample_length(table, keep + target, method="nearest", keep_rows=keep)
            rows = torch.from_numpy(table[keep:]).T[None]
            expected = torch.nn.functional.interpolate(rows, size=target, mode="nearest")[0].T.numpy()
            np.testing.assert_array_equal(ours[keep:], expected)
            np.testing.assert_array_equal(ours[:keep], table[:keep])


@pytest.mark.parametrize("side", [1, 5, 16])
def test_dinov2_original_at_the_tables_own_grid_keeps_it_as_dinov2_does(side):
    # facebookresearch/dinov2 interpolate_pos_encoding: `if npatch == N and w == h: return self.pos_embed`;
    # interpolating with scale_factor (side + 0.1) / side would move every sample (by up to 0.38 at 16 × 16)
    table = np.random.default_rng(side).standard_normal((1, 1 + side * side, 4)).astype(np.float32)
    ours = resample_grid(table, (side, side), prefix_tokens=1, method="bicubic", scale_offset=0.1)
    np.testing.assert_array_equal(ours, table)


def test_dinov2_original_still_samples_at_its_scale_factor_off_its_grid():
    torch = require_module("torch")
    table = np.random.default_rng(9).standard_normal((1, 1 + 6 * 6, 4)).astype(np.float32)
    for grid in [(6, 7), (7, 6), (3, 3)]:
        ours = resample_grid(table, grid, prefix_tokens=1, method="bicubic", scale_offset=0.1)
        patch = torch.from_numpy(table[0, 1:]).double().reshape(1, 6, 6, 4).permute(0, 3, 1, 2)
        expected = torch.nn.functional.interpolate(patch, scale_factor=((grid[0] + 0.1) / 6, (grid[1] + 0.1) / 6),
                                                   mode="bicubic", align_corners=False)  # fmt: skip
        np.testing.assert_allclose(ours[0, 1:], expected.permute(0, 2, 3, 1).reshape(-1, 4).numpy(), atol=2e-6)
