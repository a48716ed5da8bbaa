"""Hostile table files, session 9 (issue 30, classes 2, 4, 5): files from the internet are untrusted input.

An attack of about 200 hand-built files (GGUF written as the gguf package's GGUFWriter lays it out, then
corrupted; safetensors, .npy and .pt) through info, info --stats, identify, compare, plot, resample and
generate --from-config. Each test failed on the code before its fix.
"""

from __future__ import annotations

import numpy as np

from tests.conftest import run_pecli


def test_identify_reads_a_big_endian_float64_npy_as_its_little_endian_twin(tmp_path):
    # before: np.save of a ">f8" table, then identify: "internal error: ValueError: To change to a dtype of a
    # different size, the last axis must be contiguous", exit 3 (the precision check viewed swapped bytes)
    table = np.arange(32, dtype=np.float64).reshape(8, 4) / 7
    np.save(tmp_path / "big.npy", table.astype(">f8"))
    np.save(tmp_path / "little.npy", table.astype("<f8"))
    big, little = run_pecli("identify", str(tmp_path / "big.npy")), run_pecli("identify", str(tmp_path / "little.npy"))
    assert "Traceback" not in big.stderr and "internal error" not in big.stderr, big.stderr
    assert big.code == little.code == 1, (big.code, big.stderr)
    shown = big.stdout.decode()
    assert shown.replace("big.npy", "X") == little.stdout.decode().replace("little.npy", "X")
    assert "mean 2.214, standard deviation 1.319" in shown  # 15.5 / 7: the values, not swapped bytes
