"""An odd rotary width as transformers computes it (issue 29): ``rotary_dim`` R gives ⌈R/2⌉ frequencies
``base^(−arange(0, R, 2)/R)`` turning 2⌈R/2⌉ columns; R unset keeps every table as it was."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pecli.errors import ParameterError
from pecli.schemes.rope import rope_metadata, rope_table

SCALINGS = {
    "none": {},
    "linear": {"factor": 2.0},
    "dynamic": {"factor": 2.0, "original_max_position": 8},
    "yarn": {"factor": 4.0, "original_max_position": 8},
    "llama3": {"factor": 8.0, "original_max_position": 8},
    "longrope": {"original_max_position": 8, "short_factor": "1,1.5,2,3", "long_factor": "2,3,4,5"},
}


@pytest.mark.parametrize(
    ("scaling", "layout", "part", "arithmetic"),
    list(itertools.product(SCALINGS, ("half", "interleaved"), ("cos", "sin", "angle"), (None, "float32"))),
)
def test_an_even_rotary_dim_is_bit_identical_to_the_partial_factor_and_the_default(scaling, layout, part, arithmetic):
    common = dict(layout=layout, part=part, scaling=scaling, arithmetic=arithmetic, offset=5, dtype="float64")
    whole = rope_table(12, 8, **common, **SCALINGS[scaling])
    assert np.array_equal(rope_table(12, 8, rotary_dim=8, **common, **SCALINGS[scaling]), whole)
    half = rope_table(12, 16, partial_rotary_factor=0.5, **common, **SCALINGS[scaling])
    assert np.array_equal(rope_table(12, 16, rotary_dim=8, **common, **SCALINGS[scaling]), half)
    assert np.array_equal(
        rope_table(12, 16, rotary_dim=8, partial_rotary_factor=0.5, **common, **SCALINGS[scaling]), half
    )


def _hf_frequencies(width, base=10000.0):
    return 1.0 / base ** (np.arange(0, width, 2) / width)  # transformers' arange(0, dim, 2) / dim


def test_odd_rotary_dim_gives_ceil_half_frequencies_over_the_odd_width():
    angle = rope_table(3, 42, part="angle", rotary_dim=21, dtype="float64")
    freqs = _hf_frequencies(21)
    assert freqs.shape == (11,)
    np.testing.assert_allclose(angle[1, :11], freqs, rtol=1e-13)
    np.testing.assert_allclose(angle[2, 11:22], 2 * freqs, rtol=1e-13)  # cat(freqs, freqs): 22 columns
    assert angle[:, 22:].tolist() == [[0.0] * 20] * 3
    cos = rope_table(3, 42, part="cos", rotary_dim=21, dtype="float64")
    assert cos[:, 22:].tolist() == [[1.0] * 20] * 3
    pairs = rope_table(3, 22, part="angle", rotary_dim=21, layout="interleaved", dtype="float64")
    np.testing.assert_allclose(pairs[1, 0::2], freqs, rtol=1e-13)
    np.testing.assert_allclose(pairs[1, 1::2], freqs, rtol=1e-13)


def test_odd_rotary_dim_through_linear_dynamic_llama3_longrope():
    freqs = _hf_frequencies(21)
    linear = rope_table(2, 22, part="angle", rotary_dim=21, scaling="linear", factor=4.0, dtype="float64")
    np.testing.assert_allclose(linear[1, :11], freqs / 4, rtol=1e-13)
    # dynamic NTK: base · (factor·L/L0 − (factor − 1))^(R/(R − 2)), with L = 16 positions past L0 = 8
    dynamic = rope_table(
        16, 22, part="angle", rotary_dim=21, scaling="dynamic", factor=2.0, original_max_position=8, dtype="float64"
    )
    ntk = 10000.0 * (2.0 * 16 / 8 - 1.0) ** (21 / 19)
    np.testing.assert_allclose(dynamic[1, :11], _hf_frequencies(21, ntk), rtol=1e-13)
    meta = rope_metadata(16, 22, scaling="dynamic", factor=2.0, original_max_position=8, rotary_dim=21)
    assert math.isclose(float(meta["effective_base"]), ntk, rel_tol=1e-12)
    short = ",".join(str(1 + k) for k in range(11))
    longrope = rope_table(
        2,
        22,
        part="angle",
        rotary_dim=21,
        scaling="longrope",
        original_max_position=8,
        short_factor=short,
        long_factor=short,
        dtype="float64",
    )
    np.testing.assert_allclose(longrope[1, :11], freqs / np.arange(1, 12), rtol=1e-13)
    llama3 = rope_table(
        2, 22, part="angle", rotary_dim=21, scaling="llama3", factor=8.0, original_max_position=8, dtype="float64"
    )
    wavelengths = 2 * math.pi / freqs
    assert np.allclose(llama3[1, :11][wavelengths > 8], freqs[wavelengths > 8] / 8, rtol=1e-13)
    assert np.allclose(llama3[1, :11][wavelengths < 2], freqs[wavelengths < 2], rtol=1e-13)
    f32 = rope_table(2, 22, part="angle", rotary_dim=21, arithmetic="float32", dtype="float64")
    np.testing.assert_allclose(f32[1, :11], freqs, rtol=1e-6)  # float32 steps


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"dim": 42, "rotary_dim": 21, "scaling": "yarn", "factor": 2.0, "original_max_position": 4},
            "scaling=yarn cannot take an odd rotary width (21)",
        ),
        (
            {"dim": 15, "rotary_dim": 15},
            "rotary_dim=15 turns 16 columns (8 frequencies over 15); a head of dim=15 cannot hold them",
        ),
        (
            {"dim": 16, "rotary_dim": 5, "partial_rotary_factor": 0.5},
            "rotary_dim=5 contradicts partial_rotary_factor=0.5, which rotates int(16·0.5) = 8 columns",
        ),
        (
            {"dim": 16, "rotary_dim": 5, "scaling": "proportional", "factor": 1.0},
            "rotary_dim does not apply to scaling=proportional",
        ),
        ({"dim": 16, "rotary_dim": 1}, "needs at least 2"),
    ],
)
def test_what_transformers_cannot_run_is_refused(params, message):
    with pytest.raises(ParameterError, match=None) as caught:
        rope_table(4, **params)
    assert message in str(caught.value)
