"""Attack round s7 (issue 30, class 1): ALiBi and T5-bucket configs against transformers' own functions.

Random valid configs (fixed seed) through ``pecli generate --from-config``, compared with the
library's function for the family: T5's relative buckets (encoder bidirectional, decoder causal).
"""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from tests.conftest import assert_clean_error

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

#: model_type -> the attention class holding its ``_relative_position_bucket``
T5_FAMILIES = {
    "t5": "T5Attention",
    "mt5": "MT5Attention",
    "umt5": "UMT5Attention",
    "longt5": "LongT5Attention",
    "pop2piano": "Pop2PianoAttention",
    "switch_transformers": "SwitchTransformersAttention",
}


def _library_buckets(model_type: str, relative: np.ndarray, bidirectional: bool, buckets: int, distance: int):
    module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    attention = getattr(module, T5_FAMILIES[model_type])
    relative_t = torch.tensor(relative)
    if model_type == "umt5":  # UMT5 reads its settings from the module
        module_ = attention.__new__(attention)
        module_.relative_attention_num_buckets, module_.relative_attention_max_distance = buckets, distance
        module_.is_decoder = not bidirectional
        return module_._relative_position_bucket(relative_t).numpy()
    return attention._relative_position_bucket(
        relative_t, bidirectional=bidirectional, num_buckets=buckets, max_distance=distance
    ).numpy()


@pytest.mark.parametrize("model_type", sorted(T5_FAMILIES))
def test_t5_family_configs_give_the_library_buckets(cli, tmp_path, model_type):
    """These configs were refused ("no position settings pecli knows") though transformers runs them."""
    rng = np.random.default_rng(7)
    length = 40
    relative = np.arange(length)[None, :] - np.arange(length)[:, None]  # key − query
    checked = 0
    while checked < 3:
        buckets, distance = int(rng.integers(4, 160)), int(rng.integers(2, 300))
        if distance <= buckets // 4:  # the exact buckets' reach (bidirectional): no valid config
            continue
        config = tmp_path / f"{checked}.json"
        config.write_text(json.dumps({"model_type": model_type, "relative_attention_num_buckets": buckets,
                                      "relative_attention_max_distance": distance}))  # fmt: skip
        for layer_type, bidirectional in (("encoder", True), ("decoder", False)):
            if not bidirectional and distance <= buckets // 2:
                continue
            out = tmp_path / f"{checked}-{layer_type}.npy"
            result = cli("generate", "--from-config", str(config), "--layer-type", layer_type,
                         "--len", str(length), "-o", str(out))  # fmt: skip
            assert result.code == 0, result.stderr
            expected = _library_buckets(model_type, relative, bidirectional, buckets, distance)
            np.testing.assert_array_equal(np.load(out), expected)
        checked += 1


def test_t5_config_without_a_layer_type_writes_both(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "t5"}))  # T5Config's defaults: 32 buckets, distance 128
    out = tmp_path / "t5.safetensors"
    assert cli("generate", "--from-config", str(config), "--len", "8", "-o", str(out)).code == 0
    from safetensors.numpy import load_file

    tables = load_file(str(out))
    relative = np.arange(8)[None, :] - np.arange(8)[:, None]
    np.testing.assert_array_equal(tables["encoder"], _library_buckets("t5", relative, True, 32, 128))
    np.testing.assert_array_equal(tables["decoder"], _library_buckets("t5", relative, False, 32, 128))
    assert_clean_error(cli("generate", "--from-config", str(config), "--layer-type", "cross", "--len", "8"), 2)


@pytest.mark.parametrize("model_type", ["bloom", "mpt"])
def test_bloom_and_mpt_alibi_configs_match_their_functions_for_any_head_count(cli, tmp_path, model_type):
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    length = 24
    for heads in (1, 3, 7, 12, 48, 97):  # odd and non-powers of two (the interleaved slopes)
        key = "n_head" if model_type == "bloom" else "n_heads"
        config = tmp_path / f"{heads}.json"
        config.write_text(json.dumps({"model_type": model_type, key: heads, "max_seq_len": length}))
        out = tmp_path / f"{heads}.npy"
        assert cli("generate", "--from-config", str(config), "--len", str(length), "-o", str(out)).code == 0
        last = np.load(out).astype(np.float64)[:, -1, :]  # −m·(L − 1 − j): the last query row
        if model_type == "bloom":  # m·j, a per-row constant away
            expected = build_alibi_tensor(torch.ones(1, length), heads, torch.float32)[:, 0].double().numpy()
            expected = expected - expected[:, -1:]
        else:  # MptModel calls it with the default alibi_bias_max 8, whatever the config says
            expected = build_mpt_alibi_tensor(heads, length)[:, 0].double().numpy()
        np.testing.assert_allclose(last, expected, rtol=2e-6, atol=1e-6)


def test_modernbert_config_as_it_ships_gives_each_layer_types_rotary_tables(cli, tmp_path):
    """Hub ModernBERT configs spell global/local_rope_theta and global_attn_every_n_layers: they were refused."""
    from safetensors.numpy import load_file
    from transformers import ModernBertConfig
    from transformers.models.modernbert.modeling_modernbert import ModernBertRotaryEmbedding

    settings = {"hidden_size": 48, "num_attention_heads": 3, "num_hidden_layers": 5, "global_attn_every_n_layers": 2,
                "global_rope_theta": 80000.0, "max_position_embeddings": 32}  # fmt: skip
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "modernbert", **settings}))
    rotary = ModernBertRotaryEmbedding(ModernBertConfig(**settings))  # local_rope_theta: the class's 10000
    out = tmp_path / "pe.safetensors"
    assert cli("generate", "--from-config", str(config), "--len", "32", "-o", str(out)).code == 0
    tables = load_file(str(out))
    shown = cli("info", str(config)).out  # the keys the bases came from, not keys the file lacks
    assert "global_rope_theta = 80000.0" in shown and "rope_parameters.full_attention" not in shown
    for layer_type in ("full_attention", "sliding_attention"):
        cos, sin = rotary(torch.zeros(1, 32, 16), torch.arange(32)[None], layer_type=layer_type)
        np.testing.assert_allclose(tables[f"{layer_type}.cos"], cos[0].numpy(), rtol=0, atol=1e-5)
        np.testing.assert_allclose(tables[f"{layer_type}.sin"], sin[0].numpy(), rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    ("model_type", "class_name"), [("llama4_text", "Llama4TextConfig"), ("smollm3", "SmolLM3Config")]
)
def test_nope_layers_are_derived_from_the_interval_as_the_config_class_does(model_type, class_name):
    """Without no_rope_layers, every no_rope_layer_interval-th layer has no rope; pecli said none did."""
    import transformers

    from pecli.models import model_encoding

    for layers, interval in ((7, 3), (12, 4), (5, 1)):
        expected = getattr(transformers, class_name)(num_hidden_layers=layers, no_rope_layer_interval=interval)
        nope = tuple(index for index, uses in enumerate(expected.no_rope_layers) if not uses)
        config = {"model_type": model_type, "head_dim": 8, "rope_theta": 1e4, "num_hidden_layers": layers,
                  "no_rope_layer_interval": interval}  # fmt: skip
        assert model_encoding(config).nope_layers == nope
