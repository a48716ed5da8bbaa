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
