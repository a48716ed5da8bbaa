"""``pecli info`` of a model's config (issue 29, item 5): configs saved by transformers' own config
classes (Llama 3.1, DeepSeek-V3, gpt-oss, Phi-3, Gemma 3, Llama 4, Qwen3-Next) described per layer type
— scheme, base, scaling, the attention factor transformers computes, rotary dims and pairing, NoPE
layers — with each warning; and ``--as hf-v4|hf-v5|gguf`` read back (as a config.json, or a GGUF file
written by gguf's ``GGUFWriter``) giving the same table as the original config.

transformers and gguf are in the ``test`` extra; where one is missing its tests skip, and fail in CI.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pecli.io import read_tensors
from pecli.models.info import config_warnings, describe_config
from tests.conftest import assert_clean_error, require_module
from tests.paths import DATA

pytestmark = pytest.mark.xdist_group("transformers")

MODELS = DATA / "models"




SMALL = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 4}

#: name -> (transformers config class, its arguments): small models with each family's rope settings
CONFIGS = {
    "llama3.1": ("LlamaConfig", {
        "num_key_value_heads": 4, "intermediate_size": 128, "max_position_embeddings": 131072,
        "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}),
    "deepseek-v3": ("DeepseekV3Config", {
        "qk_rope_head_dim": 16, "qk_nope_head_dim": 16, "v_head_dim": 16, "max_position_embeddings": 163840,
        "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0, "mscale": 1.0,
                            "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "beta_fast": 32,
                            "beta_slow": 1}}),
    "gpt-oss": ("GptOssConfig", {"num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 4,
                                 "intermediate_size": 64}),
    "phi-3": ("Phi3Config", {
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": [1.0] * 8,
                            "long_factor": [float(i + 1) for i in range(8)]}}),
    "gemma-3": ("Gemma3TextConfig", {
        "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 6,
        "rope_parameters": {"full_attention": {"rope_type": "linear", "rope_theta": 1000000.0, "factor": 8.0},
                            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}),
    "llama-4": ("Llama4TextConfig", {"num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64,
                                     "intermediate_size_mlp": 64}),
    "qwen3-next": ("Qwen3NextConfig", {"num_key_value_heads": 2, "head_dim": 16}),
}  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each config of :data:`CONFIGS` as its transformers class saves it: name -> config.json path."""
    transformers = require_module("transformers")
    paths = {}
    for name, (cls, kwargs) in CONFIGS.items():
        directory = tmp_path_factory.mktemp(name)
        getattr(transformers, cls)(**(SMALL | kwargs)).save_pretrained(directory)
        paths[name] = directory / "config.json"
    return paths


def _layers(saved, name):
    return {layer["layer_type"]: layer for layer in describe_config(str(saved[name])).to_json()["layers"]}


def test_llama31_llama3_scaling(saved):
    layer = _layers(saved, "llama3.1")[None]
    assert layer["scaling"] == "llama3" and layer["base"] == 500000.0
    assert layer["scaling_parameters"] == {"factor": 8.0, "original_max_position": 8192, "low_freq_factor": 1.0,
                                           "high_freq_factor": 4.0}  # fmt: skip
    assert layer["attention_factor"] == 1.0 and layer["rotary_dim"] == 16 and layer["pairing"].startswith("halves")
    assert describe_config(str(saved["llama3.1"])).warnings == []


def test_deepseek_v3_yarn_mscale_cancels_and_is_warned(saved):
    info = describe_config(str(saved["deepseek-v3"]))
    layer = info.to_json()["layers"][0]
    assert layer["scaling"] == "yarn" and layer["attention_factor"] == 1.0  # mscale / mscale_all_dim = 1
    assert layer["rotary_dim"] == 16  # qk_rope_head_dim
    (warning,) = info.warnings
    alone = 0.1 * math.log(40.0) + 1.0
    assert "rope_parameters.mscale = rope_parameters.mscale_all_dim = 1.0" in warning
    assert f"{alone:.10g}" in warning


def test_an_attention_factor_overriding_mscale_is_warned():
    config = {"model_type": "deepseek_v3", "qk_rope_head_dim": 16, "max_position_embeddings": 16384,
              "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "mscale": 0.707, "mscale_all_dim": 1.0,
                               "attention_factor": 1.5, "original_max_position_embeddings": 4096}}  # fmt: skip
    (warning,) = config_warnings(config)
    computed = (0.1 * 0.707 * math.log(4) + 1) / (0.1 * math.log(4) + 1)
    assert "rope_scaling.attention_factor = 1.5 overrides mscale/mscale_all_dim" in warning
    assert f"{computed:.10g}" in warning


