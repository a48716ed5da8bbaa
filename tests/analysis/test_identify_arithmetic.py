"""identify names a shipped model's table (gpt-oss's YaRN) and the arithmetic a library computed one in."""

from __future__ import annotations

import numpy as np

import pecli
from pecli.analysis.identify import IdentifyReport, identify_table
from pecli.cli.reproduce import command_line, reproduce
from tests.analysis.test_identify import _reproduce
from tests.conftest import require_module

torch = require_module("torch")
require_module("transformers")


def _llama_cos(length: int, position_dtype) -> np.ndarray:
    """LlamaRotaryEmbedding's cos (d 128, base 10000) with the positions in ``position_dtype``."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=4096, num_attention_heads=32, head_dim=128, num_hidden_layers=1)
    rotary = LlamaRotaryEmbedding(config)
    positions = torch.arange(length)[None].to(position_dtype)
    cos, _ = rotary(torch.zeros(1, length, 128), positions)
    return cos[0].numpy()


def test_gpt_oss_yarn_without_truncation_and_its_attention_factor(cli, tmp_path):
    """gpt-oss: yarn, factor 32, beta 32/1, truncate false, original 4096, base 150000 (GptOssConfig's defaults)."""
    from transformers import GptOssConfig
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssRotaryEmbedding

    config = GptOssConfig(num_hidden_layers=1)
    assert config.rope_parameters["truncate"] is False and config.rope_parameters["rope_theta"] == 150000.0
    rotary = GptOssRotaryEmbedding(config)
    length = 512
    cos, _ = rotary(torch.zeros(1, length, config.head_dim), torch.arange(length)[None])
    # gpt-oss's _apply_rotary_emb multiplies both halves by its (L, d/2) cos: the half layout's table
    table = torch.cat((cos[0], cos[0]), dim=-1).numpy()
    found = identify_table(table)
    assert found.matched and found.best.scheme == "rope"
    params = found.best.params
    assert (params["base"], params["scaling"], params["factor"]) == (150000.0, "yarn", 32.0)
    assert (params["original_max_position"], params["truncate"]) == (4096, False)
    assert params["apply_attention_factor"] is True
    assert abs(float(table[0, 0]) - (0.1 * np.log(32.0) + 1.0)) < 1e-6  # the attention factor is the amplitude
    regenerated = _reproduce(cli, tmp_path, reproduce(found))
    # within float32 arithmetic's noise: eps32 per radian of angle, at most p·ω ≤ p
    noise = 2.0**-23 * (1.0 + np.arange(length))[:, None] * 1.35
    assert (np.abs(regenerated - table) <= noise).all()


def test_transformers_float32_table_names_float32_arithmetic(cli, tmp_path):
    table = _llama_cos(2048, torch.int64)
    found = identify_table(table)
    assert found.level == "exact" and found.best.params["arithmetic"] == "float32"
    assert found.best.max_error <= found.tolerance
    command = reproduce(found)
    assert "--arithmetic float32" in command
    np.testing.assert_allclose(_reproduce(cli, tmp_path, command), table, rtol=0, atol=4 * 2.0**-24)


def test_bfloat16_positions_are_named(cli, tmp_path):
    """position_ids.to(torch.bfloat16) (huggingface/transformers#29285): position 2047 reads as 2048."""
    table = _llama_cos(2048, torch.bfloat16)
    assert np.abs(table - pecli.encode("rope", 2048, 128, part="cos", arithmetic="float32")).max() > 0.1
    found = identify_table(table)
    assert found.level == "exact" and found.best.params["arithmetic"] == "bfloat16"
    text = "\n".join(map(str, IdentifyReport(found, "cos.npy", command_line).text_lines()))
    assert "computed in bfloat16 arithmetic" in text
    command = reproduce(found)
    assert command == "pecli generate rope --part cos --arithmetic bfloat16 --d 128 --len 2048 -o pe.npy"
    np.testing.assert_allclose(_reproduce(cli, tmp_path, command), table, rtol=0, atol=4 * 2.0**-24)
