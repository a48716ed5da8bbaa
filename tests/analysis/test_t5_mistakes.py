"""compare names T5's known mistake: the encoder's bidirectional buckets in the decoder, or the reverse."""

from __future__ import annotations

import numpy as np
import pytest

import pecli


def _codes(reference: str, table: np.ndarray) -> list[str]:
    report = pecli.compare(reference, table)
    assert not report.agree
    return [finding.code for finding in report.result.diagnosis]


@pytest.mark.parametrize(("reference", "engine"), [(True, False), (False, True)])
def test_the_other_stacks_buckets_are_named(reference: bool, engine: bool) -> None:
    table = pecli.encode("t5", 96, None, bidirectional=engine, dtype="float32")
    codes = _codes(f"t5:bidirectional={str(reference).lower()}", table)
    assert codes[0] == "bidirectional"
    finding = pecli.compare(f"t5:bidirectional={str(reference).lower()}", table).result.diagnosis[0]
    assert finding.figures["residual"] == 0.0


def test_another_bucket_count_is_not_called_a_flipped_direction() -> None:
    # 8 buckets against the reference's 32, same direction: no flip of bidirectional reproduces it
    table = pecli.encode("t5", 96, None, num_buckets=8, dtype="float32")
    assert "bidirectional" not in _codes("t5", table)


def test_the_buckets_differ_where_a_decoder_looks_ahead() -> None:
    # the fact the finding rests on: causal buckets put every key after the query in bucket 0
    causal = pecli.encode("t5", 8, None, bidirectional=False, dtype="float64")
    both = pecli.encode("t5", 8, None, bidirectional=True, dtype="float64")
    upper = np.triu_indices(8, 1)
    assert np.all(causal[upper] == 0) and np.all(both[upper] > 0)
