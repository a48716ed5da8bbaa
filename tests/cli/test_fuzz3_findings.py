"""Defects the extended CLI property fuzz found (issue 30): each failed on the code before its fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import run_in_process


def test_dynamic_rope_of_one_pair_is_written(tmp_path):
    # recording the effective base read inv_freq[1] of a 2-wide rotary: IndexError, exit 3
    out = str(tmp_path / "r.safetensors")
    result = run_in_process("generate", "rope", "--d", "2", "--len", "23", "--scaling", "dynamic", "--factor", "4",
                            "--original-max-position", "32", "--part", "cos", "-o", out)  # fmt: skip
    assert result.code == 0, result.stderr
    angles = np.arange(23.0)  # one pair at frequency 1: dynamic NTK cannot move it
    from safetensors.numpy import load_file

    np.testing.assert_allclose(load_file(out)["pe"], np.cos(np.stack([angles, angles], 1)), atol=1e-6)


def test_two_longrope_specs_are_compared_with_their_factor_lists():
    # the frequencies were computed without LongRoPE's factor lists: "--scaling longrope needs --short-factor …"
    spec = "rope:scaling=longrope,factor=2,original_max_position=8,short_factor=1,2,long_factor=1,2"
    result = run_in_process("compare", spec, "rope", "--d", "4", "--len", "10", "--json")
    assert result.code == 1, result.stderr
    report = json.loads(result.out)
    assert report["same"] is False
    # past 8 positions the long factors apply: pair 1's frequency is 1/2 of the unscaled one
    assert report["ratio"] == pytest.approx([1.0, 0.5])


def test_yarn_truncate_shows_in_the_frequencies():
    # truncate was left out of the frequencies: "every pair the same" beside "different"
    a = "rope:scaling=yarn,factor=4,original_max_position=16,truncate=false"
    b = "rope:scaling=yarn,factor=4,original_max_position=16"
    result = run_in_process("compare", a, b, "--d", "32", "--len", "64")
    assert result.code == 1
    assert "every pair the same" not in result.out and "pair 1: θ_A/θ_B" in result.out


def test_a_partial_rotary_spec_is_refused_in_the_specs_words():
    result = run_in_process("compare", "rope:partial_rotary_factor=0.5", "rope", "--d", "8")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "in spec 'rope:partial_rotary_factor=0.5'" in result.stderr
    assert "--partial-rotary-factor" not in result.stderr
