"""Diffusion timestep embeddings: the core against guided-diffusion's and diffusers' formulas; ``pecli timestep``."""

from __future__ import annotations

import io
import itertools
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.io import read_table
from pecli.schemes.catalog import resolve
from pecli.schemes.presets import get_preset
from pecli.schemes.spec import TableSpec
from pecli.schemes.timestep import TimestepRange, TimestepSpec, timestep_embedding
from tests import references
from tests.conftest import assert_clean_error, run_pecli

F64 = {"dtype": "float64"}
GUIDED_DIFFUSION_T1_D4 = [0.5403023059, 0.9999500004, 0.8414709848, 0.0099998333]

#: integers up to 1000 and fractional timesteps (continuous-time models, DDIM sub-sequences)
TIMESTEPS = np.concatenate([np.arange(0, 1001, 37.0), [1000.0, 0.5, 1e-3, 0.999, 998.39, 250.25, 999.999]])


# -- reference vectors -------------------------------------------------------------------------


def test_issue_reference_vector_and_odd_dim_appends_zero():
    np.testing.assert_allclose(timestep_embedding([1], 4, **F64)[0], GUIDED_DIFFUSION_T1_D4, atol=1e-10)
    np.testing.assert_allclose(timestep_embedding([1], 5, **F64)[0], [*GUIDED_DIFFUSION_T1_D4, 0.0], atol=1e-10)
    np.testing.assert_allclose(pecli.encode("timestep", 2, 4, **F64)[1], GUIDED_DIFFUSION_T1_D4, atol=1e-10)
    assert timestep_embedding([1], 5, **F64)[0, 4] == 0.0


def test_reference_vector_on_the_command_line(cli):
    result = cli("timestep", "1", "--dim", "5", "--dtype", "float64", "-o", "-", "--format", "csv")
    assert result.code == 0, result.stderr
    np.testing.assert_allclose(np.loadtxt(io.StringIO(result.out), delimiter=","), [*GUIDED_DIFFUSION_T1_D4, 0])


# -- every flag combination against the float64 re-implementations ------------------------------

GRID = list(
    itertools.product(
        [True, False],  # flip_sin_to_cos
        [0.0, 1.0],  # freq_shift
        [1.0, 0.25, 1000.0],  # scale (Flux-style models use 1000 with t in [0, 1])
        [10000.0, 100.0, 10.5],  # max_period
        [4, 5, 16, 33],  # dim, odd and even
    )
)


@pytest.mark.parametrize(("flip", "shift", "scale", "max_period", "dim"), GRID)
def test_flag_grid_matches_diffusers_formula(flip, shift, scale, max_period, dim):
    params = {"flip_sin_to_cos": flip, "freq_shift": shift, "scale": scale, "max_period": max_period}
    expected = references.diffusers(TIMESTEPS, dim, flip, shift, scale, max_period)
    np.testing.assert_allclose(timestep_embedding(TIMESTEPS, dim, **params, **F64), expected, atol=1e-9, rtol=0)
    # the generate scheme (t = 0 … len − 1, angle addition) agrees on integer timesteps
    integers = references.diffusers(np.arange(1001), dim, flip, shift, scale, max_period)
    np.testing.assert_allclose(pecli.encode("timestep", 1001, dim, **params, **F64), integers, atol=1e-9, rtol=0)


@pytest.mark.parametrize("max_period", [10000.0, 100.0, 10.5])
@pytest.mark.parametrize("dim", [2, 3, 4, 5, 16, 33, 320])
def test_default_is_guided_diffusion(dim, max_period):
    expected = references.guided_diffusion(TIMESTEPS, dim, max_period=max_period)
    np.testing.assert_allclose(timestep_embedding(TIMESTEPS, dim, max_period=max_period, **F64), expected, atol=1e-12)


@pytest.mark.parametrize("dim", [4, 5, 16, 33, 320])
def test_diffusers_default_is_tensor2tensor_split_sinusoid(dim):
    t2t = pecli.encode(None, 1001, dim, preset="tensor2tensor", **F64)
    np.testing.assert_allclose(t2t, references.tensor2tensor(1001, dim), atol=1e-12)
    np.testing.assert_allclose(pecli.encode("timestep", 1001, dim, preset="diffusers", **F64), t2t, atol=1e-12)
    np.testing.assert_allclose(
        timestep_embedding(range(1001), dim, flip_sin_to_cos=False, freq_shift=1, **F64), t2t, atol=1e-12
    )


