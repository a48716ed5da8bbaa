"""info --stats of tensors whose values are tiny (1e-300): their squares underflow float64, and a plain
computation reads a standard deviation of 0. Every path (one tensor, many small tensors batched, a large
tensor read block by block) scales them as it scales values near 1e308."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.conftest import run_in_process


def _expected(values: np.ndarray) -> tuple[float, float]:
    scale = float(np.abs(values).max())
    scaled = values.astype(np.float64) / scale
    return float(scaled.mean() * scale), float(scaled.std() * scale)


def _stats(path, *extra: str) -> list[dict]:
    result = run_in_process("info", str(path), "--stats", "--json", *extra)
    assert result.code == 0, result.stderr
    return [tensor["stats"] for tensor in json.loads(result.out)["tensors"]]


@pytest.mark.parametrize("magnitude", [1e-300, 1e-160, 1e-310])
def test_one_tensor(tmp_path, magnitude: float) -> None:
    values = np.random.default_rng(0).normal(size=(40, 8)) * magnitude
    np.save(tmp_path / "t.npy", values)
    (stats,) = _stats(tmp_path / "t.npy")
    mean, std = _expected(values)
    assert stats["std"] > 0
    assert stats["std"] == pytest.approx(std, rel=1e-9, abs=0.0)
    assert stats["mean"] == pytest.approx(mean, rel=1e-6, abs=1e-9 * std)


def test_many_small_tensors_batched(tmp_path) -> None:
    rng = np.random.default_rng(1)
    tensors = {f"t{i}": rng.normal(size=(4, 4)) * 10.0 ** -(290 + i) for i in range(6)}
    tensors["plain"] = rng.normal(size=(4, 4))
    save_file(tensors, str(tmp_path / "many.safetensors"))
    found = dict(zip(sorted(tensors), _stats(tmp_path / "many.safetensors"), strict=True))  # info lists by name
    for name, values in tensors.items():
        assert found[name]["std"] == pytest.approx(_expected(values)[1], rel=1e-9, abs=0.0), name


def test_a_large_tensor_read_block_by_block(tmp_path) -> None:
    values = np.random.default_rng(2).normal(size=(1 << 20) + 7) * 1e-300  # more than one block of 2^20 values
    np.save(tmp_path / "big.npy", values)
    (stats,) = _stats(tmp_path / "big.npy")
    assert stats["std"] == pytest.approx(_expected(values)[1], rel=1e-9, abs=0.0)
