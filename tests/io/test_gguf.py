"""GGUF files written by gguf's own ``GGUFWriter``: ``--from-config model.gguf`` against transformers'
rotary module for the equivalent config and against pecli's ``--from-config config.json``; GGUF tensors
in info, identify and compare; and bad files (truncated, lying lengths and offsets, strings where
numbers go, non-finite or non-positive bases, enormous contexts), each one clean line, exit 2.

gguf and transformers are in the ``test`` extra; where one is missing its tests skip, and fail in CI.
"""

from __future__ import annotations

import json
import math
import struct
import sys

import numpy as np
import pytest

from pecli.io import read_table
from tests.conftest import assert_clean_error, require_module
from tests.references import llama3_rope_freqs

pytestmark = pytest.mark.xdist_group("transformers")

#: Llama 3.1's scaling, as the live tests' "llama3" case (head_dim 16, base 500000)
LLAMA3 = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}




def _write(path, arch="llama", *, context=128, hidden=64, heads=4, base=500000.0, rot=16, kv=None, tensors=None):
    """A GGUF file with ``arch``'s position metadata (each None left out) and ``tensors``."""
    gguf = require_module("gguf")
    writer = gguf.GGUFWriter(str(path), arch)
    if context is not None:
        writer.add_context_length(context)
    writer.add_embedding_length(hidden)
    writer.add_head_count(heads)
    if base is not None:
        writer.add_rope_freq_base(base)
    if rot is not None:
        writer.add_rope_dimension_count(rot)
    for key, (kind, value) in (kv or {}).items():
        getattr(writer, f"add_{kind}")(f"{arch}.{key}", value)
    return finish_gguf(writer, tensors, path)


def finish_gguf(writer, tensors, path):
    """Add ``tensors`` to a gguf.GGUFWriter holding its keys, write the file and close it; its path."""
    for name, array in (tensors or {}).items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _llama3_rope_freqs(base: float, dim: int) -> np.ndarray:
    """The rope_freqs tensor llama.cpp's converter writes for this file's llama3 settings."""
    return llama3_rope_freqs(base, dim, LLAMA3["factor"], LLAMA3["low_freq_factor"], LLAMA3["high_freq_factor"],
                             LLAMA3["original_max_position_embeddings"])  # fmt: skip


#: name -> (GGUF writer arguments, the equivalent transformers LlamaConfig rope_parameters and length)
CASES = {
    "default": ({}, {"rope_type": "default", "rope_theta": 500000.0}, 128),
    "llama3-rope-freqs": (
        {"tensors": {"rope_freqs.weight": _llama3_rope_freqs(500000.0, 16)}},
        {"rope_type": "llama3", "rope_theta": 500000.0, **LLAMA3},
        128,
    ),
    "yarn": (
        {
            "context": 256,
            "base": 10000.0,
            "kv": {
                "rope.scaling.type": ("string", "yarn"),
                "rope.scaling.factor": ("float32", 4.0),
                "rope.scaling.original_context_length": ("uint32", 64),
                "rope.scaling.yarn_beta_fast": ("float32", 32.0),
                "rope.scaling.yarn_beta_slow": ("float32", 1.0),
            },
        },
        {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 64},
        256,
    ),
}


def _transformers_rotary(rope_parameters: dict, length: int, positions: list[int]):
    require_module("torch")
    require_module("transformers")
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=64, num_attention_heads=4, max_position_embeddings=length, rope_parameters=rope_parameters
    )
    module = LlamaRotaryEmbedding(config)
    with torch.no_grad():
        cos, sin = module(torch.zeros(1, len(positions), 16), torch.tensor([positions]))
    return cos[0].numpy(), sin[0].numpy(), float(module.attention_scaling), config


