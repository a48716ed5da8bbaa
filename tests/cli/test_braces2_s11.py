"""Braces in names from outside, on the paths test_braces_s11.py left: corrupt .safetensors, .pt and .gguf
files, checkpoint copies (``resample --in-checkpoint``), GGUF and config.json settings, option values.

Each message names the file, tensor or value exactly as it is: ``{rows}a`` is never ``--rowsa``, and
never the private-use stand-ins :func:`pecli.text.literal` writes (a value made literal twice).
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.braces import NAMES
from tests.braces import one_error_line as _error


def _gguf_text(text: str) -> bytes:
    return struct.pack("<Q", len(text.encode())) + text.encode()


@pytest.mark.parametrize("name", NAMES)
def test_corrupt_safetensors_names_the_tensor(cli, tmp_path, name):
    header = json.dumps({f"{name}a": {"dtype": "XX", "shape": [2], "data_offsets": [0, 8]}}).encode()
    path = tmp_path / f"{name}.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
    error = _error(cli("info", str(path)))
    assert f"{path}: tensor {name + 'a'!r} has dtype 'XX', which pecli cannot read" in error
    header = json.dumps({
        f"{name}a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        f"{name}b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
    }).encode()  # fmt: skip
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(12))
    error = _error(cli("info", str(path)))
    assert f"tensor {name + 'b'!r} starts at byte 4 of the data and overlaps the previous tensor" in error


@pytest.mark.parametrize("name", NAMES)
def test_pt_tensor_that_is_no_dense_table(cli, tmp_path, name):
    torch = pytest.importorskip("torch")
    path = tmp_path / f"{name}.pt"
    torch.save({f"{name}a": torch.zeros(4, 4).to_sparse()}, path)
    error = _error(cli("identify", str(path)))
    assert f"{path}: tensor {name + 'a'!r} is sparse_coo, not a dense table" in error


@pytest.mark.parametrize("name", NAMES)
def test_truncated_gguf_names_the_tensor(cli, tmp_path, name):
    data = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + _gguf_text(f"{name}b")
    data += struct.pack("<IQQIQ", 2, 4, 4, 0, 0)  # two dimensions 4 × 4, F32, at offset 0: no data follows
    data += bytes(-len(data) % 32)
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(data)
    error = _error(cli("info", str(path)))
    assert f"{path}: tensor {name + 'b'!r} (4 × 4 of float32, 64 B) ends at byte 160, but the file holds 96 B" in error


@pytest.mark.parametrize("name", NAMES)
def test_gguf_settings_name_the_architecture(cli, tmp_path, name):
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(
        b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _gguf_text("general.architecture") + struct.pack("<I", 8)
        + _gguf_text(f"{name}x")
    )  # fmt: skip
    error = _error(cli("generate", "--from-config", str(path), "-o", str(tmp_path / "o.npy")))
    assert f"{path} has no {name}x.embedding_length" in error
    assert not (tmp_path / "o.npy").exists()


@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_copy_errors(cli, tmp_path, name):
    source = tmp_path / f"{name}c.safetensors"
    save_file({f"{name}pos": np.random.default_rng(0).random((4, 4), dtype=np.float32),
               "w": np.zeros(2, np.float32)}, str(source))  # fmt: skip
    resample = ("resample", str(source), "--in-checkpoint", "--len", "8")
    unknown = _error(cli(*resample, "--key", name + "q", "-o", str(tmp_path / "o.safetensors")))
    assert f"{source} has no tensor {name + 'q'!r}" in unknown
    same = _error(cli(*resample, "--key", name, "-o", str(source)))
    assert f"--in-checkpoint -o {str(source)!r} would overwrite the input" in same
    npy = tmp_path / f"{name}x.npy"
    assert f"-o {str(npy)!r} is not a .safetensors file" in _error(cli(*resample, "--key", name, "-o", str(npy)))
    model = tmp_path / f"{name}d"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 4, "n_positions": 4, "n_head": 1}))
    (model / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"pos": f"{name}.safetensors"}}))
    missing = _error(cli("resample", str(model), "--in-checkpoint", "--len", "8", "-o", str(tmp_path / "out")))
    index = model / "model.safetensors.index.json"
    assert f"{index} names shard {name + '.safetensors'!r}, which is missing" in missing
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", NAMES)
def test_config_file_and_option_values(cli, tmp_path, name):
    folder = tmp_path / f"{name}m"
    folder.mkdir()
    error = _error(cli("generate", "--from-config", str(folder), "-o", str(tmp_path / "o.npy")))
    assert f"{folder} has no config.json" in error
    config = folder / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}))
    error = _error(cli("generate", "--from-config", str(config), "-o", str(tmp_path / "o.npy")))
    assert f"{config} has no max_position_embeddings" in error
    table = tmp_path / "pe.npy"
    np.save(table, np.zeros((4, 4), np.float32))
    resampled = cli("resample", str(table), "--len", "8", "--method", name, "-o", str(tmp_path / "r.npy"))
    assert f"unknown --method {name!r} for --len" in _error(resampled)
    assert not (tmp_path / "r.npy").exists()
    assert f"unknown scheme or preset {name!r}" in _error(cli("schemes", name))
