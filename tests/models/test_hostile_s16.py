"""Attack round on model files (issue 30, session 16): each test failed on the code before its fix.

Qwen2-VL's family splits its rotary frequencies by ``mrope_section`` (transformers 5.23,
``freq.split(self.mrope_section, dim=-1)``): sections that do not add up to the rotated pairs make every forward
fail, and a section that is no integer is no ``list[int]``. pecli read the config as default rope and wrote a table
(exit 0) no model computes.

A GGUF file of a model whose layers have different head counts (OpenELM, DeciLM: ``ARCH.attention.head_count`` a
per-layer array) was refused ("expected an integer, got [4, 8]"); llama.cpp sizes the head by layer 0's count.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import assert_clean_error, require_module

QWEN2_VL_TEXT = {"model_type": "qwen2_vl_text", "hidden_size": 256, "num_attention_heads": 4,
                 "max_position_embeddings": 64}  # fmt: skip


def _write(tmp_path, raw):
    (tmp_path / "config.json").write_text(json.dumps(raw))
    return str(tmp_path)


def _vl(sections):
    rope = {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": sections}
    return {"model_type": "qwen2_vl", "text_config": {**QWEN2_VL_TEXT, "rope_parameters": rope}}


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (_vl([8, 8, 8]), ("text_config", "rope_parameters.mrope_section", "adds up to 24", "32")),
        (_vl([16, 24, 24]), ("rope_parameters.mrope_section", "adds up to 64", "32")),
        (_vl([-8, 20, 20]), ("rope_parameters.mrope_section", "non-negative integers")),
        (_vl(["8", 12, 12]), ("rope_parameters.mrope_section", "non-negative integers")),
        (_vl(16), ("rope_parameters.mrope_section", "non-negative integers")),
        ({**QWEN2_VL_TEXT, "model_type": "qwen2_vl", "rope_theta": 1e6,
          "rope_scaling": {"type": "mrope", "mrope_section": [8, 8, 8]}}, ("rope_scaling.mrope_section", "24")),
    ],
    ids=["sum-short", "sum-long", "negative", "string", "scalar", "legacy-flat"],
)  # fmt: skip
def test_an_mrope_section_the_model_cannot_split_by_is_refused_naming_it(cli, tmp_path, raw, words):
    directory = _write(tmp_path, raw)
    out = tmp_path / "rope.safetensors"
    assert_clean_error(cli("generate", "--from-config", directory, "--len", "8", "-o", str(out)), 2, *words)
    assert not out.exists()
    assert_clean_error(cli("identify", directory), 2, *words)


def test_an_mrope_section_that_fits_leaves_default_rope(cli, tmp_path):
    # at text positions (t = h = w) every section turns with the same position: default rope's table
    directory = _write(tmp_path, _vl([8, 12, 12]))
    out = tmp_path / "cos.npy"
    result = cli("generate", "--from-config", directory, "--part", "cos", "-o", str(out))
    assert result.code == 0, result.stderr
    inv_freq = 1e6 ** (-np.arange(0, 64, 2) / 64)
    angles = np.arange(64)[:, None] * inv_freq
    np.testing.assert_allclose(np.load(out), np.cos(np.concatenate([angles, angles], axis=1)), atol=1e-6)


def _per_layer_heads_gguf(path, heads, key_length=None):
    gguf = require_module("gguf")
    writer = gguf.GGUFWriter(str(path), "openelm")
    writer.add_uint32("openelm.context_length", 64)
    writer.add_uint32("openelm.embedding_length", 256)
    writer.add_array("openelm.attention.head_count", heads)
    writer.add_float32("openelm.rope.freq_base", 10000.0)
    if key_length is not None:
        writer.add_uint32("openelm.attention.key_length", key_length)
    writer.add_tensor("token_embd.weight", np.zeros((8, 256), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


@pytest.mark.parametrize(("heads", "key_length", "width"), [([4, 8, 16], None, 64), ([8, 4, 16], 64, 64)])
def test_a_gguf_with_per_layer_head_counts_is_read_as_llama_cpp_sizes_its_heads(
    cli, tmp_path, heads, key_length, width
):
    path = _per_layer_heads_gguf(tmp_path / "m.gguf", heads, key_length)
    out = tmp_path / "cos.npy"
    result = cli("generate", "--from-config", path, "--part", "cos", "-o", str(out))
    assert result.code == 0, result.stderr
    inv_freq = 10000.0 ** (-np.arange(0, width, 2) / width)
    angles = np.arange(64)[:, None] * inv_freq
    np.testing.assert_allclose(np.load(out), np.cos(np.concatenate([angles, angles], axis=1)), atol=1e-6)
    assert cli("info", path).code == 0
