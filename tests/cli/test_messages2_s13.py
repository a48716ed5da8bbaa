"""Messages name the problem and a fix that runs, as the user typed it (issue 30, session 13).

A misplaced value in a spec is answered with a spec (compare takes specs, not flags); a number option
given other text names the option as typed and an example; info/identify given a scheme suggest a
generate command that runs, for every scheme and preset.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from pecli.schemes.catalog import SCHEMES
from pecli.schemes.presets import preset_names
from tests.conftest import run_in_process

SHAPE = ("--d", "8", "--len", "4")


def _hint(stderr: str) -> str:
    """The text after 'e.g. ' in a one-line error, up to its closing parenthesis."""
    assert stderr.count("\n") == 1 and stderr.startswith("pecli: error: "), stderr
    return re.search(r"e\.g\. (.*)\)$", stderr.strip()).group(1)


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (("compare", "rope:preset=llama3", "rope"), "rope:scaling=llama3,factor=4,original_max_position=4096"),
        (("compare", "llama3", "rope"), "rope:scaling=llama3,factor=4,original_max_position=4096"),
        (("compare", "rope:layout=yarn", "rope"), "rope:scaling=yarn,factor=4,original_max_position=4096"),
        (
            ("compare", "rope:base=5e5,layout=yarn", "rope"),
            "rope:scaling=yarn,factor=4,original_max_position=4096,base=5e5",
        ),
        (
            ("compare", "rope:scaling=yarn,layout=llama3", "rope"),
            "rope:factor=4,original_max_position=4096,scaling=llama3",
        ),
        (("compare", "split", "rope"), "sinusoidal:layout=split"),
        (("compare", "sinusoidal:layout=fairseq", "rope"), "sinusoidal:preset=fairseq"),
        (("generate", "rope:preset=llama3", *SHAPE), "rope:scaling=llama3,factor=4,original_max_position=4096"),
        (("plot", "rope:layout=yarn", *SHAPE), "rope:scaling=yarn,factor=4,original_max_position=4096"),
        (("distance", "rope:preset=llama3", *SHAPE), "rope:scaling=llama3,factor=4,original_max_position=4096"),
    ],
)
def test_a_misplaced_value_in_a_spec_is_answered_with_a_spec_that_runs(args, suggested):
    refused = run_in_process(*args)
    assert refused.code == 2 and refused.stdout == b""
    assert _hint(refused.stderr) == suggested
    assert "--" not in _hint(refused.stderr)  # the spec's words, not flags the user did not type
    ran = run_in_process("compare", suggested, suggested, *SHAPE)
    assert ran.code == 0, ran.stderr


def test_the_suggested_spec_computes_the_table_asked_for(tmp_path):
    """rope:layout=yarn's fix is a yarn-scaled rope: the table the flags of yarn give, not the plain one."""
    from safetensors.numpy import load_file

    spec = _hint(run_in_process("generate", "rope:layout=yarn", *SHAPE).stderr)
    flags = ("--scaling", "yarn", "--factor", "4", "--original-max-position", "4096")
    tables = {}
    for name, args in {"spec": (spec,), "flags": ("rope", *flags), "plain": ("rope",)}.items():
        path = tmp_path / f"{name}.safetensors"
        ran = run_in_process("generate", *args, *SHAPE, "--dtype", "float64", "-o", str(path))
        assert ran.code == 0, ran.stderr
        tables[name] = load_file(str(path))["sin"]
    np.testing.assert_array_equal(tables["spec"], tables["flags"])
    assert np.abs(tables["spec"] - tables["plain"]).max() > 1e-3


