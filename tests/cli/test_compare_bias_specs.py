"""compare of two bias specs (alibi, t5, kerple): len × len, no --d (issue 30, found by the CLI property fuzz)."""

from __future__ import annotations

import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize("spec", ["alibi:heads=4", "t5", "t5:num_buckets=8,bidirectional=false", "kerple"])
def test_a_bias_spec_is_the_same_as_itself_without_a_d(spec):
    # it was 'missing --d', and with --d 'has no --d': two bias specs could not be compared at all
    result = run_in_process("compare", spec, spec, "--len", "8")
    assert result.code == 0, result.stderr
    assert "max |A − B|        0" in result.out


def test_a_bias_spec_with_another_parameter_is_different():
    result = run_in_process("compare", "kerple", "kerple:r1=0.5", "--len", "8")
    assert result.code == 1, result.stderr
    assert "B = 0.5·A" in result.out  # kerple's bias is −r1·log(1 + r2·|h|): r1 is a factor


def test_two_bias_specs_still_need_a_len():
    result = run_in_process("compare", "t5", "t5")
    assert result.code == 2  # it was 'missing --d and --len': a bias has no --d
    assert result.stderr == "pecli: error: missing --len (e.g. pecli generate --d 512 --len 2048)\n"
