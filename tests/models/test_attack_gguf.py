"""Attack round on GGUF files and per-layer rope settings (issue 30): each test failed on the code before its fix.

GGUF files are written with gguf's own ``GGUFWriter`` holding llama.cpp's keys as
``convert_hf_to_gguf.py`` writes them (Phi3MiniModel: no ``rope.scaling.type``, the LongRoPE factors
in ``rope_factors_long``/``rope_factors_short`` beside ``rope.scaling.original_context_length`` and
``rope.scaling.attn_factor``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.conftest import assert_clean_error, require_module

pytestmark = pytest.mark.xdist_group("transformers")


def write_gguf(path, arch="llama", metadata=None, tensors=None, *, without=()):
    """A small GGUF file of a ``arch`` model: hidden 256, 4 heads of 64, context 4096, base 500000."""
    gguf = require_module("gguf")
    keys = {
        f"{arch}.context_length": 4096,
        f"{arch}.embedding_length": 256,
        f"{arch}.attention.head_count": 4,
        f"{arch}.rope.freq_base": 500000.0,
        f"{arch}.rope.dimension_count": 64,
        **(metadata or {}),
    }
    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in keys.items():
        if key in without:
            continue
        if isinstance(value, str):
            writer.add_string(key, value)
        elif isinstance(value, bool):
            writer.add_bool(key, value)
        elif isinstance(value, int):
            writer.add_uint32(key, value)
        else:
            writer.add_float32(key, value)
    for name, values in {"token_embd.weight": np.zeros((8, 256), np.float32), **(tensors or {})}.items():
        writer.add_tensor(name, np.asarray(values, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


LONG = np.linspace(1.0, 20.0, 32)
SHORT = np.linspace(1.0, 1.5, 32)


def _phi3_gguf(path):
    """Phi-3 as the converter writes it: 131072 context over an original 4096, attn_factor, no scaling type."""
    attention = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    metadata = {
        "phi3.context_length": 131072,
        "phi3.rope.scaling.original_context_length": 4096,
        "phi3.rope.scaling.attn_factor": attention,
    }
    tensors = {"rope_factors_long.weight": LONG, "rope_factors_short.weight": SHORT}
    return write_gguf(path, "phi3", metadata, tensors), attention


def test_phi3_gguf_reads_the_original_context_and_attention_factor(cli, tmp_path):
    # before: original_max_position = the context (131072), attention factor 1: the short factors and
    # no scaling of cos/sin, where the model (llama.cpp and transformers alike) uses the long ones × 1.19
    path, attention = _phi3_gguf(tmp_path / "phi3.gguf")
    result = cli("info", str(path), "--json")
    assert result.code == 0, result.stderr
    layer = json.loads(result.stdout)["positional_encoding"]["layers"][0]
    assert layer["scaling_parameters"]["original_max_position"] == 4096
    assert layer["attention_factor"] == pytest.approx(attention, rel=1e-6)
    text = cli("info", str(path))
    assert "original_max_position=4096" in text.out and "attention factor 1.19" in text.out


def test_phi3_gguf_table_is_the_table_of_its_config(cli, tmp_path):
    path, _ = _phi3_gguf(tmp_path / "phi3.gguf")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "model_type": "phi3", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 500000.0,
        "rope_scaling": {"type": "longrope", "long_factor": LONG.astype(np.float32).tolist(),
                         "short_factor": SHORT.astype(np.float32).tolist()},
    }))  # fmt: skip
    tables = []
    for source in (path, config):
        out = tmp_path / f"{source.stem}.npy"
        result = cli("generate", "--from-config", str(source), "--len", "8", "--part", "cos", "-o", str(out))
        assert result.code == 0, result.stderr
        tables.append(np.load(out))
    # the attention factor is stored as float32 in the GGUF file: equal to its precision
    np.testing.assert_allclose(tables[0], tables[1], rtol=1e-6, atol=1e-6)


GEMMA3_WITH_SCALING = {
    "model_type": "gemma3_text", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64,
    "max_position_embeddings": 8192, "num_hidden_layers": 3, "sliding_window": 512,
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
    "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}},
    "rope_scaling": {"rope_type": "linear", "factor": 8.0},
}  # fmt: skip


def _transformers_rope(directory):
    transformers = require_module("transformers")
    return transformers.AutoConfig.from_pretrained(str(directory)).rope_parameters


def _layers(cli, config):
    result = cli("info", str(config), "--json")
    assert result.code == 0, result.stderr
    return {layer["layer_type"]: layer for layer in json.loads(result.stdout)["layers"]}


def test_rope_scaling_beside_per_layer_rope_parameters_goes_where_gemma3_puts_it(cli, tmp_path):
    # before: the top-level rope_scaling was ignored: full_attention unscaled, exit 0
    (tmp_path / "config.json").write_text(json.dumps(GEMMA3_WITH_SCALING))
    expected = _transformers_rope(tmp_path)  # Gemma3TextConfig: full_attention.update(rope_scaling)
    assert expected["full_attention"]["rope_type"] == "linear"
    layers = _layers(cli, tmp_path)
    assert layers["full_attention"]["scaling"] == "linear"
    assert layers["full_attention"]["scaling_parameters"]["factor"] == expected["full_attention"]["factor"] == 8.0
    assert layers["full_attention"]["base"] == 1000000.0
    assert layers["sliding_attention"]["scaling"] == "none" and layers["sliding_attention"]["base"] == 10000.0


def test_rope_scaling_beside_per_layer_rope_parameters_replaces_them_for_other_models(cli, tmp_path):
    # PreTrainedConfig.convert_rope_params_to_dict: `rope_scaling or rope_parameters`, one set for every layer
    (tmp_path / "config.json").write_text(json.dumps({**GEMMA3_WITH_SCALING, "model_type": "llama"}))
    expected = _transformers_rope(tmp_path)
    assert expected == {"rope_type": "linear", "factor": 8.0, "rope_theta": 10000.0}
    layers = _layers(cli, tmp_path)
    assert list(layers) == [None]
    assert layers[None]["scaling"] == "linear" and layers[None]["scaling_parameters"]["factor"] == 8.0
    assert layers[None]["base"] == 10000.0


#: GGUF settings that are there but wrong -> the words of the one-line problem (info) and error (generate)
WRONG_SETTINGS = {
    "nan-base": ({"llama.rope.freq_base": float("nan")}, {}, "llama.rope.freq_base: expected a positive finite"),
    "bool-heads": ({"llama.attention.head_count": True}, {}, "llama.attention.head_count: expected an integer"),
    "short-rope-freqs": ({}, {"rope_freqs.weight": np.ones(7)}, "holds 7 factors, but 64 rotated columns need 32"),
    "2-d-rope-freqs": ({}, {"rope_freqs.weight": np.ones((2, 16))}, "'rope_freqs.weight' has shape [2, 16]"),
    "escaped-scaling": ({"llama.rope.scaling.type": "ya\x1b]0;x\x07rn"}, {}, "'ya\\x1b]0;x\\x07rn' is not one"),
    "odd-rotary": ({"llama.rope.dimension_count": 63}, {}, "llama.rope.dimension_count gives 63 rotated columns"),
    "one-rotary": ({"llama.rope.dimension_count": 1}, {}, "llama.rope.dimension_count gives 1 rotated columns"),
    "odd-head": ({"llama.embedding_length": 252}, {}, "llama.embedding_length / llama.attention.head_count gives 63"),
}


@pytest.mark.parametrize("name", list(WRONG_SETTINGS))
def test_gguf_settings_of_a_wrong_value_are_said_by_info_and_refused_by_generate(cli, tmp_path, name):
    # before: `info FILE.gguf` dropped the positional encoding without a word (text and JSON); 2-D
    # rope_freqs were flattened and read; an odd rotary width was blamed on head_dim, not a GGUF key
    metadata, tensors, words = WRONG_SETTINGS[name]
    without = ("llama.rope.dimension_count",) if name == "odd-head" else ()
    path = write_gguf(tmp_path / f"{name}.gguf", metadata=metadata, tensors=tensors, without=without)
    text = cli("info", str(path))
    assert text.code == 0, text.stderr
    problem = [line for line in text.out.splitlines() if line.startswith("positional encoding: ")]
    assert len(problem) == 1 and words in problem[0], text.out
    assert "\x1b" not in text.out and "\x07" not in text.out
    document = json.loads(cli("info", str(path), "--json").stdout)
    assert words in document["positional_encoding"]["problem"]
    assert problem[0] == "positional encoding: " + document["positional_encoding"]["problem"]
    out = tmp_path / "out.npy"
    assert_clean_error(cli("generate", "--from-config", str(path), "--len", "8", "--part", "cos", "-o", str(out)), 2)
    assert not out.exists()


def test_gguf_without_rope_settings_shows_its_tensors_only(cli, tmp_path):
    # a file lacking a setting pecli needs (here the head count) and any rope key is no model config: no problem
    # line (with rope keys beside it, the missing head count is that model's problem: test_attack_models_s11)
    without = ("llama.attention.head_count", "llama.rope.freq_base", "llama.rope.dimension_count")
    path = write_gguf(tmp_path / "embeddings.gguf", without=without)
    document = json.loads(cli("info", str(path), "--json").stdout)
    assert "positional_encoding" not in document and document["tensors"][0]["name"] == "token_embd.weight"


def test_command_r_gguf_rotates_adjacent_pairs(cli, tmp_path):
    # before: architecture "command-r" was taken as a model type pecli does not know: halves (rotate_half),
    # where Cohere's rotary (transformers and llama.cpp alike) pairs adjacent columns
    path = write_gguf(tmp_path / "command-r.gguf", "command-r")
    layer = json.loads(cli("info", str(path), "--json").stdout)["positional_encoding"]["layers"][0]
    assert layer["pairing"] == "adjacent pairs (interleaved)"


def test_layers_of_a_type_without_rope_are_said(cli, tmp_path):
    # before: "every layer: rope" and nothing else for Qwen3-Next, whose linear_attention layers (Gated
    # DeltaNet) rotate nothing; transformers' Qwen3NextConfig accepts these layer_types as they are
    config = {
        "model_type": "qwen3_next", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64,
        "max_position_embeddings": 8192, "partial_rotary_factor": 0.25, "rope_theta": 10000000.0,
        "num_hidden_layers": 4, "layer_types": ["linear_attention"] * 3 + ["full_attention"],
    }  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    note = "layer_types: layers 0, 1, 2 are linear_attention, without positional encoding"
    document = json.loads(cli("info", str(tmp_path), "--json").stdout)
    assert any(text.startswith(note) for text in document["notes"])
    assert "note: " + note in cli("info", str(tmp_path)).out
    result = cli(
        "generate", "--from-config", str(tmp_path), "--len", "4", "--part", "cos", "-o", str(tmp_path / "t.npy")
    )
    assert result.code == 0 and note in result.stderr


def test_gguf_config_keys_read_are_its_gguf_keys(cli, tmp_path):
    # before: "config keys read" listed max_position_embeddings, rope_parameters.rope_theta…: keys of a
    # config.json the user never gave, not the .gguf's own keys
    path, _ = _phi3_gguf(tmp_path / "phi3.gguf")
    read = json.loads(cli("info", str(path), "--json").stdout)["positional_encoding"]["config"]
    assert read["phi3.context_length"] == 131072 and read["phi3.rope.freq_base"] == 500000.0
    assert read["phi3.rope.scaling.original_context_length"] == 4096 and read["phi3.rope.dimension_count"] == 64
    assert len(read["rope_factors_long.weight"]) == 32
    assert not [name for name in read if "rope_parameters" in name or "max_position" in name]
    text = cli("info", str(path)).out
    assert "  phi3.rope.freq_base = 500000.0" in text and "rope_parameters" not in text


def test_a_gguf_vocabulary_is_skipped_not_parsed(tmp_path):
    # before: gguf's GGUFReader parsed every string of the tokenizer (an 11 MB file of 900,000 strings:
    # 35 s and 1 GB) to read a dozen settings
    import tracemalloc

    from pecli.models.gguf import gguf_config

    gguf = require_module("gguf")
    path = tmp_path / "vocab.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    for key, value in (("llama.context_length", 4096), ("llama.embedding_length", 256)):
        writer.add_uint32(key, value)
    writer.add_uint32("llama.attention.head_count", 4)
    writer.add_array("tokenizer.ggml.tokens", [f"token{index}" for index in range(100_000)])
    writer.add_tensor("token_embd.weight", np.zeros((8, 256), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tracemalloc.start()
    try:
        config = gguf_config(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert config["max_position_embeddings"] == 4096 and config["head_dim"] == 64
    assert peak < 5 * 2**20, peak  # the file is 1.4 MB; the package's reader peaked at 133 MB
