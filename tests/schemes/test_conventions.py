"""Conventions of the real libraries: each option equal to the table its library wrote, and its bad values.

The reference tables under tests/data/conventions/ were written by the libraries themselves
(transformers, x-transformers, diffusers, vit-pytorch, timm, positional-encodings);
tests/data/make_convention_tables.py records each library, version and call in conventions.json,
so these tests import none of them.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError
from pecli.schemes.rope import rope_frequencies, rope_metadata
from pecli.schemes.rope_scaling import rope_attention_factor
from pecli.schemes.spec import TableSpec
from tests import references as ref
from tests.paths import DATA

DATA = DATA / "conventions"
CASES = json.loads((DATA / "conventions.json").read_text())
#: the libraries compute in float32; pecli in float64, rounded once
FLOAT32_NOISE = 2e-6


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_pecli_equals_the_library_table(case):
    expected = np.load(DATA / f"{case['name']}.npy")
    encode = {"dtype": "float64", **case["params"]}
    result = pecli.encode(case["scheme"], case["length"], case["dim"], **encode)
    tolerance = FLOAT32_NOISE * max(1.0, np.abs(expected).max())
    if case["parts"]:
        result = np.stack([result[part] for part in case["parts"]])
        # HF rounds each angle p·θ to float32 before cos/sin: its error grows with the angle (p up to 10^6)
        angle = pecli.encode(case["scheme"], case["length"], case["dim"], **{**encode, "part": "angle"})
        tolerance = tolerance + 2.0**-23 * np.abs(angle) * np.abs(expected).max()
    rotated = expected.shape[-1]  # HF's partial rotary tables hold the rotated columns only
    error = np.abs(result[..., :rotated] - expected)
    assert np.all(error <= np.broadcast_to(tolerance, result.shape)[..., :rotated]), error.max()
    if rotated < result.shape[-1]:  # the pass-through columns: the identity rotation
        np.testing.assert_array_equal(result[0, :, rotated:], 1.0)
        np.testing.assert_array_equal(result[1, :, rotated:], 0.0)


def _command_line(case: dict) -> list[str]:
    """The ``pecli generate`` arguments of a case, each parameter written as its flag."""
    from pecli.schemes.params import PARAMS

    args = ["generate", case["scheme"], "--dtype", "float64"]
    args += ["--len", str(case["length"])] if case["length"] is not None else []
    args += ["--d", str(case["dim"])] if case["dim"] is not None else []
    for name, value in case["params"].items():
        param = PARAMS[name]
        if param.kind is bool:
            args.append(param.flag if value else param.negative_flag)
        else:
            args += [param.flag, ",".join(map(repr, value)) if isinstance(value, list) else str(value)]
    return args


def _written_tensors(path: Path) -> dict[str, np.ndarray]:
    from pecli.io import read_table, read_tensors

    tensors, _ = read_tensors(str(path))
    return {key: read_table(str(path), key=key).array for key in tensors}


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_command_line_writes_the_library_table(cli, tmp_path, case):
    """Each option as a user types it: the flags reach the table (the file equals pecli.encode)."""
    target = tmp_path / "table.safetensors"
    result = cli(*_command_line(case), "-o", str(target))
    assert result.code == 0, result.stderr
    expected = pecli.encode(case["scheme"], case["length"], case["dim"], dtype="float64", **case["params"])
    written = _written_tensors(target)
    for part in case["parts"] or [None]:
        np.testing.assert_array_equal(
            written[part] if part else next(iter(written.values())), expected[part] if part else expected
        )


def test_the_reference_tables_record_where_they_came_from():
    assert {case["name"] for case in CASES} >= {"rope_longrope_short", "rope_longrope_long", "m2m100_weight_d16"}
    for case in CASES:
        libraries = ("transformers", "x-transformers", "diffusers", "vit-pytorch", "timm", "positional-encodings")
        assert case["library"].split()[0] in libraries and case["call"]


# -- RoPE --------------------------------------------------------------------------------------


def test_longrope_switches_factor_lists_past_the_original_context():
    short, long = [1.0, 2.0, 4.0, 8.0], [3.0, 5.0, 7.0, 9.0]
    params = {"scaling": "longrope", "short_factor": short, "long_factor": long, "original_max_position": 16}
    plain = ref.hf_rope_default(10000.0, 8)
    np.testing.assert_allclose(rope_frequencies(8, length=16, **params), plain / short, rtol=1e-15)
    np.testing.assert_allclose(rope_frequencies(8, length=17, **params), plain / long, rtol=1e-15)
    # the file says which list its positions chose; an offset counts as seen positions
    assert rope_metadata(10, 8, offset=7, **params)["longrope_factors"] == "long"
    assert rope_metadata(10, 8, offset=6, **params)["longrope_factors"] == "short"
    # comma-separated text (the command line) is the same as a list (config.json)
    text = {**params, "short_factor": "1,2,4,8", "long_factor": "3,5,7,9"}
    np.testing.assert_array_equal(rope_frequencies(8, length=4, **text), rope_frequencies(8, length=4, **params))


@pytest.mark.parametrize(
    ("scaling", "params", "expected"),
    [
        ("yarn", {"factor": 4.0}, 0.1 * math.log(4.0) + 1),
        ("yarn", {"factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0}, 1.0),  # DeepSeek-V3's config
        (
            "yarn",
            {"factor": 40.0, "mscale": 0.707, "mscale_all_dim": 1.0},
            (0.0707 * math.log(40) + 1) / (0.1 * math.log(40) + 1),
        ),
        ("yarn", {"factor": 40.0, "mscale": 1.0}, 0.1 * math.log(40) + 1),  # HF needs both, else plain mscale
        ("yarn", {"factor": 4.0, "attention_factor": 0.5, "mscale": 2.0, "mscale_all_dim": 1.0}, 0.5),
        ("yarn", {"factor": 0.5}, 1.0),
        ("longrope", {"factor": 32.0, "original_max_position": 4096}, math.sqrt(1 + math.log(32) / math.log(4096))),
        ("longrope", {"factor": 1.0, "original_max_position": 4096}, 1.0),
        ("longrope", {"factor": 32.0, "attention_factor": 1.5, "original_max_position": 4096}, 1.5),
        ("llama3", {"factor": 8.0}, 1.0),
    ],
)
def test_attention_factor_is_hf_formula(scaling, params, expected):
    assert rope_attention_factor(scaling, **params) == pytest.approx(expected, rel=1e-15)


def test_yarn_metadata_records_hf_attention_factor_and_reads_back():
    params = {"scaling": "yarn", "factor": 40.0, "original_max_position": 64, "mscale": 0.707, "mscale_all_dim": 1.0}
    spec = TableSpec.resolve("rope", None, params, length=8, dim=16)
    meta = spec.metadata()
    expected = (0.1 * 0.707 * math.log(40) + 1) / (0.1 * math.log(40) + 1)  # HF get_mscale ratio
    assert float(meta["attention_factor"]) == pytest.approx(expected, rel=1e-15)
    assert float(meta["attention_factor"]) != pytest.approx(0.1 * math.log(40) + 1)
    again = TableSpec.from_metadata(meta)
    np.testing.assert_array_equal(again.parts()[0].array(), spec.parts()[0].array())


def test_llama3_metadata_records_the_factors_used():
    meta = rope_metadata(8, 128, scaling="llama3", factor=8.0, original_max_position=8192, low_freq_factor=2.0)
    assert (meta["low_freq_factor"], meta["high_freq_factor"]) == ("2.0", "4.0")


def test_yarn_no_truncate_moves_the_ramp_ends_off_integers():
    params = {"scaling": "yarn", "factor": 8.0, "original_max_position": 64}
    truncated, exact = rope_frequencies(32, **params), rope_frequencies(32, truncate=False, **params)
    plain = ref.hf_rope_default(10000.0, 32)
    assert not np.allclose(truncated, exact)
    np.testing.assert_allclose(exact[0], plain[0], rtol=1e-14)  # high frequencies extrapolate either way
    np.testing.assert_allclose(exact[-1], plain[-1] / 8, rtol=1e-14)  # low ones interpolate either way


def test_offset_rows_are_the_rows_of_a_longer_table():
    long = pecli.encode("rope", 40, 8, dtype="float64", part="angle")
    np.testing.assert_array_equal(pecli.encode("rope", 10, 8, dtype="float64", part="angle", offset=30), long[30:])
    far = pecli.encode("rope", 2, 8, dtype="float64", part="cos", offset=10**6)
    np.testing.assert_allclose(far[:, 0], np.cos([10**6, 10**6 + 1]), atol=1e-9)


def test_partial_rotary_tables_rotate_the_first_columns_only():
    full = pecli.encode("rope", 6, 8, dtype="float64", part="cos")
    partial = pecli.encode("rope", 6, 16, dtype="float64", part="cos", partial_rotary_factor=0.5)
    np.testing.assert_array_equal(partial[:, :8], full)
    assert rope_metadata(6, 16, partial_rotary_factor=0.5)["rotary_dim"] == "8"


def test_proportional_turns_the_first_frequencies_of_the_whole_head():
    angle = pecli.encode(
        "rope", 4, 16, dtype="float64", part="angle", scaling="proportional", partial_rotary_factor=0.25
    )
    inv_freq = ref.hf_rope_default(10000.0, 16)
    inv_freq[2:] = 0.0  # int(0.25 · 16 // 2) = 2 frequencies turn
    np.testing.assert_allclose(angle, np.outer(np.arange(4), np.concatenate([inv_freq, inv_freq])), rtol=1e-15)


# -- sinusoidal, timestep -------------------------------------------------------------------------


def test_padding_idx_zeroes_one_row_in_every_chunk():
    table = pecli.encode("sinusoidal", 6, 4, dtype="float64", padding_idx=3)
    plain = pecli.encode("sinusoidal", 6, 4, dtype="float64")
    np.testing.assert_array_equal(table[3], 0.0)
    np.testing.assert_array_equal(np.delete(table, 3, axis=0), np.delete(plain, 3, axis=0))
    chunks = [
        pecli.encode("sinusoidal", 6, 4, dtype="float64", padding_idx=3, rows=range(a, b)) for a, b in ((0, 2), (2, 6))
    ]
    np.testing.assert_array_equal(np.concatenate(chunks), table)


def test_amplitude_scales_in_float64_and_rounds_once():
    exact = pecli.encode("sinusoidal", 50, 8, dtype="float64") * 0.3
    scaled = pecli.encode("sinusoidal", 50, 8, dtype="float32", amplitude=0.3)
    np.testing.assert_array_equal(scaled, exact.astype(np.float32))


@pytest.mark.parametrize("freq_shift", [0.0, 1.0])
def test_timestep_dim_1_is_the_zero_column(freq_shift):
    np.testing.assert_array_equal(pecli.encode("timestep", 5, 1, freq_shift=freq_shift), np.zeros((5, 1)))


# -- bad input: one line, exit 2, no file ---------------------------------------------------------

BAD = [
    (
        ["rope", "--short-factor", "1,1,1,1"],
        "--short-factor is a parameter of a RoPE scaling, but no --scaling is chosen",
    ),
    (["sinusoidal", "--mscale", "1"], "does not take --mscale"),
    (["sinusoidal", "--preset", "fairseq", "--truncate"], "does not take --truncate"),
    (
        [
            "rope",
            "--scaling",
            "longrope",
            "--original-max-position",
            "4",
            "--short-factor",
            "1,1,1",
            "--long-factor",
            "1,1,1,1",
        ],
        "--short-factor has 3 numbers",
    ),
    (
        [
            "rope",
            "--scaling",
            "longrope",
            "--original-max-position",
            "4",
            "--short-factor",
            "1,x,1,1",
            "--long-factor",
            "1,1,1,1",
        ],
        "--short-factor must be a comma-separated list",
    ),
    (["rope", "--scaling", "longrope", "--original-max-position", "4"], "needs --short-factor and --long-factor"),
    (["rope", "--partial-rotary-factor", "1.5"], "--partial-rotary-factor must be at most 1"),
    (["rope", "--partial-rotary-factor", "0.1"], "RoPE needs an even number"),
    (["rope", "--scaling", "yarn", "--factor", "4", "--original-max-position", "4", "--mscale", "-1"], "--mscale"),
    (["sinusoidal", "--padding-idx", "8"], "--padding-idx 8 is outside the table's rows 0..7"),
    (["sinusoidal", "--padding-idx", "-1"], "outside the table"),
    (["binary", "--bit-order", "middle"], "--bit-order 'middle' is not a valid bit order"),
    (["alibi", "--heads", "4", "--total-heads", "2"], "--total-heads 2 is fewer than --heads 4"),
    (["alibi", "--heads", "4", "--form", "query"], "--form 'query' is not a valid form"),
    (["coordconv", "--grid", "2,3", "--layout", "tf"], "--layout 'tf' is not a valid layout"),
    (["rope2d", "--grid", "4,4", "--d", "18"], "rope2d needs --d divisible by 4"),
    (["rope2d", "--grid", "4,4,4", "--d", "16"], "--grid must be positive sides --grid H,W"),
    (["rope2d", "--grid", "4,4", "--d", "16", "--sections", "2,3,4"], "--sections 2,3,4 counts 9 frequencies"),
    (["rope2d", "--grid", "4,4", "--d", "16", "--sections", "4,4"], "--sections must be three positive counts"),
    (["rope2d", "--grid", "4,4", "--d", "16", "--scaling", "yarn"], "does not take --scaling"),
    (["rope2d", "--grid", "4,4", "--d", "16", "--grid-indexing", "yx"], "--grid-indexing 'yx' is not a valid"),
    (["rope2d", "--grid", "4,4", "--d", "16", "--sections", "2,3,3", "--grid-indexing", "ij"], "drop --grid-indexing"),
    (["sincos2d", "--grid", "4,7", "--d", "16", "--pos-embed-max-size", "6"], "does not fit in --pos-embed-max-size 6"),
    (
        ["sincos2d", "--grid", "4,7", "--d", "16", "--pos-embed-max-size", "0"],
        "--pos-embed-max-size must be a positive",
    ),
    (["sincos2d", "--grid", "4,4", "--d", "18"], "or --layout interleaved"),
    (["sincos2d", "--grid", "4,4", "--d", "16", "--layout", "interleave"], "not a valid layout"),
    (["rope", "--reverse-coord"], "does not take --reverse-coord"),
    (["rope", "--pad-dim"], "does not take --pad-dim"),
    (["sinusoidal", "--pos-embed-max-size", "8"], "does not take --pos-embed-max-size"),
    (
        ["sincos2d", "--preset", "timm-interleaved", "--grid", "4,4", "--d", "16", "--pad-dim"],
        "does not take --pad-dim",
    ),
    (["coordconv", "--grid", "2,3", "--reverse-coord"], "does not take --reverse-coord"),
]


@pytest.mark.parametrize(("args", "words"), BAD, ids=[" ".join(a[:3]) for a, _ in BAD])
def test_bad_convention_option_is_one_line_exit_2_and_no_file(tmp_path, args, words):
    out = tmp_path / "table.safetensors"
    scheme, *options = args
    sizes = {"alibi": ["--len", "8"], "coordconv": [], "rope2d": [], "sincos2d": []}.get(
        scheme, ["--len", "8", "--d", "8"]
    )
    result = subprocess.run(
        [sys.executable, "-m", "pecli", "generate", scheme, *sizes, *options, "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pecli: error: ") and lines[0].endswith(")"), result.stderr
    assert words in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_library_errors_name_parameters_not_flags():
    with pytest.raises(ParameterError, match=r"^short_factor has 2 numbers"):
        rope_frequencies(8, scaling="longrope", original_max_position=4, short_factor=[1, 1], long_factor=[1] * 4)


# -- coordconv ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("height", "width"), [(3, 5), (4, 4), (6, 2)])
def test_coordconv_uber_layout_is_uber_add_coords(height, width):
    table = pecli.encode("coordconv", None, 3, grid=f"{height},{width}", layout="uber", dtype="float64")
    np.testing.assert_allclose(table, ref.uber_add_coords(height, width), rtol=0, atol=1e-15)
    port = pecli.encode("coordconv", None, 2, grid=f"{height},{width}", dtype="float64")
    if height == width:  # on a square grid the two differ only in which axis comes first
        np.testing.assert_array_equal(table[:, :2], port[:, ::-1])


# -- ALiBi ----------------------------------------------------------------------------------------


def test_alibi_key_form_gives_the_same_causal_attention():
    distance = pecli.encode("alibi", 9, None, heads=6, dtype="float64")
    key = pecli.encode("alibi", 9, None, heads=6, form="key", dtype="float64")
    causal = np.tril(np.ones((9, 9), dtype=bool))

    def softmax(bias):
        bias = np.where(causal, bias, -np.inf)
        weights = np.exp(bias - bias.max(axis=-1, keepdims=True))
        return weights / weights.sum(axis=-1, keepdims=True)

    np.testing.assert_allclose(softmax(key), softmax(distance), rtol=1e-13)
    # each causal row differs by m·i: the per-row constant softmax ignores
    slopes = pecli.encode("alibi", None, None, heads=6, part="slopes", dtype="float64")
    np.testing.assert_allclose(
        (key - distance)[:, causal], (slopes[:, None, None] * np.arange(9)[None, :, None] * np.ones(9))[:, causal]
    )


def test_alibi_total_heads_pads_with_unbiased_heads():
    padded = pecli.encode("alibi", 5, None, heads=4, total_heads=7, dtype="float64")
    assert padded.shape == (7, 5, 5)
    np.testing.assert_array_equal(padded[:4], pecli.encode("alibi", 5, None, heads=4, dtype="float64"))
    np.testing.assert_array_equal(padded[4:], 0.0)


# -- sincos2d ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "scheme", "case_name"),
    [
        ("vit-pytorch", "sincos2d", "vit_pytorch_posemb_3x5_d32"),
        ("timm-interleaved", "sincos2d", "timm_sincos2d_interleave_3x5_d32"),
        ("positional-encodings", "sincos2d", "positional_encodings_2d_3x5_d7"),
        ("sd3", "sincos2d", "diffusers_patch_embed_sd3_defaults_5x7"),
        ("eva02", "rope2d", "timm_eva02_rope_cat_4x4_d32"),
    ],
)
def test_preset_is_the_convention_its_library_table_checks(preset, scheme, case_name):
    from pecli.schemes.catalog import resolve

    case = next(case for case in CASES if case["name"] == case_name)
    sizes = {name: case["params"][name] for name in ("grid",) if name in case["params"]}
    resolved, params = resolve(scheme, preset, sizes)
    assert resolved.name == case["scheme"]
    assert {name: params[name] for name in case["params"]} == case["params"]


def test_reverse_coord_is_the_table_of_the_transposed_grid():
    """timm's reverse_coord builds over feat_shape[::-1]: on a square grid it changes nothing."""
    reverse = pecli.encode("sincos2d", None, 16, grid="3,5", layout="by-function", reverse_coord=True)
    np.testing.assert_array_equal(reverse, pecli.encode("sincos2d", None, 16, grid="5,3", layout="by-function"))
    square = pecli.encode("sincos2d", None, 16, grid="4,4", layout="by-function", reverse_coord=True)
    np.testing.assert_array_equal(square, pecli.encode("sincos2d", None, 16, grid="4,4", layout="by-function"))