def test_repeat_only_is_t_repeated():
    table = timestep_embedding([0, 2.5, 999], 3, repeat_only=True, **F64)
    np.testing.assert_array_equal(table, [[0, 0, 0], [2.5, 2.5, 2.5], [999, 999, 999]])
    np.testing.assert_array_equal(
        pecli.encode("timestep", 4, 2, repeat_only=True, **F64), [[0, 0], [1, 1], [2, 2], [3, 3]]
    )


def test_low_precision_rounds_after_the_float64_computation():
    """bfloat16 would store t = 998.39 as 1000: pecli rounds the finished table instead."""
    assert float(round_to(np.array([998.39]), "bfloat16").astype(np.float64)[0]) == 1000.0
    exact = timestep_embedding([998.39], 64, **F64)
    np.testing.assert_array_equal(timestep_embedding([998.39], 64, dtype="bfloat16"), round_to(exact, "bfloat16"))
    assert not np.array_equal(timestep_embedding([1000.0], 64, dtype="bfloat16"), round_to(exact, "bfloat16"))
    np.testing.assert_array_equal(
        timestep_embedding([2049.0], 16, dtype="float16"), round_to(timestep_embedding([2049.0], 16, **F64), "float16")
    )


@settings(max_examples=40, deadline=None)
@given(
    times=st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=20),
    dim=st.integers(2, 64),
    flip=st.booleans(),
    scale=st.floats(-10, 10),
)
def test_rows_are_independent_bounded_and_flip_swaps_halves(times, dim, flip, scale):
    table = timestep_embedding(times, dim, flip_sin_to_cos=flip, scale=scale, **F64)
    assert table.shape == (len(times), dim) and np.abs(table).max() <= 1.0
    np.testing.assert_array_equal(
        table[-1], timestep_embedding(times[-1:], dim, flip_sin_to_cos=flip, scale=scale, **F64)[0]
    )
    flipped = timestep_embedding(times, dim, flip_sin_to_cos=not flip, scale=scale, **F64)
    half = dim // 2
    np.testing.assert_array_equal(flipped[:, :half], table[:, half : 2 * half])


# -- presets -------------------------------------------------------------------------------------


def test_timestep_presets():
    for name in ("ldm", "guided-diffusion"):
        _, params = resolve("timestep", name, {})
        assert (params["flip_sin_to_cos"], params["freq_shift"]) == (True, 0.0)
    for name in ("diffusers", "ddpm"):
        _, params = resolve("timestep", name, {})
        assert (params["flip_sin_to_cos"], params["freq_shift"], params["scale"]) == (False, 1.0, 1.0)
    assert resolve(None, "ldm", {})[0].name == "timestep"


def test_a_preset_name_several_schemes_share_needs_its_scheme():
    assert get_preset("diffusers", "sinusoidal").scheme == "sinusoidal"
    assert get_preset("guided-diffusion", "sinusoidal").scheme == "sinusoidal"
    assert resolve("timestep", "diffusers", {})[0].name == "timestep"
    assert resolve("sincos2d", "diffusers", {})[1]["base_size"] == 16.0
    with pytest.raises(ParameterError, match="'diffusers' belongs to sinusoidal, timestep and sincos2d"):
        resolve(None, "diffusers", {})
    with pytest.raises(ParameterError, match="'guided-diffusion' belongs to sinusoidal and timestep"):
        get_preset("guided-diffusion")
    with pytest.raises(ParameterError, match="scheme 'rope' has no preset 'diffusers'"):
        resolve("rope", "diffusers", {})
    with pytest.raises(ParameterError, match="'ldm' is a 'timestep' preset"):
        resolve("sinusoidal", "ldm", {})


def test_generate_timestep_with_preset(cli, tmp_path):
    target = tmp_path / "t.safetensors"
    result = cli("generate", "timestep", "--d", "320", "--len", "1000", "--preset", "diffusers", "-o", str(target))
    assert result.code == 0, result.stderr
    table = read_table(str(target))
    np.testing.assert_allclose(table.array, references.diffusers(np.arange(1000), 320), atol=1e-6)
    assert table.metadata["scheme"] == "timestep" and table.metadata["flip_sin_to_cos"] == "false"
    # the sinusoidal "diffusers" preset is unchanged, with its scheme named
    sinusoidal = cli("generate", "sinusoidal", "--preset", "diffusers", "--d", "4", "--len", "2", "--json")
    assert json.loads(sinusoidal.out)["scheme"] == "sinusoidal"


