"""Session 6 attack on ``generate --from-config`` against transformers' rotary modules (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.models.from_config import config_encoding, config_spec

GPT_NEOX = {"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64}


@pytest.mark.parametrize(
    ("extra", "base", "dim"),
    [
        ({"rope_theta": 5000.0}, 10000.0, 4),  # GPTNeoXConfig ignores a top-level rope_theta
        ({"rope_theta": 5000.0, "rotary_emb_base": 7000.0}, 7000.0, 4),  # rotary_emb_base wins, no conflict
        ({"partial_rotary_factor": 0.5, "rope_scaling": {"type": "linear", "factor": 2.0}}, 10000.0, 4),
        ({"rotary_pct": 0.5, "rotary_emb_base": 500.0}, 500.0, 8),
    ],
)
def test_gpt_neox_reads_only_its_own_spellings_as_transformers_does(tmp_path, extra, base, dim):
    (tmp_path / "config.json").write_text(json.dumps({**GPT_NEOX, **extra}))
    encoding = config_encoding(str(tmp_path)).encoding
    assert encoding.params["base"] == base
    assert encoding.dim == dim
    table = np.asarray(config_spec(config_encoding(str(tmp_path)), length=8, scheme_params={"part": "angle"}).array())
    assert table[1, 1] == pytest.approx(base ** (-2 / dim) / (2.0 if "rope_scaling" in extra else 1.0), rel=1e-6)


def test_gpt_neox_top_level_rope_theta_equals_the_rotary_module(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    (tmp_path / "config.json").write_text(json.dumps({**GPT_NEOX, "rope_theta": 5000.0, "num_hidden_layers": 2}))
    module = GPTNeoXRotaryEmbedding(transformers.AutoConfig.from_pretrained(str(tmp_path)))
    with torch.no_grad():
        cos, sin = module(torch.zeros(1, 64, 4), torch.arange(64)[None])
    model = config_encoding(str(tmp_path))
    for part, expected in (("cos", cos), ("sin", sin)):
        table = np.asarray(config_spec(model, length=64, scheme_params={"part": part}).array())
        np.testing.assert_allclose(table, expected[0].numpy(), rtol=0, atol=2e-5, err_msg=part)


def _live_tables(config_dir, family, cls, length, layer_type=None):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import importlib

    module_class = getattr(importlib.import_module(f"transformers.models.{family}.modeling_{family}"), cls)
    module = module_class(transformers.AutoConfig.from_pretrained(str(config_dir)))
    args = (torch.zeros(1, length, 4), torch.arange(length)[None], *([layer_type] if layer_type else []))
    with torch.no_grad():
        cos, sin = module(*args)
    return cos[0].numpy(), sin[0].numpy()


def _assert_module_tables(config_dir, family, cls, length, layer_type=None):
    cos, sin = _live_tables(config_dir, family, cls, length, layer_type)
    model = config_encoding(str(config_dir), layer_type=layer_type)
    for part, expected in (("cos", cos), ("sin", sin)):
        table = np.asarray(config_spec(model, length=length, scheme_params={"part": part}).array())
        assert table.shape == expected.shape, part
        # float32 noise: transformers rounds inv_freq and p·inv_freq to float32, pecli rounds once at the end
        np.testing.assert_allclose(table, expected, rtol=0, atol=2.0**-22 + 16 * 2.0**-24 * length, err_msg=part)


PHI3 = {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 100}


def test_phi3_longrope_without_a_top_level_original_context_takes_phi3configs_4096(tmp_path):
    """Phi3Config's class default original_max_position_embeddings = 4096 overwrites the rope parameters' own."""
    rope = {"rope_type": "longrope", "rope_theta": 10000.0, "original_max_position_embeddings": 512,
            "short_factor": [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5], "long_factor": [2.0] * 8}  # fmt: skip
    config = {**PHI3, "max_position_embeddings": 1024, "rope_parameters": rope}
    (tmp_path / "config.json").write_text(json.dumps(config))
    encoding = config_encoding(str(tmp_path)).encoding
    assert encoding.params["original_max_position"] == 4096
    _assert_module_tables(tmp_path, "phi3", "Phi3RotaryEmbedding", 1024)


MODERNBERT = {"model_type": "modernbert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
              "vocab_size": 100, "max_position_embeddings": 1024,
              "layer_types": ["sliding_attention", "full_attention"]}  # fmt: skip


@pytest.mark.parametrize(
    "extra",
    [
        {"truncate": False},  # transformers reads truncate from the outer (per-layer-type) dict: yarn truncates
        {},
    ],
)
def test_per_layer_yarn_ignores_a_layer_truncate_and_a_top_level_original_context(tmp_path, extra):
    yarn = {"rope_type": "yarn", "rope_theta": 160000.0, "factor": 4.0, "original_max_position_embeddings": 256,
            "beta_fast": 27.0, **extra}  # fmt: skip
    sliding = {"rope_type": "default", "rope_theta": 1e4}
    config = {**MODERNBERT, "original_max_position_embeddings": 128,
              "rope_parameters": {"full_attention": yarn, "sliding_attention": sliding}}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    params = config_encoding(str(tmp_path), layer_type="full_attention").encoding.params
    assert params["original_max_position"] == 256
    assert "truncate" not in params
    _assert_module_tables(tmp_path, "modernbert", "ModernBertRotaryEmbedding", 1024, "full_attention")


def test_phi3_reads_its_old_yarn_as_longrope_and_refuses_other_types(tmp_path):
    """Phi3Config turns ``type: yarn`` (and ``su``) into longrope and refuses linear, dynamic, llama3."""
    from pecli.errors import ParameterError

    factors = {"short_factor": [1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0], "long_factor": [3.0] * 8}
    config = {**PHI3, "max_position_embeddings": 8192, "rope_theta": 1e4, "rope_scaling": {"type": "yarn", **factors}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    params = config_encoding(str(tmp_path)).encoding.params
    assert params["scaling"] == "longrope"
    assert params["original_max_position"] == 4096
    _assert_module_tables(tmp_path, "phi3", "Phi3RotaryEmbedding", 4500)
    config["rope_scaling"] = {"type": "linear", "factor": 2.0}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ParameterError, match="longrope or default rope only"):
        config_encoding(str(tmp_path))


def _random_rope(rng, rope_type: str, pairs: int, original: int) -> dict:
    rope = {"rope_type": rope_type, "rope_theta": float(10 ** rng.uniform(3, 7))}
    if rope_type in ("linear", "dynamic", "yarn", "llama3"):
        rope["factor"] = float(rng.uniform(1, 64))
    if rope_type in ("yarn", "longrope", "llama3"):
        rope["original_max_position_embeddings"] = original
    if rope_type == "yarn":
        rope.update(beta_fast=float(rng.uniform(8, 64)), beta_slow=float(rng.uniform(0.5, 4)))
        rope.update(mscale=float(rng.uniform(0.5, 1.5)), mscale_all_dim=float(rng.uniform(0.5, 1.5)))
    if rope_type == "longrope":
        rope["short_factor"] = [float(value) for value in rng.uniform(1, 4, pairs)]
        rope["long_factor"] = [float(value) for value in rng.uniform(1, 40, pairs)]
    if rope_type == "llama3":
        low = float(rng.uniform(0.5, 2))
        rope.update(low_freq_factor=low, high_freq_factor=low + float(rng.uniform(0.5, 4)))
    if rope_type == "proportional":
        rope["partial_rotary_factor"] = 0.5
    return rope


@pytest.mark.parametrize("rope_type", ["default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"])
def test_random_llama_configs_equal_the_rotary_module(tmp_path, rope_type):
    """Random (seeded) Llama configs of each rope_type, past the original context, against LlamaRotaryEmbedding."""
    rng = np.random.default_rng(sum(map(ord, rope_type)))
    for index in range(3):
        head_dim = 2 * int(rng.integers(8, 65))
        original = int(rng.choice([128, 512, 2048]))
        config = {"model_type": "llama", "hidden_size": 4 * head_dim, "num_attention_heads": 4, "head_dim": head_dim,
                  "num_hidden_layers": 1, "vocab_size": 100, "max_position_embeddings": 2 * original,
                  "rope_parameters": _random_rope(rng, rope_type, head_dim // 2, original)}  # fmt: skip
        folder = tmp_path / str(index)
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        _assert_module_tables(folder, "llama", "LlamaRotaryEmbedding", 3 * original)


def test_qwen3_next_without_partial_rotary_factor_rotates_its_class_default_quarter(tmp_path):
    """Qwen3NextConfig sets partial_rotary_factor 0.25 when the config has none (as GLM's 0.5, StableLM's 0.25)."""
    config = {"model_type": "qwen3_next", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64,
              "num_hidden_layers": 4, "vocab_size": 100, "max_position_embeddings": 512, "rope_theta": 1e6}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert config_encoding(str(tmp_path)).encoding.dim == 16
    _assert_module_tables(tmp_path, "qwen3_next", "Qwen3NextRotaryEmbedding", 512)
