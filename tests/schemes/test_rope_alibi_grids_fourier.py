"""RoPE, ALiBi, 2-D sin-cos, NeRF/Gaussian Fourier features and CoordConv against their sources' formulas."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.errors import ParameterError
from pecli.schemes.alibi import alibi_slopes
from pecli.schemes.rope import apply_rotary, rope_frequencies, rope_metadata
from pecli.schemes.spec import TableSpec
from tests import references as ref

# ---------------------------------------------------------------------------------------------
# RoPE

Q = np.array([1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("half", [-1.9841106486, 1.9599006675, 2.4623779024, 4.0197996683]),
        ("interleaved", [-1.1426396637, 1.9220755965, 2.9598506679, 4.0297995017]),
    ],
)
def test_rope_rotates_the_reference_vector(layout, expected):
    tables = pecli.encode("rope", 2, 4, dtype="float64", layout=layout)
    rotated = apply_rotary(np.stack([Q, Q]), tables["cos"], tables["sin"], layout)
    np.testing.assert_allclose(rotated[1], expected, atol=5e-11)
    np.testing.assert_allclose(rotated[0], Q, atol=0)  # position 0 is the identity


SCALINGS = [
    ("none", {}, lambda: ref.hf_rope_default(10000.0, 64)),
    ("linear", {"factor": 4.0}, lambda: ref.hf_rope_linear(10000.0, 64, 4.0)),
    (
        "dynamic",
        {"factor": 2.0, "original_max_position": 16},
        lambda: ref.hf_rope_dynamic(10000.0, 64, 2.0, 40, 16)[0],
    ),
    (
        "yarn",
        {"factor": 4.0, "original_max_position": 16, "beta_fast": 8.0, "beta_slow": 0.5},
        lambda: ref.hf_rope_yarn(10000.0, 64, 4.0, 16, 8.0, 0.5)[0],
    ),
    (
        "llama3",
        {"factor": 8.0, "original_max_position": 32, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
        lambda: ref.hf_rope_llama3(10000.0, 64, 8.0, 1.0, 4.0, 32),
    ),
]


@pytest.mark.parametrize(("scaling", "params", "reference"), SCALINGS, ids=[s[0] for s in SCALINGS])
def test_rope_scalings_match_transformers_and_rotate_like_llama_and_meta(scaling, params, reference):
    inv_freq = reference()
    np.testing.assert_allclose(rope_frequencies(64, scaling=scaling, length=40, **params), inv_freq, rtol=1e-14)
    q = np.random.default_rng(0).standard_normal((3, 40, 64))
    positions = np.arange(40)
    for layout, rotate in (("half", ref.llama_rotate), ("interleaved", ref.meta_rotate)):
        tables = pecli.encode("rope", 40, 64, dtype="float64", layout=layout, scaling=scaling, **params)
        np.testing.assert_allclose(
            apply_rotary(q, tables["cos"], tables["sin"], layout), rotate(q, positions, inv_freq), atol=1e-12
        )


def test_rope_check_values_of_the_issue():
    _, base = ref.hf_rope_dynamic(1e4, 128, 2.0, 4096, 2048)
    meta = rope_metadata(4096, 128, scaling="dynamic", factor=2.0, original_max_position=2048)
    assert round(float(meta["effective_base"]), 4) == round(base, 4) == 30527.7367
    yarn = rope_metadata(4096, 128, scaling="yarn", factor=4.0, original_max_position=2048)
    assert round(float(yarn["attention_factor"]), 10) == round(ref.hf_rope_yarn(1e4, 128, 4.0, 2048)[1], 10)
    assert round(float(yarn["attention_factor"]), 10) == 1.1386294361
    plain = rope_frequencies(128, base=5e5)
    llama3 = rope_frequencies(128, base=5e5, scaling="llama3", factor=8.0, original_max_position=8192)
    kept, divided = np.isclose(llama3, plain, rtol=1e-15), np.isclose(llama3, plain / 8, rtol=1e-15)
    assert kept.sum() == 29 and divided.sum() == 29
    blended = ~(kept | divided)
    assert blended.sum() == 6 and np.all((llama3[blended] < plain[blended]) & (llama3[blended] > plain[blended] / 8))
    assert np.all(np.diff(llama3) < 0)  # the blend is monotone: no frequency jumps


def test_rope_attention_factor_multiplies_the_tables_as_hf_does():
    params = {"scaling": "yarn", "factor": 4.0, "original_max_position": 16}
    plain = pecli.encode("rope", 8, 8, dtype="float64", **params)
    scaled = pecli.encode("rope", 8, 8, dtype="float64", apply_attention_factor=True, **params)
    for part in ("cos", "sin"):
        np.testing.assert_allclose(scaled[part], plain[part] * (0.1 * math.log(4.0) + 1.0), rtol=1e-15)


def test_rope_angle_part_and_layout_columns():
    angle = pecli.encode("rope", 5, 6, dtype="float64", part="angle")
    inv_freq = ref.hf_rope_default(10000.0, 6)
    np.testing.assert_allclose(angle, np.outer(np.arange(5), np.concatenate([inv_freq, inv_freq])), rtol=1e-15)
    pairs = pecli.encode("rope", 5, 6, dtype="float64", part="angle", layout="interleaved")
    np.testing.assert_allclose(pairs, np.outer(np.arange(5), np.repeat(inv_freq, 2)), rtol=1e-15)
    np.testing.assert_allclose(pecli.encode("rope", 5, 6, dtype="float64", part="cos"), np.cos(angle), atol=1e-15)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"dim": 5}, "even d"),
        ({"scaling": "ntk"}, "not a valid scaling"),
        ({"scaling": "linear", "beta_fast": 32.0, "factor": 2.0}, "does not take beta_fast"),
        ({"factor": 2.0}, "factor is a parameter of a RoPE scaling, but no scaling is chosen"),
        ({"scaling": "yarn", "factor": 2.0}, "needs original_max_position"),
        ({"scaling": "linear", "factor": -1.0}, "factor"),
        (
            {"scaling": "llama3", "factor": 8.0, "original_max_position": 64, "low_freq_factor": 4.0},
            "greater than low_freq_factor",
        ),
        ({"layout": "split"}, "not a valid layout"),
        ({"part": "tan"}, "not a valid part"),
    ],
)
def test_rope_bad_inputs(params, match):
    dim = params.pop("dim", 8)
    with pytest.raises(ParameterError, match=match):
        pecli.encode("rope", 4, dim, **params)


# ---------------------------------------------------------------------------------------------
# ALiBi


@pytest.mark.parametrize("heads", [1, 2, 3, 5, 8, 12, 16, 20, 33])
def test_alibi_slopes_match_get_slopes(heads):
    # pecli writes exact powers of two; get_slopes multiplies them up, a few ulps away
    np.testing.assert_allclose(alibi_slopes(heads), ref.alibi_get_slopes(heads), rtol=1e-14)


def test_alibi_twelve_heads_and_bias():
    np.testing.assert_allclose(
        pecli.encode("alibi", None, None, heads=12, part="slopes", dtype="float64"),
        2.0 ** -np.array([1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]),
        rtol=1e-15,
    )
    bias = pecli.encode("alibi", 6, None, heads=12, dtype="float64")
    i, j = np.indices((6, 6))
    expected = -np.abs(i - j)[None] * np.array(ref.alibi_get_slopes(12))[:, None, None]
    assert bias.shape == (12, 6, 6)
    np.testing.assert_allclose(bias, expected, rtol=1e-15)
    np.testing.assert_array_equal(pecli.encode("alibi", 6, None, heads=12, head=9, dtype="float64"), bias[9])


@pytest.mark.parametrize(
    ("length", "dim", "params", "match"),
    [
        (4, None, {"heads": 0}, "heads must be a positive integer"),
        (4, None, {"heads": -2}, "heads must be a positive integer"),
        (4, None, {}, "missing heads"),
        (4, None, {"heads": 4, "head": 4}, "head must be in 0..3"),
        (4, 8, {"heads": 4}, "has no dim"),
        (None, None, {"heads": 4}, "missing length"),
        (4, None, {"heads": 4, "head": 1, "part": "slopes"}, "drop head"),
    ],
)
def test_alibi_bad_inputs(length, dim, params, match):
    with pytest.raises(ParameterError, match=match):
        pecli.encode("alibi", length, dim, **params)


# ---------------------------------------------------------------------------------------------
# 2-D sin-cos and CoordConv


@pytest.mark.parametrize(("height", "width"), [(1, 1), (3, 5), (4, 4), (6, 2)])
def test_sincos2d_presets_match_mae_timm_diffusers(height, width):
    grid = f"{height},{width}"
    mae = pecli.encode("sincos2d", None, 16, preset="mae", grid=grid, cls_token=True, dtype="float64")
    np.testing.assert_allclose(mae, ref.mae_2d(16, height, width, cls_token=True), atol=1e-15)
    timm = pecli.encode("sincos2d", None, 16, preset="timm", grid=grid, dtype="float64")
    np.testing.assert_allclose(timm, ref.timm_2d((height, width), 16), atol=1e-15)
    diffusers = pecli.encode("sincos2d", None, 16, preset="diffusers", grid=grid, dtype="float64")
    np.testing.assert_allclose(diffusers, ref.diffusers_2d(16, height, width), atol=1e-14)
    scaled = pecli.encode(
        "sincos2d", None, 16, preset="diffusers", grid=grid, interpolation_scale=2.0, base_size=8.0, dtype="float64"
    )
    np.testing.assert_allclose(scaled, ref.diffusers_2d(16, height, width, 8.0, 2.0), atol=1e-14)


def test_sincos2d_rows_are_tokens_row_major():
    table = pecli.encode("sincos2d", None, 8, grid="2,3", dtype="float64")
    # by-axis: the first half encodes w (column), the second h (row); token 4 is (h=1, w=1)
    np.testing.assert_allclose(table[4, :4], [math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01)])
    np.testing.assert_allclose(table[5, 4:], [math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01)])
    np.testing.assert_array_equal(table[5, :4], table[2, :4])


@pytest.mark.parametrize(("height", "width"), [(2, 2), (3, 5), (1, 4)])
def test_coordconv_matches_add_coords(height, width):
    table = pecli.encode("coordconv", None, 3, grid=f"{height},{width}", dtype="float64")
    if height > 1:
        np.testing.assert_allclose(table, ref.add_coords(height, width, with_r=True), atol=1e-15)
    assert pecli.encode("coordconv", None, None, grid=f"{height},{width}").shape == (height * width, 2)
    assert table.min() >= -1 and table[:, :2].max() <= 1


@pytest.mark.parametrize(
    ("scheme", "length", "dim", "params", "match"),
    [
        ("sincos2d", None, 6, {"grid": "2,2"}, "divisible by 4"),
        ("sincos2d", None, 8, {"grid": "0,3"}, "two positive sides"),
        ("sincos2d", None, 8, {"grid": "3"}, "two positive sides"),
        ("sincos2d", None, 8, {"grid": "a,b"}, "two positive sides"),
        ("sincos2d", None, 8, {"grid": "2,3,4"}, "two positive sides"),
        ("sincos2d", None, 8, {}, "missing grid"),
        ("sincos2d", 5, 8, {"grid": "2,3"}, "does not match grid"),
        ("sincos2d", None, 8, {"grid": "2,3", "layout": "mae"}, "not a valid layout"),
        ("coordconv", None, 4, {"grid": "2,3"}, "dim=2 or dim=3"),
    ],
)
def test_grid_bad_inputs(scheme, length, dim, params, match):
    with pytest.raises(ParameterError, match=match):
        pecli.encode(scheme, length, dim, **params)


# ---------------------------------------------------------------------------------------------
# NeRF and Gaussian Fourier features


@pytest.mark.parametrize("include_input", [True, False])
@pytest.mark.parametrize("log_sampling", [True, False])
def test_fourier_matches_nerf_pytorch(include_input, log_sampling):
    table = pecli.encode(
        "fourier", 9, None, num_freqs=6, include_input=include_input, log_sampling=log_sampling, dtype="float64"
    )
    x = np.linspace(-1.0, 1.0, 9)
    np.testing.assert_allclose(table, ref.nerf_embed(x, 6, include_input, log_sampling), atol=1e-14)


def test_fourier_pi_and_raw_positions():
    with_pi = pecli.encode("fourier", 5, None, num_freqs=3, pi=True, include_input=False, dtype="float64")
    np.testing.assert_allclose(with_pi, ref.nerf_embed(np.linspace(-1, 1, 5) * math.pi, 3, False), atol=1e-14)
    raw = pecli.encode("fourier", 5, 7, positions="raw", dtype="float64")
    np.testing.assert_allclose(raw, ref.nerf_embed(np.arange(5.0), 3), atol=1e-13)


@pytest.mark.parametrize(
    ("dim", "params", "match"),
    [
        (8, {"num_freqs": 3}, "does not match num_freqs"),
        (8, {}, r"is not 2·L \+ 1"),
        (None, {}, "missing num_freqs"),
        (None, {"num_freqs": 0}, "positive integer"),
        (None, {"num_freqs": 2, "positions": "unit"}, "not a valid positions"),
    ],
)
def test_fourier_bad_inputs(dim, params, match):
    with pytest.raises(ParameterError, match=match):
        pecli.encode("fourier", 4, dim, **params)


def test_gaussian_matches_tancik_mapping_and_is_pinned():
    table = pecli.encode("gaussian", 7, 8, sigma=3.0, seed=5, dtype="float64")
    b = np.random.default_rng(5).standard_normal(4) * 3.0
    np.testing.assert_allclose(table, ref.tancik_input_mapping(np.linspace(-1, 1, 7), b), atol=1e-13)
    # PCG64 streams are specified bit for bit: the same table on every machine and numpy release
    digest = hashlib.sha256(pecli.encode("gaussian", 16, 8, seed=0).tobytes()).hexdigest()
    assert digest == GAUSSIAN_SEED0_SHA256


GAUSSIAN_SEED0_SHA256 = "c324ae62e28fa92451b68e2e61e183e8215ce496070e7b9f04e10f236199e4fd"


def test_gaussian_bad_inputs():
    with pytest.raises(ParameterError, match="even d"):
        pecli.encode("gaussian", 4, 5)
    with pytest.raises(ParameterError, match="sigma"):
        pecli.encode("gaussian", 4, 4, sigma=0.0)


# ---------------------------------------------------------------------------------------------
# every new scheme: shapes, dtypes, streaming

CASES = [
    ("rope", 37, 8, {"part": "sin"}, (37, 8)),
    ("rope", 37, 8, {"part": "cos", "scaling": "dynamic", "factor": 2.0, "original_max_position": 8}, (37, 8)),
    ("alibi", 9, None, {"heads": 6}, (6, 9, 9)),
    ("alibi", 9, None, {"heads": 6, "head": 2}, (9, 9)),
    ("alibi", None, None, {"heads": 6, "part": "slopes"}, (6,)),
    ("sincos2d", None, 8, {"grid": "5,7", "cls_token": True}, (36, 8)),
    ("coordconv", None, 3, {"grid": "5,7"}, (35, 3)),
    ("fourier", 37, 9, {}, (37, 9)),
    ("gaussian", 37, 8, {}, (37, 8)),
]


@pytest.mark.parametrize(("scheme", "length", "dim", "params", "shape"), CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_shapes_dtypes_and_row_chunks(scheme, length, dim, params, shape, dtype):
    spec = TableSpec.resolve(scheme, None, params, length=length, dim=dim, dtype=dtype).check()
    whole = spec.array()
    assert spec.shape == shape and whole.shape == shape and whole.dtype.name == dtype
    assert np.isfinite(whole.astype(np.float64)).all()
    chunks = list(spec.chunks(chunk_bytes=3 * math.prod(shape[1:]) * 2))
    assert len(chunks) > 1
    # chunks are the table as a file stores it: bfloat16 as its 16-bit patterns (no ml_dtypes needed to write it)
    np.testing.assert_array_equal(np.concatenate(chunks), whole.view(np.uint16) if dtype == "bfloat16" else whole)
    row_chunks = list(spec.row_chunks(chunk_bytes=3 * math.prod(shape[1:]) * 2))
    assert len(row_chunks) > 1 and row_chunks[0].dtype == whole.dtype
    np.testing.assert_array_equal(np.concatenate(row_chunks), whole)
    if dtype == "float32":  # rounded once from float64
        np.testing.assert_array_equal(whole, spec_f64(spec).astype(np.float32))


def spec_f64(spec):
    return TableSpec(spec.scheme, spec.params, spec.length, spec.dim, "float64").array()


@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 200), half=st.integers(1, 16), layout=st.sampled_from(["half", "interleaved"]))
def test_rope_rotation_preserves_norms_and_is_relative(length, half, layout):
    tables = pecli.encode("rope", length, 2 * half, dtype="float64", layout=layout)
    q = np.random.default_rng(length).standard_normal((length, 2 * half))
    rotated = apply_rotary(q, tables["cos"], tables["sin"], layout)
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(q, axis=-1), rtol=1e-12)
    # <R_m q, R_n k> depends only on n − m: rotate the same q and k at every position
    same = apply_rotary(np.tile(q[:1], (length, 1)), tables["cos"], tables["sin"], layout)
    dots = same[:-1] @ same[1:].T
    np.testing.assert_allclose(np.diag(dots), np.full(length - 1, dots[0, 0]) if length > 1 else [], atol=1e-10)


@pytest.mark.parametrize(("scheme", "length", "dim", "params", "shape"), CASES)
def test_metadata_describes_the_table_again(scheme, length, dim, params, shape):
    spec = TableSpec.resolve(scheme, None, params, length=length, dim=dim)
    again = TableSpec.from_metadata(spec.metadata())
    np.testing.assert_array_equal(again.array(), spec.array())
    assert spec.metadata()["shape"] == ",".join(map(str, shape))


def test_multi_part_metadata_lists_the_tensors():
    spec = TableSpec.resolve("rope", None, {"scaling": "linear", "factor": 2.0}, length=4, dim=8)
    meta = spec.metadata()
    assert meta["tensors"] == "cos,sin" and "part" not in meta and meta["factor"] == "2.0"
    assert meta["len"] == "4" and meta["d"] == "8" and meta["attention_factor"] == "null"  # linear has none
    with pytest.raises(ParameterError, match="part=cos"):
        spec.array()