def test_inspecting_commands_can_load_the_scheme():
    from pecli.cli.inputs import load_input
    from pecli.cli.output import Output

    loaded = load_input(Output(), "timestep", length=50, dim=8, dtype="float64")
    np.testing.assert_allclose(loaded.array, references.guided_diffusion(np.arange(50), 8), atol=1e-12)
    assert loaded.label.startswith("timestep")


# -- the command ---------------------------------------------------------------------------------


def test_arguments_to_safetensors_with_full_metadata(cli, tmp_path):
    target = tmp_path / "t.safetensors"
    result = cli("timestep", "0", "250", "998.39", "--dim", "320", "--scale", "2", "-o", str(target))
    assert result.code == 0, result.stderr
    table = read_table(str(target))
    assert table.key == "t_emb" and table.array.shape == (3, 320) and table.array.dtype == np.float32
    expected = references.diffusers([0, 250, 998.39], 320, flip_sin_to_cos=True, downscale_freq_shift=0, scale=2)
    np.testing.assert_array_equal(table.array, expected.astype(np.float32))
    meta = table.metadata
    assert meta["scheme"] == "timestep" and meta["timesteps"] == "[0, 250, 998.39]"
    assert {k: meta[k] for k in ("max_period", "flip_sin_to_cos", "freq_shift", "scale", "repeat_only")} == {
        "max_period": "10000.0",
        "flip_sin_to_cos": "true",
        "freq_shift": "0.0",
        "scale": "2.0",
        "repeat_only": "false",
    }
    spec = TableSpec.from_metadata(meta)
    assert isinstance(spec, TimestepSpec) and spec.timesteps.values == (0.0, 250.0, 998.39)
    np.testing.assert_array_equal(spec.array(), table.array)


def test_stdin_through_a_real_pipe(tmp_path):
    seq = "".join(f"{t}\n" for t in range(1000)).encode()  # what `seq 0 999` writes
    result = run_pecli("timestep", "--dim", "320", "-", "-o", "t.npy", stdin=seq, cwd=str(tmp_path))
    assert result.code == 0, result.stderr
    table = np.load(tmp_path / "t.npy")
    np.testing.assert_array_equal(table, timestep_embedding(range(1000), 320))
    np.testing.assert_allclose(table, pecli.encode("timestep", 1000, 320), atol=1e-7, rtol=0)
    np.testing.assert_allclose(table, references.guided_diffusion(np.arange(1000), 320), atol=1e-6)


def test_stdin_separators_and_npy_to_stdout(cli):
    result = cli("timestep", "--dim", "6", "-", "-o", "-", stdin=b"0, 1.5\n\n  2\t3,4,\n999.5\n")
    assert result.code == 0, result.stderr
    expected = references.guided_diffusion([0, 1.5, 2, 3, 4, 999.5], 6).astype(np.float32)
    np.testing.assert_array_equal(np.load(io.BytesIO(result.stdout)), expected)


def test_negative_timesteps_after_double_dash(cli):
    result = cli("timestep", "--dim", "4", "--dtype", "float64", "-o", "-", "--", "-5", "3")
    assert result.code == 0, result.stderr
    np.testing.assert_allclose(np.load(io.BytesIO(result.stdout)), references.guided_diffusion([-5, 3], 4))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0:1000:10", np.arange(0, 1000, 10)),
        ("0:1:0.25", [0, 0.25, 0.5, 0.75]),
        ("999:-1:-333", [999, 666, 333, 0]),
        (":3", [0, 1, 2]),
        ("2.5:5", [2.5, 3.5, 4.5]),
    ],
)
def test_range(cli, tmp_path, text, expected):
    target = tmp_path / "r.safetensors"
    result = cli("timestep", "--range", text, "--dim", "8", "--preset", "ddpm", "--dtype", "float64", "-o", str(target))
    assert result.code == 0, result.stderr
    table = read_table(str(target))
    np.testing.assert_allclose(table.array, references.diffusers(np.asarray(expected, dtype=float), 8), atol=1e-12)
    assert table.metadata["preset"] == "ddpm"
    spec = TableSpec.from_metadata(table.metadata)
    assert isinstance(spec.timesteps, TimestepRange)
    np.testing.assert_array_equal(spec.timesteps.array(), np.asarray(expected, dtype=float))


def test_long_fractional_range_does_not_drift():
    values = TimestepRange(0.0, 1.0, 1e-5).array()
    assert len(values) == 100_000 and values[-1] == 0.99999


def test_repeat_only_on_the_command_line(cli):
    result = cli("timestep", "7", "0.5", "--dim", "3", "--repeat-only", "--dtype", "float64", "-o", "-")
    assert result.code == 0, result.stderr
    np.testing.assert_array_equal(np.load(io.BytesIO(result.stdout)), [[7, 7, 7], [0.5, 0.5, 0.5]])


