"""identify of ALiBi's (H, L, L) biases in memory a small factor of the table's (issue 30): each reading is
regenerated a head and a block of query rows at a time and compared in place, never a float64 copy of the
whole table. The old code held about 14 copies' worth: 920 MB resident for this 64 MiB table."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from pecli.schemes.alibi import alibi_table
from tests.conftest import run_capped

HEADS, LENGTH = 16, 1024
TABLE_BYTES = HEADS * LENGTH * LENGTH * 4  # 64 MiB of float32
#: Python, numpy and pecli imported, and the CLI built (about 60 MB resident), with room to spare
BASELINE_BYTES = 150 << 20


def _identify_peak(path: str) -> tuple[int, str, int]:
    """(exit code, stdout, peak resident bytes: the child's own VmHWM) of ``pecli identify path`` in a capped child."""
    code = (
        f"import sys; sys.argv = ['pecli', 'identify', {path!r}]\n"
        "try:\n    from pecli.__main__ import main\n    main()\n"
        "finally:\n    hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "    print('PEAK', hwm, file=sys.stderr)\n"
    )
    done = run_capped(code=code)
    assert "PEAK" in done.stderr, done.stderr
    return done.returncode, done.stdout, int(done.stderr.split("PEAK")[-1].split()[0]) << 10


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM and the address-space cap as Linux has them")
@pytest.mark.parametrize(
    ("params", "match", "command"),
    [
        ({}, "match: alibi: heads=16\n", "pecli generate alibi --heads 16 --len 1024 -o pe.npy"),
        (
            {"form": "key", "arithmetic": "bfloat16", "head_dim": 64},  # Falcon's: tried among several readings
            "match: alibi: heads=16 form=key arithmetic=bfloat16 head_dim=64\n",
            "pecli generate alibi --heads 16 --form key --arithmetic bfloat16 --head-dim 64 --len 1024 -o pe.npy",
        ),
    ],
)
def test_alibi_biases_are_identified_head_by_head(tmp_path, params, match, command):
    path = tmp_path / "biases.npy"
    np.save(path, alibi_table(LENGTH, heads=HEADS, **params))
    code, out, peak = _identify_peak(str(path))
    assert code == 0, out
    assert match in out, out
    assert f"reproduce: {command}" in out, out
    # the table (read whole or paged in) and a block's float64 buffers; the old code peaked at 920 MB
    assert peak < 2 * TABLE_BYTES + BASELINE_BYTES, peak / TABLE_BYTES


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM and the address-space cap as Linux has them")
def test_noise_of_that_shape_matches_nothing_in_bounded_memory(tmp_path):
    # every reading is tried over the table before "no match": the old code held 645 MB
    path = tmp_path / "noise.npy"
    np.save(path, np.random.default_rng(0).normal(0, 0.5, (HEADS, LENGTH, LENGTH)).astype(np.float32))
    code, out, peak = _identify_peak(str(path))
    assert code == 1, out
    assert "random table: consistent with N(0, σ²), σ = 0.4998" in out, out
    assert "closest: alibi: heads=16, max error 723" in out, out
    assert peak < 2 * TABLE_BYTES + BASELINE_BYTES, peak / TABLE_BYTES


def test_head_by_head_readings_equal_the_whole_tables(monkeypatch):
    # the blocks regenerated are the whole table's, bit for bit, in every reading identify tries
    from pecli.analysis.identify import biases
    from pecli.analysis.identify import values as reading
    from pecli.analysis.identify.biases import _alibi_blocks
    from pecli.analysis.identify.values import _values_precision
    from pecli.analysis.value_precision import value_precision

    for module in (biases, reading):  # the ALiBi readings' blocks and the precision's
        monkeypatch.setattr(module, "_CHUNK_BYTES", 8 * 300 * 7)  # blocks of 7 query rows

    for params in ({}, {"form": "key"}, {"form": "key", "arithmetic": "bfloat16", "head_dim": 64}):
        whole = alibi_table(300, heads=5, dtype="float64", **params)
        values = whole.astype(np.float32)
        blocks = list(_alibi_blocks(values, {"heads": 5, **params}))
        assert len(blocks) == 5 * 43  # 43 blocks of each head's 300 rows
        assert np.array_equal(np.concatenate([expected for _, expected in blocks]).reshape(whole.shape), whole)
        assert _values_precision(values) == value_precision(values)
        rounded = alibi_table(300, heads=5, dtype="bfloat16", **params).astype(np.float32)
        assert _values_precision(rounded) == value_precision(rounded)


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM and the address-space cap as Linux has them")
def test_a_square_bucket_table_is_not_read_whole_as_alibi_query_rows(tmp_path):
    # a (2048, 2048) T5 bucket table is also tried as ALiBi's query rows of 2048 heads: each reading was
    # regenerated whole and kept (413 MB for this 16 MiB table); now a block of heads, dropped at the first off
    from pecli.schemes.t5 import t5_bucket_table

    path = tmp_path / "buckets.npy"
    table = t5_bucket_table(2048).astype(np.float32)
    np.save(path, table)
    code, out, peak = _identify_peak(str(path))
    assert code == 0, out
    assert "reproduce: pecli generate t5 --len 2048 -o pe.npy" in out, out
    assert peak < 2 * table.nbytes + BASELINE_BYTES, peak / table.nbytes
