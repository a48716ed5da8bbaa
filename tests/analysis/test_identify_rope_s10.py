"""identify names RoPE with frequencies held in a half type, and bases that do not round (issue 30)."""

from __future__ import annotations

import pytest

import pecli
from pecli.analysis.identify import identify_table


@pytest.mark.parametrize("freqs_dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    ("layout", "part", "base"),
    [("half", "cos", 10000.0), ("interleaved", "sin", 500000.0), ("interleaved", "angle", 10000.0)],
)
def test_rounded_frequencies_are_named(freqs_dtype, layout, part, base) -> None:
    table = pecli.encode("rope", 512, 64, part=part, layout=layout, base=base, freqs_dtype=freqs_dtype)
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.scheme == "rope"
    assert found.best.params["freqs_dtype"] == freqs_dtype
    assert found.best.params["base"] == base
    assert found.best.params["layout"] == layout


def test_exact_frequencies_are_not_named_rounded() -> None:
    found = identify_table(pecli.encode("rope", 512, 64, part="cos"))
    assert found.level == "exact" and found.best.params.get("freqs_dtype") is None


@pytest.mark.parametrize("base", [500001.0, 123456.7, 12345.6])
def test_a_base_that_does_not_round_is_read_in_full(base) -> None:
    found = identify_table(pecli.encode("rope", 512, 64, part="cos", base=base))
    assert found.level == "exact"
    assert found.best.params["base"] == base


def test_alibi_with_fewer_query_rows_than_keys_is_named_as_the_last_query_rows(cli, tmp_path) -> None:
    import numpy as np

    path = tmp_path / "decoding.npy"
    np.save(path, pecli.encode("alibi", 16, None, heads=8)[:, -4:, :])
    result = cli("identify", str(path))
    assert result.code == 0, result.stderr
    assert "match: alibi: heads=8" in result.out
    assert "reproduce: pecli generate alibi --heads 8 --len 16 -o pe.npy" in result.out
    assert "query rows 12 to 15 of each head: pe[:, 12:, :] of the 8 × 16 × 16 biases" in result.out
