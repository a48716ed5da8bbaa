"""``pecli identify``: every preset (float32 and float16), the public implementations, learned tables."""

from __future__ import annotations

import json
import math
import shlex

import numpy as np
import pytest
from safetensors.numpy import save_file

import pecli
from pecli.analysis.identify import identify_table
from pecli.cli.reproduce import reproduce
from pecli.io import read_table
from pecli.schemes.catalog import SCHEMES, resolve
from pecli.schemes.presets import PRESETS
from pecli.schemes.timestep import timestep_embedding
from tests import references
from tests.conftest import assert_clean_error, run_in_process, run_pecli

LENGTH, DIM = 96, 32


def _reproduce(cli, tmp_path, command):
    """Run the command identify printed (with -o redirected into tmp_path); return the table it wrote."""
    argv = shlex.split(command)
    assert argv[:2] == ["pecli", "generate"]
    argv[argv.index("-o") + 1] = str(tmp_path / argv[argv.index("-o") + 1])
    result = cli(*argv[1:])
    assert result.code == 0, result.stderr
    return read_table(argv[argv.index("-o") + 1]).array


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(("scheme", "preset"), [key for key, p in PRESETS.items() if p.scheme == "sinusoidal"])
def test_every_preset(scheme, preset, dtype, cli, tmp_path):
    table = pecli.encode(scheme, LENGTH, DIM, preset=preset, dtype=dtype)
    found = identify_table(table)
    assert found.level == "exact", found.best.describe()
    assert preset in found.best.presets
    assert dict(found.best.params) == resolve(scheme, preset, {})[1]
    assert found.best.max_error <= found.tolerance
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(("scheme", "preset"), [key for key, p in PRESETS.items() if p.scheme == "timestep"])
def test_every_timestep_preset_is_reproduced(scheme, preset, dtype, cli, tmp_path):
    """Integer timestep tables are sinusoids: identify names the equal sinusoidal convention."""
    table = pecli.encode(scheme, LENGTH, DIM, preset=preset, dtype=dtype)
    found = identify_table(table)
    assert found.level == "exact", found.best.describe()
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


@pytest.mark.parametrize(
    ("scheme", "part"),
    [
        (name, part)
        for name, s in SCHEMES.items()
        if "seed" not in s.defaults and s.is_sequence
        for part in s.parts or (None,)
    ],
)
def test_every_deterministic_scheme(scheme, part, cli, tmp_path):
    params = {} if part is None else {"part": part}
    table = pecli.encode(scheme, 40, 12, **params)
    found = identify_table(table)
    assert found.level == "exact"
    if scheme == "timestep":  # integer timesteps are a sinusoid: the equal sinusoidal convention is named
        assert found.best.scheme in ("timestep", "sinusoidal")
    else:
        assert found.best.scheme == scheme and found.best.params.get("part") == part


def test_the_public_implementations_float32():
    """Tables as the code bases compute them (re-implemented in float64 in tests/references.py)."""
    cases = {
        "fairseq": references.fairseq(LENGTH, DIM),
        "guided-diffusion": references.guided_diffusion(np.arange(LENGTH), DIM),
        "marian": references.marian(LENGTH, DIM),
        "tensor2tensor": references.tensor2tensor(LENGTH, DIM),
        "vaswani": references.xlm_distilbert(LENGTH, DIM),
    }
    for preset, table in cases.items():
        found = identify_table(table.astype(np.float32))
        assert found.level == "exact" and preset in found.best.presets, (preset, found.best.describe())
    flipped = references.diffusers(np.arange(LENGTH), DIM, flip_sin_to_cos=True, downscale_freq_shift=0)
    found = identify_table(flipped.astype(np.float32))
    assert found.best.presets == ("guided-diffusion",)  # diffusers with guided-diffusion's arguments


def test_off_grid_base_and_a_table_cut_from_a_longer_one(cli, tmp_path):
    table = pecli.encode("sinusoidal", 300, 64, base=12345.0, layout="split", offset=1000)
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.params["base"] == 12345.0 and found.best.params["offset"] == 1000
    assert (
        reproduce(found)
        == "pecli generate sinusoidal --base 12345 --layout split --offset 1000 --d 64 --len 300 -o pe.npy"
    )
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