def test_pos_embed_max_size_is_the_centred_crop_of_the_full_table():
    full = pecli.encode("sincos2d", None, 16, grid="9,9", base_size=4.0, dtype="float64").reshape(9, 9, 16)
    crop = pecli.encode("sincos2d", None, 16, grid="4,7", base_size=4.0, pos_embed_max_size=9, dtype="float64")
    np.testing.assert_array_equal(crop, full[2:6, 1:8].reshape(28, 16))  # top (9 − 4) // 2, left (9 − 7) // 2
    chunks = [
        pecli.encode("sincos2d", None, 16, grid="4,7", base_size=4.0, pos_embed_max_size=9, rows=range(a, b))
        for a, b in ((0, 5), (5, 28))
    ]
    np.testing.assert_array_equal(np.concatenate(chunks), crop.astype(np.float32))


def test_interleaved_layout_on_a_multiple_of_4_is_by_axis_h_first_with_pairs_interleaved():
    blocks = pecli.encode("sincos2d", None, 16, grid="3,5", layout="by-axis-h-first", dtype="float64")
    pairs = pecli.encode("sincos2d", None, 16, grid="3,5", layout="interleaved", dtype="float64")
    for half in (slice(0, 8), slice(8, 16)):
        np.testing.assert_array_equal(pairs[:, half][:, 0::2], blocks[:, half][:, :4])  # sin
        np.testing.assert_array_equal(pairs[:, half][:, 1::2], blocks[:, half][:, 4:])  # cos


