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


def test_identify_of_a_2048_wide_table_prints_no_numpy_warning(tmp_path):
    """NeRF candidates at d = 2048 multiplied positions by 2^1023·π: overflow/invalid warnings before exit 0."""
    path = tmp_path / "g.npy"
    generate = [sys.executable, "-m", "pecli", "generate", "--d", "2048", "--len", "16", "-o", str(path)]
    subprocess.run(generate, check=True, capture_output=True)
    result = _identify(path)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "pecli generate --preset vaswani --d 2048 --len 16" in result.stdout


def test_fourier_frequencies_beyond_float64_are_refused_naming_what_gave_them():
    import pecli
    from pecli.errors import ParameterError

    with pytest.raises(ParameterError, match=r"^dim 2049 gives 1024 frequencies, up to 2\^1023"):
        pecli.encode("fourier", 4, 2049)
    with pytest.raises(ParameterError, match=r"^num_freqs gives 1010 frequencies"):
        pecli.encode("fourier", 4, None, num_freqs=1010)
    assert np.isfinite(pecli.encode("fourier", 4, None, num_freqs=1000, dtype="float64")).all()


@pytest.mark.parametrize("shape", [(100,), (2, 8, 8)])
def test_a_table_that_matches_nothing_reports_its_own_statistics(tmp_path, shape):
    """1-D and 3-D tables were described as "mean 0, standard deviation 0" whatever their values."""
    values = np.random.default_rng(0).normal(3.0, 2.0, size=shape)
    path = tmp_path / "v.npy"
    np.save(path, values)
    result = _identify(path)
    assert result.returncode == 1, result.stderr
    line = next(line for line in result.stdout.splitlines() if "values: mean" in line)
    mean, std = (float(word.rstrip(",")) for word in (line.split()[2], line.split()[5]))
    assert mean == pytest.approx(values.mean(), rel=1e-3) and std == pytest.approx(values.std(), rel=1e-3)


def test_a_key_on_an_unnamed_table_says_so_instead_of_listing_nothing(tmp_path):
    """``--key foo`` on a .npy said "(valid: )": there are no names to list."""
    path = tmp_path / "t.npy"
    np.save(path, np.zeros((2, 2)))
    result = subprocess.run(
        [sys.executable, "-m", "pecli", "info", str(path), "--key", "foo"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "holds one unnamed table" in result.stderr and "valid: )" not in result.stderr
