"""The same command writes the same bytes: on every run, in any environment, on every machine.

Each format is written twice by separate processes with different environments (hash seed,
locale, time zone, thread count, working directory) and compared byte for byte. The checksums
below were computed once (pecli 0.1.0, numpy 2.4) and pin the files themselves: the sinusoidal
values (float64 angles, one rounding), the text formatting, and the learned table, whose values
come from numpy's PCG64 bit generator through ``np.random.default_rng(seed)`` — a stream numpy
keeps stable across versions and platforms, unlike the legacy ``np.random.seed`` functions.
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest

import pecli
from tests.conftest import require_module, run_pecli

SINUSOIDAL = ("generate", "--d", "16", "--len", "64")
LEARNED = ("generate", "learned", "--d", "8", "--len", "16", "--seed", "0")
FAIRSEQ_HALF = ("generate", "--preset", "fairseq", "--d", "10", "--len", "7")
GAUSSIAN = ("generate", "gaussian", "--d", "8", "--len", "16", "--seed", "0")

#: sha256 of whole files written by `pecli <args> -o FILE`
PINNED_FILES = {
    (SINUSOIDAL, "npy"): "444ca2ba54f3778b10d861fd1653282d21cd370e036ea27bae7ba44a2a7e807d",
    (SINUSOIDAL, "csv"): "7c5417e1f762f14767f4ab54c149d506ec17f530468016028cbe3652c0eb2875",
    (SINUSOIDAL, "tsv"): "867239dfee1f8e7bdb869e70ea26e6a8a3a4171e05dd83e8f94bf6755c55989e",
    (LEARNED, "npy"): "1404f20d6de64d14ce35b83a35c50beb884209d07b57d027e48bbb55f23fa517",
    ((*FAIRSEQ_HALF, "--dtype", "float16"), "csv"): "80fe271a276b1bdfbd0bc8ad7b1b3c2663db7aa9d0a6b502e41c59130591cae6",
    (GAUSSIAN, "npy"): "8e4163a6034318442b2771877cbbc5ec03fdc657b7ac9275f05f5a5ddc70e7ab",
}

#: sha256 of the data section of safetensors files (their header carries pecli's version, checked apart)
PINNED_SAFETENSORS_DATA = {
    SINUSOIDAL: "fd38fa1de867ecaeebeab7fbc0d98b8c9a102c7aadc3bdf13fe14771da449a88",
    (*FAIRSEQ_HALF, "--dtype", "bfloat16"): "86b25db175fcff6d197d5c32c2f8ec480016073520a5e69a856352b75a21ee0d",
}

ENVIRONMENTS = (
    {"PYTHONHASHSEED": "0", "LC_ALL": "C", "TZ": "UTC", "OMP_NUM_THREADS": "1"},
    {"PYTHONHASHSEED": "4242", "LC_ALL": "C.UTF-8", "TZ": "Asia/Kolkata", "OMP_NUM_THREADS": "2"},
)


def _write_twice(tmp_path, args: tuple[str, ...], fmt: str) -> bytes:
    """Write the table in two fresh processes with different environments; return the (equal) bytes."""
    outputs = []
    for number, environment in enumerate(ENVIRONMENTS):
        directory = tmp_path / f"run{number}"
        directory.mkdir(exist_ok=True)
        result = run_pecli(*args, "-q", "-o", f"table.{fmt}", cwd=str(directory), env=environment)
        assert result.code == 0, result.stderr
        outputs.append((directory / f"table.{fmt}").read_bytes())
    assert outputs[0] == outputs[1], f"{fmt}: two runs wrote different bytes"
    return outputs[0]


def _write_here(cli, tmp_path, args: tuple[str, ...], fmt: str) -> bytes:
    target = tmp_path / f"table.{fmt}"
    result = cli(*args, "-q", "-o", str(target))
    assert result.code == 0, result.stderr
    return target.read_bytes()


def _safetensors_data(data: bytes) -> bytes:
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    assert header["__metadata__"]["pecli_version"] == pecli.__version__
    assert list(header) == ["__metadata__", "pe"]  # a fixed key order: metadata first, tensors sorted
    return data[8 + length :]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("fmt", ["npy", "csv", "safetensors"])
def test_two_processes_in_different_environments_write_the_same_pinned_bytes(tmp_path, fmt):
    data = _write_twice(tmp_path, SINUSOIDAL, fmt)
    if fmt == "safetensors":
        assert _sha(_safetensors_data(data)) == PINNED_SAFETENSORS_DATA[SINUSOIDAL]
    else:
        assert _sha(data) == PINNED_FILES[(SINUSOIDAL, fmt)]


def test_pt_files_are_byte_identical(cli, tmp_path):
    """One write in a fresh process, one in this one (torch is imported once, not twice)."""
    require_module("torch")
    (tmp_path / "run").mkdir()
    result = run_pecli(*LEARNED, "-q", "-o", "table.pt", cwd=str(tmp_path / "run"), env=ENVIRONMENTS[1])
    assert result.code == 0, result.stderr
    assert (tmp_path / "run" / "table.pt").read_bytes() == _write_here(cli, tmp_path, LEARNED, "pt")


@pytest.mark.parametrize(("args", "fmt"), list(PINNED_FILES), ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_files_are_pinned(cli, tmp_path, args, fmt):
    assert _sha(_write_here(cli, tmp_path, args, fmt)) == PINNED_FILES[(args, fmt)]


@pytest.mark.parametrize("args", list(PINNED_SAFETENSORS_DATA), ids=" ".join)
def test_safetensors_data_is_pinned(cli, tmp_path, args):
    data = _write_here(cli, tmp_path, args, "safetensors")
    assert _sha(_safetensors_data(data)) == PINNED_SAFETENSORS_DATA[args]


def test_learned_file_is_numpy_pcg64_default_rng(cli, tmp_path):
    """The pinned learned table is exactly ``default_rng(0).standard_normal`` times std, rounded once."""
    import io

    table = np.load(io.BytesIO(_write_here(cli, tmp_path, LEARNED, "npy")))
    np.testing.assert_array_equal(table, (np.random.default_rng(0).standard_normal((16, 8)) * 0.02).astype("f4"))
    generator = np.random.Generator(np.random.PCG64(0))  # what default_rng(0) is, spelled out
    np.testing.assert_array_equal(table, (generator.standard_normal((16, 8)) * 0.02).astype("f4"))


def test_gaussian_file_draws_its_frequencies_from_pcg64_default_rng(cli, tmp_path):
    """Tancik et al.'s mapping [sin(2π·B·x) | cos(2π·B·x)], B = default_rng(seed).standard_normal(d/2)·σ."""
    import io

    table = np.load(io.BytesIO(_write_here(cli, tmp_path, GAUSSIAN, "npy")))
    frequencies = np.random.default_rng(0).standard_normal(4) * 10.0
    x = 2.0 * np.arange(16) / 15 - 1.0  # positions normalised to [-1, 1]
    angles = 2.0 * np.pi * np.outer(x, frequencies)
    np.testing.assert_allclose(table, np.hstack([np.sin(angles), np.cos(angles)]), atol=1e-6)


def test_streamed_chunks_do_not_change_the_bytes(tmp_path, monkeypatch):
    """A table written in many small chunks is the same file as one written in a single piece."""
    from pecli.io import Tensor, write_tensors
    from pecli.schemes.spec import TableSpec

    spec = TableSpec.resolve("learned", None, {"seed": 7}, length=300, dim=24)
    whole = tmp_path / "whole.npy"
    write_tensors(str(whole), {"pe": Tensor.from_array(spec.array())}, fmt="npy")
    chunked = tmp_path / "chunked.npy"
    write_tensors(str(chunked), {"pe": Tensor(spec.shape, spec.dtype, lambda: spec.chunks(1000))}, fmt="npy")
    assert chunked.read_bytes() == whole.read_bytes()
    np.testing.assert_array_equal(np.load(whole), pecli.encode("learned", 300, 24, seed=7))
