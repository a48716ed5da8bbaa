"""Attack of session 5's additions (issue 30): each test failed on the code before its fix.

Spec errors said in the spec's words, identify's new checks, the probe, and compare's per-row diagnosis.
"""

from __future__ import annotations

import numpy as np

import pecli
from tests.conftest import assert_clean_error, run_pecli


def _table(tmp_path, name="a.npy", length=8, dim=16):
    path = tmp_path / name
    np.save(path, pecli.encode("sinusoidal", length, dim))
    return str(path)


def test_a_rope_spec_without_part_is_told_part_not_the_flag(tmp_path):
    """`compare a.npy rope` said 'pick one with --part cos|sin|angle': the user wrote a spec, not --part."""
    result = run_pecli("compare", _table(tmp_path), "rope")
    assert_clean_error(result, 2, "in spec 'rope'", "part=cos|sin|angle")
    assert "--part" not in result.stderr


def test_a_grid_spec_against_a_file_of_other_length_is_a_shape_mismatch(tmp_path):
    """`compare a.npy sincos2d:grid=3x3` (8 rows) said '--len 8 does not match grid=3,3 … (drop --len)'.

    The user typed no --len: the 8 came from the file. Now the shapes are compared as they are.
    """
    result = run_pecli("compare", _table(tmp_path), "sincos2d:grid=3x3")
    assert_clean_error(result, 2, "shape mismatch", "8 × 16", "9 × 16")
    assert "--len" not in result.stderr.split("(")[0]
    assert "drop --len" not in result.stderr
    assert not list(tmp_path.glob("*.png"))


def test_a_grid_spec_with_a_matching_file_is_compared(tmp_path):
    """The grid's 8 tokens against an 8-row file: compared (exit 1: a different table), not refused."""
    path = tmp_path / "g.npy"
    np.save(path, pecli.encode("sincos2d", None, 16, grid="2,4"))
    result = run_pecli("compare", str(path), "sincos2d:grid=2x4")
    assert result.code == 0, result.stderr
    result = run_pecli("compare", str(path), "sincos2d:grid=2x4,base=100")
    assert result.code == 1, result.stderr


def test_two_grid_specs_need_no_len():
    """`compare sincos2d:grid=3x3 sincos2d:grid=3x3,base=100 --d 8` said 'missing --len (e.g. pecli generate …)'."""
    result = run_pecli("compare", "sincos2d:grid=3x3", "sincos2d:grid=3x3,base=100", "--d", "8")
    assert result.code == 1, result.stderr
    assert "9 × 8" in result.stdout.decode()
    result = run_pecli("compare", "sincos2d:grid=3x3", "sincos2d:grid=3x3", "--d", "8")
    assert result.code == 0, result.stderr
