"""The sinusoidal family: the issue's reference vectors, every preset against its source, accuracy."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.schemes.presets import PRESETS
from tests import references

F64 = {"dtype": "float64"}


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("vaswani", [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004]),
        ("pytorch-tutorial", [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004]),
        ("distilbert", [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004]),
        ("marian", [0.8414709848, 0.0099998333, 0.5403023059, 0.9999500004]),
        ("tensor2tensor", [0.8414709848, 0.0000999999998, 0.5403023059, 0.999999995]),
        ("diffusers", [0.8414709848, 0.0000999999998, 0.5403023059, 0.999999995]),
        ("guided-diffusion", [0.5403023059, 0.9999500004, 0.8414709848, 0.0099998333]),
    ],
)
def test_reference_vectors_at_position_1(preset, expected):
    table = pecli.encode("sinusoidal", 2, 4, preset=preset, **F64)
    np.testing.assert_allclose(table[1], expected, atol=1e-10)


def test_fairseq_first_real_token_is_position_2():
    table = pecli.encode(None, 3, 4, preset="fairseq", **F64)
    np.testing.assert_allclose(table[0], [0.9092974268, 0.00019999999867, -0.4161468365, 0.99999998], atol=1e-10)


def test_vaswani_odd_dimension_ends_with_a_sine():
    table = pecli.encode("sinusoidal", 2, 5, **F64)
    np.testing.assert_allclose(
        table[1], [0.8414709848, 0.5403023059, 0.0251162229, 0.9996845379, 0.0006309573], atol=1e-10
    )


@pytest.mark.parametrize("d", [1, 2, 3, 4, 7, 8, 33, 64])
def test_vaswani_matches_the_paper_formula(d):
    np.testing.assert_allclose(pecli.sinusoidal_table(50, d, **F64), references.vaswani(range(50), d), atol=1e-12)


@pytest.mark.parametrize(
    ("preset", "reference", "dims"),
    [
        ("pytorch-tutorial", references.pytorch_tutorial, [2, 4, 16, 128]),
        ("distilbert", references.xlm_distilbert, [1, 2, 3, 5, 16, 33]),
        ("marian", references.marian, [1, 2, 3, 5, 16, 33]),
        ("tensor2tensor", references.tensor2tensor, [4, 5, 16, 33]),
        ("fairseq", references.fairseq, [4, 5, 16, 33]),
        ("guided-diffusion", lambda n, d: references.guided_diffusion(np.arange(n), d), [2, 3, 4, 5, 16, 33]),
        ("diffusers", lambda n, d: references.diffusers(np.arange(n), d), [4, 5, 16, 33]),
    ],
)
def test_every_preset_reproduces_its_source(preset, reference, dims):
    for d in dims:
        np.testing.assert_allclose(
            pecli.encode("sinusoidal", 300, d, preset=preset, **F64), reference(300, d), atol=1e-11, err_msg=f"d={d}"
        )


def test_every_preset_is_tested():
    tested = {
        "vaswani",
        "pytorch-tutorial",
        "distilbert",
        "marian",
        "tensor2tensor",
        "fairseq",
        "guided-diffusion",
        "diffusers",
    }
    assert {preset.name for preset in PRESETS.values() if preset.scheme == "sinusoidal"} <= tested


def test_options_equal_presets():
    split = pecli.encode("sinusoidal", 20, 8, layout="split", freq_shift=1, **F64)
    np.testing.assert_array_equal(split, pecli.encode(None, 20, 8, preset="tensor2tensor", **F64))
    flipped = pecli.encode("sinusoidal", 20, 8, layout="split", freq_shift=0, cos_first=True, **F64)
    np.testing.assert_array_equal(flipped, pecli.encode("sinusoidal", 20, 8, preset="guided-diffusion", **F64))


def test_preset_values_can_be_overridden():
    shifted = pecli.encode(None, 5, 8, preset="fairseq", offset=0, **F64)
    np.testing.assert_array_equal(shifted, pecli.encode(None, 5, 8, preset="tensor2tensor", **F64))


def test_offset_shifts_rows():
    table = pecli.encode("sinusoidal", 10, 6, **F64)
    np.testing.assert_array_equal(pecli.encode("sinusoidal", 7, 6, offset=3, **F64), table[3:])


def test_split_is_a_column_permutation_of_interleaved_for_even_d():
    interleaved = pecli.encode("sinusoidal", 40, 16, **F64)
    split = pecli.encode("sinusoidal", 40, 16, layout="split", **F64)
    np.testing.assert_array_equal(split, np.concatenate([interleaved[:, 0::2], interleaved[:, 1::2]], axis=1))


def test_cos_first_interleaved_swaps_pairs():
    table = pecli.encode("sinusoidal", 30, 8, **F64)
    swapped = pecli.encode("sinusoidal", 30, 8, cos_first=True, **F64)
    np.testing.assert_array_equal(swapped[:, 0::2], table[:, 1::2])
    np.testing.assert_array_equal(swapped[:, 1::2], table[:, 0::2])


def test_base_changes_frequencies():
    table = pecli.encode("sinusoidal", 3, 4, base=100.0, **F64)
    np.testing.assert_allclose(table[1], [np.sin(1), np.cos(1), np.sin(0.1), np.cos(0.1)], atol=1e-14)


def test_rows_are_the_same_as_in_the_whole_table():
    whole = pecli.encode("sinusoidal", 5000, 24)
    np.testing.assert_array_equal(pecli.encode("sinusoidal", 5000, 24, rows=range(1234, 4321)), whole[1234:4321])


@pytest.mark.parametrize("layout", ["interleaved", "split"])
def test_float32_within_1e6_of_float64_formula_near_2_to_20(layout):
    length, d = 2**20, 512
    rows = range(length - 300, length)
    table = pecli.encode("sinusoidal", length, d, rows=rows, layout=layout)
    assert table.dtype == np.float32
    positions = np.arange(rows.start, rows.stop, dtype=np.float64)
    exact = references.vaswani(positions, d)
    if layout == "split":
        exact = np.concatenate([exact[:, 0::2], exact[:, 1::2]], axis=1)
    error = np.abs(table.astype(np.float64) - exact).max()
    assert error <= 1e-6
    # rounding once: every value is the float32 nearest to the float64 formula (within 1 ulp)
    assert np.all(np.abs(table - exact.astype(np.float32)) <= np.spacing(np.float32(1.0)))


def test_float32_angle_arithmetic_would_miss_the_bound():
    """Why pecli computes angles in float64: the tutorial's float32 p·ω is off by ~1e-2 near 2^20."""
    positions = np.arange(2**20 - 300, 2**20, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, 512, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / 512))
    float32_way = np.sin(positions * div_term)
    exact = references.vaswani(np.arange(2**20 - 300, 2**20), 512)[:, 0::2]
    assert np.abs(float32_way - exact).max() > 1e-3
    ours = pecli.encode("sinusoidal", 2**20, 512, rows=range(2**20 - 300, 2**20))[:, 0::2]
    assert np.abs(ours - exact).max() < 1e-6


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_dtypes_round_once_from_float64(dtype):
    exact = pecli.encode("sinusoidal", 300, 16, dtype="float64")
    table = pecli.encode("sinusoidal", 300, 16, dtype=dtype)
    assert table.dtype.name == dtype
    spacing = 2.0**-11 if dtype == "float16" else 2.0**-8  # relative half-ulp
    assert np.all(np.abs(table.astype(np.float64) - exact) <= spacing * np.maximum(np.abs(exact), 2.0**-14) + 1e-12)


def test_bfloat16_rounding_is_single():
    from pecli.dtypes import round_to

    # 1 + 2^-8 + tiny lies just above the halfway point between 1 and 1 + 2^-7: it must round up,
    # while rounding via float32 first would land on the tie and round to even (down).
    value = np.array([1.0 + 2.0**-8 + 1e-12, -(1.0 + 2.0**-8 + 1e-12), 1.0 + 2.0**-8, 0.0, 3.0])
    np.testing.assert_array_equal(
        round_to(value, "bfloat16").astype(np.float64), [1.0078125, -1.0078125, 1.0, 0.0, 3.0]
    )