@pytest.mark.parametrize("name", list(CASES))
def test_from_config_gguf_equals_the_transformers_module_and_the_config_json(cli, tmp_path, name):
    arguments, rope_parameters, length = CASES[name]
    model = _write(tmp_path / "model.gguf", **arguments)
    positions = sorted({*range(0, length, max(1, length // 32)), length - 1})
    cos, sin, attention_scaling, config = _transformers_rotary(rope_parameters, length, positions)

    from_gguf = tmp_path / "gguf.safetensors"
    result = cli("generate", "--from-config", str(model), "-o", str(from_gguf))
    assert result.code == 0, result.stderr
    tolerance = 4 * 2.0**-23 * max(positions) + 2.0**-22  # float32 noise, as tests/models/test_models_live.py
    for part, expected in (("cos", cos), ("sin", sin)):
        table = read_table(str(from_gguf), key=part).array
        assert table.shape == (length, 16)
        np.testing.assert_allclose(table[positions], expected, rtol=0, atol=tolerance, err_msg=part)
    assert read_table(str(from_gguf), key="cos").array[0, 0] == pytest.approx(attention_scaling, rel=1e-6)

    config.save_pretrained(tmp_path / "hf")
    from_json = tmp_path / "json.safetensors"
    assert cli("generate", "--from-config", str(tmp_path / "hf"), "-o", str(from_json)).code == 0
    for part in ("cos", "sin"):
        ours, theirs = read_table(str(from_gguf), key=part).array, read_table(str(from_json), key=part).array
        if name == "llama3-rope-freqs":  # the factors went through float32 in the GGUF
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=tolerance)
        else:
            np.testing.assert_array_equal(ours, theirs)


def test_the_rotary_width_is_the_dimension_count(cli, tmp_path):
    # head_dim 16 rotating 8 columns: Qwen/NeoX-style partial rotary, partial_rotary_factor 0.5
    model = _write(tmp_path / "partial.gguf", rot=8, base=10000.0)
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "model_type": "stablelm",  # its default rope reads partial_rotary_factor; Llama's does not
                "hidden_size": 64,
                "num_attention_heads": 4,
                "max_position_embeddings": 128,
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.5,
            }
        )
    )
    assert cli("generate", "--from-config", str(model), "-o", str(tmp_path / "a.npy"), "--part", "cos").code == 0
    assert (
        cli(
            "generate", "--from-config", str(tmp_path / "config.json"), "-o", str(tmp_path / "b.npy"), "--part", "cos"
        ).code
        == 0
    )
    ours, theirs = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    assert ours.shape == (128, 8)
    np.testing.assert_array_equal(ours, theirs)


