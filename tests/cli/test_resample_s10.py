"""``pecli resample`` (issue 30, round s10): only the chosen tensor is read, its size checked from the header
however it was chosen (a part of its name, a model directory's one table), and a ViT model directory resampled
without ``--in-checkpoint``."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import run_measured

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="peak memory read as Linux reports it")


def _measured(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m pecli args`` in a fresh child, from the checkout: its result and peak RSS in MiB."""
    return run_measured(*args)


def _checkpoint(path, tensors: dict[str, tuple[tuple[int, ...], np.ndarray | None]]) -> str:
    """A .safetensors file; a tensor given as None is zeros left as a hole (a sparse file: GBs cost no disk)."""
    header, offset = {}, 0
    for name, (shape, _) in tensors.items():
        size = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(text)) + text)
        start = handle.tell()
        for name, (_, values) in tensors.items():
            if values is not None:
                handle.seek(start + header[name]["data_offsets"][0])
                handle.write(np.ascontiguousarray(values, np.float32).tobytes())
        handle.truncate(start + offset)
    return str(path)


def test_a_part_of_the_key_is_checked_from_the_header_before_the_tensor_is_read(tmp_path):
    # was: the size check needed the tensor named exactly; 'position' read the whole 128 MiB table, then refused
    source = _checkpoint(tmp_path / "bert.safetensors", {
        "embeddings.position_embeddings.weight": ((65536, 512), np.ones((65536, 512), np.float32)),
        "encoder.weight": ((4, 4), None),
    })  # fmt: skip
    done, peak = _measured("resample", source, "--key", "position", "--len", str(10**9), "-o", str(tmp_path / "r.npy"))
    assert done.returncode == 2, done.stderr
    assert "the resampled table would take 5.6 TiB" in done.stderr
    assert peak < 100, f"peak {peak:.0f} MiB: the 128 MiB tensor was read before the check"
    assert not (tmp_path / "r.npy").exists()


def test_a_vit_model_directory_is_resampled_without_in_checkpoint(tmp_path):
    # was: a directory whose position tensor is (1, N, C) fell to its config: "model_type 'vit' has no
    # position settings pecli knows", exit 2
    rng = np.random.default_rng(0)
    pos = rng.standard_normal((1, 1 + 4 * 4, 8)).astype(np.float32)
    model = tmp_path / "vit"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "vit", "image_size": 64, "patch_size": 16}))
    _checkpoint(model / "model.safetensors", {"vit.embeddings.position_embeddings": ((1, 17, 8), pos),
                                               "vit.encoder.weight": ((8, 8), None)})  # fmt: skip
    np.save(tmp_path / "pos.npy", pos)
    done, _ = _measured("resample", str(model), "--grid", "6x6", "--prefix-tokens", "1", "-o", str(tmp_path / "d.npy"))
    assert done.returncode == 0, done.stderr
    plain, _ = _measured("resample", str(tmp_path / "pos.npy"), "--grid", "6x6", "--prefix-tokens", "1",
                         "-o", str(tmp_path / "f.npy"))  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    result = np.load(tmp_path / "d.npy")
    assert result.shape == (1, 37, 8)
    np.testing.assert_array_equal(result, np.load(tmp_path / "f.npy"))
    np.testing.assert_array_equal(result[0, 0], pos[0, 0])  # the class token kept


def test_a_model_directory_target_too_large_is_refused_before_reading(tmp_path):
    model = tmp_path / "bert"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "bert", "max_position_embeddings": 65536}))
    _checkpoint(model / "model.safetensors", {"bert.embeddings.position_embeddings.weight": ((65536, 512), None)})
    done, peak = _measured("resample", str(model), "--len", str(10**9), "-o", str(tmp_path / "r.npy"))
    assert done.returncode == 2, done.stderr
    assert "the resampled table would take 5.6 TiB" in done.stderr
    assert peak < 100, f"peak {peak:.0f} MiB"


def test_a_small_table_in_a_gigabyte_checkpoint_reads_only_the_table(tmp_path):
    # a 1 GiB checkpoint (a sparse hole of weights) with a 197 × 768 pos_embed: only the table is read, and the
    # checkpoint copy is streamed by the kernel, so the peak stays near the interpreter's whatever the file's size
    pos = np.random.default_rng(1).standard_normal((1, 197, 768)).astype(np.float32)
    source = _checkpoint(tmp_path / "vit.safetensors", {"blocks.weight": ((256, 1024, 1024), None),
                                                         "pos_embed": ((1, 197, 768), pos)})  # fmt: skip
    done, peak = _measured("resample", source, "--key", "pos", "--grid", "16x16", "--prefix-tokens", "1",
                           "-o", str(tmp_path / "r.npy"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert np.load(tmp_path / "r.npy").shape == (1, 257, 768)
    assert peak < 120, f"peak {peak:.0f} MiB for a 0.6 MiB table"
    done, peak = _measured("resample", source, "--key", "pos_embed", "--grid", "16x16", "--prefix-tokens", "1",
                           "--in-checkpoint", "-o", str(tmp_path / "copy.safetensors"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert os.path.getsize(tmp_path / "copy.safetensors") > 1 << 30
    assert peak < 120, f"peak {peak:.0f} MiB copying a 1 GiB checkpoint"
