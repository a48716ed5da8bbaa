"""identify, attack round 3 of session 7 (issue 30): tables pecli writes that it did not recognise."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.analysis.identify import identify_table
from pecli.schemes.t5 import t5_bucket_table


@pytest.mark.parametrize(
    ("length", "num_buckets", "max_distance", "bidirectional", "dtype"),
    [
        (64, 32, 128, True, np.float32),  # `pecli generate t5 --len 64`
        (64, 32, 128, False, np.int64),  # the decoder's causal table, as torch writes it
        (300, 16, 64, False, np.float32),
        (513, 64, 256, True, np.float64),
        (200, 20, 300, True, np.float32),
    ],
)
def test_t5_bucket_tables_are_named_with_their_parameters(length, num_buckets, max_distance, bidirectional, dtype):
    table = t5_bucket_table(length, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional)
    found = identify_table(table.astype(dtype))
    assert found.matched and found.best.scheme == "t5", found.best.describe()
    params = found.best.params
    assert params["bidirectional"] is bidirectional
    assert params["num_buckets"] == num_buckets
    regenerated = t5_bucket_table(
        length, num_buckets=params["num_buckets"], max_distance=params["max_distance"], bidirectional=bidirectional
    )
    assert np.array_equal(regenerated, table)
    if length >= max_distance:  # every bucket seen: T5's shipped 128 or the exact value
        assert params["max_distance"] == max_distance


def test_t5_shipped_max_distance_is_preferred_among_equivalent_ones():
    found = identify_table(t5_bucket_table(64).astype(np.float32))
    assert (found.best.params["num_buckets"], found.best.params["max_distance"]) == (32, 128)
    assert found.level == "exact"


def test_a_bucket_matrix_off_by_one_entry_is_not_t5():
    table = t5_bucket_table(64).astype(np.float64)
    table[40, 3] += 1
    assert not identify_table(table).matched


@pytest.mark.parametrize("heads", [160, 200])
def test_alibi_beyond_128_heads_one_query_row_per_head_and_a_single_head(heads):
    from pecli.schemes.alibi import alibi_table

    rows = alibi_table(16, heads=heads, form="key", dtype="float64")[:, 0]
    found = identify_table(rows.astype(np.float32))
    assert found.matched and found.best.scheme == "alibi" and found.best.params["heads"] == heads
    single = alibi_table(16, heads=heads, head=heads - 1, dtype="float64").astype(np.float32)
    found = identify_table(single)
    assert found.matched and found.best.scheme == "alibi"
    params = found.best.params
    regenerated = alibi_table(16, heads=params["heads"], head=params["head"], dtype="float32")
    assert np.array_equal(regenerated, single)


def test_alibi_float16_query_rows_far_from_zero_are_read():
    from pecli.schemes.alibi import alibi_table

    # MPT's last query row, L = 147: its first entries near −124 are float16 steps of 0.06 apart
    rows = alibi_table(147, heads=40, dtype="float64")[:, -1].astype(np.float16)
    found = identify_table(rows)
    assert found.matched and found.best.scheme == "alibi", found.best.describe()
    assert (found.best.params["heads"], found.query_row) == (40, 146)


@pytest.mark.parametrize("max_period", [1000.0, 2000.0])
@pytest.mark.parametrize(("flip", "shift"), [(True, 0.0), (False, 1.0)])
def test_timestep_rows_at_other_max_periods_are_read(max_period, flip, shift):
    import pecli

    times = np.sort(np.random.default_rng(7).uniform(0, 1000, 20)).astype(np.float32).astype(np.float64)
    table = np.asarray(
        pecli.timestep_embedding(
            times, 64, flip_sin_to_cos=flip, freq_shift=shift, max_period=max_period, dtype="float32"
        )
    )
    found = identify_table(table)
    assert found.matched and found.best.scheme == "timestep", found.best.describe()
    assert found.best.params["max_period"] == max_period
    np.testing.assert_allclose(found.best.timesteps, times, rtol=0, atol=1e-3)


def _diffusers_grid(grid, **params):
    import pecli

    return np.asarray(pecli.encode("sincos2d", None, 32, preset="diffusers", grid=grid, dtype="float32", **params))


@pytest.mark.parametrize(
    ("grid", "params"),
    [
        ("8,4", {"base_size": 32.0}),  # a non-square grid: each axis scaled by its own side
        ("8,8", {"base_size": 64.0, "interpolation_scale": 2.0}),  # only base_size / interpolation_scale shows
        ("8,8", {"base_size": 20.0, "interpolation_scale": 1.25}),  # base_size / scale 16: the preset itself
        ("4,4", {"base_size": 32.0, "cls_token": True, "extra_tokens": 2}),  # behind diffusers' extra zero rows
        ("4,8", {"base_size": 64.0, "interpolation_scale": 0.5, "cls_token": True, "extra_tokens": 3}),
    ],
)
def test_diffusers_2d_sincos_tables_are_regenerated(grid, params):
    table = _diffusers_grid(grid, **params)
    found = identify_table(table)
    assert found.matched and found.best.scheme == "sincos2d", found.best.describe()
    read = found.best.params
    regenerated = _diffusers_grid(
        read["grid"],
        base_size=read["base_size"],
        interpolation_scale=read["interpolation_scale"],
        cls_token=read["cls_token"],
        extra_tokens=read["extra_tokens"],
    )
    assert regenerated.shape == table.shape
    np.testing.assert_allclose(regenerated, table, rtol=0, atol=1e-6)


def test_diffusers_timesteps_at_t_999_are_named_within_each_entrys_angle_noise():
    # was 'none' (unverified): diffusers' Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0) at
    # t = 0, 37, …, 999 is 2.9e-5 off pecli's float32 arithmetic (torch's exp is one unit of roundoff from
    # numpy's at two of 128 frequencies), 8 times compare's allowance at row 27; at t = 999 it is float32 noise
    from pathlib import Path

    import pecli

    table = np.load(Path(__file__).parents[1] / "data" / "peers" / "diffusers_timesteps_module_256_t0to999step37.npy")
    found = identify_table(table)
    assert found.level == "approximate" and not found.unverified, found.best.describe()
    assert found.best.params["flip_sin_to_cos"] is True and found.best.params["freq_shift"] == 0.0
    assert found.best.timesteps == tuple(float(t) for t in range(0, 1000, 37))
    recipe = found.recipe()
    assert recipe.preset is None and recipe.params == {"arithmetic": "float32"}
    regenerated = pecli.timestep_embedding(recipe.timesteps, 256, dtype="float32", flip_sin_to_cos=True, freq_shift=0.0,
                                           arithmetic="float32")  # fmt: skip
    assert 2e-5 < np.abs(regenerated.astype(np.float64) - table).max() < 4e-5


def test_a_timestep_alias_stays_unnamed_under_the_angle_noise_check():
    # the alias (t thousands off, 1e-3 off the table) is far beyond each entry's own angle noise
    import pecli

    table = pecli.timestep_embedding([473.0, 511.0], 4, flip_sin_to_cos=True, freq_shift=0.0, scale=1000.0,
                                     arithmetic="float32", dtype="float32")  # fmt: skip
    found = identify_table(table)
    assert not found.matched or max(found.best.timesteps or (0.0,)) <= 1000 * 511 + 1


def test_a_timestep_recipe_keeps_its_float32_arithmetic_beside_a_preset():
    # was `--preset ldm` alone: a preset's parameters plus arithmetic=float32 dropped the arithmetic
    from pecli.analysis.identify.result import Candidate, timestep_recipe
    from pecli.schemes.catalog import SCHEMES

    diffusers = {**SCHEMES["timestep"].defaults, "flip_sin_to_cos": False, "freq_shift": 1.0, "arithmetic": "float32"}
    recipe = timestep_recipe(Candidate("timestep", diffusers, presets=("diffusers",), timesteps=(0.5,)), dim=8)
    assert recipe.preset == "diffusers" and recipe.params == {"arithmetic": "float32"}
    ldm = {**SCHEMES["timestep"].defaults, "arithmetic": "float32"}
    recipe = timestep_recipe(Candidate("timestep", ldm, presets=("ldm",), timesteps=(0.5,)), dim=8)
    assert recipe.preset is None and recipe.params == {"arithmetic": "float32"}


def test_fractional_timesteps_that_regenerate_as_decimals_are_named_as_decimals():
    # was 333.29998779296875 and 998.3900146484375 (float32's t, the closest reading) where 333.3 and 998.39,
    # in float32 arithmetic, regenerate diffusers' get_timestep_embedding rows just as well
    from pathlib import Path

    path = Path(__file__).parents[1] / "data" / "peers" / "diffusers_get_timestep_embedding_fractional_t_10x32.npy"
    found = identify_table(np.load(path))
    assert found.matched and not found.unverified and found.best.presets[0] == "diffusers"
    assert found.best.timesteps == (0.0, 0.5, 1.25, 17.75, 99.5, 250.0, 333.3, 500.125, 998.39, 999.0)
    assert found.best.params["arithmetic"] == "float32"