@pytest.fixture
def position_gguf(tmp_path):
    """A GPT-2-style GGUF: a learned (12, 6) position table, an F16 token table and a quantized weight."""
    gguf = require_module("gguf")
    table = np.random.default_rng(0).standard_normal((12, 6)).astype(np.float32)
    path = tmp_path / "gpt2.gguf"
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_context_length(12)
    writer.add_tensor("position_embd.weight", table)
    writer.add_tensor("token_embd.weight", np.ones((5, 6), np.float16))
    writer.add_tensor("blk.0.attn_q.weight", np.zeros((4, 18), np.uint8), raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path, table


def test_gguf_tensors_are_tables_in_numpy_order(cli, tmp_path, position_gguf):
    path, table = position_gguf
    # GGUF lists ggml's dimensions, fastest first: [6, 12]; the table reads back as numpy's (12, 6)
    loaded = read_table(str(path), key="position_embd")
    assert loaded.key == "position_embd.weight"
    np.testing.assert_array_equal(loaded.array, table)
    np.testing.assert_array_equal(read_table(str(path), key="token_embd").array, np.ones((5, 6)))

    info = cli("info", str(path))
    assert info.code == 0, info.stderr
    assert "position_embd.weight  [12, 6]  float32" in info.out
    assert "blk.0.attn_q.weight   [4, 32]  quantized Q4_0" in info.out

    identify = cli("identify", str(path), "--key", "position_embd")
    assert identify.code == 1, identify.out  # random values: no convention, and it says so
    assert "[position_embd.weight]: 12 × 6" in identify.out

    from safetensors.numpy import save_file

    save_file({"position_embd.weight": table}, str(tmp_path / "same.safetensors"))
    compare = cli("compare", str(path), str(tmp_path / "same.safetensors"), "--key", "position_embd.weight")
    assert compare.code == 0, compare.stderr + compare.out

    with open(path, "rb") as handle:  # a pipe: read once, to the end
        piped = cli("info", "-", "--key", "position", stdin=handle.read())
    assert piped.code == 0, piped.stderr
    assert "position_embd.weight  [12, 6]  float32" in piped.out


def test_a_quantized_tensor_is_refused_by_name(cli, position_gguf):
    path, _ = position_gguf
    assert_clean_error(cli("identify", str(path), "--key", "attn_q"), 2, "attn_q", "Q4_0")


def _patched(path, find: bytes, replace: bytes, out):
    data = path.read_bytes()
    assert data.count(find) == 1
    out.write_bytes(data.replace(find, replace))
    return out


def test_bad_gguf_tables_are_one_line_exit_2(cli, tmp_path, position_gguf):
    path, _ = position_gguf
    data = path.read_bytes()
    cut = tmp_path / "cut.gguf"
    table_at = data.index(np.ascontiguousarray(position_gguf[1]).tobytes())
    cut.write_bytes(data[: table_at + 100])  # inside the position table
    assert_clean_error(cli("info", str(cut), "--key", "position_embd", "--stats"), 2, "cut.gguf", "ends at byte")
    cut.write_bytes(data[:60])  # inside the metadata
    assert_clean_error(cli("info", str(cut)), 2, "cut short")

    # a tensor description whose dims claim 2^40 rows: "position_embd.weight", n_dims 2, [6, 12]
    described = struct.pack("<Q", 20) + b"position_embd.weight" + struct.pack("<I2Q", 2, 6, 12)
    lying = _patched(path, described, described[:-8] + struct.pack("<Q", 1 << 40), tmp_path / "rows.gguf")
    assert_clean_error(cli("info", str(lying), "--key", "position_embd"), 2, "position_embd", "ends at byte")
    # an offset past the end
    offset_at = data.index(described) + len(described) + 4
    moved = bytearray(data)
    moved[offset_at : offset_at + 8] = struct.pack("<Q", 1 << 50)
    (tmp_path / "offset.gguf").write_bytes(bytes(moved))
    assert_clean_error(cli("info", str(tmp_path / "offset.gguf")), 2, "ends at byte")
    # a tensor count the file cannot hold (bounded: refused before any description is read)
    counts = bytearray(data)
    counts[8:16] = struct.pack("<Q", 1 << 60)
    (tmp_path / "count.gguf").write_bytes(bytes(counts))
    assert_clean_error(cli("info", str(tmp_path / "count.gguf")), 2, "declares")


def test_bad_gguf_configs_are_one_line_exit_2_and_write_nothing(cli, tmp_path):
    cases = {
        "string-base": ({"base": None, "kv": {"rope.freq_base": ("string", "500000")}}, "freq_base"),
        "nan-base": ({"base": math.nan}, "freq_base"),
        "inf-base": ({"base": math.inf}, "freq_base"),
        "negative-base": ({"base": -10000.0}, "freq_base"),
        "zero-base": ({"base": 0.0}, "freq_base"),
        "huge-context": ({"context": None, "kv": {"context_length": ("uint64", 1 << 40)}}, "context_length"),
        "string-context": ({"context": None, "kv": {"context_length": ("string", "4096")}}, "context_length"),
        "no-context": ({"context": None}, "context_length"),
        "short-freqs": ({"tensors": {"rope_freqs.weight": np.ones(3, np.float32)}}, "rope_freqs"),
        "zero-freqs": ({"tensors": {"rope_freqs.weight": np.zeros(8, np.float32)}}, "rope_freqs"),
        "unknown-scaling": ({"kv": {"rope.scaling.type": ("string", "wild")}}, "scaling.type"),
    }
    output = tmp_path / "out.safetensors"
    for name, (arguments, word) in cases.items():
        model = _write(tmp_path / f"{name}.gguf", **arguments)
        assert_clean_error(cli("generate", "--from-config", str(model), "-o", str(output)), 2, word)
        assert not output.exists(), name

    # the largest context a GGUF may give still has to fit in memory
    model = _write(tmp_path / "big.gguf", context=2**31 - 1)
    result = cli("generate", "--from-config", str(model), "-o", str(output))
    assert_clean_error(result, result.code, "2147483647" if result.code == 2 else "GiB")  # memory (2), or disk (3)
    assert result.code in (2, 3) and not output.exists(), result.stderr

    good = _write(tmp_path / "good.gguf", tensors={"rope_freqs.weight": _llama3_rope_freqs(500000.0, 16)})
    data = good.read_bytes()
    for cut in (len(data) - 10, len(data) // 2, 40, 3):  # in the factor tensor, the metadata, the header
        (tmp_path / "cut.gguf").write_bytes(data[:cut])
        assert_clean_error(cli("generate", "--from-config", str(tmp_path / "cut.gguf"), "-o", str(output)), 2, "cut")
        assert not output.exists()


def test_no_gguf_package_is_needed(cli, tmp_path, monkeypatch):
    # issue 30: pecli's own bounded parser reads the settings (the package's reader took 35 s and 1 GB
    # over a 200,000-string vocabulary)
    model = _write(tmp_path / "model.gguf")
    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf now raises ImportError
    result = cli("generate", "--from-config", str(model), "--len", "4", "-o", str(tmp_path / "out.safetensors"))
    assert result.code == 0, result.stderr
