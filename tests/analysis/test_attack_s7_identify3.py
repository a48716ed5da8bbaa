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
