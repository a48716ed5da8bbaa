"""``pecli.encode(..., out=array)``: the caller's buffer filled in place, equal to the allocated table."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import pecli
from pecli.dtypes import numpy_dtype
from pecli.errors import ParameterError
from tests.conftest import require_module

CASES = [
    ("sinusoidal", {}, "float32"),
    ("sinusoidal", {"layout": "split", "freq_shift": 1.0}, "float64"),
    ("sinusoidal", {}, "float16"),
    ("sinusoidal", {}, "bfloat16"),
    ("rope", {"part": "sin"}, "float32"),  # no out parameter of its own: filled through row chunks
    ("timestep", {}, "float32"),
]


@pytest.mark.parametrize(("scheme", "params", "dtype"), CASES)
def test_out_equals_the_allocated_table_bit_for_bit(scheme, params, dtype):
    expected = pecli.encode(scheme, 300, 24, dtype=dtype, **params)
    buffer = np.full(expected.shape, np.nan, dtype=numpy_dtype(dtype))
    result = pecli.encode(scheme, 300, 24, dtype=dtype, out=buffer, **params)
    assert result is buffer
    np.testing.assert_array_equal(buffer.view(np.uint8), expected.view(np.uint8))


def test_out_with_rows_fills_only_those_rows():
    buffer = np.empty((70, 16), np.float32)
    pecli.encode("sinusoidal", 200, 16, rows=range(100, 170), out=buffer)
    np.testing.assert_array_equal(buffer, pecli.encode("sinusoidal", 200, 16)[100:170])


def test_out_fills_a_torch_tensor_through_its_numpy_view():
    torch = require_module("torch")
    tensor = torch.zeros(64, 32)
    pecli.encode("sinusoidal", 64, 32, out=tensor.numpy())
    angles = np.outer(np.arange(64), 10000.0 ** (-np.arange(0, 32, 2) / 32))
    assert np.abs(tensor[:, 0::2].double().numpy() - np.sin(angles)).max() < 1e-6


def test_out_allocates_no_table():
    buffer = np.empty((16384, 512), np.float32)  # 32 MiB; the engine's temporaries are a few MiB
    tracemalloc.start()
    try:
        pecli.encode("sinusoidal", 16384, 512, out=buffer)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < buffer.nbytes // 4


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.empty((10, 9), np.float32), "out has shape (10, 9), but the table's is (10, 8)"),
        (np.empty((10, 8), np.float64), "out has dtype float64, but the table's is float32"),
        (np.empty((8, 10), np.float32).T, "out must be C-contiguous and writeable"),
        ([[0.0] * 8] * 10, "out must be a numpy array, got list"),
    ],
)
def test_a_wrong_out_is_refused_naming_out(out, message):
    with pytest.raises(ParameterError) as error:
        pecli.encode("sinusoidal", 10, 8, out=out)
    assert str(error.value).startswith(message)
    assert "--" not in str(error.value)


def test_a_read_only_out_is_refused():
    buffer = np.zeros((10, 8), np.float32)
    buffer.flags.writeable = False
    with pytest.raises(ParameterError, match="out must be C-contiguous and writeable"):
        pecli.encode("sinusoidal", 10, 8, out=buffer)
