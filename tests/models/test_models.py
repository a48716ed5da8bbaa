"""A model's own files: ``generate --from-config`` against what transformers' modules compute, model
directories (sharded too) as inputs to info, plot and identify, and the bad inputs.

The references in tests/data/models were written by tests/data/make_model_fixtures.py with
transformers' own config classes and modules (models.json records the versions and the calls).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import ParameterError, TableFileError
from pecli.io import read_table
from pecli.models import is_position_tensor, model_encoding, open_model_directory, read_config
from tests.conftest import assert_clean_error
from tests.paths import DATA

MODELS = DATA / "models"
RECORD = json.loads((MODELS / "models.json").read_text())
REFERENCES = MODELS / "references.safetensors"
ROTARY_CASES = [name for name, case in RECORD["cases"].items() if "module" in case]


def reference(name: str) -> np.ndarray:
    return read_table(str(REFERENCES), key=name).array


@pytest.mark.parametrize("name", ROTARY_CASES)
def test_from_config_writes_the_rotary_modules_cos_and_sin(cli, tmp_path, name):
    case = RECORD["cases"][name]
    output = tmp_path / "rope.safetensors"
    args = ["generate", "--from-config", str(MODELS / name), "-o", str(output)]
    if case["len"] is not None:
        args += ["--len", str(case["len"])]
    result = cli(*args)
    assert result.code == 0, result.stderr
    positions = case["positions"]
    # float32 noise: HF rounds inv_freq and p·inv_freq to float32, pecli rounds once at the end
    tolerance = 4 * 2.0**-23 * max(positions) + 2.0**-22
    for part in ("cos", "sin"):
        table = read_table(str(output), key=part).array
        expected = reference(f"{name}.{part}")
        assert table.shape[1] == expected.shape[1]
        np.testing.assert_allclose(table[positions], expected, rtol=0, atol=tolerance)
    # the tables carry the module's attention scaling: cos at position 0 is the scaling itself
    cos_at_zero = read_table(str(output), key="cos").array[0]
    np.testing.assert_allclose(cos_at_zero, case["attention_scaling"], rtol=1e-6)


def test_from_config_records_the_configs_values_and_where_they_came_from(cli, tmp_path):
    output = tmp_path / "llama3.safetensors"
    assert cli("generate", "--from-config", str(MODELS / "llama3" / "config.json"), "-o", str(output)).code == 0
    metadata = read_table(str(output), key="cos").metadata
    assert metadata["from_config"].endswith("llama3/config.json")
    assert metadata["model_type"] == "llama"
    assert metadata["config.rope_parameters.rope_theta"] == "500000.0"
    assert metadata["config.rope_parameters.factor"] == "8.0"
    assert metadata["config.max_position_embeddings"] == "128"
    assert (metadata["scaling"], metadata["len"], metadata["d"]) == ("llama3", "128", "16")


def test_from_config_part_and_len(cli, tmp_path):
    output = tmp_path / "sin.npy"
    result = cli("generate", "--from-config", str(MODELS / "qwen2"), "--part", "sin", "--len", "40", "-o", str(output))
    assert result.code == 0, result.stderr
    table = np.load(output)
    assert table.shape == (40, 16)
    within = [index for index, p in enumerate(RECORD["cases"]["qwen2"]["positions"]) if p < 40]
    positions = [RECORD["cases"]["qwen2"]["positions"][index] for index in within]
    np.testing.assert_allclose(table[positions], reference("qwen2.sin")[within], rtol=0, atol=1e-5)


def test_partial_rotary_writes_the_rotated_columns_only():
    encoding = model_encoding(read_config(str(MODELS / "gpt-neox-partial")))
    assert encoding.dim == 4
    assert encoding.provenance["partial_rotary_factor"] == ("rope_parameters.partial_rotary_factor", 0.25)


@pytest.mark.parametrize("name", ["marian", "m2m100", "whisper"])
def test_sinusoidal_models_match_their_embedding_modules(cli, tmp_path, name):
    output = tmp_path / "pe.npy"
    assert cli("generate", "--from-config", str(MODELS / name), "-o", str(output)).code == 0
    expected = reference(f"{name}.table")
    np.testing.assert_allclose(np.load(output)[: len(expected)], expected, rtol=0, atol=2e-6)


def test_bloom_alibi_slopes_match_build_alibi_tensor(cli, tmp_path):
    output = tmp_path / "slopes.npy"
    assert cli("generate", "--from-config", str(MODELS / "bloom"), "--part", "slopes", "-o", str(output)).code == 0
    np.testing.assert_allclose(np.load(output), reference("bloom.slopes"), rtol=1e-7)


def test_mpt_is_alibi_with_its_heads_and_context():
    encoding = model_encoding(read_config(str(MODELS / "mpt")))
    assert (encoding.scheme, encoding.params, encoding.length) == ("alibi", {"heads": 8}, 64)


@pytest.mark.parametrize(
    ("name", "weight"),
    [
        ("bert", "embeddings.position_embeddings.weight"),
        ("gpt2", "wpe.weight"),
        ("opt", "decoder.embed_positions.weight"),
        ("tiny-bert", "embeddings.position_embeddings.weight"),
    ],
)
def test_learned_positions_answer_with_the_weight(cli, name, weight):
    result = cli("generate", "--from-config", str(MODELS / name))
    assert_clean_error(result, 2, "learns its positions", repr(weight), "pecli plot")


def test_opt_table_has_its_two_offset_rows():
    encoding = model_encoding(read_config(str(MODELS / "opt")))
    assert encoding.length == 64 + 2


def test_from_config_refuses_scheme_options(cli):
    result = cli("generate", "rope", "--from-config", str(MODELS / "llama3"), "--base", "10")
    assert_clean_error(result, 2, "--from-config", "SCHEME", "--base")


# -- model directories --------------------------------------------------------------------------


def test_info_lists_position_tensors_of_a_sharded_directory(cli):
    result = cli("info", str(MODELS / "tiny-bert"))
    assert result.code == 0, result.stderr
    index = json.loads((MODELS / "tiny-bert" / "model.safetensors.index.json").read_text())
    shard = index["weight_map"]["embeddings.position_embeddings.weight"]
    assert f"embeddings.position_embeddings.weight  [64, 16]  float32  4.0 KiB  ({shard})" in result.out
    assert "3 weight files" in result.out and "position settings: learned" in result.out
    document = json.loads(cli("info", str(MODELS / "tiny-whisper"), "--json").out)
    assert {(t["name"], tuple(t["shape"])) for t in document["position_tensors"]} == {
        ("encoder.embed_positions.weight", (64, 16)),
        ("decoder.embed_positions.weight", (32, 16)),
    }
    assert document["position_settings"]["preset"] == "tensor2tensor"


def test_a_directory_reads_only_the_shard_that_holds_the_table(cli, tmp_path):
    copy = tmp_path / "gpt2"
    shutil.copytree(MODELS / "tiny-gpt2", copy)
    index = json.loads((copy / "model.safetensors.index.json").read_text())
    holder = index["weight_map"]["wpe.weight"]
    for shard in set(index["weight_map"].values()) - {holder}:
        (copy / shard).write_bytes(b"not a safetensors file")  # opening it would fail
    output = tmp_path / "wpe.png"
    assert cli("plot", str(copy), "-o", str(output)).code == 0
    assert cli("info", str(copy)).code == 0
    table = open_model_directory(str(copy)).position_table()[1]
    np.testing.assert_array_equal(table, read_table(str(MODELS / "tiny-gpt2" / holder), key="wpe.weight").array)


def test_identify_a_directory_finds_whispers_sinusoidal_encoder_table(cli):
    result = cli("identify", str(MODELS / "tiny-whisper"), "--key", "encoder.embed_positions.weight")
    assert result.code == 0, result.stderr
    assert "tiny-whisper [encoder.embed_positions.weight]" in result.out
    assert "match: sinusoidal (preset tensor2tensor" in result.out
    # a unique part of the weight's name picks it too, and the note names it in full
    short = cli("identify", str(MODELS / "tiny-whisper"), "--key", "encoder.embed")
    assert short.code == 0 and short.out == result.out
    assert "--key 'encoder.embed' selects the tensor 'encoder.embed_positions.weight'" in short.stderr
    assert_clean_error(cli("identify", str(MODELS / "tiny-whisper"), "--key", "embed_positions"), 2, "2 weights")


def test_a_directory_with_several_tables_lists_them(cli, tmp_path):
    result = cli("plot", str(MODELS / "tiny-whisper"), "-o", str(tmp_path / "x.png"))
    assert_clean_error(result, 2, "--key", "decoder.embed_positions.weight [32, 16]", "encoder.embed_positions.weight")


def test_compare_and_distance_accept_a_directory(cli):
    same = cli("compare", str(MODELS / "tiny-bert"), str(MODELS / "tiny-bert"))
    assert same.code == 0, same.stderr
    assert cli("distance", str(MODELS / "tiny-gpt2")).code == 0


def test_position_tensor_names():
    names = [
        "bert.embeddings.position_embeddings.weight",
        "wpe.weight",
        "model.decoder.embed_positions.weight",
        "pos_embed",
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "model.layers.0.self_attn.rotary_emb.inv_freq",
    ]
    assert all(map(is_position_tensor, names))
    assert not any(map(is_position_tensor, ["wte.weight", "embeddings.token_type_embeddings.weight"]))


# -- bad input: one line, exit 2 ------------------------------------------------------------------


def _write_config(tmp_path: Path, config: dict) -> str:
    (tmp_path / "config.json").write_text(json.dumps(config))
    return str(tmp_path)


LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 128}


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"model_type": "resnet", "hidden_sizes": [8]}, ["no position settings", "resnet"]),
        ({**LLAMA, "rope_parameters": {"rope_type": "yarnn", "rope_theta": 1e4}}, ["unknown rope_type", "'yarn'"]),
        (
            {**LLAMA, "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 3, "long_factor": [1.0] * 8},
             "original_max_position_embeddings": 64},
            ["short_factor has 3 values", "head_dim/2 = 8"],
        ),
        ({**LLAMA, "rope_parameters": {"rope_type": "linear"}}, ["'linear' needs rope_parameters.factor"]),
        ({**LLAMA, "max_position_embeddings": -1, "rope_theta": 1e4}, ["max_position_embeddings", "positive"]),
    ],
)
def test_bad_configs_are_one_line_exit_2(cli, tmp_path, config, words):
    assert_clean_error(cli("generate", "--from-config", _write_config(tmp_path, config)), 2, *words)


def test_bad_directories_are_one_line_exit_2(cli, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_clean_error(cli("info", str(empty)), 2, "has no config.json")
    assert_clean_error(cli("info", str(MODELS / "tiny-bert"), "--stats"), 2, "is a model directory")
    assert_clean_error(cli("generate", "--from-config", str(empty)), 2, "has no config.json")
    no_weights = tmp_path / "no-weights"
    shutil.copytree(MODELS / "bert", no_weights)
    assert_clean_error(cli("plot", str(no_weights)), 2, "has no weights", "model.safetensors")
    missing = tmp_path / "missing-shard"
    shutil.copytree(MODELS / "tiny-gpt2", missing)
    (missing / "model-00002-of-00002.safetensors").unlink()
    assert_clean_error(cli("info", str(missing)), 2, "model-00002-of-00002.safetensors", "missing")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    assert_clean_error(cli("generate", "--from-config", str(broken)), 2, "cannot read")


def test_control_characters_from_a_config_never_reach_the_terminal(cli, tmp_path):
    result = cli("generate", "--from-config", _write_config(tmp_path, {"model_type": "evil\x1b[2J"}))
    assert_clean_error(result, 2, "no position settings")
    assert "\x1b" not in result.stderr


def test_library_errors_name_config_keys_not_flags(tmp_path):
    with pytest.raises(TableFileError, match=r"has no config\.json"):
        read_config(str(tmp_path))
    with pytest.raises(ParameterError) as caught:
        model_encoding({**LLAMA, "rope_parameters": {"rope_type": "nope"}})
    assert "--" not in str(caught.value)