@pytest.mark.parametrize("base", [500000.0, 1e6])
def test_rope_bases(base):
    found = identify_table(pecli.encode("sinusoidal", 128, 64, base=base, cos_first=True))
    assert found.level == "exact" and found.best.params["base"] == base and found.best.params["cos_first"] is True


def test_float32_arithmetic_is_an_approximate_match():
    """The PyTorch tutorial computes its table in float32: the angles carry float32 rounding."""
    length, dim = 2048, 64
    position = np.arange(length, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, dim, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / dim))
    table = np.zeros((length, dim), dtype=np.float32)
    table[:, 0::2] = np.sin(position * div_term)
    table[:, 1::2] = np.cos(position * div_term)
    found = identify_table(table)
    assert found.level == "approximate" and "pytorch-tutorial" in found.best.presets
    assert found.tolerance < found.best.max_error < 1e-2


def test_a_learned_table_matches_nothing(cli, tmp_path):
    trained = np.random.default_rng(7).normal(0.0, 0.02, size=(LENGTH, DIM)).astype(np.float32)
    path = tmp_path / "learned.npy"
    np.save(path, trained)
    result = cli("identify", str(path))
    assert result.code == 1
    assert result.out.splitlines()[1].startswith("random table: consistent with N(0, σ²), σ = ")
    std = float(result.out.split("σ = ")[1].split()[0])
    assert abs(std - 0.02) < 0.001 and "closest:" in result.out
    document = json.loads(cli("identify", str(path), "--json").out)
    assert document["match"] == "none" and document["best"]["max_error"] > 0.5


def test_cli_text_json_and_pipe(cli, tmp_path):
    path = tmp_path / "pe.safetensors"
    assert (
        cli("generate", "--preset", "fairseq", "--d", "16", "--len", "50", "-o", str(path), "--name", "pos").code == 0
    )
    result = cli("identify", str(path), "--key", "pos")
    assert result.code == 0, result.stderr
    assert "match: sinusoidal (preset fairseq)" in result.out
    assert "reproduce: pecli generate --preset fairseq --d 16 --len 50 -o pe.npy" in result.out
    document = json.loads(cli("identify", str(path), "--json").out)
    assert document["match"] == "exact" and document["best"]["params"]["offset"] == 2
    assert document["command"] == "pecli generate --preset fairseq --d 16 --len 50 -o pe.npy"
    generated = run_in_process(
        "generate", "sinusoidal", "--preset", "guided-diffusion", "--d", "16", "--len", "40", "-o", "-"
    )
    piped = run_pecli("identify", "-", stdin=generated.stdout)  # a real pipe: stdin that cannot seek
    assert piped.code == 0 and "preset guided-diffusion" in piped.stdout.decode()
    # a preset name two schemes share: the reproduce command names the scheme, and it runs
    assert "reproduce: pecli generate --preset guided-diffusion sinusoidal --d 16 --len 40 -o pe.npy" in (
        piped.stdout.decode()
    )
    again = run_in_process(
        "generate", "--preset", "guided-diffusion", "sinusoidal", "--d", "16", "--len", "40", "-o", "-"
    )
    assert again.code == 0 and again.stdout == generated.stdout


def test_bad_input(cli, tmp_path):
    assert_clean_error(cli("identify", "sinusoidal"), 2, "names a scheme", "pecli generate")
    assert_clean_error(cli("identify", str(tmp_path / "missing.npy")), 2, "missing.npy")
    flat = tmp_path / "flat.npy"
    np.save(flat, np.zeros((2, 4, 3), dtype=np.float32))  # more query rows than keys: no ALiBi tensor
    assert_clean_error(cli("identify", str(flat)), 2, "(2, 4, 3)", "(H, L, L)")
    for name, values, problem in [
        ("nan.npy", np.full((3, 4), np.nan), "NaN"),
        ("inf.npy", np.array([[0.0, np.inf]]), "infinite"),
        ("empty.npy", np.zeros((0, 4)), "empty"),
        ("empty3d.npy", np.zeros((2, 0, 0)), "(2, 0, 0)"),
    ]:
        np.save(tmp_path / name, values.astype(np.float32))
        assert_clean_error(cli("identify", str(tmp_path / name)), 2, problem)
    several = tmp_path / "two.safetensors"
    save_file({"pos": np.zeros((4, 8), np.float32), "tok": np.ones((4, 8), np.float32)}, str(several))
    assert_clean_error(cli("identify", str(several)), 2, "2 tensors", "--key", "'pos' [4, 8]", "'tok' [4, 8]")


