"""Session 6 attack (models3, issue 30 class 1): models as they ship give their exact tables — rope types a
family's rotary class refuses, a bfloat16 model directory's stored dtype, multimodal and vision configs."""

from __future__ import annotations

import json

import pytest

from tests.conftest import require_module, run_pecli

RECURRENT_GEMMA = {"model_type": "recurrent_gemma", "hidden_size": 256, "num_attention_heads": 4,
                   "attention_window_size": 64, "rope_theta": 10000.0}  # fmt: skip
ERNIE_VL_TEXT = {"model_type": "ernie4_5_vl_moe_text", "hidden_size": 512, "num_attention_heads": 4,
                 "max_position_embeddings": 64}  # fmt: skip
SCALED = [
    (RECURRENT_GEMMA, "rope_scaling", {"rope_type": "linear", "factor": 4.0}, "rope_scaling.rope_type"),
    (RECURRENT_GEMMA, "rope_scaling", {"type": "dynamic", "factor": 2.0}, "rope_scaling.type"),
    (ERNIE_VL_TEXT, "rope_parameters",
     {"rope_type": "yarn", "rope_theta": 500000.0, "factor": 2.0, "original_max_position_embeddings": 32,
      "mrope_section": [22, 22, 20]}, "rope_parameters.rope_type"),
]  # fmt: skip


@pytest.mark.parametrize(("base", "key", "scaling", "field"), SCALED)
def test_a_scaled_rope_type_of_a_default_only_rotary_class_is_refused_naming_the_field(
    tmp_path, base, key, scaling, field
):
    # the old code wrote a scaled table (exit 0) the model never uses: its rotary class runs default rope only
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**base, key: scaling}))
    out = tmp_path / "t.npy"
    result = run_pecli("generate", "--from-config", str(config), "-o", str(out))
    assert result.code == 2, result.stderr
    assert f"{field} = " in result.stderr and "default rope only" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(("base", "key", "scaling", "field"), SCALED)
def test_transformers_refuses_the_same_scaled_configs(tmp_path, base, key, scaling, field):
    require_module("torch")
    transformers = require_module("transformers")
    (tmp_path / "config.json").write_text(json.dumps({**base, key: scaling, "num_hidden_layers": 1}))
    config = transformers.AutoConfig.from_pretrained(str(tmp_path))
    import importlib

    family = base["model_type"].removesuffix("_text")
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    name = {"recurrent_gemma": "RecurrentGemmaRotaryEmbedding", "ernie4_5_vl_moe": "Ernie4_5_VLMoeTextRotaryEmbedding"}
    rotary = getattr(module, name[family])
    with pytest.raises(ValueError, match="default"):
        rotary(config)


def _bf16_directory(tmp_path):
    torch = require_module("torch")
    safetensors_torch = require_module("safetensors.torch")
    directory = tmp_path / "bf16"
    directory.mkdir()
    config = {"model_type": "gpt2", "n_positions": 8, "n_embd": 4, "n_head": 2, "n_layer": 1, "vocab_size": 10}
    (directory / "config.json").write_text(json.dumps(config))
    table = torch.randn(8, 4, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    safetensors_torch.save_file({"wpe.weight": table, "wte.weight": torch.zeros(10, 4, dtype=torch.bfloat16)},
                                str(directory / "model.safetensors"))  # fmt: skip
    safetensors_torch.save_file({"t": table}, str(tmp_path / "table.safetensors"))
    return directory, tmp_path / "table.safetensors"


@pytest.mark.parametrize("key", [None, "wpe.weight"])
def test_a_bfloat16_model_directory_s_table_has_its_stored_dtype(tmp_path, key):
    # the old code reported the dtype numpy holds the values in: float32 for a bfloat16 tensor
    from pecli.models import open_model_directory
    from pecli.sources import resolve

    directory, _ = _bf16_directory(tmp_path)
    tensor, values = open_model_directory(str(directory)).position_table(key)
    assert tensor.dtype == "bfloat16" and values.shape == (8, 4)
    assert resolve(str(directory), key=key).dtype_name == "bfloat16"


def test_compare_of_a_bfloat16_model_directory_with_its_file_says_bfloat16(tmp_path):
    directory, file = _bf16_directory(tmp_path)
    result = run_pecli("compare", str(directory), str(file), "--json")
    assert result.code == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["a"]["dtype"] == "bfloat16" and found["b"]["dtype"] == "bfloat16"
    info = run_pecli("info", str(directory))
    assert info.code == 0 and b"bfloat16" in info.stdout
