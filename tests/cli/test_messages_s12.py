"""Messages name what the user typed, refuse what cannot take effect, suggest the right thing (issue 30, session 12).

Each defect test fails on the code before this session's fixes; the others guard what must stay (a name that takes
effect, the first alias, a typo of this command's own option).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.braces import one_error_line
from tests.conftest import run_in_process


@pytest.mark.parametrize(
    ("args", "typed", "not_typed"),
    [
        (["timestep", "1", "--dim", "2", "--freq-shift", "1"], "--dim 2 with --freq-shift 1", "--d "),
        (["timestep", "1", "--dim=2", "--freq-shift", "1"], "use --dim 4 or more", "--d "),
        (["generate", "sinusoidal", "--length", "0", "--d", "4"], "--length must be a positive integer", "--len "),
        (["generate", "sinusoidal", "--len", "4", "--dim", "0"], "--dim must be a positive integer", "--d "),
    ],
)
def test_an_alias_is_named_as_typed(args, typed, not_typed):
    """`timestep --dim 2 --freq-shift 1` said "--d 2 with …": an option the user wrote as --dim, named --d."""
    line = one_error_line(run_in_process(*args))
    assert typed in line
    assert not_typed not in line


def test_the_first_alias_still_reads_as_typed():
    """Whoever typed --d reads --d (the alias is taken from the command line, not fixed to one spelling)."""
    line = one_error_line(run_in_process("timestep", "1", "--d", "2", "--freq-shift", "1"))
    assert "--d 2 with --freq-shift 1" in line and "--dim" not in line


def test_an_alias_after_dashes_is_a_value_not_the_spelling():
    """Words after -- are timesteps: one that looks like --dim does not rename the flag."""
    line = one_error_line(run_in_process("timestep", "--d", "0", "--", "1"))
    assert "--d must be" in line


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["generate", "sinusoidal", "--len", "4", "--d", "4", "-o", "{dir}/a.npy"], "a .npy file holds one unnamed"),
        (["generate", "sinusoidal", "--len", "4", "--d", "4", "-o", "{dir}/a.csv"], "a .csv file holds one unnamed"),
        (["generate", "sinusoidal", "--len", "4", "--d", "4"], "there is none"),
        (["generate", "rope", "--len", "4", "--d", "4", "-o", "{dir}/a.safetensors"], "2 tensors of their own names"),
        (["timestep", "1", "--d", "4", "-o", "{dir}/a.tsv"], "a .tsv file holds one unnamed"),
        (["generate", "--probe", "-o", "{dir}/a.safetensors"], "a probe's tensors have names of their own"),
    ],
)
def test_a_name_that_would_name_nothing_is_refused(tmp_path, args, said):
    """--name with a .npy, a CSV, no output or a rope table's cos and sin was silently dropped (exit 0)."""
    result = run_in_process(*[a.format(dir=tmp_path) for a in args], "--name", "pos")
    line = one_error_line(result)
    assert said in line and "--name" in line
    assert list(tmp_path.iterdir()) == []  # refused before any file was written


@pytest.mark.parametrize(
    ("args", "default"),
    [
        (["generate", "sinusoidal", "--len", "3", "--d", "4"], "pe"),
        (["generate", "rope", "--part", "sin", "--len", "3", "--d", "4"], "pe"),
        (["timestep", "0", "5", "--d", "4"], "t_emb"),
    ],
)
def test_a_name_that_takes_effect_names_the_tensor(tmp_path, args, default):
    """Where --name takes effect it still names the tensor; without it, the documented default."""
    from safetensors.numpy import load_file

    named, plain = tmp_path / "named.safetensors", tmp_path / "plain.safetensors"
    assert run_in_process(*args, "-o", str(named), "--name", "pos").code == 0
    assert run_in_process(*args, "-o", str(plain)).code == 0
    assert list(load_file(named)) == ["pos"] and list(load_file(plain)) == [default]
    np.testing.assert_array_equal(load_file(named)["pos"], load_file(plain)[default])


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (["generate", "sinusoidal", "--len", "4", "--d", "4", "--format", "CSV", "-o", "-"], "did you mean 'csv'?"),
        (["generate", "sinusoidal", "--len", "4", "--d", "4", "--dtype", "Float32"], "did you mean 'float32'?"),
        (["generate", "rope", "--len", "4", "--d", "4", "--layout", "HALF"], "did you mean 'half'?"),
        (["generate", "Rope", "--len", "4", "--d", "4"], "did you mean 'rope'?"),
        (["timestep", "1", "--d", "4", "--preset", "LDM"], "did you mean 'ldm'?"),
        (["generate", "sinusoidal", "--len", "4", "--d", "4", "--format", "Safetensor", "-o", "-"], "'safetensors'"),
    ],
)
def test_a_choice_in_the_wrong_case_is_suggested(args, suggested):
    """--format CSV listed the valid formats but suggested none: case counted as a difference."""
    line = one_error_line(run_in_process(*args))
    assert suggested in line


