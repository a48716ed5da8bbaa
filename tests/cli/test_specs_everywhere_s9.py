"""A scheme spec (``rope:base=500000``) wherever a scheme is accepted (issue 30): generate, plot and distance
said "unknown scheme 'rope:base=500000' (valid: …, rope, …)". Each test failed on the code before."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_in_process


def _tensors(path):
    from safetensors.numpy import load_file

    return load_file(str(path))


@pytest.mark.parametrize(
    ("spec", "flags"),
    [
        (["fairseq"], ["--preset", "fairseq"]),
        (["fairseq:base=1.5"], ["--preset", "fairseq", "--base", "1.5"]),
        (["sincos2d:preset=mae,grid=14x14"], ["sincos2d", "--preset", "mae", "--grid", "14,14"]),
        (["alibi:heads=8"], ["alibi", "--heads", "8"]),
        (["timestep:flip_sin_to_cos=true"], ["timestep", "--flip-sin-to-cos"]),
        (
            ["rope:base=500000,scaling=yarn,factor=4", "--original-max-position", "2"],
            ["rope", "--base", "500000", "--scaling", "yarn", "--factor", "4", "--original-max-position", "2"],
        ),
    ],
    ids=lambda words: words[0],
)
def test_generate_writes_the_table_of_the_flag_form(tmp_path, spec, flags):
    sizes = ["--len", "6"] if spec[0].startswith("alibi") else ["--d", "16", "--len", "6"]
    if spec[0].startswith("sincos2d"):
        sizes = ["--d", "16"]
    written = {}
    for name, words in (("spec", spec), ("flags", flags)):
        path = tmp_path / f"{name}.safetensors"
        result = run_in_process("generate", *words, *sizes, "-o", str(path))
        assert result.code == 0, result.stderr
        written[name] = _tensors(path)
    assert sorted(written["spec"]) == sorted(written["flags"])
    for key, values in written["spec"].items():
        assert np.array_equal(values, written["flags"][key]), key
        assert values.dtype == written["flags"][key].dtype


@pytest.mark.parametrize(
    ("command", "spec", "flags"),
    [
        ("plot", "rope:base=500000", ["rope", "--base", "500000"]),
        ("plot", "fairseq", ["sinusoidal", "--preset", "fairseq"]),
        ("plot", "alibi:heads=4", ["alibi", "--heads", "4"]),
        ("distance", "rope:base=500000", ["rope", "--base", "500000"]),
        ("distance", "sinusoidal:layout=split", ["sinusoidal", "--layout", "split"]),
    ],
)
def test_plot_and_distance_draw_what_the_flag_form_draws(command, spec, flags):
    view = ([] if spec.startswith("alibi") else ["--d", "8"]) + ["--len", "12", "--width", "60", "--height", "20"]
    view += ["--no-color"]
    view += ["--terminal"] if command == "plot" else []
    by_spec = run_in_process(command, spec, *view)
    by_flags = run_in_process(command, *flags, *view)
    assert by_spec.code == 0, by_spec.stderr
    assert by_flags.code == 0, by_flags.stderr
    assert by_spec.stdout == by_flags.stdout
    assert by_spec.stdout.count(b"\n") > 5


def test_distance_profile_of_a_spec_is_the_flag_forms():
    by_spec = run_in_process("distance", "rope:base=500000,scaling=linear,factor=2", "--d", "8", "--len", "16",
                             "--profile", "--json")  # fmt: skip
    by_flags = run_in_process("distance", "rope", "--base", "500000", "--scaling", "linear", "--factor", "2",
                              "--d", "8", "--len", "16", "--profile", "--json")  # fmt: skip
    assert by_spec.code == 0, by_spec.stderr
    assert by_spec.stdout == by_flags.stdout


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (
            ["generate", "rope:base=5", "--base", "7", "--d", "8", "--len", "4"],
            "base=5 in spec 'rope:base=5' and --base 7 disagree (give base once: in the spec or as --base)",
        ),
        (
            ["plot", "fairseq", "--preset", "tensor2tensor", "--d", "8", "--len", "4"],
            "preset fairseq in spec 'fairseq' and --preset tensor2tensor disagree "
            "(give the preset once: in the spec or as --preset)",
        ),
        (
            ["distance", "alibi:heads=8", "--heads", "4", "--len", "4"],
            "heads=8 in spec 'alibi:heads=8' and --heads 4 disagree (give heads once: in the spec or as --heads)",
        ),
    ],
    ids=["generate", "plot", "distance"],
)
def test_a_parameter_given_both_ways_must_agree(words, message):
    result = run_in_process(*words)
    assert result.code == 2
    assert result.stderr.strip() == f"pecli: error: {message}"


def test_a_parameter_given_both_ways_alike_is_taken():
    result = run_in_process("generate", "sincos2d:grid=14x14", "--grid", "14,14", "--base", "100", "--d", "8")
    assert result.code == 0, result.stderr
    assert b"sincos2d: 196 \xc3\x97 8" in result.stdout


@pytest.mark.parametrize("command", ["generate", "plot", "distance"])
def test_an_unknown_spec_parameter_says_what_compare_says(command):
    result = run_in_process(command, "rope:bse=5", "--d", "8", "--len", "4")
    by_compare = run_in_process("compare", "rope:bse=5", "rope", "--d", "8", "--len", "4")
    assert result.code == 2
    assert result.stderr.startswith("pecli: error: 'rope' takes no parameter 'bse' (in spec 'rope:bse=5') (did you")
    assert result.stderr == by_compare.stderr


@pytest.mark.parametrize("command", ["generate", "plot", "distance"])
def test_a_spec_value_is_blamed_in_the_spec_words_not_as_a_flag(command):
    result = run_in_process(command, "rope:base=0", "--d", "8", "--len", "4")
    assert result.code == 2
    assert result.stderr.startswith("pecli: error: in spec 'rope:base=0': base must be")
    assert "--base" not in result.stderr


def test_the_hint_of_identify_for_a_spec_is_a_command_that_works(tmp_path):
    refused = run_in_process("identify", "rope:base=500000")
    assert refused.code == 2
    assert "pecli generate rope:base=500000 --d 512 --len 2048 -o pe.safetensors" in refused.stderr
    path = tmp_path / "pe.npy"
    written = run_in_process("generate", "rope:base=500000", "--d", "8", "--len", "4", "--part", "cos", "-o", str(path))
    assert written.code == 0, written.stderr
    found = run_in_process("identify", str(path))
    assert found.code == 0, found.stderr
    assert b"500000" in found.stdout