def test_pad_dim_changes_odd_dims_only():
    even = pecli.encode("sinusoidal", 9, 8, dtype="float64")
    np.testing.assert_array_equal(pecli.encode("sinusoidal", 9, 8, dtype="float64", pad_dim=True), even)
    odd = pecli.encode("sinusoidal", 9, 7, dtype="float64", pad_dim=True)
    np.testing.assert_array_equal(odd, even[:, :7])  # d 7 is d 8 without its last column


def _diffusers_2d_rope(dim: int, height: int, width: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """diffusers' get_2d_rotary_pos_embed(dim, ((0, 0), (H, W)), (H, W), use_real=True), restated in float64
    (src/diffusers/models/embeddings.py: get_2d_rotary_pos_embed, get_2d_rotary_pos_embed_from_grid,
    get_1d_rotary_pos_embed with repeat_interleave_real=True)."""
    grid_h = np.linspace(0, height, height, endpoint=False)
    grid_w = np.linspace(0, width, width, endpoint=False)
    grid = np.stack(np.meshgrid(grid_w, grid_h))  # "here w goes first"

    def one_axis(half: int, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        freqs = 1.0 / (base ** (np.arange(0, half, 2)[: half // 2] / half))
        angles = np.outer(pos, freqs)
        return np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1)

    emb_h, emb_w = one_axis(dim // 2, grid[0].reshape(-1)), one_axis(dim // 2, grid[1].reshape(-1))
    return np.concatenate([emb_h[0], emb_w[0]], axis=1), np.concatenate([emb_h[1], emb_w[1]], axis=1)


@pytest.mark.parametrize(
    ("dim", "height", "width", "base"), [(16, 4, 4, 10000.0), (32, 3, 5, 10000.0), (8, 6, 2, 100.0)]
)
def test_rope2d_is_diffusers_get_2d_rotary_pos_embed(dim, height, width, base):
    cos, sin = _diffusers_2d_rope(dim, height, width, base)
    table = pecli.encode("rope2d", None, dim, grid=f"{height},{width}", base=base, dtype="float64")
    np.testing.assert_allclose(table["cos"], cos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["sin"], sin, rtol=0, atol=1e-12)


def _qwen2_vl_mrope(dim: int, sections: list[int], sides: tuple[int, int, int], offset: int, base: float):
    """transformers' Qwen2VLRotaryEmbedding on get_rope_index's vision positions, restated in float64
    (src/transformers/models/qwen2_vl/modeling_qwen2_vl.py: forward, recomposition_frequencies; positions
    t, h, w = arange(T), arange(H), arange(W) expanded row-major, plus the text tokens before them)."""
    t, h, w = (np.arange(n) for n in sides)
    position_ids = np.stack([a.reshape(-1) for a in np.meshgrid(t, h, w, indexing="ij")]) + offset  # (3, tokens)
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2) / dim))
    freqs = position_ids[..., None] * inv_freq  # (3, tokens, dim / 2)
    pieces = np.split(freqs, np.cumsum(sections)[:-1], axis=-1)
    freq = np.concatenate([piece[i % 3] for i, piece in enumerate(pieces)], axis=-1)
    angles = np.concatenate([freq, freq], axis=-1)
    return np.cos(angles), np.sin(angles)


@pytest.mark.parametrize(
    ("dim", "sections", "grid", "offset"),
    [(16, [2, 3, 3], "2,3,4", 0), (32, [4, 6, 6], "3,5", 7), (128, [16, 24, 24], "1,4,4", 0)],
)
def test_rope2d_sections_is_qwen2_vl_mrope(dim, sections, grid, offset):
    sides = tuple(int(n) for n in grid.split(","))
    sides = (1, *sides) if len(sides) == 2 else sides
    cos, sin = _qwen2_vl_mrope(dim, sections, sides, offset, 10000.0)
    spec = {"grid": grid, "sections": ",".join(map(str, sections)), "offset": offset}
    table = pecli.encode("rope2d", None, dim, dtype="float64", **spec)
    np.testing.assert_allclose(table["cos"], cos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["sin"], sin, rtol=0, atol=1e-12)


def test_rope2d_ij_indexing_swaps_the_two_axis_blocks():
    """timm's grid_indexing='ij' is diffusers' (xy) table with the row's RoPE first."""
    xy = pecli.encode("rope2d", None, 16, grid="3,5", part="angle", dtype="float64")
    ij = pecli.encode("rope2d", None, 16, grid="3,5", part="angle", grid_indexing="ij", dtype="float64")
    np.testing.assert_array_equal(ij, np.concatenate([xy[:, 8:], xy[:, :8]], axis=1))


def test_rope2d_sections_on_equal_coordinates_is_plain_rope():
    """A token whose t, h and w are equal (Qwen2-VL's text) turns like 1-D RoPE at that position."""
    table = pecli.encode("rope2d", None, 16, grid="4,4,4", sections="2,3,3", part="angle", dtype="float64")
    diagonal = [t * 16 + t * 4 + t for t in range(4)]
    np.testing.assert_allclose(table[diagonal], pecli.encode("rope", 4, 16, part="angle", dtype="float64"))
