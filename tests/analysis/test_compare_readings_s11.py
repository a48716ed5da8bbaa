"""``pecli compare A B`` of two files: what each table reads as, and which parameters set them apart (issue 30).

Each reading is held to the formula: the table the finding names is regenerated here with pecli.encode and
must be the file's within rounding; noise is never read as a convention."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.readings import READ_VALUES, read_table


def _report(cli, *args):
    result = cli("compare", *args, "--json")
    assert result.code == 1, result.stderr
    return json.loads(result.stdout)


def _readings(cli, *args):
    return _report(cli, *args)["readings"]


def _write(cli, tmp_path, name, *args):
    path = str(tmp_path / name)
    assert cli("generate", *args, "-o", path, "-q").code == 0
    return path


def test_rope_base_read_from_pecli_metadata(cli, tmp_path):
    a = _write(cli, tmp_path, "r1.safetensors", "rope", "--d", "64", "--len", "128")
    b = _write(cli, tmp_path, "r2.safetensors", "rope", "--d", "64", "--len", "128", "--base", "500000")
    (found,) = _readings(cli, a, b)
    figures = found["figures"]
    assert found["code"] == "parameters_differ" and figures["differs"] == ["base"]
    assert figures["a_values"] == [10000.0] and figures["b_values"] == [500000.0]
    assert figures["a_read_from"] == figures["b_read_from"] == "pecli metadata"
    assert figures["a_rows"] == figures["b_rows"] == 128
    assert figures["a_error"] <= figures["a_tolerance"] and figures["b_error"] <= figures["b_tolerance"]
    text = cli("compare", a, b).out  # the diagnosis knows no cause; the readings say what each table is
    assert (
        "diagnosis: no known cause explains the difference\nreading: A reads as rope, B as rope (base=500000.0)" in text
    )
    assert "base differs (base 10000.0 in A, 500000.0 in B; both read from their pecli metadata)" in text


def test_rope_cos_parts_read_by_identify(cli, tmp_path):
    # .npy: no metadata, so identify reads each side; the reading regenerates the file within rounding
    a = _write(cli, tmp_path, "c1.npy", "rope", "--d", "64", "--len", "128", "--part", "cos")
    b = _write(cli, tmp_path, "c2.npy", "rope", "--d", "64", "--len", "128", "--part", "cos", "--base", "500000")
    (found,) = _readings(cli, a, b)
    figures = found["figures"]
    assert (found["code"], figures["differs"], figures["b_values"]) == ("parameters_differ", ["base"], [500000.0])
    assert figures["a_read_from"] == "identify"
    expected = pecli.encode("rope", 128, 64, base=500000.0, part="cos", dtype="float64")
    assert np.abs(np.load(b).astype(np.float64) - expected).max() == pytest.approx(figures["b_error"], abs=1e-12)
    assert figures["b_error"] <= figures["b_tolerance"] <= 4 * 2.0**-23


def test_sinusoidal_base(cli, tmp_path):
    a = _write(cli, tmp_path, "s1.npy", "sinusoidal", "--d", "64", "--len", "128")
    b = _write(cli, tmp_path, "s2.npy", "sinusoidal", "--d", "64", "--len", "128", "--base", "500")
    (found,) = _readings(cli, a, b)
    assert found["code"] == "parameters_differ"
    assert found["figures"]["differs"] == ["base"] and found["figures"]["b_values"] == [500.0]


def test_rope_layout_keeps_the_pairing_finding_first(cli, tmp_path):
    a = _write(cli, tmp_path, "half.safetensors", "rope", "--d", "64", "--len", "128")
    b = _write(cli, tmp_path, "gptj.safetensors", "rope", "--d", "64", "--len", "128", "--layout", "interleaved")
    report = _report(cli, a, b)
    # the diagnosis's cause stays the first thing said; the readings follow it, apart
    assert [found["code"] for found in report["diagnosis"]] == ["pairing"]
    assert [found["code"] for found in report["readings"]] == ["parameters_differ"]
    figures = report["readings"][0]["figures"]
    text = cli("compare", a, b).out
    assert text.index("diagnosis: the pairing differs") < text.index("reading: A reads as rope, B as rope")
    assert (figures["differs"], figures["a_values"], figures["b_values"]) == (["layout"], ["half"], ["interleaved"])


def test_rope2d_grid(cli, tmp_path):
    a = _write(cli, tmp_path, "g1.safetensors", "rope2d", "--d", "64", "--grid", "8,8")
    b = _write(cli, tmp_path, "g2.safetensors", "rope2d", "--d", "64", "--grid", "4,16")
    (found,) = _readings(cli, a, b)
    assert found["code"] == "parameters_differ" and found["figures"]["differs"] == ["grid"]


def test_alibi_heads_after_the_constant_factor(cli, tmp_path):
    # head 0's slope is 2^-1 of 8 heads, 2^-0.5 of 16: the diagnosis names the factor, the readings the heads
    a = _write(cli, tmp_path, "h8.safetensors", "alibi", "--heads", "8", "--head", "0", "--len", "16")
    b = _write(cli, tmp_path, "h16.safetensors", "alibi", "--heads", "16", "--head", "0", "--len", "16")
    report = _report(cli, a, b)
    (factor,) = report["diagnosis"]
    assert factor["code"] == "constant_factor" and factor["figures"]["factor"] == pytest.approx(2**0.5, rel=1e-6)
    (found,) = report["readings"]
    figures = found["figures"]
    assert found["code"] == "parameters_differ"
    assert (figures["differs"], figures["a_values"], figures["b_values"]) == (["heads"], [8], [16])


def test_a_file_against_noise_claims_no_reading_of_the_noise(cli, tmp_path):
    a = _write(cli, tmp_path, "c1.npy", "rope", "--d", "64", "--len", "128", "--part", "cos")
    noise = str(tmp_path / "noise.npy")
    np.save(noise, np.random.default_rng(0).normal(size=(128, 64)).astype(np.float32))
    (found,) = _readings(cli, a, noise)
    assert found["code"] == "one_reading" and found["figures"]["a_scheme"] == "rope"
    assert not any(name.startswith("b_") for name in found["figures"])
    assert "B as no known convention" in found["message"]
    (found,) = _readings(cli, noise, a)  # the other way round: B is read, A is not
    assert found["code"] == "one_reading" and found["figures"]["b_scheme"] == "rope"
    assert not any(name.startswith("a_") for name in found["figures"])


def test_lying_metadata_is_not_claimed(tmp_path):
    # a pecli file whose values were changed after: its record does not regenerate it, identify reads the values
    table = pecli.encode("rope", 64, 32, part="cos", base=500000.0)
    recorded = {"scheme": "rope", "pecli_version": "0", "dtype": "float64", "len": "64", "d": "32",
                "base": "10000.0", "part": "cos"}  # fmt: skip
    reading = read_table(table, metadata=recorded)
    assert reading is not None and reading.read_from == "identify" and reading.params["base"] == 500000.0


def test_a_large_table_is_read_on_its_first_rows():
    rows = READ_VALUES // 64 * 4  # read on its first quarter
    table = pecli.encode(None, rows, 64, base=500.0).astype(np.float32)
    reading = read_table(table)
    assert reading is not None and reading.rows == READ_VALUES // 64 and reading.total_rows == rows
    assert f"on its first {READ_VALUES // 64} of {rows} rows" in reading.how() and reading.params["base"] == 500.0


def test_a_spec_side_gets_no_reading(cli, tmp_path):
    a = _write(cli, tmp_path, "r1.safetensors", "rope", "--d", "64", "--len", "128")
    report = _report(cli, a, "rope:base=500000")
    assert report["readings"] == [] and report["diagnosis"][0]["code"] == "base_differs"


def test_streamed_files_are_read_on_their_first_rows_and_say_so(cli, tmp_path, monkeypatch):
    from pecli.analysis import readings
    from pecli.cli import compare_stream

    a = _write(cli, tmp_path, "s1.npy", "sinusoidal", "--d", "64", "--len", "128")
    b = _write(cli, tmp_path, "s2.npy", "sinusoidal", "--d", "64", "--len", "128", "--base", "500")
    monkeypatch.setattr(compare_stream, "STREAM_BYTES", 0)  # compared row chunk by row chunk
    monkeypatch.setattr(readings, "READ_VALUES", 1024)  # read on 1024 // 64 = 16 rows
    (found,) = _readings(cli, a, b)
    figures = found["figures"]
    assert (found["code"], figures["differs"], figures["b_values"]) == ("parameters_differ", ["base"], [500.0])
    assert figures["a_rows"] == figures["b_rows"] == 16
    assert "both read by identify on their first 16 of 128 rows" in found["message"]


def test_a_wide_table_is_not_read():
    # 16 rows of 10^5 columns are past the budget: no reading, rather than identify on 1.6 × 10^6 values
    table = np.zeros((64, 100_000))
    assert read_table(table) is None
