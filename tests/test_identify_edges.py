"""identify at the edges: wide tables and tiny values answer, never an internal error (issue 30)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest


def _identify(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pecli", "identify", str(path)], capture_output=True, text=True, timeout=300
    )


def test_a_table_wider_than_float64_fourier_frequencies_is_identified(tmp_path):
    """d ≥ 2050 made the Fourier candidate compute 2^1024: OverflowError, exit 3."""
    path = tmp_path / "g.npy"
    generate = [sys.executable, "-m", "pecli", "generate", "--d", "4096", "--len", "4", "-o", str(path)]
    subprocess.run(generate, check=True, capture_output=True)
    result = _identify(path)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    assert "pecli generate --preset vaswani --d 4096 --len 4" in result.stdout


@pytest.mark.parametrize(("value", "dtype"), [(1e-300, np.float64), (1e-40, np.float32)])
def test_a_table_of_tiny_values_is_described(tmp_path, value, dtype):
    """No RoPE frequency turns in such a table: the scaling search had nothing to reduce (zero-size array)."""
    path = tmp_path / "tiny.npy"
    np.save(path, np.full((8, 4), value, dtype))
    result = _identify(path)
    assert result.returncode in (0, 1), result.stderr
    assert "internal error" not in result.stderr
    assert f"mean {value:g}" in result.stdout
