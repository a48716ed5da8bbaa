"""Each format module of pecli.io: its reader gives back, bit for bit, what its writer wrote
(streamed in several chunks, bfloat16 included); and the one check of what a format can hold."""

from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pecli.errors import ParameterError, TableFileError
from pecli.io import check_format_holds
from pecli.io.npy import npy_entries, npy_pieces
from pecli.io.safetensors import safetensors_entries, safetensors_pieces
from pecli.io.tensor import Tensor
from pecli.io.text import text_pieces
from tests.conftest import require_module

NUMPY_DTYPES = ["float64", "float32", "float16", "int64", "int16", "uint8", "bool"]
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)


def _bits(array: np.ndarray) -> np.ndarray:
    """The raw bytes of ``array``: equal bits, NaN payloads and -0.0 included."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


@st.composite
def arrays(draw, dtypes=NUMPY_DTYPES):
    """Any array of the dtypes (every bit pattern: NaN, inf, -0.0, subnormals), bfloat16 as its raw bits."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes)
    if dtype == "bfloat16":
        bits = draw(hnp.arrays(np.uint16, shape))
        return bits.view(ml_dtypes.bfloat16)
    if dtype == "bool":
        return draw(hnp.arrays(np.bool_, shape))
    width = np.dtype(dtype).itemsize
    bits = draw(hnp.arrays(np.dtype(f"u{width}"), shape))
    return bits.view(dtype)


def _streamed(array: np.ndarray, pieces: int) -> Tensor:
    """``array`` as a tensor whose rows come in ``pieces`` chunks, as a large table streams."""
    name = "bfloat16" if array.dtype == ml_dtypes.bfloat16 else array.dtype.name
    return Tensor(array.shape, name, lambda: np.array_split(array, pieces) if array.ndim else [array])


def _assert_widened_bfloat16(loaded: np.ndarray, written: np.ndarray) -> None:
    """numpy has no bfloat16: readers widen it to float32, which keeps the 16 bits as the high half."""
    assert loaded.dtype == np.float32
    widened = loaded.view(np.uint32)
    np.testing.assert_array_equal(widened >> 16, written.view(np.uint16).astype(np.uint32))
    assert not (widened & 0xFFFF).any()


@settings(max_examples=60, deadline=None)
@given(array=arrays(), pieces=st.integers(1, 4))
def test_npy_reader_reads_back_what_the_writer_wrote(array, pieces):
    data = b"".join(npy_pieces(_streamed(array, pieces)))
    np.testing.assert_array_equal(_bits(np.load(io.BytesIO(data))), _bits(array))  # numpy agrees
    entries, metadata = npy_entries(io.BytesIO(data), "<stream>", len(data))
    (entry,) = entries.values()
    assert (entry.shape, entry.dtype, metadata) == (array.shape, array.dtype.name, {})
    loaded = entry.load()
    assert loaded.dtype == array.dtype and loaded.shape == array.shape
    np.testing.assert_array_equal(_bits(loaded), _bits(array))


@settings(max_examples=60, deadline=None)
@given(
    tensors=st.dictionaries(
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=8).filter(lambda k: k != "__metadata__"),
        arrays([*NUMPY_DTYPES, "bfloat16"]),
        min_size=1,
        max_size=3,
    ),
    metadata=st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
    pieces=st.integers(1, 3),
)
def test_safetensors_reader_reads_back_what_the_writer_wrote(tensors, metadata, pieces):
    data = b"".join(safetensors_pieces({k: _streamed(v, pieces) for k, v in tensors.items()}, metadata))
    entries, read_metadata = safetensors_entries(io.BytesIO(data), "<stream>", len(data))
    assert read_metadata == metadata and sorted(entries) == sorted(tensors)
    for key, array in tensors.items():
        loaded = entries[key].load()
        assert entries[key].shape == loaded.shape == array.shape
        if array.dtype == ml_dtypes.bfloat16:
            assert entries[key].dtype == "bfloat16"
            _assert_widened_bfloat16(loaded, array)
        else:
            assert entries[key].dtype == loaded.dtype.name == array.dtype.name
            np.testing.assert_array_equal(_bits(loaded), _bits(array))


def test_safetensors_bytes_equal_the_reference_writer():
    """Byte for byte what safetensors.numpy.save writes for the same tensors and metadata."""
    from safetensors.numpy import save

    tensors = {"b": np.arange(6, dtype=np.float16).reshape(2, 3), "a": np.eye(3, dtype=np.float64)}
    ours = b"".join(safetensors_pieces({k: _streamed(v, 2) for k, v in tensors.items()}, {"scheme": "x"}))
    assert ours == save(tensors, metadata={"scheme": "x"})