def test_flags_reproduce_diffusers_get_timestep_embedding(cli):
    args = ["--no-flip-sin-to-cos", "--freq-shift", "1", "--scale", "1000", "--max-period", "10000"]
    result = cli("timestep", "0.25", "0.999", "--dim", "9", *args, "--dtype", "float64", "-o", "-")
    assert result.code == 0, result.stderr
    expected = references.diffusers([0.25, 0.999], 9, flip_sin_to_cos=False, downscale_freq_shift=1, scale=1000)
    np.testing.assert_allclose(np.load(io.BytesIO(result.stdout)), expected, atol=1e-12)


def test_bfloat16_file_is_the_rounded_float64_table(cli, tmp_path):
    target = tmp_path / "b.safetensors"
    assert cli("timestep", "998.39", "--dim", "64", "--dtype", "bfloat16", "-o", str(target)).code == 0
    table = read_table(str(target))
    expected = round_to(references.guided_diffusion([998.39], 64), "bfloat16")
    # read back widened to float32, which holds every bfloat16 exactly
    np.testing.assert_array_equal(np.asarray(table.array, dtype=np.float32), expected.astype(np.float32))


def test_summary_shows_first_and_last_rows(cli):
    result = cli("timestep", *map(str, range(10)), "--dim", "320")
    assert result.code == 0, result.stderr
    lines = result.out.splitlines()
    assert lines[0] == "timestep: 10 × 320 float32, 12.5 KiB"
    assert "flip_sin_to_cos=True" in lines[1]
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["t"])
    assert lines[header].split() == ["t", "[0]", "[1]", "[2]", "[3]", "…", "[318]", "[319]"]
    rows = [line.split() for line in lines[header + 1 :]]
    assert [row[0] for row in rows] == ["0", "1", "2", "3", "…", "6", "7", "8", "9"]
    assert rows[4] == ["…"] * 8
    expected = references.guided_diffusion(np.arange(10), 320)
    for row in rows[:4] + rows[5:]:
        t = int(row[0])
        np.testing.assert_allclose(
            [float(v) for v in row[1:5] + row[6:]], expected[t, [0, 1, 2, 3, 318, 319]], atol=1e-6
        )


def test_summary_json(cli):
    result = cli("timestep", "--range", "0:1000:10", "--dim", "4", "--json")
    document = json.loads(result.out)
    assert document["shape"] == [100, 4] and document["timesteps"] == {"range": "0:1000:10", "count": 100}
    assert document["params"]["max_period"] == 10000.0
    first = document["first_rows"]
    assert len(first) == 8 and first[1]["t"] == 10.0
    np.testing.assert_allclose(first[1]["embedding"], references.guided_diffusion([10], 4)[0], atol=1e-6)
    assert result.stderr == ""


