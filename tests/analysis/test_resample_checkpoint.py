"""pecli resample --in-checkpoint: a checkpoint copy with one tensor replaced, every other byte kept."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from pecli.analysis.resample import resample_grid, resample_length
from pecli.io.checkpoint import replace_in_directory, replace_tensor
from tests.conftest import assert_clean_error, require_module

safetensors_numpy = require_module("safetensors.numpy")


def _checkpoint(path, rng) -> dict[str, np.ndarray]:
    tensors = {
        "embeddings.position_embeddings.weight": rng.standard_normal((16, 8)).astype(np.float32),
        "embeddings.word_embeddings.weight": rng.standard_normal((30, 8)).astype(np.float32),
        "encoder.layer.0.weight": rng.standard_normal((8, 8)).astype(np.float32),
        "pooler.bias": rng.standard_normal((8,)).astype(np.float32),
        "a_first.weight": rng.integers(-5, 5, (3, 5)).astype(np.int64),
    }
    safetensors_numpy.save_file(tensors, str(path), metadata={"format": "pt", "origin": "test"})
    return tensors


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_file_copy_replaces_only_the_tensor(tmp_path, cli):
    source, target = tmp_path / "m.safetensors", tmp_path / "new.safetensors"
    tensors = _checkpoint(source, np.random.default_rng(0))
    before = _digest(source)
    result = cli("resample", str(source), "--key", "position_embeddings", "--len", "24", "--keep-rows", "2",
                 "--method", "tile", "--in-checkpoint", "-o", str(target))  # fmt: skip
    assert result.code == 0, result.stderr
    assert _digest(source) == before  # the input untouched
    loaded = safetensors_numpy.load_file(str(target))  # the header read back by the reference library
    assert set(loaded) == set(tensors)
    key = "embeddings.position_embeddings.weight"
    expected = resample_length(tensors[key], 24, method="tile", keep_rows=2)
    np.testing.assert_array_equal(loaded[key], expected)
    for name, value in tensors.items():
        if name != key:
            assert loaded[name].dtype == value.dtype and loaded[name].tobytes() == value.tobytes(), name
    from safetensors import safe_open

    with safe_open(str(target), "np") as handle:
        metadata = handle.metadata()
    assert metadata["format"] == "pt" and metadata["origin"] == "test"
    assert metadata["pecli_resample"].startswith(f"{key}: 16 × 8 -> 24 × 8; length=24, method=tile, keep_rows=2")
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors", "new.safetensors"]  # no temporary left


def test_core_copy_keeps_bytes_of_every_other_tensor_across_chunks(tmp_path, monkeypatch):
    # the read/write fallback (no copy_file_range, no sendfile), in chunks smaller than a tensor
    import pecli.io.checkpoint as checkpoint

    monkeypatch.setattr(checkpoint, "CHUNK_BYTES", 7)
    monkeypatch.delattr(os, "copy_file_range", raising=False)
    monkeypatch.delattr(os, "sendfile", raising=False)
    source, target = tmp_path / "m.safetensors", tmp_path / "c.safetensors"
    tensors = _checkpoint(source, np.random.default_rng(1))
    grid = np.random.default_rng(2).standard_normal((1, 1 + 16, 4)).astype(np.float16)
    safetensors_numpy.save_file({**tensors, "pos_embed": grid}, str(source))
    new = resample_grid(grid, (6, 6), prefix_tokens=1, method="bicubic", antialias=True, dtype="float16")
    done = replace_tensor(str(source), str(target), "pos_embed", new)
    assert (done.old_shape, done.shape, done.nbytes, done.old_nbytes) == ((1, 17, 4), (1, 37, 4), 296, 136)
    loaded = safetensors_numpy.load_file(str(target))
    np.testing.assert_array_equal(loaded["pos_embed"], new)
    for name, value in tensors.items():
        assert loaded[name].tobytes() == value.tobytes(), name


def test_sharded_directory_rewrites_one_shard_and_the_index_total(tmp_path, cli):
    rng = np.random.default_rng(3)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "bert", "max_position_embeddings": 16}))
    (model / "tokenizer.json").write_text("{}")
    first = {"embeddings.position_embeddings.weight": rng.standard_normal((16, 8)).astype(np.float32),
             "embeddings.word_embeddings.weight": rng.standard_normal((30, 8)).astype(np.float32)}  # fmt: skip
    second = {"encoder.layer.0.weight": rng.standard_normal((8, 8)).astype(np.float32)}
    shards = {"model-00001-of-00002.safetensors": first, "model-00002-of-00002.safetensors": second}
    weight_map = {}
    for shard, tensors in shards.items():
        safetensors_numpy.save_file(tensors, str(model / shard), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(tensors, shard))
    total = sum(value.nbytes for tensors in shards.values() for value in tensors.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (model / "model.safetensors.index.json").write_text(json.dumps(index))
    digests = {file: _digest(model / file) for file in os.listdir(model)}
    result = cli("resample", str(model), "--key", "position_embeddings", "--len", "40", "--in-checkpoint",
                 "-o", str(tmp_path / "long"))  # fmt: skip
    assert result.code == 0, result.stderr
    assert {file: _digest(model / file) for file in os.listdir(model)} == digests  # the input untouched
    out = tmp_path / "long"
    assert sorted(os.listdir(out)) == sorted(digests)
    for file in ("config.json", "tokenizer.json", "model-00002-of-00002.safetensors"):
        assert _digest(out / file) == digests[file], file
    new_index = json.loads((out / "model.safetensors.index.json").read_text())
    assert new_index["weight_map"] == weight_map
    assert new_index["metadata"]["total_size"] == total + (40 - 16) * 8 * 4
    loaded = safetensors_numpy.load_file(str(out / "model-00001-of-00002.safetensors"))
    key = "embeddings.position_embeddings.weight"
    np.testing.assert_array_equal(loaded[key], resample_length(first[key], 40, method="linear"))
    assert loaded["embeddings.word_embeddings.weight"].tobytes() == first["embeddings.word_embeddings.weight"].tobytes()


def test_single_file_directory(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    tensors = _checkpoint(model / "model.safetensors", np.random.default_rng(4))
    (model / "config.json").write_text("{}")
    key = "embeddings.position_embeddings.weight"
    done = replace_in_directory(str(model), str(tmp_path / "n"), key, np.zeros((4, 8), np.float32))
    assert done.file == str(tmp_path / "n" / "model.safetensors")
    loaded = safetensors_numpy.load_file(done.file)
    assert loaded[key].shape == (4, 8) and loaded["pooler.bias"].tobytes() == tensors["pooler.bias"].tobytes()


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("same", ["overwrite the input"]),
        ("samelink", ["overwrite the input"]),
        ("missing-key", ["no tensor", "nosuchtensor"]),
        ("npy-output", ["not a .safetensors file"]),
        ("npy-input", ["not one"]),
        ("stdout", ["not stdout"]),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, cli, case, words):
    source = tmp_path / "m.safetensors"
    _checkpoint(source, np.random.default_rng(5))
    np.save(tmp_path / "t.npy", np.zeros((16, 8), np.float32))
    os.symlink(source, tmp_path / "link.safetensors")
    before = _digest(source)
    listing = sorted(os.listdir(tmp_path))
    args = {
        "same": [str(source), "-o", str(source)],
        "samelink": [str(source), "-o", str(tmp_path / "link.safetensors")],
        "missing-key": [str(source), "--key", "nosuchtensor", "-o", str(tmp_path / "n.safetensors")],
        "npy-output": [str(source), "--key", "position", "-o", str(tmp_path / "n.npy")],
        "npy-input": [str(tmp_path / "t.npy"), "-o", str(tmp_path / "n.safetensors")],
        "stdout": [str(source), "--key", "position", "-o", "-"],
    }[case]
    result = cli("resample", *args, "--len", "20", "--in-checkpoint")
    assert_clean_error(result, 2, *words)
    assert _digest(source) == before and sorted(os.listdir(tmp_path)) == listing


def test_directory_output_must_be_new(tmp_path, cli):
    model = tmp_path / "m"
    model.mkdir()
    _checkpoint(model / "model.safetensors", np.random.default_rng(6))
    (model / "config.json").write_text("{}")
    for target in (model, tmp_path / "m" / "model.safetensors"):
        result = cli("resample", str(model), "--key", "position", "--len", "20", "--in-checkpoint", "-o", str(target))
        assert_clean_error(result, 2)
    assert sorted(os.listdir(model)) == ["config.json", "model.safetensors"]
