"""Table files: every format round-trips, metadata, determinism, atomic writes, safe reads."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import struct

import numpy as np
import pytest

import pecli
from pecli.errors import OutputError, ParameterError, TableFileError
from pecli.io import TEMP_MARKER, Tensor, read_table, read_tensors, write_tensors
from pecli.schemes.spec import TableSpec
from tests.conftest import require_module


def _spec(**kw):
    return TableSpec.resolve(kw.pop("scheme", None), kw.pop("preset", None), kw, length=64, dim=12)


def _write(path, array, fmt, metadata=None):
    write_tensors(str(path), {"pe": Tensor.from_array(array)}, fmt=fmt, metadata=metadata)


@pytest.mark.parametrize("fmt", ["npy", "safetensors", "pt"])
def test_binary_formats_round_trip(tmp_path, fmt):
    array = pecli.encode("sinusoidal", 33, 10)
    path = tmp_path / f"pe.{fmt}"
    _write(path, array, fmt)
    np.testing.assert_array_equal(read_table(str(path)).array, array)


def test_npy_loads_with_numpy_and_safetensors_with_safetensors(tmp_path):
    from safetensors.numpy import load_file

    array = pecli.encode("sinusoidal", 20, 6)
    _write(tmp_path / "pe.npy", array, "npy")
    np.testing.assert_array_equal(np.load(tmp_path / "pe.npy"), array)
    _write(tmp_path / "pe.safetensors", array, "safetensors", {"scheme": "sinusoidal"})
    np.testing.assert_array_equal(load_file(tmp_path / "pe.safetensors")["pe"], array)


def test_pt_loads_with_torch_weights_only(tmp_path):
    torch = require_module("torch")
    array = pecli.encode("sinusoidal", 20, 6)
    _write(tmp_path / "pe.pt", array, "pt")
    state = torch.load(tmp_path / "pe.pt", weights_only=True)
    np.testing.assert_array_equal(state["pe"].numpy(), array)


@pytest.mark.parametrize(("fmt", "separator"), [("csv", ","), ("tsv", "\t")])
def test_text_formats_round_trip_float32_exactly(tmp_path, fmt, separator):
    array = pecli.encode("sinusoidal", 9, 5)
    _write(tmp_path / f"pe.{fmt}", array, fmt)
    text = (tmp_path / f"pe.{fmt}").read_text()
    assert text.splitlines()[0].count(separator) == 4
    np.testing.assert_array_equal(np.loadtxt(io.StringIO(text), delimiter=separator, dtype=np.float32), array)


def test_safetensors_metadata_records_scheme_parameters_dtype_version(tmp_path):
    spec = _spec(preset="fairseq")
    write_tensors(
        str(tmp_path / "f.safetensors"),
        {"pe": Tensor(spec.shape, spec.dtype, spec.chunks)},
        fmt="safetensors",
        metadata=spec.metadata(),
    )
    tensors, metadata = read_tensors(str(tmp_path / "f.safetensors"))
    assert tensors == {"pe": ((64, 12), "float32")}
    assert metadata["scheme"] == "sinusoidal" and metadata["preset"] == "fairseq"
    assert metadata["layout"] == "split" and metadata["offset"] == "2" and metadata["freq_shift"] == "1.0"
    assert metadata["base"] == "10000.0" and metadata["dtype"] == "float32"
    assert metadata["pecli_version"] == pecli.__version__
    assert TableSpec.from_metadata(metadata) == spec


def test_same_table_gives_byte_identical_files(tmp_path):
    digests = set()
    for attempt in range(2):
        spec = _spec(scheme="learned", seed=3)
        path = tmp_path / f"{attempt}.safetensors"
        write_tensors(
            str(path), {"pe": Tensor(spec.shape, spec.dtype, spec.chunks)}, fmt="safetensors", metadata=spec.metadata()
        )
        digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    assert len(digests) == 1


def test_bfloat16_safetensors_is_native(tmp_path):
    from safetensors import safe_open

    table = pecli.encode("sinusoidal", 10, 8, dtype="bfloat16")
    write_tensors(str(tmp_path / "b.safetensors"), {"pe": Tensor.from_array(table)}, fmt="safetensors")
    header_length = struct.unpack("<Q", (tmp_path / "b.safetensors").read_bytes()[:8])[0]
    header = json.loads((tmp_path / "b.safetensors").read_bytes()[8 : 8 + header_length])
    assert header["pe"]["dtype"] == "BF16"
    np.testing.assert_array_equal(read_table(str(tmp_path / "b.safetensors")).array, table.astype(np.float32))
    torch = require_module("torch")
    with safe_open(str(tmp_path / "b.safetensors"), framework="pt") as handle:
        loaded = handle.get_tensor("pe")
    assert loaded.dtype == torch.bfloat16
    np.testing.assert_array_equal(loaded.float().numpy(), table.astype(np.float32))


@pytest.mark.parametrize("fmt", ["npy", "csv"])
def test_bfloat16_refused_where_numpy_cannot_hold_it(tmp_path, fmt):
    table = pecli.encode("sinusoidal", 4, 4, dtype="bfloat16")
    with pytest.raises(ParameterError, match="bfloat16"):
        _write(tmp_path / f"b.{fmt}", table, fmt)
    assert not list(tmp_path.iterdir())


def test_written_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        _write(tmp_path / "pe.safetensors", np.zeros((2, 2), np.float32), "safetensors")
    finally:
        os.umask(old)
    assert (tmp_path / "pe.safetensors").stat().st_mode & 0o777 == 0o644


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "pe.npy"
    target.write_bytes(b"precious")

    def broken_chunks():
        yield np.zeros((1, 4), np.float32)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_tensors(str(target), {"pe": Tensor((2, 4), "float32", broken_chunks)}, fmt="npy")
    assert target.read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["pe.npy"]


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    stale = tmp_path / f".pe.npy{TEMP_MARKER}999999999-abc"
    stale.write_bytes(b"partial")
    _write(tmp_path / "pe.npy", np.zeros((2, 2), np.float32), "npy")
    assert sorted(os.listdir(tmp_path)) == ["pe.npy"]


def test_output_path_errors(tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        _write(tmp_path / "missing" / "pe.npy", np.zeros((1, 1), np.float32), "npy")
    with pytest.raises(OutputError, match="directory"):
        _write(tmp_path, np.zeros((1, 1), np.float32), "npy")


def test_multi_tensor_file_needs_a_key(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    tensors = {
        "embeddings.position_embeddings.weight": Tensor.from_array(np.ones((8, 4), np.float32)),
        "embeddings.word_embeddings.weight": Tensor.from_array(np.zeros((30, 4), np.float32)),
        "embeddings.position_ids": Tensor.from_array(np.arange(8, dtype=np.int64)[None]),
        "pooler.dense.bias": Tensor.from_array(np.zeros(4, np.float32)),
    }
    write_tensors(str(path), tensors, fmt="safetensors", metadata={"format": "pt"})
    with pytest.raises(TableFileError, match="position_embeddings"):
        read_table(str(path))
    with pytest.raises(TableFileError, match=re.escape("did you mean 'embeddings.position_embeddings.weight'")):
        read_table(str(path), key="embeddings.position_embedding.weight")
    np.testing.assert_array_equal(
        read_table(str(path), key="embeddings.position_embeddings.weight").array, np.ones((8, 4))
    )


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "empty"),
        (b"hello world, not a table", "not a .npy"),
        (b"\x93NUMPY\x01\x00", "not a valid .npy"),
        (struct.pack("<Q", 10**12) + b"{", "limit"),
        (struct.pack("<Q", 5000) + b"{}", "truncated"),
        (struct.pack("<Q", 6) + b"[1,2] ", "not a JSON object"),
        (struct.pack("<Q", 2) + b"{x", "corrupt"),
    ],
)
def test_corrupt_files_are_refused(tmp_path, content, match):
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    with pytest.raises(TableFileError, match=match):
        read_table(str(path))


def test_safetensors_shape_must_match_offsets(tmp_path):
    header = json.dumps({"pe": {"dtype": "F32", "shape": [1000000, 1000000], "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "lie.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    with pytest.raises(TableFileError, match="span 16 bytes"):
        read_table(str(path))


def test_truncated_npy_is_refused_before_allocating(tmp_path):
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((1000, 1000), np.float32))
    (tmp_path / "cut.npy").write_bytes(buffer.getvalue()[:5000])
    with pytest.raises(TableFileError, match="truncated"):
        read_table(str(tmp_path / "cut.npy"))


def test_object_npy_is_refused(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(TableFileError, match="objects"):
        read_table(str(tmp_path / "obj.npy"))


def test_pt_that_would_run_code_is_refused_and_runs_nothing(tmp_path):
    torch = require_module("torch")
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    torch.save({"pe": torch.zeros(2, 2), "evil": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(TableFileError, match="weights_only"):
        read_table(str(tmp_path / "evil.pt"))
    assert not marker.exists()


def test_a_header_over_the_safetensors_limit_is_refused_before_any_file_is_written(tmp_path, monkeypatch):
    """pecli never writes a file that its own reader (and the safetensors library) would refuse."""
    import pecli.io.safetensors

    monkeypatch.setattr(pecli.io.safetensors, "MAX_HEADER_BYTES", 4096)
    target = tmp_path / "t.safetensors"
    target.write_bytes(b"previous")
    with pytest.raises(ParameterError, match="over the format's 4096-byte limit"):
        _write(target, np.zeros((2, 2), np.float32), "safetensors", {"timesteps": "1," * 4096})
    assert os.listdir(tmp_path) == ["t.safetensors"] and target.read_bytes() == b"previous"


def test_safetensors_metadata_the_library_refuses_is_refused(tmp_path):
    """The reference reader wants __metadata__ to map strings to strings: pecli agrees, with the reason."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    for metadata in ({"base": 10000}, 0, ["a"]):
        header = json.dumps({"__metadata__": metadata, "pe": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})
        header += " " * (-len(header) % 8)
        path = tmp_path / "m.safetensors"
        path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + bytes(4))
        with pytest.raises(SafetensorError, match="invalid type"):
            load_file(str(path))
        with pytest.raises(TableFileError, match="__metadata__ is not an object of strings"):
            read_table(str(path))