def test_a_flag_given_beside_a_spec_keeps_the_flag_form():
    refused = run_in_process("generate", "rope:base=5", "--layout", "yarn", *SHAPE)
    assert refused.code == 2
    assert _hint(refused.stderr) == "--scaling yarn --factor 4 --original-max-position 4096"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("generate", "learned", *SHAPE, "--seed", "1e400"), "--seed must be an integer, got '1e400' (e.g. --seed 0)"),
        (("generate", "--base", "", *SHAPE), "--base must be a number, got '' (e.g. --base 10000)"),
        (("generate", "--dim", "1.5", "--length", "4"), "--dim must be an integer, got '1.5' (e.g. --dim 8)"),
        (("generate", "--d=abc", "--len", "4"), "--d must be an integer, got 'abc' (e.g. --d 8)"),
        (("generate", *SHAPE, "--factor", "\x1b[31m"), "--factor must be a number, got '\\x1b[31m' (e.g. --factor 2)"),
        (("resample", "pe.npy", "--len", "x"), "--len must be an integer, got 'x' (e.g. --len 8)"),
        (("compare", "a", "b", "--rtol", "q"), "--rtol must be a number, got 'q' (e.g. --rtol 0)"),
    ],
)
def test_a_number_option_given_other_text_names_it_as_typed_with_an_example(args, line):
    refused = run_in_process(*args)
    assert (refused.code, refused.stdout, refused.stderr) == (2, b"", f"pecli: error: {line}\n")


@pytest.mark.parametrize("args", [("generate", "learned", "--seed", "0"), ("generate", "--base", "10000")])
def test_the_example_of_a_number_option_runs(args, tmp_path):
    ran = run_in_process(*args, *SHAPE, "-o", str(tmp_path / "pe.npy"))
    assert ran.code == 0, ran.stderr


@pytest.mark.parametrize("name", [*SCHEMES, *preset_names(), "rope:base=500000", "sincos2d:grid=7,7"])
def test_info_of_a_scheme_suggests_a_generate_command_that_runs(name, tmp_path):
    refused = run_in_process("info", name)
    assert refused.code == 2 and "…" not in refused.stderr
    command = re.search(r"write it first: pecli (.*)\)$", refused.stderr.strip()).group(1).split()
    assert command[-2] == "-o"
    written = run_in_process(*command, cwd=str(tmp_path))
    assert written.code == 0, (command, written.stderr)
    shown = run_in_process("info", command[-1], cwd=str(tmp_path))
    assert shown.code == 0, shown.stderr


def test_identify_of_a_scheme_spells_the_sizes_as_typed():
    refused = run_in_process("identify", "sinusoidal")
    assert "pecli generate sinusoidal --d 512 --len 2048 -o pe.npy" in refused.stderr


def test_identify_of_a_bad_spec_names_its_value():
    refused = run_in_process("identify", "rope:layout=yarn")
    assert refused.code == 2
    assert _hint(refused.stderr) == "rope:scaling=yarn,factor=4,original_max_position=4096"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("plot", "pe.npy"), "--width"),
        (("plot", "pe.npy"), "--height"),
        (("plot", "pe.npy", "-o", "p.png"), "--dpi"),
        (
            ("generate", "rope", "--scaling", "llama3", "--factor", "8", "--original-max-position", "64", *SHAPE),
            "--low-freq-factor",
        ),
        (
            ("generate", "rope", "--scaling", "llama3", "--factor", "8", "--original-max-position", "64", *SHAPE),
            "--high-freq-factor",
        ),
        (
            ("generate", "rope", "--scaling", "yarn", "--factor", "8", "--original-max-position", "64", *SHAPE),
            "--beta-fast",
        ),
        (("generate", "alibi", "--heads", "4", "--len", "4"), "--head"),
    ],
)
def test_the_example_of_a_bad_number_is_one_the_option_takes(args, option, tmp_path):
    run_in_process("generate", *SHAPE, "-o", str(tmp_path / "pe.npy"))
    refused = run_in_process(*args, option, "zz", cwd=str(tmp_path))
    assert refused.code == 2
    example = _hint(refused.stderr).split()
    assert example[0] == option
    ran = run_in_process(
        *args, *example, *(() if "-o" in args or "plot" in args else ("-o", "t.safetensors")), cwd=str(tmp_path)
    )
    assert ran.code == 0, (example, ran.stderr)
