"""``info --as hf-v4|hf-v5|gguf`` read back by ``generate --from-config`` gives the config's own tables (issue 30).

Seeded random valid configs of many families (llama with each rope_type, qwen2, mistral, gemma3 with layer types,
phi3 LongRoPE, gpt-neox rotary_pct, deepseek_v3 YaRN with mscale, modernbert): config -> settings -> the settings
saved as a config.json (the GGUF view is read as pecli reads it, docs/info.md) -> the same tables, to float32
noise. What a format cannot hold is refused with exit 2, never written wrong.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

TOOLS = ("hf-v4", "hf-v5", "gguf")


def _tables(cli, path, out):
    result = cli("generate", "--from-config", str(path), "--len", "64", "-o", str(out))
    assert result.code == 0, result.stderr
    return load_file(str(out))


def _round_trip(cli, tmp_path, config, tool, name="c"):
    source = tmp_path / name / "config.json"
    source.parent.mkdir()
    source.write_text(json.dumps(config))
    original = _tables(cli, source, tmp_path / f"{name}.safetensors")
    result = cli("info", str(source), "--as", tool)
    if result.code != 0:
        assert result.code == 2 and "Traceback" not in result.stderr, result.stderr
        return None
    view = tmp_path / f"{name}-{tool}" / "config.json"
    view.parent.mkdir()
    view.write_bytes(result.stdout)
    again = _tables(cli, view, tmp_path / f"{name}-{tool}.safetensors")
    assert sorted(again) == sorted(original)
    for key, table in original.items():
        assert again[key].shape == table.shape, (key, json.loads(result.stdout))
        np.testing.assert_allclose(again[key], table, rtol=0, atol=2e-6, err_msg=f"{tool} {key}")
    return json.loads(result.stdout)


BASE = {"hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 256, "num_hidden_layers": 4}
FACTORS = {
    "short_factor": [1.5, 2.0, 1.2, 2.5, 1.1, 1.9, 2.2, 1.4, 1.3, 2.9, 1.6, 2.1, 1.7, 1.8, 2.4, 2.6],
    "long_factor": [3.0, 9.0, 27.0, 4.0, 12.0, 5.5, 7.0, 20.0, 3.5, 8.0, 16.0, 25.0, 6.0, 11.0, 13.0, 2.0],
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    "config",
    [
        # Phi-3: transformers takes the top-level original context (its class default 4096) before the rope
        # parameters' own; the settings left it out and were read with 4096
        {**BASE, "model_type": "phi3", "original_max_position_embeddings": 32, "rope_theta": 500000.0,
         "rope_scaling": {"type": "longrope", "attention_factor": 1.2, **FACTORS}},
        # GPT-NeoX reads rotary_emb_base and rotary_pct (default 0.25), not rope_theta/partial_rotary_factor
        {**BASE, "model_type": "gpt_neox", "rotary_pct": 1.0, "rotary_emb_base": 20000.0},
        {**BASE, "model_type": "gpt_neox", "rotary_pct": 0.5, "rotary_emb_base": 20000.0},
        # Gemma 3 with sliding layers only: their base is rope_local_base_freq in transformers 4
        {**BASE, "model_type": "gemma3_text", "head_dim": 16, "layer_types": ["sliding_attention"] * 2,
         "num_hidden_layers": 2, "rope_theta": 10000.0, "rope_local_base_freq": 5000.0,
         "rope_scaling": {"rope_type": "linear", "factor": 8.0}},
        # the GGUF view of a llama YaRN config with mscale = mscale_all_dim: llama.cpp's yarn_log_multiplier is
        # DeepSeek 2's spelling (mscale = all_dim there only); for llama the attention factor is attn_factor's
        {**BASE, "model_type": "llama", "head_dim": 16, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4,
         "factor": 40.0, "original_max_position_embeddings": 128, "mscale": 0.707, "mscale_all_dim": 0.707}},
        # ModernBERT: global_rope_theta / local_rope_theta
        {**BASE, "model_type": "modernbert", "global_rope_theta": 160000.0, "local_rope_theta": 5000.0,
         "global_attn_every_n_layers": 3},
    ],
    ids=["phi3-longrope", "gpt-neox-full", "gpt-neox-half", "gemma3-sliding", "llama-yarn-mscale", "modernbert"],
)  # fmt: skip
def test_settings_that_were_read_back_wrong(cli, tmp_path, config, tool):
    _round_trip(cli, tmp_path, config, tool)


def test_a_scaled_sliding_layer_is_refused_as_hf_v4(cli, tmp_path):
    # transformers 4's Gemma 3 never scales its sliding layers: the settings cannot hold it
    config = {**BASE, "model_type": "gemma3_text", "head_dim": 16, "layer_types": ["sliding_attention"] * 2,
              "num_hidden_layers": 2, "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
              "sliding_attention": {"rope_type": "linear", "rope_theta": 1e4, "factor": 8.0}}}  # fmt: skip
    assert _round_trip(cli, tmp_path, config, "hf-v4") is None
    assert _round_trip(cli, tmp_path, config, "hf-v5", name="d") is not None


def _random_config(rng, family):
    head, ctx = int(rng.choice([8, 16, 32])), int(rng.choice([64, 128, 256]))
    config = {**BASE, "hidden_size": 2 * head, "max_position_embeddings": ctx}
    theta = float(rng.choice([10000.0, 500000.0, 12345.6]))
    if family in ("default", "linear", "dynamic", "yarn", "llama3"):
        rope = {"rope_type": family, "rope_theta": theta}
        if family in ("linear", "dynamic"):
            rope["factor"] = float(rng.choice([1.5, 4.0]))
        if family == "yarn":
            rope |= {"factor": float(rng.choice([0.5, 2.0, 40.0])), "original_max_position_embeddings": ctx // 2,
                     "beta_fast": float(rng.choice([8.5, 32.0]))}  # fmt: skip
            if rng.random() < 0.5:
                rope |= {"mscale": 0.707, "mscale_all_dim": float(rng.choice([0.707, 1.0]))}
        if family == "llama3":
            rope |= {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": ctx // 4}  # fmt: skip
        if rng.random() < 0.5:
            return config | {"model_type": "llama", "head_dim": head, "rope_parameters": rope}
        theta = rope.pop("rope_theta")
        return config | {"model_type": rng.choice(["llama", "qwen2", "mistral"]), "head_dim": head,
                         "rope_theta": theta, "rope_scaling": rope if family != "default" else None}  # fmt: skip
    if family == "phi3":
        partial = float(rng.choice([0.5, 1.0]))
        pairs = int(head * partial) // 2
        scaling = {"type": "longrope", "short_factor": [float(v) for v in np.round(rng.uniform(1, 3, pairs), 4)],
                   "long_factor": [float(v) for v in np.round(rng.uniform(1, 30, pairs), 4)]}  # fmt: skip
        return config | {"model_type": "phi3", "partial_rotary_factor": partial, "rope_theta": theta,
                         "original_max_position_embeddings": ctx // 4, "rope_scaling": scaling}  # fmt: skip
    if family == "gpt_neox":
        partial = float(rng.choice([0.5, 1.0]))
        return config | {"model_type": "gpt_neox", "rotary_pct": partial, "rotary_emb_base": theta}
    if family == "gemma3":
        types = [str(rng.choice(["sliding_attention", "full_attention"])) for _ in range(4)]
        return config | {
            "model_type": "gemma3_text",
            "head_dim": head,
            "layer_types": types,
            "rope_theta": theta,
            "rope_local_base_freq": 5000.0,
            "rope_scaling": {"rope_type": "linear", "factor": 8.0},
        }
    return config | {"model_type": "modernbert", "global_rope_theta": theta, "local_rope_theta": 5000.0,
                     "global_attn_every_n_layers": int(rng.choice([1, 3]))}  # fmt: skip


FAMILIES = ("default", "linear", "dynamic", "yarn", "llama3", "phi3", "gpt_neox", "gemma3", "modernbert")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("family", FAMILIES)
def test_seeded_random_configs_round_trip(cli, tmp_path, family, seed):
    rng = np.random.default_rng([seed, FAMILIES.index(family)])
    config = _random_config(rng, family)
    for tool in TOOLS:
        _round_trip(cli, tmp_path, config, tool, name=f"c-{tool}")


@pytest.mark.parametrize("spelling", ["hf-v4", "hf-v5"])
def test_an_odd_rotary_width_keeps_the_configs_factor(tmp_path, spelling):
    # GPT-NeoX head 10 × rotary_pct 0.5 turns int(5) columns, ⌈5/2⌉ = 3 pairs: the table is 6 wide; the settings
    # wrote 6/10 = 0.6, which reads back as 6 rotated columns (found by the CLI property fuzz)
    import json

    from tests.conftest import run_in_process

    config = {"model_type": "gpt_neox", "hidden_size": 20, "num_attention_heads": 2, "rotary_pct": 0.5,
              "rotary_emb_base": 500000, "max_position_embeddings": 16}  # fmt: skip
    (tmp_path / "a.json").write_text(json.dumps(config))
    shown = run_in_process("info", str(tmp_path / "a.json"), "--as", spelling)
    assert shown.code == 0, shown.stderr
    (tmp_path / "b.json").write_text(shown.out)
    assert 0.5 in json.loads(shown.out).values() or "0.5" in shown.out
    for name in ("a", "b"):
        made = run_in_process("generate", "--from-config", str(tmp_path / f"{name}.json"), "-o",
                              str(tmp_path / f"{name}.safetensors"))  # fmt: skip
        assert made.code == 0, made.stderr
    result = run_in_process("compare", str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors"))
    assert result.code == 0, result.out