@pytest.mark.parametrize("preset", ["fairseq", "guided-diffusion"])
def test_bfloat16_tables_read_back_as_float32(preset, cli, tmp_path):
    """safetensors and torch widen bfloat16 to float32; the values still carry bfloat16 rounding."""
    path = tmp_path / "bf16.safetensors"
    generated = cli(
        "generate", "sinusoidal", "--preset", preset, "--d", "32", "--len", "64", "--dtype", "bfloat16", "-o", str(path)
    )
    assert generated.code == 0, generated.stderr
    table = read_table(str(path)).array
    assert table.dtype == np.float32
    found = identify_table(table)
    assert found.level == "exact" and preset in found.best.presets
    assert (found.dtype, found.precision, found.reproduce_dtype) == ("float32", "bfloat16", "bfloat16")
    assert reproduce(found).endswith("--dtype bfloat16 -o pe.safetensors")
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)).astype(np.float32), table)
    # a float16 table saved as float32 likewise
    half = pecli.encode("sinusoidal", 64, 32, preset=preset, dtype="float16").astype(np.float32)
    assert identify_table(half).level == "exact" and identify_table(half).reproduce_dtype == "float16"


def test_no_false_match_on_a_count_table_off_by_one(cli, tmp_path):
    """Integers fit bfloat16, but an error of 1 is no rounding: count + 1 is no known table."""
    path = tmp_path / "c1.npy"
    np.save(path, (np.arange(64)[:, None] * np.ones((1, 4)) + 1).astype(np.float32))
    found = identify_table(np.load(path))
    assert found.level == "none" and found.dtype == "float32"
    result = cli("identify", str(path))
    assert result.code == 1 and result.out.startswith("c1.npy: 64 × 4, dtype float32, value precision bfloat16")


@pytest.mark.parametrize(
    ("layout", "part", "params"),
    [
        ("interleaved", "sin", {"base": 1e6}),
        ("half", "angle", {"base": 500000.0}),
        ("half", "cos", {"scaling": "linear", "factor": 8.0}),
        ("half", "sin", {"scaling": "dynamic", "factor": 4.0, "original_max_position": 64}),
        ("half", "cos", {"scaling": "yarn", "factor": 16.0, "original_max_position": 128}),
        ("half", "cos", {"base": 12345.0}),
        ("interleaved", "sin", {"scaling": "linear", "factor": 4.0, "dtype": "float16"}),
        (
            "half",
            "cos",
            {
                "base": 500000.0,
                "scaling": "llama3",
                "factor": 8.0,
                "original_max_position": 128,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "dtype": "bfloat16",
            },
        ),
        (
            "interleaved",
            "cos",
            {
                "base": 500000.0,
                "scaling": "llama3",
                "factor": 8.0,
                "original_max_position": 64,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
            },
        ),
    ],
)
def test_rope_any_layout_base_and_scaling(layout, part, params, cli, tmp_path):
    """The frequency profile read off the columns names the base and the scaling's round parameters."""
    table = pecli.encode("rope", 256, 64, layout=layout, part=part, **params)
    found = identify_table(table)
    assert found.level == "exact", found.best.describe()
    assert found.best.scheme == "rope"
    scheme_params = {name: value for name, value in params.items() if name != "dtype"}
    assert {name: found.best.params[name] for name in scheme_params} == scheme_params
    assert (found.best.params["layout"], found.best.params["part"]) == (layout, part)
    reproduced = _reproduce(cli, tmp_path, reproduce(found))
    np.testing.assert_array_equal(reproduced.astype(np.float32), table.astype(np.float32))


def test_progress_reports_each_stage():
    """A long table is screened, sampled, then regenerated whole; each stage is reported."""
    stages: list[str] = []
    found = identify_table(pecli.encode("sinusoidal", 1200, 16), progress=stages.append)
    assert found.level == "exact"
    checking = next(i for i, stage in enumerate(stages) if stage.startswith("checking the best 6 of "))
    assert stages[0] == "screening candidates" and all(s.startswith("screening") for s in stages[:checking])
    assert stages[checking + 1 :] == ["regenerating sinusoidal, row 0 of 1200"]


