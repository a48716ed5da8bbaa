"""Costs in proportion to what is shown (issue 30, class 4), round 14 (second pass): identify of a vector
too long to be ALiBi's slopes, wide tables written as text. Memory cases run pecli in a child under
:func:`tests.conftest.run_capped`'s address-space cap and read the child's peak resident memory (``VmHWM``).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.conftest import INTERPRETER_MB, run_peak

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="peak memory read as Linux reports it")


@pytest.mark.parametrize("length", [65537, 1_000_000])
def test_identify_of_a_long_vector_says_what_the_file_is(cli, tmp_path, length):
    """A 1-D vector is read as ALiBi's (H,) slopes; one of 10^7 values was refused as "--heads is 10000000",
    an option identify has not got. The message says what the file is and why nothing is read from it."""
    path = tmp_path / "vector.npy"
    np.save(path, np.arange(length, dtype=np.float32))
    result = cli("identify", str(path))
    text = result.out + result.stderr
    assert result.code == 2, text
    assert "--heads" not in text
    assert f"1-D vector of {length} values" in text
    assert "65536 heads" in text


def test_identify_never_names_a_generator_flag(cli, tmp_path):
    """Any candidate a scheme refuses (here 70000 heads of (H, L, L) biases) is the table's shape, not a flag."""
    path = tmp_path / "biases.npy"
    np.save(path, np.zeros((70000, 2, 2), dtype=np.float32))
    result = cli("identify", str(path))
    text = result.out + result.stderr
    assert result.code == 2, text
    assert "--heads" not in text
    assert "(70000, 2, 2)" in text


def test_identify_of_a_slopes_vector_still_reads_alibi(cli, tmp_path):
    path = tmp_path / "slopes.npy"
    np.save(path, np.exp2(-np.arange(1, 9, dtype=np.float32)))
    result = cli("identify", str(path))
    text = result.out + result.stderr
    assert result.code == 0, text
    assert "alibi" in text and "heads=8" in text


@linux_only
@pytest.mark.parametrize("output", ["wide.csv", "-"])
def test_wide_rows_are_written_as_text_a_piece_at_a_time(tmp_path, output):
    """2 × 4·10^6 as CSV (file or stdout): savetxt formatted each row as one string from a tuple of its values
    (370 MB peak for a 32 MB table; 10^7 columns: 748 MB); now a piece of columns at a time."""
    target = "-" if output == "-" else str(tmp_path / output)
    code, _, stderr, peak = run_peak("generate", "--d", "4000000", "--len", "2", "-o", target, "--format", "csv")
    assert code == 0, stderr
    table_mb = 2 * 4_000_000 * 4 / 2**20
    assert peak < INTERPRETER_MB + 3 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB table"


def test_wide_rows_are_the_lines_savetxt_writes():
    """The pieces of a row wider than a piece join to savetxt's own line, delimiter for delimiter."""
    import io

    from pecli.io import text
    from pecli.io.tensor import Tensor

    rows = np.random.default_rng(0).normal(size=(3, 2 * text._TEXT_PIECE_VALUES + 5)).astype(np.float32)
    for delimiter in (",", "\t"):
        expected = io.BytesIO()
        np.savetxt(expected, rows, fmt="%.9g", delimiter=delimiter)
        written = b"".join(text.text_pieces(Tensor.from_array(rows), delimiter))
        assert written == expected.getvalue()
