"""Session 6 attack (models3, issue 30 class 1): models as they ship give their exact tables — rope types a
family's rotary class refuses, a bfloat16 model directory's stored dtype, multimodal and vision configs."""

from __future__ import annotations

import json

import pytest

from tests.conftest import require_module, run_in_process

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
    result = run_in_process("generate", "--from-config", str(config), "-o", str(out))
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
    result = run_in_process("compare", str(directory), str(file), "--json")
    assert result.code == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["a"]["dtype"] == "bfloat16" and found["b"]["dtype"] == "bfloat16"
    info = run_in_process("info", str(directory))
    assert info.code == 0 and b"bfloat16" in info.stdout


QWEN2_VL = {"model_type": "qwen2_vl", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
            "num_hidden_layers": 1, "max_position_embeddings": 64, "rope_theta": 1000000.0, "vocab_size": 100,
            "intermediate_size": 16, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]},
            "vision_config": {"depth": 1, "embed_dim": 16, "hidden_size": 256, "num_heads": 2}}  # fmt: skip


@pytest.mark.parametrize(("family", "cls"), [("qwen2_vl", "Qwen2VLRotaryEmbedding"),
                                             ("qwen2_5_vl", "Qwen2_5_VLRotaryEmbedding")])  # fmt: skip
def test_a_shipped_qwen2_vl_mrope_config_is_the_text_rotary_module_at_text_positions(tmp_path, family, cls):
    # the old code refused the shipped {"type": "mrope"} as an unknown rope_type; transformers reads it as default
    import importlib

    import numpy as np

    torch = require_module("torch")
    transformers = require_module("transformers")
    (tmp_path / "config.json").write_text(json.dumps({**QWEN2_VL, "model_type": family}))
    config = transformers.AutoConfig.from_pretrained(str(tmp_path)).get_text_config()
    module = getattr(importlib.import_module(f"transformers.models.{family}.modeling_{family}"), cls)(config)
    with torch.no_grad():  # text positions: the t, h and w position ids are equal
        cos, sin = module(torch.zeros(1, 64, 4), torch.arange(64)[None])
    for part, expected in (("cos", cos), ("sin", sin)):
        out = tmp_path / f"{part}.npy"
        config_path = str(tmp_path / "config.json")
        result = run_in_process("generate", "--from-config", config_path, "--part", part, "-o", str(out))
        assert result.code == 0, result.stderr
        text = expected.reshape(-1, 64, expected.shape[-1])[0].numpy()  # (3, 1, 64, d) or (1, 64, d): one axis
        np.testing.assert_allclose(np.load(out), text, rtol=0, atol=2e-5, err_msg=part)


VISION = [
    ({"model_type": "pixtral", "head_dim": 64, "hidden_size": 1024, "num_attention_heads": 16, "image_size": 1024,
      "patch_size": 16, "rope_theta": 10000.0}, "model_type 'pixtral' is a vision encoder"),
    ({"model_type": "llama4_vision_model", "rope_theta": 10000, "hidden_size": 1408, "num_attention_heads": 16,
      "image_size": 336, "patch_size": 14}, "model_type 'llama4_vision_model' is a vision encoder"),
    ({"model_type": "dinov3_vit", "rope_theta": 100.0, "hidden_size": 384, "num_attention_heads": 6},
     "model_type 'dinov3_vit' is a vision encoder"),
    ({"model_type": "llava", "vision_config": {"model_type": "pixtral", "rope_theta": 10000.0, "head_dim": 64}},
     "holds vision_config only"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "message"), VISION)
def test_a_vision_encoder_s_2d_rope_config_is_refused_not_read_as_a_1d_table(tmp_path, config, message):
    # the old code wrote a 1-D rope table (exit 0) for pixtral's, Llama 4's and DINOv3's 2-D vision rope
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = tmp_path / "t.npy"
    result = run_in_process("generate", "--from-config", str(tmp_path / "config.json"), "--len", "8", "-o", str(out))
    assert result.code == 2 and message in result.stderr and "2-D" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not out.exists()
