"""Write tests/data/models/: configs and tiny models saved by transformers, and what their modules compute.

Run with an environment that has torch and transformers (the tests themselves need neither):

    /work/venvs/config/bin/python tests/data/make_model_fixtures.py

For every case of ``ROTARY`` it writes ``<case>/config.json`` with the library's own config class and
``save_pretrained``, and records the rotary module's outputs ``cos, sin = Rotary(config)(x, position_ids)``
(``x`` float32; ``position_ids`` the case's positions) in ``rotary.safetensors`` as ``<case>.cos`` and
``<case>.sin``; ``models.json`` records the library versions, the calls, each case's positions, the
table length to ask pecli for and the module's ``attention_scaling``. The sinusoidal cases record
their embedding module's rows for the first tokens (``<case>.table``) and ALiBi's ``build_alibi_tensor``
slopes. The ``tiny-*`` directories are random models saved with ``max_shard_size`` (real shard indexes).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import safetensors.numpy
import torch
import transformers
from transformers import (
    BertConfig,
    BertModel,
    BloomConfig,
    GPT2Config,
    GPT2Model,
    GPTNeoXConfig,
    LlamaConfig,
    M2M100Config,
    MarianConfig,
    MptConfig,
    OPTConfig,
    Phi3Config,
    Qwen2Config,
    WhisperConfig,
    WhisperModel,
)

HERE = Path(__file__).parent / "models"
SMALL = {"num_hidden_layers": 1, "intermediate_size": 32, "vocab_size": 64}
LLAMA = {"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 128, **SMALL}  # head_dim 16


def spread(length: int) -> list[int]:
    """About 32 positions from 0 to length − 1 (the last sets the module's seq_len)."""
    return sorted({*range(0, length, max(1, length // 32)), length - 1})


#: case -> (config class, its arguments, rotary module "module:Class", table length for pecli)
ROTARY = {
    "llama-default": (LlamaConfig, {**LLAMA, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}),
    "llama-linear": (
        LlamaConfig,
        {**LLAMA, "rope_parameters": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}},
    ),
    "llama-dynamic": (
        LlamaConfig,
        {**LLAMA, "rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}},
        256,  # past max_position_embeddings: dynamic NTK recomputes its base for 256 positions
    ),
    "llama-yarn": (
        LlamaConfig,
        {
            **LLAMA,
            "max_position_embeddings": 256,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 64,
            },
        },
    ),
    "llama3": (
        LlamaConfig,
        {
            **LLAMA,
            "rope_parameters": {
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
        },
    ),
    "deepseek-yarn": (  # DeepSeek-V2/V3's rope_scaling: no factor-derived attention factor, mscale ratio instead
        LlamaConfig,
        {
            **LLAMA,
            "max_position_embeddings": 256,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 64,
                "beta_fast": 32,
                "beta_slow": 1,
                "mscale": 0.707,
                "mscale_all_dim": 1.0,
            },
        },
    ),
    "yarn-no-truncate": (  # gpt-oss
        LlamaConfig,
        {
            **LLAMA,
            "max_position_embeddings": 256,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 150000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 64,
                "truncate": False,
            },
        },
    ),
    "phi3-longrope": (
        Phi3Config,
        {
            **LLAMA,
            "max_position_embeddings": 256,
            "original_max_position_embeddings": 64,
            "rope_parameters": {
                "rope_type": "longrope",
                "rope_theta": 10000.0,
                "short_factor": [1.0 + 0.05 * i for i in range(8)],
                "long_factor": [1.0 + 0.5 * i for i in range(8)],
            },
        },
    ),
    "qwen2": (
        Qwen2Config,
        {**LLAMA, "num_key_value_heads": 2, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
    ),
    "gpt-neox-partial": (
        GPTNeoXConfig,
        {**LLAMA, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}, "partial_rotary_factor": 0.25},
    ),
    "proportional": (
        LlamaConfig,
        {
            **LLAMA,
            "rope_parameters": {
                "rope_type": "proportional",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.5,
            },
        },
    ),
}

ROTARY_MODULES = {
    LlamaConfig: "transformers.models.llama.modeling_llama:LlamaRotaryEmbedding",
    Phi3Config: "transformers.models.phi3.modeling_phi3:Phi3RotaryEmbedding",
    Qwen2Config: "transformers.models.qwen2.modeling_qwen2:Qwen2RotaryEmbedding",
    GPTNeoXConfig: "transformers.models.gpt_neox.modeling_gpt_neox:GPTNeoXRotaryEmbedding",
}

#: configs only (no module output): the learned, ALiBi and sinusoidal families
CONFIGS = {
    "bert": (BertConfig, {"hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 64, **SMALL}),
    "gpt2": (GPT2Config, {"n_embd": 16, "n_head": 2, "n_layer": 1, "n_positions": 64, "vocab_size": 64,
                             "bos_token_id": 0, "eos_token_id": 0}),
    "opt": (OPTConfig, {"hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 64, **SMALL}),
    "bloom": (BloomConfig, {"hidden_size": 48, "n_head": 12, "n_layer": 1, "vocab_size": 64}),
    "mpt": (MptConfig, {"d_model": 32, "n_heads": 8, "n_layers": 1, "max_seq_len": 64, "vocab_size": 64}),
    "marian": (
        MarianConfig,
        {"d_model": 16, "max_position_embeddings": 64, "vocab_size": 64, "pad_token_id": 1, "eos_token_id": 0,
         "decoder_start_token_id": 1, "forced_eos_token_id": 0},
    ),
    "m2m100": (M2M100Config, {"d_model": 16, "max_position_embeddings": 64, "vocab_size": 64, "pad_token_id": 1}),
    "whisper": (
        WhisperConfig,
        {"d_model": 16, "max_source_positions": 64, "vocab_size": 64, "pad_token_id": 1, "bos_token_id": 0,
         "eos_token_id": 0, "decoder_start_token_id": 0, "suppress_tokens": [], "begin_suppress_tokens": []},
    ),
}


WHISPER_LAYERS = {
    "encoder_layers": 1,
    "decoder_layers": 1,
    "encoder_ffn_dim": 16,
    "decoder_ffn_dim": 16,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "num_mel_bins": 8,
    "max_target_positions": 32,
}


def load(spec: str):
    module, name = spec.split(":")
    return getattr(__import__(module, fromlist=[name]), name)


def save_config(name: str, config_class, kwargs) -> transformers.PretrainedConfig:
    config = config_class(**kwargs)
    config.save_pretrained(HERE / name)
    return config


def rotary(name: str, config_class, kwargs, length: int | None, tables: dict, cases: dict) -> None:
    config = save_config(name, config_class, kwargs)
    module_spec = ROTARY_MODULES[config_class]
    module = load(module_spec)(config)
    table_length = length or config.max_position_embeddings
    positions = spread(table_length)
    x = torch.zeros(1, len(positions), 16, dtype=torch.float32)
    with torch.no_grad():
        cos, sin = module(x, torch.tensor([positions]))
    tables[f"{name}.cos"] = cos[0].numpy().astype(np.float32)
    tables[f"{name}.sin"] = sin[0].numpy().astype(np.float32)
    cases[name] = {
        "config": config_class.__name__,
        "module": module_spec,
        "positions": positions,
        "len": length,
        "attention_scaling": float(module.attention_scaling),
    }


def sinusoidal(name: str, config, tables: dict, cases: dict) -> None:
    """The sinusoidal table rows the first tokens of a sequence get, from the model's own module."""
    length = 16
    if name == "marian":
        # the module's sinusoids are written by MarianPreTrainedModel._init_weights, so build the model
        small = {"encoder_layers": 1, "decoder_layers": 1, "encoder_ffn_dim": 16, "decoder_ffn_dim": 16}
        model = transformers.MarianModel(MarianConfig(**{**config.to_dict(), **small}))
        table = model.encoder.embed_positions(torch.Size([1, length]))
        call = "MarianModel(config).encoder.embed_positions(Size([1, 16]))"
    elif name == "m2m100":
        m2m = transformers.models.m2m_100.modeling_m2m_100
        module = m2m.M2M100SinusoidalPositionalEmbedding(
            config.max_position_embeddings, config.d_model, config.pad_token_id
        )
        ids = torch.full((1, length), 5)  # no padding: positions pad + 1 …
        table, call = module(ids)[0], "M2M100SinusoidalPositionalEmbedding(L, d, pad)(input_ids without padding)"
    else:
        table = transformers.models.whisper.modeling_whisper.sinusoids(config.max_source_positions, config.d_model)
        table, call = table[:length], "transformers.models.whisper.modeling_whisper.sinusoids(max_source_positions, d)"
    tables[f"{name}.table"] = table.detach().numpy().astype(np.float32)
    cases[name] = {"config": type(config).__name__, "call": call, "rows": length}


def alibi(config, tables: dict, cases: dict) -> None:
    bloom = transformers.models.bloom.modeling_bloom
    mask = torch.ones(1, 4)
    bias = bloom.build_alibi_tensor(mask, config.n_head, torch.float32)  # (heads, 1, 4): slope · position
    tables["bloom.slopes"] = bias[:, 0, 1].numpy().astype(np.float32)
    cases["bloom"] = {"config": "BloomConfig", "call": "build_alibi_tensor(ones(1, 4), n_head, float32)[:, 0, 1]"}


def tiny_models() -> dict:
    """Random models saved in shards: BERT (position_embeddings), GPT-2 (wpe), Whisper (two embed_positions)."""
    torch.manual_seed(0)
    made = {}
    for name, model, shard in (
        ("tiny-bert", BertModel(BertConfig(**CONFIGS["bert"][1])), "8KB"),
        ("tiny-gpt2", GPT2Model(GPT2Config(**CONFIGS["gpt2"][1])), "20KB"),
        ("tiny-whisper", WhisperModel(WhisperConfig(**CONFIGS["whisper"][1], **WHISPER_LAYERS)), "1GB"),
    ):
        model.save_pretrained(HERE / name, max_shard_size=shard)
        made[name] = {"model": type(model).__name__, "max_shard_size": shard, "files": sorted(
            p.name for p in (HERE / name).iterdir())}
    return made


def main() -> None:
    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir()
    tables: dict[str, np.ndarray] = {}
    cases: dict[str, dict] = {}
    for name, (config_class, kwargs, *length) in ROTARY.items():
        rotary(name, config_class, kwargs, length[0] if length else None, tables, cases)
    for name, (config_class, kwargs) in CONFIGS.items():
        config = save_config(name, config_class, kwargs)
        if name in ("marian", "m2m100", "whisper"):
            sinusoidal(name, config, tables, cases)
        elif name == "bloom":
            alibi(config, tables, cases)
    record = {
        "library": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "call": "cos, sin = Rotary(config)(torch.zeros(1, n, 16), torch.tensor([positions])); "
        "config = ConfigClass(**kwargs); config.save_pretrained(case)",
        "script": "tests/data/make_model_fixtures.py",
        "cases": cases,
        "tiny_models": tiny_models(),
    }
    safetensors.numpy.save_file(tables, HERE / "references.safetensors", metadata={"library": record["library"]})
    (HERE / "models.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
