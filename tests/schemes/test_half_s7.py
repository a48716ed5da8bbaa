"""Half-precision rounding straight into a table's rows (issue 32): the same bits as one rounding."""

import ml_dtypes
import numpy as np
import pytest

import pecli
from pecli.dtypes import half_bits
from tests.schemes.test_dtypes_rounding import _bfloat16_bits_from_float64, _near_ties


def _values() -> np.ndarray:
    rng = np.random.default_rng(11)
    values = np.concatenate([_near_ties(rng, 20_000), rng.uniform(-1, 1, 60_000), [0.0, -0.0, 1.0, -1.0]])
    return np.concatenate([values, -values])[: 2 * 64 * 1024].reshape(128, 1024)


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_half_bits_into_out_equals_one_rounding_on_ties_and_near_ties(name):
    values = _values()
    with np.errstate(over="ignore"):  # beyond float16's range: inf, as one rounding gives it
        expected = (
            _bfloat16_bits_from_float64(values) if name == "bfloat16" else values.astype(np.float16).view(np.uint16)
        )
    out = np.full(values.shape, 0xFFFF, dtype=np.uint16)
    assert half_bits(values, name, out=out) is out
    assert np.array_equal(out, expected)
    assert (out != 0xFFFF).all()
    # ties redone by index: a strided input and a strided target give the same bits
    wide = np.empty((128, 2048))
    wide[:, ::2] = values
    target = np.zeros((128, 2048), dtype=np.uint16)
    half_bits(wide[:, ::2], name, out=target[:, 1::2])
    assert np.array_equal(target[:, 1::2], expected) and not target[:, ::2].any()
    assert np.array_equal(half_bits(wide[:, ::2], name), expected)


def test_bfloat16_ties_are_many_in_one_block_and_all_redone_from_float64():
    """Every float32 halfway value, each just above, just below or exactly halfway in float64."""
    ties = (np.arange(0x0080, 0x7F00, dtype=np.uint32) << 16 | 0x8000).view(np.float32).astype(np.float64)
    values = np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, 0)])
    values = np.concatenate([values, -values])
    out = np.empty(values.shape, dtype=np.uint16)
    half_bits(values, "bfloat16", out=out)
    assert np.array_equal(out, _bfloat16_bits_from_float64(values))
    assert out[0] == 0x0080 and out[len(ties)] == 0x0081 and out[2 * len(ties)] == 0x0080  # 0x00808000: even below


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_encode_half_table_is_its_float64_table_rounded_once(dtype):
    wide = pecli.encode("sinusoidal", 2048, 1024, dtype="float64")
    table = pecli.encode("sinusoidal", 2048, 1024, dtype=dtype)
    kind = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    expected = _bfloat16_bits_from_float64(wide) if dtype == "bfloat16" else wide.astype(kind).view(np.uint16)
    assert np.array_equal(np.asarray(table).view(np.uint16), expected)