def test_gpt_oss_yarn_attention_factor_and_truncate(saved):
    layer = _layers(saved, "gpt-oss")[None]
    assert layer["scaling"] == "yarn" and layer["base"] == 150000.0
    assert layer["attention_factor"] == pytest.approx(0.1 * math.log(32.0) + 1.0, rel=1e-15)
    assert layer["scaling_parameters"]["truncate"] is False


def test_phi3_longrope_attention_factor(saved):
    layer = _layers(saved, "phi-3")[None]
    assert layer["scaling"] == "longrope"
    assert layer["scaling_parameters"]["long_factor"] == [float(i + 1) for i in range(8)]
    assert layer["attention_factor"] == pytest.approx(math.sqrt(1 + math.log(32.0) / math.log(4096)), rel=1e-15)


def test_gemma3_per_layer_type(saved):
    layers = _layers(saved, "gemma-3")
    assert set(layers) == {"full_attention", "sliding_attention"}
    assert (layers["full_attention"]["scaling"], layers["full_attention"]["base"]) == ("linear", 1000000.0)
    assert layers["full_attention"]["scaling_parameters"] == {"factor": 8.0}
    assert (layers["sliding_attention"]["scaling"], layers["sliding_attention"]["base"]) == ("none", 10000.0)


def test_llama4_nope_layers_and_adjacent_pairs(saved, cli):
    info = describe_config(str(saved["llama-4"]))
    assert info.nope_layers == [3]  # no_rope_layers [1, 1, 1, 0]
    assert info.to_json()["layers"][0]["pairing"] == "adjacent pairs (interleaved)"
    result = cli("info", str(saved["llama-4"]))
    assert result.code == 0, result.stderr
    assert "no positional encoding (NoPE): layer 3 of the model" in result.out
    assert "pairing adjacent pairs (interleaved)" in result.out


def test_qwen_partial_rotary(saved):
    layer = _layers(saved, "qwen3-next")[None]
    assert (layer["rotary_dim"], layer["head_dim"], layer["partial_rotary_factor"]) == (4, 16, 0.25)


def test_rotary_dim_contradicting_partial_rotary_factor_is_warned_and_refused(cli, tmp_path):
    config = {"model_type": "phi", "head_dim": 16, "max_position_embeddings": 64, "rope_theta": 10000.0,
              "partial_rotary_factor": 0.5, "rotary_dim": 4}  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    info = describe_config(str(path))
    assert info.problem is not None and "rotary_dim = 4 contradicts" in info.problem
    assert info.warnings == [
        "rotary_dim = 4 contradicts partial_rotary_factor = 0.5 × head_dim 16 = 8 rotary columns: transformers "
        "rotates 8 (huggingface/transformers#48486)"
    ]
    result = cli("info", str(path), "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.out)["warnings"] == info.warnings


def test_settings_transformers_ignores_are_warned():
    config = {"model_type": "llama", "head_dim": 16, "max_position_embeddings": 131072, "rotary_dim": 8,
              "rope_scaling": {"type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "mscale": 1.0,
                               "beta_fast": 32}}  # fmt: skip
    warnings = config_warnings(config)
    assert warnings[0].startswith("rope_scaling.type = 'llama3' is the legacy name of rope_type")
    assert warnings[1] == "rope_scaling.mscale, rope_scaling.beta_fast: transformers' llama3 RoPE never reads them"
    assert warnings[2].startswith("rotary_dim = 8: transformers' llama never reads it and rotates all 16 columns")
    lone = {"model_type": "qwen2", "head_dim": 16, "max_position_embeddings": 4096,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "mscale": 0.8,
                             "original_max_position_embeddings": 1024}}  # fmt: skip
    assert config_warnings(lone) == [
        f"rope_scaling.mscale without its pair is ignored by transformers: attention factor 0.1·ln(factor) + 1 = "
        f"{0.1 * math.log(4) + 1:.10g}"
    ]


def test_info_text_and_json_of_a_config(saved, cli):
    text = cli("info", str(saved["gemma-3"]))
    assert text.code == 0, text.stderr
    assert "layer type full_attention: rope, base 1000000, scaling linear: factor=8" in text.out
    assert "layer type sliding_attention: rope, base 10000, scaling none" in text.out
    document = json.loads(cli("info", str(saved["phi-3"]), "--json").out)
    assert document["model_type"] == "phi3" and document["context_length"] == 131072
    assert document["layers"][0]["scaling_parameters"]["factor"] == 32.0  # 131072 / 4096


