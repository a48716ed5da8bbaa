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


def test_alibi_with_fewer_query_rows_than_keys_says_how_to_pass_it(cli, tmp_path) -> None:
    import numpy as np

    path = tmp_path / "decoding.npy"
    np.save(path, pecli.encode("alibi", 16, None, heads=8)[:, -4:, :])
    result = cli("identify", str(path))
    assert result.code == 2
    assert "4 query rows of 16 keys" in result.stderr and "pe[:, -1:, :]" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
