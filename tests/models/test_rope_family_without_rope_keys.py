"""A rotary family's config that spells no rope key (huggyllama/llama-7b predates rope_theta) is read as transformers
runs it, with its config class's defaults — it was refused with "no position settings pecli knows"."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.xdist_group("transformers")

_SIZES = {"hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64, "num_hidden_layers": 2}


@pytest.mark.parametrize(("model_type", "module", "prefix"), [
    ("llama", "llama", "Llama"), ("mistral", "mistral", "Mistral"), ("qwen2", "qwen2", "Qwen2"),
    ("olmo", "olmo", "Olmo"),
])  # fmt: skip
def test_the_class_defaults_give_the_family_modules_table(model_type, module, prefix, tmp_path) -> None:
    from transformers import AutoConfig

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, **_SIZES}))
    result = run_in_process(
        "generate", "--from-config", str(path), "--dtype", "float64", "-o", str(tmp_path / "t.safetensors")
    )
    assert result.code == 0, result.stderr
    assert "rope_theta not given" in result.stderr
    ours = load_file(str(tmp_path / "t.safetensors"))
    config = AutoConfig.for_model(model_type, **_SIZES)
    rotary = getattr(
        importlib.import_module(f"transformers.models.{module}.modeling_{module}"), f"{prefix}RotaryEmbedding"
    )
    positions = torch.arange(64)[None]
    cos, sin = rotary(config)(torch.zeros(1, dtype=torch.float64), positions)
    np.testing.assert_allclose(ours["cos"], cos[0].double().numpy(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours["sin"], sin[0].double().numpy(), rtol=0, atol=1e-5)


def test_gemma3_text_takes_both_bases_and_the_layer_pattern(tmp_path) -> None:
    from transformers import Gemma3TextConfig

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gemma3_text", "head_dim": 32, **_SIZES, "num_hidden_layers": 6}))
    result = run_in_process("generate", "--from-config", str(path), "-o", str(tmp_path / "t.safetensors"))
    assert result.code == 0, result.stderr
    info = run_in_process("info", str(tmp_path / "t.safetensors"))
    expected = Gemma3TextConfig(head_dim=32, **{**_SIZES, "num_hidden_layers": 6}).rope_parameters
    for layer_type, settings in expected.items():
        assert f"{layer_type}: scheme=rope" in info.out
        assert f"base={settings['rope_theta']}" in info.out.split(f"{layer_type}: ")[1].splitlines()[0]


def test_a_remote_code_config_without_rope_keys_is_still_refused(tmp_path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "auto_map": {"AutoConfig": "x.Y"}, **_SIZES}))
    result = run_in_process("generate", "--from-config", str(path), "-o", str(tmp_path / "t.safetensors"))
    assert result.code == 2 and "no position settings" in result.stderr