def test_info_of_a_model_directory_keeps_its_tensors_and_describes_the_config(saved, cli):
    config_only = cli("info", str(saved["deepseek-v3"].parent), "--json")  # hf download ID config.json
    assert config_only.code == 0, config_only.stderr
    assert json.loads(config_only.out)["layers"][0]["scaling"] == "yarn"
    result = cli("info", str(MODELS / "tiny-gpt2"), "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    assert [tensor["name"] for tensor in document["position_tensors"]] == ["wpe.weight"]
    assert document["positional_encoding"]["layers"][0]["scheme"] == "learned"
    text = cli("info", str(MODELS / "tiny-gpt2")).out
    assert "position settings: learned" in text and "every layer: learned" in text


def test_info_of_a_cached_model_id(cli, tmp_path, monkeypatch, saved):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("a" * 40)
    (snapshot / "config.json").write_text(saved["llama3.1"].read_text())
    result = cli("info", "org/tiny", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.out)["layers"][0]["scaling"] == "llama3"
    # the source resolver: a model id wherever a model directory is taken (plot, identify, compare…)
    from pecli.sources import kind_of_source, resolve

    assert kind_of_source("org/tiny").name == "model-id" and kind_of_source("out/pe.npy").name == "file"
    table = resolve("org/tiny", key="cos", length=8)
    expected = resolve(str(saved["llama3.1"]), key="cos", length=8)
    np.testing.assert_array_equal(table.array, expected.array)
    assert_clean_error(cli("info", "org/missing"), 2, "not in the local Hugging Face cache", "hf download org/missing")
    assert_clean_error(cli("plot", "org/missing", "-o", str(tmp_path / "x.png")), 2, "hf download org/missing")


def _tables(cli, config, out):
    result = cli("generate", "--from-config", str(config), "--len", "64", "-o", str(out))
    assert result.code == 0, result.stderr
    from safetensors.numpy import load_file

    return load_file(str(out))


def write_gguf(path, settings):
    gguf = require_module("gguf")
    metadata = dict(settings["metadata"])
    writer = gguf.GGUFWriter(str(path), metadata.pop("general.architecture"))
    for key, value in metadata.items():
        if isinstance(value, str):
            writer.add_string(key, value)
        elif isinstance(value, int):
            writer.add_uint32(key, value)
        else:
            writer.add_float64(key, value)
    for name, values in settings["tensors"].items():
        writer.add_tensor(name, np.asarray(values, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


#: what each format cannot hold: (config, format) -> the words of the refusal
CANNOT = {("gpt-oss", "gguf"): "truncate"}


@pytest.mark.parametrize("tool", ["hf-v4", "hf-v5", "gguf"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_settings_as_another_tool_read_back_give_the_same_table(saved, cli, tmp_path, name, tool):
    result = cli("info", str(saved[name]), "--as", tool)
    if (name, tool) in CANNOT:
        assert_clean_error(result, 2, CANNOT[name, tool])
        return
    assert result.code == 0, result.stderr
    settings = json.loads(result.out)
    assert json.loads(cli("info", str(saved[name]), "--as", tool, "--json").out) == settings
    if tool == "gguf":
        written = write_gguf(tmp_path / "model.gguf", settings)
        described = json.loads(cli("info", str(written), "--json").out)  # its tensors, then its rope metadata
        assert {entry["name"] for entry in described["tensors"]} == set(settings["tensors"])
        layer = described["positional_encoding"]["layers"][0]
        assert layer["rotary_dim"] == settings["metadata"][f"{settings['metadata']['general.architecture']}"
                                                            ".rope.dimension_count"]  # fmt: skip
    else:
        written = tmp_path / "emitted" / "config.json"
        written.parent.mkdir()
        written.write_text(json.dumps(settings))
        assert ("rope_parameters" in settings) == (tool == "hf-v5")
    original = _tables(cli, saved[name], tmp_path / "original.safetensors")
    again = _tables(cli, written, tmp_path / "again.safetensors")
    assert sorted(again) == sorted(original)
    for key, table in original.items():
        if tool == "gguf":  # factor tensors are float32 in a GGUF file
            np.testing.assert_allclose(again[key], table, rtol=0, atol=2e-6)
        else:
            np.testing.assert_array_equal(again[key], table)
    assert read_tensors(str(tmp_path / "again.safetensors"))[0].keys() == original.keys()


def test_gguf_settings_of_llama31_store_its_factors_as_rope_freqs(saved, cli):
    settings = json.loads(cli("info", str(saved["llama3.1"]), "--as", "gguf").out)
    factors = settings["tensors"]["rope_freqs.weight"]
    assert len(factors) == 8 and factors[0] == 1.0 and factors[-1] == pytest.approx(8.0, rel=1e-12)
    assert settings["metadata"]["llama.rope.freq_base"] == 500000.0
    assert settings["metadata"]["llama.rope.dimension_count"] == 16


def test_bad_as_and_key_with_a_config(saved, cli):
    assert_clean_error(cli("info", str(saved["llama3.1"]), "--as", "vllm"), 2, "no settings format 'vllm'")
    assert_clean_error(cli("info", str(saved["llama3.1"]), "--stats"), 2, "is a model's config")
    assert_clean_error(cli("info", "missing/pe.npy"), 2, "no such file")
