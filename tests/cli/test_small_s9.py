"""Small message and label defects found while merging session 9's work (issue 30, class 3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from tests.conftest import run_in_process


def test_schemes_of_a_spec_points_to_the_scheme() -> None:
    # was "unknown scheme or preset 'rope:base=5' (valid: …, rope, …)": the scheme is known
    result = run_in_process("schemes", "rope:base=5")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "'rope:base=5' is a spec" in result.stderr and "(pecli schemes rope)" in result.stderr


def test_a_cache_tensor_named_as_its_layout_is_labelled_once(tmp_path: Path) -> None:
    # a tensor called cos_sin_cache was titled "ok.safetensors [cos_sin_cache] [cos_sin_cache]"
    angles = np.outer(np.arange(16.0), 10000.0 ** (-np.arange(0, 8, 2) / 8))
    path = tmp_path / "ok.safetensors"
    save_file({"cos_sin_cache": np.hstack([np.cos(angles), np.sin(angles)]).astype(np.float32)}, str(path))
    result = run_in_process("compare", str(path), "rope")
    assert result.code == 0, result.stderr
    assert "A: ok.safetensors [cos_sin_cache] — 16 × 16 float32" in result.out


def test_a_complex_table_elsewhere_points_to_compare(tmp_path: Path) -> None:
    path = tmp_path / "freqs_cis.npy"
    np.save(path, np.exp(1j * np.outer(np.arange(8.0), [1.0, 0.1])).astype(np.complex64))
    for command in ("identify", "plot"):
        result = run_in_process(command, str(path))
        assert result.code == 2 and result.stderr.count("\n") == 1
        assert "compare reads a complex freqs_cis against a model's config or a rope spec" in result.stderr
