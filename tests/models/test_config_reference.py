"""A model's config (config.json, or a model directory) as compare's reference: the table generate
--from-config writes for it, shaped by the other side, checked against transformers' own module."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.sources import resolve
from tests.conftest import require_module
from tests.paths import DATA

torch = require_module("torch")
MODELS = DATA / "models"
LENGTH, DIM = 2048, 128
LLAMA3 = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}  # fmt: skip


def _hf_cos(rope_parameters: dict) -> np.ndarray:
    """cos of transformers' LlamaRotaryEmbedding, as an engine would compute it, in float32."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=DIM * 8, num_attention_heads=8, max_position_embeddings=131072,
                         rope_parameters=rope_parameters)  # fmt: skip
    cos, _ = LlamaRotaryEmbedding(config)(torch.zeros(1, 1), torch.arange(LENGTH)[None])
    return cos[0].numpy()


@pytest.fixture
def llama3_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": DIM * 8, "num_attention_heads": 8,
                                "max_position_embeddings": 131072, "rope_parameters": LLAMA3}))  # fmt: skip
    return path


def test_a_config_resolves_to_the_table_generate_from_config_writes(llama3_config, tmp_path, cli):
    table = resolve(str(llama3_config), key="cos", length=16)
    assert (table.kind, table.scheme, table.array.shape) == ("config", "rope", (16, DIM))
    assert table.params["scaling"] == "llama3" and table.params["part"] == "cos"
    written = tmp_path / "pe.npy"
    assert cli("generate", "--from-config", str(llama3_config), "--len", "16", "--part", "cos",
               "-o", str(written)).code == 0  # fmt: skip
    np.testing.assert_array_equal(table.array, np.load(written))


def test_the_engines_correct_table_compares_equal(llama3_config, tmp_path, cli):
    dump = tmp_path / "dump.npy"
    np.save(dump, _hf_cos(LLAMA3))
    result = cli("compare", str(dump), str(llama3_config), "--key-b", "cos")
    assert result.code == 0, result.out + result.err
    assert "same within float32 arithmetic" in result.out


def test_llama3_scaling_left_out_by_the_engine_is_named_from_the_config(llama3_config, tmp_path, cli):
    dump = tmp_path / "dump.npy"
    np.save(dump, _hf_cos({"rope_type": "default", "rope_theta": 500000.0}))  # unsloth#6197
    result = cli("compare", str(dump), str(llama3_config), "--key-b", "cos", "--json")
    assert result.code == 1
    (found,) = json.loads(result.out)["diagnosis"]
    assert found["code"] == "unscaled" and found["figures"]["frequency_index"] == 29
    text = cli("compare", str(dump), str(llama3_config), "--key-b", "cos")
    assert text.code == 1 and "A is the same RoPE without its frequency scaling" in text.out


def test_yarn_attention_factor_left_out_is_named_from_a_model_directory(tmp_path, cli):
    yarn = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048}
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": DIM * 8,
                                                   "num_attention_heads": 8, "max_position_embeddings": 8192,
                                                   "rope_parameters": yarn}))  # fmt: skip
    attention = 0.1 * np.log(4.0) + 1.0
    dump = tmp_path / "dump.npy"
    np.save(dump, _hf_cos(yarn) / attention)  # vllm#46280: the attention factor not applied
    result = cli("compare", str(dump), str(model), "--key-b", "cos", "--json")
    assert result.code == 1
    (found,) = json.loads(result.out)["diagnosis"]
    assert found["code"] == "constant_factor"
    assert found["figures"]["factor"] == pytest.approx(1 / attention, rel=1e-5)
    np.save(dump, _hf_cos(yarn))
    assert cli("compare", str(dump), str(model), "--key-b", "cos").code == 0


def test_a_model_directory_with_a_learned_table_is_its_stored_tensor(tmp_path, cli):
    table = resolve(str(MODELS / "tiny-gpt2"), length=4)  # the length shapes a config's table only
    assert table.kind == "model-directory" and table.key.endswith("wpe.weight") and table.array.shape == (64, 16)
    dump = tmp_path / "wpe.npy"
    np.save(dump, table.array)
    assert cli("compare", str(dump), str(MODELS / "tiny-gpt2")).code == 0