@pytest.mark.parametrize(
    ("times", "params", "arguments"),
    [
        ([3.0, 0.25, 4096.5, 12.125], {}, "3.0 0.25 4096.5 12.125"),
        (list(range(5, 500, 45)), {"flip_sin_to_cos": False, "freq_shift": 1.0}, "--range 5:500:45"),
        ([999.0, 998.39, 17.0], {"flip_sin_to_cos": False, "freq_shift": 0.0}, "999.0 998.39 17.0"),
    ],
)
def test_timestep_rows_at_arbitrary_t(times, params, arguments, cli, tmp_path):
    """The t of each row is read back from its phases and printed, or as a --range when evenly spaced."""
    table = timestep_embedding(times, 64, **params)
    found = identify_table(table)
    assert found.level == "exact", found.best.describe()
    assert found.best.timesteps == tuple(float(t) for t in times)
    assert reproduce(found).startswith(f"pecli timestep {arguments} --dim 64")
    argv = shlex.split(reproduce(found))[1:]
    argv[argv.index("-o") + 1] = str(tmp_path / "t.npy")
    assert cli(*argv).code == 0
    np.testing.assert_array_equal(np.load(tmp_path / "t.npy"), table)


@pytest.mark.parametrize(
    ("params", "command"),
    [
        ({"heads": 8}, "pecli generate alibi --heads 8 --len 24 -o pe.npy"),
        ({"heads": 12, "head": 3}, "pecli generate alibi --heads 2 --head 0 --len 24 -o pe.npy"),
        ({"heads": 6, "part": "slopes"}, "pecli generate alibi --heads 6 --part slopes -o pe.npy"),
    ],
)
def test_alibi_biases_one_head_and_slopes(params, command, cli, tmp_path):
    """(H, L, L), one head's (L, L) (named by the fewest heads with its slope) and (H,) slopes."""
    table = pecli.encode("alibi", None if params.get("part") else 24, None, **params)
    path = tmp_path / "alibi.npy"
    np.save(path, table)
    result = cli("identify", str(path))
    assert result.code == 0, result.stderr
    assert f"reproduce: {command}" in result.out
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, command), table)


@pytest.mark.parametrize("cls_token", [False, True])
@pytest.mark.parametrize("preset", [name for (scheme, name), p in PRESETS.items() if scheme == "sincos2d"])
def test_sincos2d_every_preset_grid_from_the_token_count(preset, cls_token, cli, tmp_path):
    """H × W is read off the token count (a cls row aside); the preset is named."""
    table = pecli.encode("sincos2d", None, 32, preset=preset, grid="6,10", cls_token=cls_token)
    found = identify_table(table)
    assert found.level == "exact" and preset in found.best.presets, found.best.describe()
    assert (found.best.params["grid"], found.best.params["cls_token"]) == ("6,10", cls_token)
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


@pytest.mark.parametrize("layout", ["mkocabas", "uber"])
@pytest.mark.parametrize("dim", [2, 3])
def test_coordconv_grids(dim, layout, cli, tmp_path):
    table = pecli.encode("coordconv", None, dim, grid="5,7", layout=layout)
    found = identify_table(table)
    assert found.level == "exact" and found.best.scheme == "coordconv" and found.best.params["grid"] == "5,7"
    option = " --layout uber" if layout == "uber" else ""
    assert reproduce(found) == f"pecli generate coordconv --grid 5,7{option} --d {dim} -o pe.npy"
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


@pytest.mark.parametrize(
    "params",
    [
        {"num_freqs": 4},
        {"num_freqs": 5, "include_input": False, "pi": True, "positions": "raw"},
        {"num_freqs": 6, "log_sampling": False},
    ],
)
def test_fourier_variants(params, cli, tmp_path):
    """NeRF's γ(x): the input column, π, raw or normalised positions and the sampling are told apart."""
    table = pecli.encode("fourier", 50, None, **params)
    found = identify_table(table)
    assert found.level == "exact" and found.best.scheme == "fourier", found.best.describe()
    assert {name: found.best.params[name] for name in params if name != "num_freqs"} == {
        name: value for name, value in params.items() if name != "num_freqs"
    }
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