def test_help_explains_rounding_and_the_unet_convention(cli):
    from typer.testing import CliRunner

    from pecli.cli.app import app

    text = " ".join(CliRunner().invoke(app, ["timestep", "--help"]).output.split())
    for phrase in ("998.39 into 1000", "2048", "flip_sin_to_cos=True, freq_shift=0", "ldm convention", "--repeat-only"):
        assert phrase in text
    assert "timestep" in cli("--help").out


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "stdin", "words"),
    [
        (["0", "x1", "--dim", "4"], b"", ["'x1'", "argument 2", "not a number"]),
        (["--dim", "4", "-"], b"1 2\n3 oops\n", ["'oops'", "line 2"]),
        (["--dim", "4", "-"], b"1,2\n\n3,,4;5\n", ["'4;5'", "line 3"]),
        (["--dim", "4", "-"], b"", ["no timesteps", "empty"]),
        (["--dim", "4", "-"], b" \n\t,\n", ["no timesteps"]),
        (["--dim", "4"], b"", ["no timesteps"]),
        (["nan", "--dim", "4"], b"", ["'nan'", "not finite"]),
        (["1", "inf", "--dim", "4"], b"", ["'inf'", "not finite"]),
        (["--dim", "4", "-"], b"1\n-inf\n", ["'-inf'", "line 2", "not finite"]),
        (["1"], b"", ["missing --dim"]),
        (["1", "--dim", "0"], b"", ["--d", "positive"]),
        (["1", "--dim", "-3"], b"", ["--d", "-3"]),
        (["1", "--dim", "3", "--freq-shift", "1"], b"", ["--freq-shift 1", "d // 2", "NaN", "--dim 4 or more"]),
        (["1", "--dim", "2", "--preset", "diffusers"], b"", ["--freq-shift 1", "--dim 4"]),
        (["1", "--dim", "8", "--freq-shift", "4.5"], b"", ["--freq-shift 4.5", "--dim 10 or more"]),
        (["1", "--dim", "4", "--max-period", "1"], b"", ["--max-period", "greater than 1"]),
        (["1", "--dim", "4", "--max-period", "0.5"], b"", ["--max-period"]),
        (["1", "--dim", "4", "--max-period", "nan"], b"", ["--max-period"]),
        (["1", "--dim", "4", "--scale", "nan"], b"", ["scale", "finite"]),
        (["1", "--dim", "4", "--scale", "inf"], b"", ["scale", "finite"]),
        (["--range", "0:10:0", "--dim", "4"], b"", ["step is 0"]),
        (["--range", "10:0:1", "--dim", "4"], b"", ["no elements"]),
        (["--range", "5:5", "--dim", "4"], b"", ["no elements"]),
        (["--range", "0:1000:nan", "--dim", "4"], b"", ["not finite"]),
        (["--range", "10", "--dim", "4"], b"", ["START:STOP:STEP"]),
        (["--range", "0:x", "--dim", "4"], b"", ["'x'", "--range"]),
        (["1", "--range", "0:10", "--dim", "4"], b"", ["both"]),
        (["1", "-", "--dim", "4"], b"2", ["stdin", "mixed"]),
        (["1", "--dim", "4", "--preset", "vaswani"], b"", ["'vaswani' is a 'sinusoidal' preset"]),
        (["1", "--dim", "4", "--preset", "lmd"], b"", ["unknown preset", "ldm"]),
        (["1", "--dim", "4", "--base", "100"], b"", ["--base"]),
        (["1", "--dim", "4", "--dtype", "int8"], b"", ["dtype"]),
        (["1", "--dim", "4", "--format", "npy"], b"", ["--format needs an output"]),
    ],
)
def test_bad_input_one_line_error_no_file(cli, tmp_path, monkeypatch, args, stdin, words):
    monkeypatch.chdir(tmp_path)
    result = cli("timestep", *args, "-o", "t.npy", stdin=stdin) if "--format" not in args else cli("timestep", *args)
    assert_clean_error(result, 2, *words)
    assert os.listdir(tmp_path) == []


def test_existing_output_survives_bad_stdin(tmp_path):
    target = tmp_path / "t.npy"
    target.write_bytes(b"keep me")
    result = run_pecli("timestep", "--dim", "4", "-", "-o", str(target), stdin=b"0\n1\ntwo\n")
    assert_clean_error(result, 2, "'two'", "line 3")
    assert target.read_bytes() == b"keep me"


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"timesteps": [0.0, float("nan")], "dim": 4}, "index 1"),
        ({"timesteps": [[1.0]], "dim": 4}, "1-d"),
        ({"timesteps": [1.0], "dim": 0}, "dim"),
        ({"timesteps": [1.0], "dim": 3, "freq_shift": 1.0}, "freq_shift"),
        ({"timesteps": [1.0], "dim": 4, "max_period": 1.0}, "max_period"),
        ({"timesteps": [1.0], "dim": 4, "scale": float("nan")}, "scale"),
    ],
)
def test_python_api_bad_values(params, match):
    with pytest.raises(ParameterError, match=match):
        timestep_embedding(**params)


def test_timestep_without_output_shows_the_first_and_last_rows_under_their_exact_t(cli):
    """It showed the first 8 rows only, and labelled t = 10^15 - 1 as "1e+15"."""
    result = cli("timestep", "--range", "0:20:1", "--dim", "4", "--dtype", "float64")
    assert result.code == 0, result.stderr
    lines = result.out.splitlines()
    rows = [line.split() for line in lines[lines.index("") + 2 :]]
    assert [row[0] for row in rows] == ["0", "1", "2", "3", "…", "16", "17", "18", "19"]
    # ldm's embedding at t = 19, d = 4: freqs 1 and 1/100, [cos | sin]
    assert [float(v) for v in rows[-1][1:]] == pytest.approx(
        [np.cos(19), np.cos(0.19), np.sin(19), np.sin(0.19)], abs=1e-6
    )
    big = cli("timestep", "--range", "999999999999990:1e15:1", "--dim", "4", "--dtype", "float64")
    assert big.out.splitlines()[-1].split()[0] == "999999999999999"
