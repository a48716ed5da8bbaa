"""Costs out of proportion to the input (issue 30, class 4), second attack: the fixes' tests."""

from __future__ import annotations

from tests.conftest import CAPPED_BYTES as _CAP
from tests.conftest import run_capped as _capped


def test_available_memory_counts_the_process_address_space_limit():
    # was MemAvailable alone (tens of GiB): a size check passed, then numpy ran out of memory
    done = _capped(code="from pecli.memory import available_memory\nprint(available_memory())\n")
    assert done.returncode == 0, done.stderr
    assert 0 < int(done.stdout) < _CAP


def test_a_slice_larger_than_the_cap_is_refused_with_its_size(tmp_path):
    # was "pecli: error: out of memory", exit 3, after the check had passed against MemAvailable (the figure
    # draws the whole slice; the terminal view draws it from the per-offset values: test_attack_s7_term.py)
    done = _capped("plot", "alibi", "--heads", "8", "--len", "20000", "--slice", "0", "-o", str(tmp_path / "a.png"))
    assert done.returncode == 2, done.stderr
    assert "the 20000 × 20000 slice of the table would take 6.0 GiB, more than the" in done.stderr
    assert not (tmp_path / "a.png").exists()


def test_resampling_a_long_table_costs_the_output_not_target_times_source(tmp_path):
    # was a dense 131072 × 65536 float64 weight matrix (64 GiB): "out of memory", exit 3
    import numpy as np

    source = tmp_path / "long.npy"
    np.save(source, np.repeat(np.arange(65536, dtype=np.float32)[:, None], 4, axis=1))
    done = _capped("resample", str(source), "--len", "131072", "-o", str(tmp_path / "out.npy"))
    assert done.returncode == 0, done.stderr
    out = np.load(tmp_path / "out.npy")
    # linear, align_corners=False, of a ramp: the sample point itself, clamped to the ends
    expected = np.clip((np.arange(131072) + 0.5) / 2 - 0.5, 0, 65535).astype(np.float32)
    assert out.shape == (131072, 4)
    np.testing.assert_array_equal(out[:, 0], expected)
    np.testing.assert_array_equal(out[:, 3], expected)
