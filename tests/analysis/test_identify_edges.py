"""identify at the edges: wide tables and tiny values answer, never an internal error (issue 30)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


def _pecli(*args: str, strict: bool = False, timeout: int = 300) -> subprocess.CompletedProcess:
    """``pecli ARGS`` as a real process (``strict``: a numpy RuntimeWarning is an error)."""
    python = [sys.executable, *(["-W", "error::RuntimeWarning"] if strict else []), "-m", "pecli"]
    return subprocess.run([*python, *args], capture_output=True, text=True, timeout=timeout)


def _identify(path) -> subprocess.CompletedProcess:
    return _pecli("identify", str(path))


def _generate(path, *options: str) -> None:
    assert _pecli("generate", *options, "-o", str(path)).returncode == 0


def test_a_table_wider_than_float64_fourier_frequencies_is_identified(tmp_path):
    """d ≥ 2050 made the Fourier candidate compute 2^1024: OverflowError, exit 3."""
    path = tmp_path / "g.npy"
    _generate(path, "--d", "4096", "--len", "4")
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


def test_a_2048_wide_table_is_identified_without_numpy_warnings(tmp_path):
    """d = 2048 gave the Fourier candidates 2^1023·π and 2^1023·15: 6–7 overflow/invalid warnings on stderr."""
    path = tmp_path / "g.npy"
    _generate(path, "--d", "2048", "--len", "16")
    result = _identify(path)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr.lower()
    assert "pecli generate --preset vaswani --d 2048 --len 16" in result.stdout
    assert _pecli("identify", str(path), strict=True).returncode == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--d", "2051"], "--d 2051 (L = 1025 frequencies) reaches 2^1024"),
        (["--d", "2047", "--positions", "raw"], "times positions up to 15"),
        (["--num-freqs", "1023", "--pi", "--positions", "raw"], "--num-freqs 1023 reaches 2^1022·π"),
    ],
)
def test_fourier_frequencies_beyond_float64_are_refused_with_the_size(tmp_path, options, message):
    """generate fourier overflowed to inf with numpy warnings and blamed 'a parameter' for non-finite values."""
    path = tmp_path / "f.npy"
    result = _pecli("generate", "fourier", *options, "--len", "16", "-o", str(path), strict=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "use at most" in result.stderr
    assert "warning" not in result.stderr and not path.exists()


def test_fourier_at_the_float64_edge_is_generated_exactly():
    """The widest table that fits (2^1023 at position 1) is still written, its top column sin/cos(±2^1023)."""
    from pecli.schemes.fourier import fourier_table

    table = fourier_table(2, 2049, dtype="float64")
    assert np.isfinite(table).all()
    assert table[1, -2] == pytest.approx(np.sin(2.0**1023), abs=1e-12)


@pytest.mark.parametrize("shape", [(50,), (4, 6, 6)])
def test_a_1d_or_3d_tensor_that_matches_nothing_reports_its_real_statistics(tmp_path, shape):
    """(H,) slopes and (H, L, L) biases that matched nothing were described as 'mean 0, standard deviation 0'."""
    values = (np.random.default_rng(0).uniform(0, 1, shape) * 3 + 5).astype(np.float32)
    path = tmp_path / "t.npy"
    np.save(path, values)
    result = _identify(path)
    assert result.returncode == 1, result.stderr
    wide = values.astype(np.float64)
    assert f"mean {wide.mean():.4g}, standard deviation {wide.std():.4g}" in result.stdout
    assert "warning" not in result.stderr.lower()
    described = _pecli("identify", str(path), "--json", timeout=60)
    report = json.loads(described.stdout)
    assert report["value_mean"] == pytest.approx(wide.mean(), rel=1e-12)
    assert report["value_std"] == pytest.approx(wide.std(), rel=1e-12)


def test_a_key_on_an_unnamed_table_says_so_instead_of_listing_nothing(tmp_path):
    """``--key foo`` on a .npy said "(valid: )": there are no names to list."""
    path = tmp_path / "t.npy"
    np.save(path, np.zeros((2, 2)))
    result = _pecli("info", str(path), "--key", "foo", timeout=60)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "holds one unnamed table" in result.stderr and "valid: )" not in result.stderr
