"""``plot --view precision``: the error of a table in reduced arithmetic against float64 (issue 31)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.analysis.precision import FULL_ROWS, alias_position, precision_errors, table_error
from pecli.schemes import rope, sinusoidal, timestep
from pecli.schemes.arithmetic import held
from pecli.schemes.spec import TableSpec
from tests.conftest import assert_clean_error


def test_alias_position_is_the_first_integer_the_dtype_cannot_hold():
    import ml_dtypes

    for name, dtype in (("bfloat16", ml_dtypes.bfloat16), ("float16", np.float16), ("float32", np.float32)):
        mantissa = int(ml_dtypes.finfo(dtype).nmant)
        first = 2 ** (mantissa + 1) + 1  # every integer up to 2^(m+1) is exact; the next odd one is not
        assert alias_position(name) == first
        assert float(dtype(first)) == float(dtype(first - 1)) and float(dtype(first - 1)) == first - 1
    assert (alias_position("bfloat16"), alias_position("float16")) == (257, 2049)
    # the positions a rope table holds: 257 becomes 256 (its predecessor), 256 and 255 stay
    assert held(np.array([255.0, 256.0, 257.0]), "bfloat16").tolist() == [255.0, 256.0, 256.0]


@pytest.mark.parametrize(
    ("function", "params"),
    [
        (rope.rope_table, {"part": "cos"}),
        (rope.rope_table, {"part": "sin", "scaling": "llama3", "factor": 8.0, "original_max_position": 1024}),
        (sinusoidal.sinusoidal_table, {}),
        (timestep.timestep_table, {}),
    ],
)
@pytest.mark.parametrize("arithmetic", ["float32", "bfloat16", "float16"])
def test_errors_equal_the_table_in_arithmetic_minus_the_float64_table(function, params, arithmetic):
    length, dim = 4096, 32
    rows = range(2040, 2060)  # float16 aliases from 2049, bfloat16 long before
    direct = np.abs(
        function(length, dim, dtype="float64", arithmetic=arithmetic, **params)[2040:2060]
        - function(length, dim, dtype="float64", **params)[2040:2060]
    )
    scheme = {rope.rope_table: "rope", sinusoidal.sinusoidal_table: "sinusoidal"}.get(function, "timestep")
    spec = TableSpec.resolve(scheme, None, params, length=length, dim=dim, dtype="float64")
    np.testing.assert_array_equal(table_error(spec, arithmetic, rows), direct)
    errors = precision_errors(spec, arithmetic)
    whole = np.abs(
        function(length, dim, dtype="float64", arithmetic=arithmetic, **params)
        - function(length, dim, dtype="float64", **params)
    )
    assert errors.max_error[arithmetic] == pytest.approx(float(whole.max()), abs=0)
    # every row lies in a bin; the heatmap's bin maxima are the direct per-bin maxima
    bins = [
        whole[start:stop].max(axis=0) for start, stop in zip(errors.bin_edges[:-1], errors.bin_edges[1:], strict=True)
    ]
    np.testing.assert_array_equal(errors.heatmap, np.array(bins))


def test_rope_both_parts_and_the_aliasing_jump():
    spec = TableSpec.resolve("rope", None, {}, length=1024, dim=8, dtype="float64")
    errors = precision_errors(spec, "bfloat16")
    cos = np.abs(rope.rope_table(1024, 8, part="cos", dtype="float64", arithmetic="bfloat16")
                 - rope.rope_table(1024, 8, part="cos", dtype="float64"))  # fmt: skip
    sin = np.abs(rope.rope_table(1024, 8, part="sin", dtype="float64", arithmetic="bfloat16")
                 - rope.rope_table(1024, 8, part="sin", dtype="float64"))  # fmt: skip
    assert errors.max_error["bfloat16"] == float(np.maximum(cos, sin).max())
    # below 257 only float32's rounding of the angle; from 257 a whole position off
    below = np.maximum(cos, sin)[:257].max()
    assert below < 1e-4 and np.maximum(cos, sin)[257, 0] > 0.4
    # float16 holds every position below 2049 exactly: only float32's rounding, as float32's own
    assert errors.max_error["float16"] == errors.max_error["float32"] < 1e-3


def test_long_tables_are_sampled_in_bounded_blocks():
    spec = TableSpec.resolve("rope", None, {}, length=10**6, dim=16, dtype="float64")
    errors = precision_errors(spec, "bfloat16")
    assert errors.sampled and errors.rows_computed <= 64 * 512 < 10**6 and FULL_ROWS < 10**6
    assert "float16" not in errors.max_error  # float16 cannot hold positions past 65504
    assert errors.max_error["bfloat16"] > 1.9 and "sampled" in errors.sampling_note()


def test_cli_json_png_and_terminal(cli, tmp_path):
    args = ("plot", "rope", "--view", "precision", "--arithmetic", "bfloat16", "--len", "4096", "--d", "32")
    result = cli(*args, "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    assert document["alias_position"] == 257 and document["aliases_in_table"] is True
    assert set(document["max_error"]) == {"bfloat16", "float32", "float16"}
    assert document["alias_positions"] == {"bfloat16": 257, "float32": 16777217, "float16": 2049}
    assert document["max_error"]["float32"] < 1e-3 and document["max_error"]["bfloat16"] > 1.9
    assert len(document["per_position"]["position"]) == len(document["per_position"]["max_error"]["float16"])
    image = tmp_path / "precision.png"
    result = cli(*args, "-o", str(image))
    assert result.code == 0 and image.read_bytes().startswith(b"\x89PNG") and result.out == ""
    text = cli(*args, "--width", "90", "--height", "30").out
    lines = text.splitlines()
    assert len(lines) <= 30 and max(len(line) for line in lines) <= 90
    assert "bfloat16 positions alias from 257" in text and "float32 0.000" in text


def test_cli_spec_with_scaling_and_default_arithmetic(cli):
    result = cli("plot", "rope:scaling=llama3,factor=8,original_max_position=1024", "--view", "precision",
                 "--len", "2048", "--d", "16", "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    spec = TableSpec.resolve("rope", None, {"scaling": "llama3", "factor": 8.0, "original_max_position": 1024},
                             length=2048, dim=16, dtype="float64")  # fmt: skip
    assert document["arithmetic"] == "bfloat16"
    assert document["max_error"]["bfloat16"] == precision_errors(spec, "bfloat16").max_error["bfloat16"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("alibi", "--heads", "4", "--len", "64"), ("float64 only",)),
        (("rope", "--d", "16", "--len", "64", "--arithmetic", "float64"), ("reference",)),
        (("rope", "--d", "16"), ("--len",)),
    ],
)
def test_cli_errors(cli, args, words):
    assert_clean_error(cli("plot", *args, "--view", "precision"), 2, *words)