@settings(max_examples=25, deadline=None)
@given(
    tensors=st.dictionaries(
        st.sampled_from(["pe", "cos", "sin", "model.pos_embed"]),
        arrays(["float64", "float32", "float16", "int64", "int16", "uint8", "bool", "bfloat16"]),
        min_size=1,
        max_size=3,
    )
)
def test_pt_reader_reads_back_what_the_writer_wrote(tensors):
    require_module("torch")
    from pecli.io.pt import pt_bytes, pt_entries

    data = pt_bytes({k: _streamed(v, 2) for k, v in tensors.items()})
    entries, metadata = pt_entries(io.BytesIO(data), "<stream>", len(data))
    assert metadata == {} and sorted(entries) == sorted(tensors)
    for key, array in tensors.items():
        loaded = entries[key].load()
        assert entries[key].shape == loaded.shape == array.shape
        if array.dtype == ml_dtypes.bfloat16:
            assert entries[key].dtype == "bfloat16"
            _assert_widened_bfloat16(loaded, array)
        else:
            assert entries[key].dtype == loaded.dtype.name == array.dtype.name
            np.testing.assert_array_equal(_bits(loaded), _bits(array))


@settings(max_examples=60, deadline=None)
@given(
    array=st.sampled_from(["float64", "float32", "float16"]).flatmap(
        lambda dtype: hnp.arrays(
            dtype,
            hnp.array_shapes(min_dims=2, max_dims=2, max_side=6),
            elements={"allow_nan": False, "allow_infinity": False},
        )
    ),
    delimiter=st.sampled_from([",", "\t"]),
    pieces=st.integers(1, 3),
)
def test_text_values_read_back_exactly(array, delimiter, pieces):
    """pecli reads no text tables; numpy's loadtxt gets every finite value back exactly (-0.0 too)."""
    text = b"".join(text_pieces(_streamed(array, pieces), delimiter)).decode()
    assert text.count("\n") == len(array)
    loaded = np.loadtxt(io.StringIO(text), delimiter=delimiter, dtype=array.dtype, ndmin=2)
    np.testing.assert_array_equal(_bits(loaded), _bits(array))


@pytest.mark.parametrize(
    ("fmt", "dtypes", "words"),
    [
        ("npy", {"cos": "float32", "sin": "float32"}, "npy holds one tensor, but this table has 2: cos, sin"),
        ("tsv", {}, "tsv holds one tensor, but this table has 0"),
        ("csv", {"pe": "bfloat16"}, "csv cannot store bfloat16"),
        ("npy", {"pe": "bfloat16"}, "npy cannot store bfloat16"),
        ("safetensors", {"": "float32"}, "needs a non-empty name"),
        ("pt", {"__metadata__": "float32"}, "'__metadata__' is reserved"),
        ("safetensors", {"pe": "complex64"}, "safetensors cannot hold dtype complex64"),
        ("json", {"pe": "float32"}, "unknown format 'json'"),
    ],
)
def test_check_format_holds_refuses_what_a_format_cannot_hold(fmt, dtypes, words):
    with pytest.raises(ParameterError, match=words):
        check_format_holds(fmt, dtypes)


@pytest.mark.parametrize("fmt", ["npy", "csv", "tsv", "safetensors", "pt"])
def test_check_format_holds_accepts_one_float32_tensor_everywhere(fmt):
    check_format_holds(fmt, {"pe": "float32"})
    check_format_holds(fmt, {"pe": "float64"})


def test_check_format_holds_words_the_one_tensor_error_for_the_caller():
    with pytest.raises(ParameterError) as caught:
        check_format_holds("npy", {"cos": "float32", "sin": "float32"}, what="rope writes", pick="pick cos or sin")
    assert str(caught.value) == (
        "npy holds one tensor, but rope writes 2: cos, sin (write .safetensors or .pt, or pick cos or sin)"
    )


@pytest.mark.parametrize("header_length", [0x280, 0x380, 0x480, 0x580])
def test_a_safetensors_header_whose_length_starts_like_a_pickle_reads_as_safetensors(tmp_path, header_length):
    """Its first bytes are 80 02…80 05, torch's legacy pickle opening: the JSON after them decides."""
    import json
    import struct

    from pecli.io import read_table

    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    header = json.dumps({"pe": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, values.nbytes]}}).encode()
    header += b" " * (header_length - len(header))
    path = tmp_path / "padded.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + values.tobytes())
    assert path.read_bytes()[:2] == bytes([0x80, header_length >> 8])
    np.testing.assert_array_equal(read_table(str(path)).array, values)


def test_what_counts_as_a_real_table_does_not_depend_on_ml_dtypes_being_imported(tmp_path):
    """ml_dtypes (imported by this module) teaches numpy its float8 names; a float8 .pt tensor is still
    listed and refused as a table, as in a fresh process, instead of reaching torch's .numpy() (which
    raised "Got unsupported ScalarType Float8_e5m2")."""
    torch = require_module("torch")
    from pecli.io import is_real_dtype, read_table

    assert np.dtype("float8_e5m2") == np.dtype(ml_dtypes.float8_e5m2)  # the state that misled the check
    assert not is_real_dtype("float8_e5m2") and not is_real_dtype("float8_e4m3fn") and not is_real_dtype("int4")
    assert is_real_dtype("bfloat16") and is_real_dtype("float16") and is_real_dtype("uint64")
    torch.save({"e5": torch.zeros(2, 2).to(torch.float8_e5m2)}, tmp_path / "odd.pt")
    with pytest.raises(TableFileError, match="float8_e5m2"):
        read_table(str(tmp_path / "odd.pt"))
