"""Attack round seven on the readers of model files (issue 30, classes 2 and 6): each test failed before its fix.

GGUF files are written by hand with ``struct`` (no package needed), so that a key may hold any type and value.
"""

from __future__ import annotations

import json
import struct

import pytest

from tests.conftest import assert_clean_error, run_in_process

_U32, _F32, _STR = 4, 6, 8


def _text(value: str | bytes) -> bytes:
    raw = value if isinstance(value, bytes) else value.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _u32(value: int) -> tuple[int, bytes]:
    return _U32, struct.pack("<I", value)


def write_gguf(path, arch: str | bytes = "llama", **keys: tuple[int, bytes] | None) -> str:
    """A GGUF file of no tensors holding ``arch``'s context, width, heads and base; ``keys`` (``rope__freq_base``
    for ``ARCH.rope.freq_base``) replace or (None) remove them."""
    name = arch.decode("utf-8", "replace") if isinstance(arch, bytes) else arch
    items: dict[str, tuple[int, bytes] | None] = {
        "context_length": _u32(4096),
        "embedding_length": _u32(512),
        "attention.head_count": _u32(8),
        "rope.freq_base": (_F32, struct.pack("<f", 10000.0)),
    }
    items.update({key.replace("__", "."): value for key, value in keys.items()})
    entries = [_text("general.architecture") + struct.pack("<I", _STR) + _text(arch)]
    entries += [
        _text(f"{name}.{key}") + struct.pack("<I", value[0]) + value[1] for key, value in items.items() if value
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries)) + b"".join(entries))
    return str(path)


@pytest.mark.parametrize(
    ("arch", "model_type"),
    [("ernie4_5-moe", "ernie4_5_moe"), ("chatglm", "glm"), ("deepseek2-ocr", "deepseek_v2")],
)
def test_gguf_norm_architectures_without_a_permutation_rotate_adjacent_pairs(tmp_path, arch, model_type):
    # llama.cpp's llama_model_rope_type: these are LLAMA_ROPE_TYPE_NORM and their converter leaves Q and K as
    # transformers has them (adjacent pairs); their names are not transformers' model types, which read as halves
    path = write_gguf(tmp_path / "m.gguf", arch)
    result = run_in_process("info", path, "--json")
    assert result.code == 0, result.stderr
    encoding = json.loads(result.stdout)["positional_encoding"]
    assert encoding["model_type"] == model_type
    assert [layer["pairing"] for layer in encoding["layers"]] == ["adjacent pairs (interleaved)"]


@pytest.mark.parametrize(
    ("arch", "kind"), [("gpt2", "learned"), ("jais", "ALiBi"), ("t5", "T5"), ("mamba", "no rotary")]
)
def test_gguf_of_a_model_without_rope_is_not_read_as_default_rope(tmp_path, arch, kind):
    # llama.cpp's LLAMA_ROPE_TYPE_NONE architectures: pecli took the unknown name for default RoPE, base 10000
    path = write_gguf(tmp_path / "m.gguf", arch)
    shown = run_in_process("info", path)
    assert shown.code == 0, shown.stderr
    assert "rope" not in shown.out, shown.out  # the file's tensors only: it sets no rotary settings
    result = run_in_process("generate", "--from-config", path, "--len", "4", "-o", str(tmp_path / "t.safetensors"))
    assert_clean_error(result, 2, f"is a {arch} model", "without RoPE", kind)
    assert not (tmp_path / "t.safetensors").exists()


@pytest.mark.parametrize("base", [1.0, 1e-30, 0.5])
def test_gguf_base_of_one_or_less_is_named_by_its_gguf_key(tmp_path, base):
    # the message named rope_parameters.rope_theta, a config key the .gguf does not have
    path = write_gguf(tmp_path / "m.gguf", rope__freq_base=(_F32, struct.pack("<f", base)))
    result = run_in_process("generate", "--from-config", path, "--len", "4", "-o", str(tmp_path / "t.safetensors"))
    assert_clean_error(result, 2, "llama.rope.freq_base", "greater than 1")
    assert "rope_theta" not in result.stderr
    assert not (tmp_path / "t.safetensors").exists()


def test_gguf_longrope_without_its_factor_tensors_names_the_tensors(tmp_path):
    # the message was "short_factor: expected a list of numbers, got None": a config key the file does not have
    path = write_gguf(tmp_path / "m.gguf", rope__scaling__type=(_STR, _text("longrope")))
    result = run_in_process("generate", "--from-config", path, "--len", "4", "-o", str(tmp_path / "t.safetensors"))
    assert_clean_error(result, 2, "llama.rope.scaling.type longrope", "rope_factors_long", "rope_factors_short")
    assert "short_factor" not in result.stderr
