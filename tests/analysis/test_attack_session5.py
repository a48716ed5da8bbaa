"""Attack of session 5's additions (issue 30): each test failed on the code before its fix.

Spec errors said in the spec's words, identify's new checks, the probe, and compare's per-row diagnosis.
"""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError
from tests.conftest import assert_clean_error, run_in_process


def _table(tmp_path, name="a.npy", length=8, dim=16):
    path = tmp_path / name
    np.save(path, pecli.encode("sinusoidal", length, dim))
    return str(path)


def test_a_rope_spec_without_part_is_told_part_not_the_flag(tmp_path):
    """`compare a.npy rope` said 'pick one with --part cos|sin|angle': the user wrote a spec, not --part."""
    result = run_in_process("compare", _table(tmp_path), "rope")
    assert_clean_error(result, 2, "in spec 'rope'", "part=cos|sin|angle")
    assert "--part" not in result.stderr


def test_a_grid_spec_against_a_file_of_other_length_is_a_shape_mismatch(tmp_path):
    """`compare a.npy sincos2d:grid=3x3` (8 rows) said '--len 8 does not match grid=3,3 … (drop --len)'.

    The user typed no --len: the 8 came from the file. Now the shapes are compared as they are.
    """
    result = run_in_process("compare", _table(tmp_path), "sincos2d:grid=3x3")
    assert_clean_error(result, 2, "shape mismatch", "8 × 16", "9 × 16")
    assert "--len" not in result.stderr.split("(")[0]
    assert "drop --len" not in result.stderr
    assert not list(tmp_path.glob("*.png"))


def test_a_grid_spec_with_a_matching_file_is_compared(tmp_path):
    """The grid's 8 tokens against an 8-row file: compared (exit 1: a different table), not refused."""
    path = tmp_path / "g.npy"
    np.save(path, pecli.encode("sincos2d", None, 16, grid="2,4"))
    result = run_in_process("compare", str(path), "sincos2d:grid=2x4")
    assert result.code == 0, result.stderr
    result = run_in_process("compare", str(path), "sincos2d:grid=2x4,base=100")
    assert result.code == 1, result.stderr


def test_two_grid_specs_need_no_len():
    """`compare sincos2d:grid=3x3 sincos2d:grid=3x3,base=100 --d 8` said 'missing --len (e.g. pecli generate …)'."""
    result = run_in_process("compare", "sincos2d:grid=3x3", "sincos2d:grid=3x3,base=100", "--d", "8")
    assert result.code == 1, result.stderr
    assert "9 × 8" in result.stdout.decode()
    result = run_in_process("compare", "sincos2d:grid=3x3", "sincos2d:grid=3x3", "--d", "8")
    assert result.code == 0, result.stderr


def _probe_files(tmp_path):
    from safetensors.numpy import load_file

    probe = tmp_path / "probe.safetensors"
    result = run_in_process("generate", "rope", "--d", "16", "--len", "8", "--probe", "-o", str(probe))
    assert result.code == 0, result.stderr
    return str(probe), load_file(str(probe))


def test_probe_counts_infinite_engine_values_as_it_counts_nan(tmp_path):
    """An engine's inf was 'max |Δ| inf' and a search for a convention mistake ('no known mistake explains it')."""
    import json

    from safetensors.numpy import save_file

    probe, tensors = _probe_files(tmp_path)
    k = tensors["k_rotated"].copy()
    k[1, 7, 0] = np.inf
    engine = str(tmp_path / "engine.safetensors")
    save_file({"q_rotated": tensors["q_rotated"], "k_rotated": k}, engine)
    result = run_in_process("compare", engine, probe)
    assert result.code == 1, result.stderr
    text = result.stdout.decode()
    assert "k_rotated: differs: infinite at 1 of 288 entries (the first at head 1" in text
    assert "elsewhere max |Δ| 0" in text and "no known mistake" not in text and "inf at" not in text
    report = json.loads(run_in_process("compare", engine, probe, "--json").stdout)
    assert report["tensors"]["k_rotated"]["inf"] == 1 and report["tensors"]["k_rotated"]["max_abs_diff"] == 0.0


def test_probe_refuses_integer_and_bool_engine_outputs(tmp_path):
    """An int32 or bool 'rotation' was compared as numbers ('no known mistake explains it', exit 1)."""
    from safetensors.numpy import save_file

    probe, tensors = _probe_files(tmp_path)
    for dtype in (np.int32, np.bool_):
        engine = str(tmp_path / f"engine_{np.dtype(dtype).name}.safetensors")
        save_file({name: tensors[name].astype(dtype) for name in ("q_rotated", "k_rotated")}, engine)
        result = run_in_process("compare", engine, probe)
        assert_clean_error(result, 2, "q_rotated must hold real numbers", f"got {np.dtype(dtype).name}", "floating")


def test_probe_allows_a_float16_engine_its_own_rounding(tmp_path):
    """A correct rotation saved in float16 'differed' (max |Δ| 9.7e-4 against a float32 tolerance 4.3e-5)."""
    from safetensors.numpy import save_file

    from pecli.probe import rotate
    from pecli.probe_check import compare_rotated, read_probe

    probe_path, tensors = _probe_files(tmp_path)
    engine = str(tmp_path / "engine.safetensors")
    save_file({name: tensors[name].astype(np.float16) for name in ("q_rotated", "k_rotated")}, engine)
    result = run_in_process("compare", engine, probe_path)
    assert result.code == 0, result.stdout.decode() + result.stderr
    # a real mistake in float16 is still found and named
    from safetensors import safe_open

    with safe_open(probe_path, "np") as handle:
        probe = read_probe(tensors, handle.metadata())
    wrong = rotate(probe.spec, probe.q, probe.positions, layout="interleaved").astype(np.float16)
    report = compare_rotated(probe, {"q_rotated": wrong})
    assert not report.agree
    assert report.checks[0].diagnosis and report.checks[0].diagnosis[0].code == "pairing"
    # a list (pecli.testing's apply_fn may return one) is read as its values, a list of ints refused by name
    assert compare_rotated(probe, {"q_rotated": probe.q_rotated.tolist()}).agree
    with pytest.raises(ParameterError, match=r"q_rotated must hold real numbers .* got int64"):
        compare_rotated(probe, {"q_rotated": np.zeros(probe.q.shape, np.int64).tolist()})
