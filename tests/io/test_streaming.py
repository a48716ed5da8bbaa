"""Tables written in chunks: progress only on a terminal; files load memory-mapped and exact."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.io import read_table
from tests.conftest import run_in_terminal, run_pecli

#: 40 MiB of float32: more than one 32 MiB chunk
LENGTH, DIM = 10240, 1024


def run_on_a_terminal(*args: str) -> tuple[int, bytes]:
    """Run ``python -m pecli ARGS`` with stdin, stdout and stderr on a pseudo-terminal."""
    return run_in_terminal(*args)


def test_progress_bar_on_a_terminal_only(tmp_path):
    args = ("generate", "--d", "1024", "--len", "16384", "-o")  # 64 MiB: the bar's threshold
    code, terminal = run_on_a_terminal(*args, str(tmp_path / "tty.npy"))
    assert code == 0
    assert b"writing " in terminal and b"wrote " in terminal
    piped = run_pecli(*args, str(tmp_path / "pipe.npy"))
    assert piped.code == 0
    assert "writing" not in piped.stderr and piped.stderr.startswith("wrote ")


@pytest.mark.parametrize("suffix", ["npy", "safetensors"])
def test_chunked_file_loads_memory_mapped_and_equals_the_table(tmp_path, suffix):
    target = tmp_path / f"pe.{suffix}"
    result = run_pecli("generate", "--d", str(DIM), "--len", str(LENGTH), "-o", str(target))
    assert result.code == 0, result.stderr
    expected = pecli.encode("sinusoidal", LENGTH, DIM)
    if suffix == "npy":
        table = np.load(target, mmap_mode="r")
        assert isinstance(table, np.memmap)
    else:
        table = read_table(str(target)).array
    np.testing.assert_array_equal(table, expected)
    angles = np.arange(LENGTH)[-3:, None] * np.exp(-np.log(10000.0) * np.arange(0, DIM, 2) / DIM)
    assert np.abs(table[-3:, 0::2] - np.sin(angles)).max() < 1e-6