@pytest.mark.parametrize("value", ["[1, 2]", '"llama"', "7"])
def test_a_text_config_of_the_wrong_type_is_named(tmp_path, value):
    """A text_config that is no object said "(model_type 'llava') has no position settings pecli knows"."""
    (tmp_path / "config.json").write_text(f'{{"model_type": "llava", "text_config": {value}}}')
    line = one_error_line(run_in_process("generate", "--from-config", str(tmp_path), "--len", "4"))
    assert f"{tmp_path}/config.json: text_config: expected an object, got " in line
    assert str(json.loads(value)) in line
    assert "no position settings" not in line


def test_timestep_len_says_what_sets_the_rows():
    """`timestep --len 4` answered "No such option: --len (Possible options: --scale)": a guess by spelling."""
    line = one_error_line(run_in_process("timestep", "--len", "4"))
    assert "--scale" not in line
    assert "pecli timestep has no --len" in line
    assert "its rows are the timesteps given" in line and "--range START:STOP:STEP" in line
    assert "generate" in line  # the commands that do take it


def test_an_option_of_another_command_names_them():
    """An option other commands take is named as theirs, not matched by spelling to one of this command's."""
    line = one_error_line(run_in_process("timestep", "1", "--d", "4", "--rows", "0:2"))
    assert "--rows: an option of pecli plot, distance, not of pecli timestep" in line
    assert "Possible options" not in line


def test_a_typo_keeps_clicks_suggestion():
    """A misspelt option of this command keeps click's nearest match."""
    line = one_error_line(run_in_process("timestep", "1", "--d", "4", "--sclae", "2"))
    assert "--scale" in line


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-o", "{dir}/x.npy"], "so -o would do nothing"),
        (["--length", "4", "--base", "3"], "so --length, --base would do nothing"),
        (["--dtype", "float16"], "so --dtype would do nothing"),
        (["--probe"], "so --probe would do nothing"),
    ],
)
def test_list_presets_refuses_the_options_it_would_drop(tmp_path, args, named):
    """`generate --list-presets -o x.npy` listed the presets, exit 0, and wrote no x.npy without a word."""
    line = one_error_line(run_in_process("generate", "--list-presets", *[a.format(dir=tmp_path) for a in args]))
    assert named in line and "drop --list-presets" in line
    assert list(tmp_path.iterdir()) == []


def test_list_presets_still_lists_a_schemes_presets():
    result = run_in_process("generate", "timestep", "--list-presets")
    assert result.code == 0
    assert [line.split()[0] for line in result.out.splitlines() if not line.startswith(" ")] == [
        "ldm", "guided-diffusion", "diffusers", "ddpm"
    ]  # fmt: skip


def test_slice_of_two_tables_is_refused():
    """`plot rope --slice 0` drew cos and sin, exit 0: --slice, which picks a slice of a 3-D table, was dropped."""
    line = one_error_line(run_in_process("plot", "rope", "--len", "4", "--d", "4", "--width", "40", "--height", "12",
                                         "--slice", "0"))  # fmt: skip
    assert "--slice picks a slice of a 3-D table, but 'rope' gives 2 2-D tables: cos, sin" in line
    assert "--part" in line