def test_binary_bit_orders():
    for bit_order in ("lsb", "msb"):
        found = identify_table(pecli.encode("binary", 64, 8, bit_order=bit_order))
        assert found.level == "exact" and found.best.params["bit_order"] == bit_order


@pytest.mark.parametrize(
    ("params", "command"),
    [
        ({"part": "cos"}, "pecli generate rope2d --grid 4,6 --part cos --d 32 -o pe.npy"),
        (
            {"part": "sin", "layout": "half"},
            "pecli generate rope2d --grid 4,6 --layout half --part sin --d 32 -o pe.npy",
        ),
        (
            {"part": "angle", "base": 500000.0},
            "pecli generate rope2d --grid 4,6 --base 500000 --part angle --d 32 -o pe.npy",
        ),
    ],
)
def test_rope2d_grid_from_the_token_count(params, command, cli, tmp_path):
    """diffusers' 2-D axial RoPE: H × W from the token count, the part from token (0, 0)'s row."""
    table = pecli.encode("rope2d", None, 32, grid="4,6", **params)
    found = identify_table(table)
    assert found.level == "exact" and reproduce(found) == command, found.best.describe()
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, command), table)


def test_extra_tokens_padding_row_and_amplitude(cli, tmp_path):
    """diffusers' extra_tokens zero rows, fairseq's full weight with its padding row, x-transformers' d^-0.5."""
    cases = [
        (
            pecli.encode("sincos2d", None, 32, preset="diffusers", grid="4,4", cls_token=True, extra_tokens=3),
            "pecli generate --preset diffusers sincos2d --grid 4,4 --cls-token --extra-tokens 3 --d 32 -o pe.npy",
        ),
        (
            pecli.encode(None, 40, 32, preset="fairseq", offset=0, padding_idx=1),
            "pecli generate --preset fairseq --offset 0 --padding-idx 1 --d 32 --len 40 -o pe.npy",
        ),
        (
            pecli.encode("sinusoidal", 40, 32, layout="split", amplitude=32**-0.5),
            f"pecli generate sinusoidal --layout split --amplitude {32**-0.5!r} --d 32 --len 40 -o pe.npy",
        ),
    ]
    for table, command in cases:
        found = identify_table(table)
        assert found.level == "exact" and reproduce(found) == command, reproduce(found)
        np.testing.assert_array_equal(_reproduce(cli, tmp_path, command), table)


@pytest.mark.parametrize(("form", "row"), [("key", 0), ("distance", 15), ("distance", 4)])
def test_alibi_one_query_row_per_head(form, row, cli, tmp_path):
    """(H, 1, L): BLOOM's key form (alike on every row), MPT's distance form on the last row, or any row."""
    table = pecli.encode("alibi", 16, None, heads=4, form=form)[:, row : row + 1]
    found = identify_table(table)
    assert found.level == "exact" and found.query_row == (0 if form == "key" else row)
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found))[:, found.query_row], table[:, 0])
    path = tmp_path / "rows.npy"
    np.save(path, table)
    result = cli("identify", str(path))
    assert result.code == 0 and f"the table is query row {found.query_row} of each head" in result.out


