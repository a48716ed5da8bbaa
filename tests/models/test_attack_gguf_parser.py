"""Attack round on pecli's own GGUF parser (issue 30): hostile files written byte by byte with struct.pack.

Each refusal test failed on the code before its fix (a repeated key read as its last value, exit 0; a
list as rope.scaling.type an internal error, exit 3; a nested array named "unknown type 9"; a FIFO or
a device named "no such GGUF file"). The truncation and reference tests guard what held.

The subject is the error printed and the exit code, so pecli runs in process (the real entry point), except
for the FIFO and the device, which run as real processes: a read that blocks there must not hang the suite.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from pecli.errors import PecliError
from pecli.io.gguf import gguf_settings
from pecli.models.gguf import gguf_config
from tests.conftest import assert_clean_error, require_module, run_in_process, run_pecli


def _text(value: str) -> bytes:
    raw = value.encode()
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, kind: int, payload: bytes) -> bytes:
    return _text(key) + struct.pack("<I", kind) + payload


def _settings(*extra: bytes, without: tuple[str, ...] = ()) -> list[bytes]:
    """A llama model's settings: 4096 context, 256 wide, 4 heads, base 500000, 64 rotated columns."""
    keys = {
        "general.architecture": _kv("general.architecture", 8, _text("llama")),
        "llama.context_length": _kv("llama.context_length", 4, struct.pack("<I", 4096)),
        "llama.embedding_length": _kv("llama.embedding_length", 4, struct.pack("<I", 256)),
        "llama.attention.head_count": _kv("llama.attention.head_count", 4, struct.pack("<I", 4)),
        "llama.rope.freq_base": _kv("llama.rope.freq_base", 6, struct.pack("<f", 500000.0)),
        "llama.rope.dimension_count": _kv("llama.rope.dimension_count", 4, struct.pack("<I", 64)),
    }
    return [value for key, value in keys.items() if key not in without] + list(extra)


def _gguf(path, kvs: list[bytes], table: np.ndarray | None = None):
    """A GGUF v3 file of ``kvs`` and one float32 tensor ``token_embd.weight`` (8 × 4 zeros by default)."""
    table = np.zeros((8, 4), np.float32) if table is None else table
    info = _text("token_embd.weight") + struct.pack("<I2QIQ", 2, table.shape[1], table.shape[0], 0, 0)
    body = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs)) + b"".join(kvs) + info
    path.write_bytes(body + bytes(-len(body) % 32) + table.astype("<f4").tobytes())
    return path


def _generate(path, tmp_path, run=run_in_process):
    out = tmp_path / "out.npy"
    result = run("generate", "--from-config", str(path), "--len", "8", "--part", "cos", "-o", str(out))
    return result, out


def test_a_repeated_metadata_key_is_refused_not_read_as_its_last_value(tmp_path):
    # before: the second llama.rope.freq_base (10000) silently replaced the first (500000), exit 0;
    # llama.cpp and the gguf package refuse such a file
    repeated = _kv("llama.rope.freq_base", 6, struct.pack("<f", 10000.0))
    path = _gguf(tmp_path / "twice.gguf", _settings(repeated))
    result, out = _generate(path, tmp_path)
    assert_clean_error(result, 2, "twice.gguf", "'llama.rope.freq_base' twice")
    assert not out.exists()
    assert_clean_error(run_in_process("info", str(path)), 2, "llama.rope.freq_base' twice")


def test_a_repeated_skipped_key_is_refused_too(tmp_path):
    # a key pecli does not decode (general.*) repeated: the file is as corrupt
    name = _kv("general.name", 8, _text("x"))
    path = _gguf(tmp_path / "names.gguf", _settings(name, name))
    result = run_in_process("plot", str(path), "--width", "40", "--height", "10")
    assert_clean_error(result, 2, "'general.name' twice")


def test_a_list_as_rope_scaling_type_is_a_usage_error_naming_the_key(tmp_path):
    # before: TypeError: unhashable type: 'list', internal error, exit 3
    listed = _kv("llama.rope.scaling.type", 9, struct.pack("<IQ", 8, 1) + _text("yarn"))
    path = _gguf(tmp_path / "listed.gguf", _settings(listed))
    result, out = _generate(path, tmp_path)
    assert_clean_error(result, 2, "listed.gguf", "llama.rope.scaling.type ['yarn'] is not one pecli reads")
    assert not out.exists()


def test_an_array_of_arrays_is_named_as_such_in_a_decoded_key(tmp_path):
    # before: "has unknown type 9" (9 is the array type itself); a skipped key already said "array of arrays"
    nested = _kv("llama.layers", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 1) + struct.pack("<I", 1))
    path = _gguf(tmp_path / "nested.gguf", _settings(nested))
    result, _ = _generate(path, tmp_path)
    assert_clean_error(result, 2, "nested.gguf", "'llama.layers' is an array of arrays")


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX only")
def test_a_fifo_or_a_device_named_gguf_is_named_for_what_it_is(tmp_path):
    # before: "no such GGUF file: 'x.gguf' (check the path)" for a path that exists
    os.mkfifo(tmp_path / "pipe.gguf")
    os.symlink("/dev/zero", tmp_path / "zero.gguf")
    for name, kind in (("pipe.gguf", "is a FIFO"), ("zero.gguf", "is a character device")):
        result, out = _generate(tmp_path / name, tmp_path, run=run_pecli)
        assert_clean_error(result, 2, name, kind)
        assert not out.exists()
    result, _ = _generate(tmp_path / "missing.gguf", tmp_path)
    assert_clean_error(result, 2, "no such GGUF file", "missing.gguf")


def test_every_truncation_of_a_valid_file_is_a_pecli_error(tmp_path):
    path = _gguf(tmp_path / "whole.gguf", _settings())
    assert gguf_config(str(path))["rope_parameters"]["rope_theta"] == 500000.0
    data = path.read_bytes()
    cut = tmp_path / "cut.gguf"
    for end in range(len(data) - 1):  # the last bytes are the tensor's: any cut leaves it short
        cut.write_bytes(data[:end])
        with pytest.raises(PecliError):
            gguf_config(str(cut))


@pytest.mark.parametrize(
    ("adder", "value"),
    [("add_uint8", 64), ("add_int16", 64), ("add_uint32", 64), ("add_int64", 64), ("add_uint64", 64)],
)
def test_the_rope_keys_read_as_the_gguf_package_reads_them(tmp_path, adder, value):
    gguf = require_module("gguf")
    path = str(tmp_path / "ref.gguf")
    writer = gguf.GGUFWriter(path, "phi3")
    writer.add_uint32("phi3.embedding_length", 256)
    writer.add_uint32("phi3.attention.head_count", 4)
    getattr(writer, adder)("phi3.rope.dimension_count", value)
    writer.add_float64("phi3.rope.freq_base", 123456.789)
    writer.add_string("phi3.rope.scaling.type", "yarn")
    writer.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(50)])
    writer.add_tensor("rope_factors_long.weight", np.linspace(1, 4, 32).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    reference = {field.name: field.contents() for field in gguf.GGUFReader(path).fields.values()}
    with open(path, "rb") as handle:
        tensors, ours = gguf_settings(handle, path, os.path.getsize(path), lambda key: key.startswith("phi3."))
        factors = tensors["rope_factors_long.weight"].load().tolist()
    assert ours == {key: value for key, value in reference.items() if key.startswith("phi3.")}
    assert ours["phi3.rope.freq_base"] == 123456.789 and ours["phi3.rope.dimension_count"] == 64
    assert factors == pytest.approx(np.linspace(1, 4, 32).tolist())
