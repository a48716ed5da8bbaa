"""Attack round on model files (issue 30, session 13): GGUF metadata of the wrong type, a GGUF value that the
scheme refuses, a model directory holding both model.safetensors and a shard index, a shard name with control
characters. Each test failed on the code before its fix.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import assert_clean_error, require_module


def write_gguf(path, arch, metadata):
    """A GGUF file of a ``arch`` model (hidden 512, 8 heads, context 4096) with ``metadata`` as (kind, value)."""
    gguf = require_module("gguf")
    writer = gguf.GGUFWriter(str(path), arch)
    keys = {
        f"{arch}.context_length": ("uint32", 4096),
        f"{arch}.embedding_length": ("uint32", 512),
        f"{arch}.attention.head_count": ("uint32", 8),
        **metadata,
    }
    for key, (kind, value) in keys.items():
        getattr(writer, f"add_{kind}")(key, value)
    writer.add_tensor("token_embd.weight", np.zeros((2, 4), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


YARN = {"llama.rope.scaling.type": ("string", "yarn"), "llama.rope.scaling.factor": ("float32", 4.0)}


@pytest.mark.parametrize(
    ("key", "kind", "value", "expected"),
    [
        # before: exit 3, "internal error: TypeError: '<' not supported between instances of 'str' and 'int'"
        ("yarn_ext_factor", "string", "1", "expected a number, got '1'"),
        ("yarn_attn_factor", "bool", True, "expected a number, got True"),
        # before: "= nan is not supported yet", as if a real value pecli had yet to compute
        ("yarn_ext_factor", "float32", float("nan"), "expected a finite number, got nan"),
    ],
)
def test_gguf_yarn_factor_of_the_wrong_type_is_named(cli, tmp_path, key, kind, value, expected):
    path = write_gguf(tmp_path / "m.gguf", "llama", {**YARN, f"llama.rope.scaling.{key}": (kind, value)})
    result = cli("generate", "--from-config", path, "--len", "8", "-o", str(tmp_path / "t.st"))
    assert_clean_error(result, 2, f"llama.rope.scaling.{key}: {expected}")
    assert not (tmp_path / "t.st").exists()
    info = cli("info", path)  # info describes the file, its unreadable setting named in the description
    assert info.code == 0, info.stderr
    assert f"llama.rope.scaling.{key}: {expected}" in info.out


def test_gguf_yarn_ext_factor_negative_means_llama_cpp_default(cli, tmp_path):
    # llama.cpp's -1: "use the default", read as transformers' YaRN (the check above must not refuse it)
    path = write_gguf(tmp_path / "m.gguf", "llama", {**YARN, "llama.rope.scaling.yarn_ext_factor": ("float32", -1.0)})
    plain = write_gguf(tmp_path / "plain.gguf", "llama", YARN)
    outputs = []
    for source in (path, plain):
        target = str(tmp_path / f"{len(outputs)}.npy")
        result = cli("generate", "--from-config", source, "--len", "64", "--part", "cos", "-o", target)
        assert result.code == 0, result.stderr
        outputs.append(np.load(target))
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_gguf_value_the_scheme_refuses_is_named_by_its_gguf_key(cli, tmp_path):
    # before: "m.gguf: rope_local_base_freq must be …": a config key the .gguf file does not hold
    path = write_gguf(tmp_path / "m.gguf", "gemma3", {"gemma3.rope.freq_base_swa": ("float32", 0.5)})
    result = cli("generate", "--from-config", path, "--len", "8", "-o", str(tmp_path / "t.safetensors"))
    assert_clean_error(result, 2, "gemma3.rope.freq_base_swa must be a finite number greater than 1, got 0.5")
    assert "rope_local_base_freq" not in result.stderr
    assert not (tmp_path / "t.safetensors").exists()
    info = cli("info", path)
    assert info.code == 0, info.stderr
    assert "warning: gemma3.rope.freq_base_swa must be a finite number greater than 1" in info.out + info.stderr


def _model_directory(folder, positions):
    """A BERT-like directory whose shard index puts the position table in a.safetensors, with config.json."""
    from safetensors.numpy import save_file

    folder.mkdir()
    save_file({"emb.position_embeddings.weight": positions}, str(folder / "a.safetensors"))
    save_file({"w": np.ones(3, np.float32)}, str(folder / "b.safetensors"))
    weight_map = {"emb.position_embeddings.weight": "a.safetensors", "w": "b.safetensors"}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "max_position_embeddings": 10}))
    return folder


def test_directory_with_model_safetensors_and_an_index_is_read_as_transformers_loads_it(cli, tmp_path):
    # transformers' from_pretrained takes model.safetensors before the index (SAFE_WEIGHTS_NAME is checked first).
    # before: pecli read and rewrote the index's shard, so the copy transformers loads kept the old 10 rows
    from safetensors.numpy import load_file, save_file

    rng = np.random.default_rng(0)
    source = _model_directory(tmp_path / "m", rng.standard_normal((10, 4)).astype(np.float32))
    loaded = rng.standard_normal((6, 4)).astype(np.float32)  # the table transformers loads: 6 rows
    save_file({"emb.position_embeddings.weight": loaded}, str(source / "model.safetensors"))
    target = tmp_path / "out"
    args = ("resample", str(source), "--key", "position", "--len", "12", "--in-checkpoint", "-o", str(target))
    result = cli(*args)
    assert result.code == 0, result.stderr
    assert "6 × 4 -> 12 × 4" in result.stderr
    written = load_file(str(target / "model.safetensors"))["emb.position_embeddings.weight"]
    assert written.shape == (12, 4)
    np.testing.assert_allclose(written[0], loaded[0], rtol=1e-6)  # linear, align_corners=False: row 0 is kept
    # the unread index and its shards are copied as they are
    assert json.loads((target / "model.safetensors.index.json").read_text()) == json.loads(
        (source / "model.safetensors.index.json").read_text()
    )
    assert load_file(str(target / "a.safetensors"))["emb.position_embeddings.weight"].shape == (10, 4)
    # the directory reader (identify, plot, resample to a table file) reads the same table
    table = tmp_path / "table.npy"
    result = cli("resample", str(source), "--key", "position", "--len", "12", "-o", str(table))
    assert result.code == 0, result.stderr
    np.testing.assert_allclose(np.load(table), written, rtol=1e-6)


def test_shard_name_with_control_characters_is_escaped_once(cli, tmp_path):
    # before: 'b\\x1b[31m.safetensors' (the escape's backslash doubled: shown() and then repr())
    source = _model_directory(tmp_path / "m", np.zeros((10, 4), np.float32))
    index = json.loads((source / "model.safetensors.index.json").read_text())
    index["weight_map"]["w"] = "b\x1b[31m.safetensors"
    (source / "model.safetensors.index.json").write_text(json.dumps(index))
    result = cli("info", str(source))
    assert_clean_error(result, 2, "names shard 'b\\x1b[31m.safetensors', which is missing")
    assert "\x1b" not in result.stderr and "\\\\" not in result.stderr