def test_the_shift_equivalence_is_stated(cli, tmp_path):
    """Shift 1 at base b = shift 0 at b^(h/(h−1)): the simpler is named, the other stated (text and --json)."""
    path = tmp_path / "t2t.npy"
    np.save(path, pecli.encode(None, 64, 32, preset="tensor2tensor"))
    text = cli("identify", str(path))
    assert "  equivalently: freq_shift 0 at base 10000^(16/15) = 18478.49797 (the same table)" in text.out
    report = json.loads(cli("identify", str(path), "--json").out)
    assert report["equivalent"]["params"]["freq_shift"] == 0.0
    assert report["equivalent"]["params"]["base"] == pytest.approx(10000 ** (16 / 15), rel=1e-15)
    equivalent = _reproduce(cli, tmp_path, report["equivalent"]["command"])
    np.testing.assert_allclose(equivalent, pecli.encode(None, 64, 32, preset="tensor2tensor"), rtol=0, atol=2**-23)
    vaswani = tmp_path / "vaswani.npy"
    np.save(vaswani, pecli.encode(None, 64, 32, preset="vaswani"))
    assert "equivalent" not in json.loads(cli("identify", str(vaswani), "--json").out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("scheme", "params", "dim", "command"),
    [
        ("sincos2d", {"preset": "timm-interleaved"}, 32, "pecli generate --preset timm-interleaved --grid 6,10 --d 32"),
        ("sincos2d", {"layout": "interleaved"}, 32, "pecli generate --preset positional-encodings --grid 6,10 --d 32"),
        ("sincos2d", {"layout": "interleaved"}, 30, "pecli generate --preset positional-encodings --grid 6,10 --d 30"),
        ("sincos2d", {"layout": "interleaved"}, 31, "pecli generate --preset positional-encodings --grid 6,10 --d 31"),
        # timm's reverse_coord table of 6 × 10 is the plain table of 10 × 6: the transposed grid names it
        (
            "sincos2d",
            {"preset": "timm", "reverse_coord": True},
            32,
            "pecli generate --preset timm --grid 10,6 --d 32",
        ),
        ("sincos2d", {"preset": "sd3"}, 32, "pecli generate --preset sd3 --grid 6,10 --d 32"),
        (
            "sincos2d",
            {"preset": "sd3", "pos_embed_max_size": 192},  # SD3-medium
            32,
            "pecli generate --preset sd3 --grid 6,10 --pos-embed-max-size 192 --d 32",
        ),
        (
            "sincos2d",
            {
                "preset": "diffusers",
                "base_size": 32.0,
                "pos_embed_max_size": 37,
            },  # an odd M: the crop's corner rounds down
            32,
            "pecli generate sincos2d --grid 6,10 --base-size 32 --pos-embed-max-size 37 --d 32",
        ),
        (
            "rope2d",
            {"preset": "eva02", "part": "cos"},
            32,
            "pecli generate --preset eva02 --grid 6,10 --part cos --d 32",
        ),
        (
            "rope2d",
            {"grid_indexing": "ij", "layout": "half", "part": "angle", "base": 500000.0},
            32,
            "pecli generate rope2d --grid 6,10 --base 500000 --layout half --part angle --grid-indexing ij --d 32",
        ),
        (
            "rope2d",
            {"sections": "16,24,24", "part": "cos"},  # Qwen2-VL's M-RoPE over one image
            128,
            "pecli generate rope2d --grid 6,10 --part cos --sections 16,24,24 --d 128",
        ),
        (
            "rope2d",
            {"sections": "4,6,6", "part": "sin", "layout": "interleaved"},
            32,
            "pecli generate rope2d --grid 6,10 --layout interleaved --part sin --sections 4,6,6 --d 32",
        ),
    ],
)
def test_the_grid_conventions_of_timm_diffusers_eva02_qwen2vl(scheme, params, dim, command, dtype, cli, tmp_path):
    """Each grid convention is named with its preset or round parameters, and its command regenerates the table."""
    table = pecli.encode(scheme, None, dim, grid="6,10", dtype=dtype, **params)
    found = identify_table(table)
    suffix = " --dtype float64 -o pe.npy" if dtype == "float64" else " -o pe.npy"
    assert found.level == "exact" and reproduce(found) == command + suffix, found.best.describe()
    np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [5, 33, 63])
def test_pad_dim_sinusoids_at_odd_d(dim, dtype, cli, tmp_path):
    """positional-encodings' PositionalEncoding1D at odd d (the frequencies of d + 1) is --preset vaswani --pad-dim;
    the plain odd-d table stays --preset vaswani."""
    for pad_dim, flag in ((True, " --pad-dim"), (False, "")):
        table = pecli.encode("sinusoidal", LENGTH, dim, pad_dim=pad_dim, dtype=dtype)
        found = identify_table(table)
        suffix = " --dtype float64 -o pe.npy" if dtype == "float64" else " -o pe.npy"
        assert found.level == "exact", found.best.describe()
        assert reproduce(found) == f"pecli generate --preset vaswani{flag} --d {dim} --len {LENGTH}{suffix}"
        np.testing.assert_array_equal(_reproduce(cli, tmp_path, reproduce(found)), table)
