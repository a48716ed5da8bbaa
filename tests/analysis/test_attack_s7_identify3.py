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
