"""identify attacked at the edges (issue 30 class 5): pecli's own CSV/TSV output and negative timesteps.

Found and fixed: a float32 table pecli wrote as CSV (9 digits) parsed to float64 values 3e-8 off every float32
convention, so identify said "value precision float64 … no known convention matches"; a float16 one likewise;
timestep rows at a negative t (which pecli timestep writes) matched nothing, as t was sought in [0, 2π·period)
only, and the reproduce command then put the negative t where it is read as an option.

The subject is what identify prints, so pecli runs in process (the real entry point, argv parsing included)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import assert_reproduces, run_in_process


@pytest.mark.parametrize(("name", "dtype"), [("a.csv", "float32"), ("a.tsv", "float32"), ("h.csv", "float16")])
def test_pecli_text_output_is_identified_at_the_dtype_it_was_printed_from(tmp_path, name, dtype):
    target = tmp_path / name
    assert run_in_process("generate", "--d", "16", "--len", "32", "--dtype", dtype, "-o", str(target)).code == 0
    found = run_in_process("identify", str(target))
    assert found.code == 0, found.out
    assert f"dtype {dtype}, value precision {dtype}" in found.out
    assert "match: sinusoidal" in found.out
    assert_reproduces(run_in_process, found.out, target, tmp_path, suffix=".npy")


def test_pecli_csv_on_stdin_is_identified(tmp_path):
    target = tmp_path / "a.csv"
    assert run_in_process("generate", "--d", "16", "--len", "32", "-o", str(target)).code == 0
    found = run_in_process("identify", "-", stdin=target.read_bytes())
    assert found.code == 0 and "match: sinusoidal" in found.out, found.out


def test_truncated_digits_are_never_claimed_finer_than_written(tmp_path):
    """A table printed with 6 digits by another tool is not read as float32 (nor as an exact match)."""
    import pecli

    target = tmp_path / "f6.csv"
    np.savetxt(target, pecli.encode("sinusoidal", 32, 16, dtype="float64"), fmt="%.6f", delimiter=",")
    found = run_in_process("identify", str(target))
    assert "value precision float32" not in found.out and "within float32 rounding" not in found.out


@pytest.mark.parametrize("times", [("-5", "3", "7"), ("-999", "-0.5", "250")])
def test_negative_timesteps_are_read_and_reproduced(tmp_path, times):
    target = tmp_path / "t.npy"
    assert run_in_process("timestep", "--d", "16", "-o", str(target), "--", *times).code == 0
    found = run_in_process("identify", str(target))
    assert found.code == 0, found.out
    assert "match: timestep" in found.out and f"-- {float(times[0])!r}" in found.out
    assert_reproduces(run_in_process, found.out, target, tmp_path, suffix=".npy")
