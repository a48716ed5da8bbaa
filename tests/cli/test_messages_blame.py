"""Class 3 of issue 30: a message names only what the user gave, and says sizes in human units.

A hint must not suggest a flag already passed (``-o x.npy`` told to "write it to a .npy file"),
a flag the user did not give (``--offset`` when none was), or one the scheme does not take; a
size is never a number of hundreds of digits.
"""

from __future__ import annotations

import re

import pytest

from pecli.dtypes import format_bytes
from tests.cli.test_bad_inputs import assert_one_line_error
from tests.conftest import run_in_process


@pytest.mark.parametrize(
    ("nbytes", "shown"),
    [(2**62, "4.0 EiB"), (2**80, "1.0 YiB"), (2**100, "1.3e+30 bytes"), (10**400, "more than 1e+308 bytes")],
)
def test_format_bytes_stays_short_however_large(nbytes, shown):
    assert format_bytes(nbytes) == shown


def test_an_absurd_output_size_is_said_in_human_units_without_flags_the_scheme_lacks(tmp_path):
    """ALiBi has no --d and no --rows: the free-space hint named both, with a 32-digit number of TiB."""
    result = run_in_process("generate", "alibi", "--heads", "65536", "--len", "9223372036854775807", "-o", "b.npy",
                       cwd=str(tmp_path))  # fmt: skip
    assert_one_line_error(result, 3, ("the output would take 2.2e+43 bytes", "free"))
    assert "--d" not in result.stderr and "--rows" not in result.stderr and not re.search(r"\d{10}", result.stderr)
    assert not (tmp_path / "b.npy").exists()


def test_positions_past_2_53_blame_the_length_when_no_offset_was_given(tmp_path):
    result = run_in_process("distance", "sinusoidal", "--d", "4", "--len", "9223372036854775807", "-o", "d.npy",
                       cwd=str(tmp_path))  # fmt: skip
    assert_one_line_error(result, 2, ("2^53", "use a smaller --len"))
    assert "--offset" not in result.stderr
    shifted = run_in_process("generate", "--d", "4", "--len", "4", "--offset", str(2**60), cwd=str(tmp_path))
    assert_one_line_error(shifted, 2, ("2^53", "--offset"))


def test_a_bias_too_large_for_memory_does_not_advise_the_file_already_given(cli, tmp_path, monkeypatch):
    """``distance t5 --len N -o x.npy`` said "write it to a .npy/.safetensors file", and named --d (T5 has none).

    Written to a file, the bias matrices now stream head by head (no refusal at all); shown, they are
    refused with the size and the one flag T5 has for it.
    """
    import numpy as np

    monkeypatch.setattr("pecli.memory.available_memory", lambda: 1 << 20)
    monkeypatch.chdir(tmp_path)
    shown = cli("distance", "t5", "--len", "1000", "--json")
    assert_one_line_error(shown, 2, ("bias matrices would take", "use a smaller --len"))
    assert "write it" not in shown.stderr and "--d" not in shown.stderr
    written = cli("distance", "t5", "--len", "1000", "-o", "x.npy")
    assert written.code == 0, written.stderr
    assert np.load(tmp_path / "x.npy", mmap_mode="r").shape == (1, 1000, 1000)


def test_a_3d_npy_is_not_told_to_pick_a_key_it_cannot_have(tmp_path):
    """A .npy holds one unnamed array: "choose a 2-D tensor with --key" sent the user to an error."""
    import numpy as np

    np.save(tmp_path / "cube.npy", np.zeros((2, 3, 4)))
    result = run_in_process("distance", "cube.npy", cwd=str(tmp_path))
    assert_one_line_error(result, 2, ("(2, 3, 4)", "save a 2-D slice"))
    assert "--key" not in result.stderr


@pytest.mark.parametrize(("shape", "fix"), [((), "save the table, not one number"), ((2, 3, 4, 5), "2-D slice")])
def test_identify_of_a_npy_that_holds_no_table_is_not_told_to_pick_a_key(tmp_path, shape, fix):
    """identify of a scalar or 4-D .npy said "choose a tensor with --key", which a .npy cannot have."""
    import numpy as np

    np.save(tmp_path / "t.npy", np.zeros(shape))
    result = run_in_process("identify", "t.npy", cwd=str(tmp_path))
    assert_one_line_error(result, 2, (f"shape {shape}", fix))
    assert "--key" not in result.stderr


def test_a_config_read_as_a_table_asks_for_its_part_in_plain_words(tmp_path):
    """identify of a model directory: "the table 'm/config.json' implies has several tensors" read wrong;
    a directory without weights whose config is faulty said "m has no weights", hiding the config's fault.

    In this process (the messages and exit codes are the subject, not the process): 4 starts of pecli cost
    more than the checks."""
    import json

    (tmp_path / "m").mkdir()
    config = {"model_type": "llama", "rope_theta": 10000, "hidden_size": 64, "num_attention_heads": 4}
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    faulty = run_in_process("identify", "m", "--key", "cos", cwd=str(tmp_path))
    assert_one_line_error(faulty, 2, ("m/config.json has no max_position_embeddings",))
    assert "no weights" not in faulty.stderr
    (tmp_path / "m" / "config.json").write_text(json.dumps(dict(config, max_position_embeddings=32)))
    both = run_in_process("identify", "m", cwd=str(tmp_path))  # its cos and sin read as one table (--key takes one)
    assert both.code == 0, both.stderr
    out = both.stdout.decode()
    assert "rope — m [cos, sin]" in out and "part=cos" not in out
    assert "read as one table: its tensors 'cos' and 'sin' (pass --key to take one)" in out
    wrong = run_in_process("identify", "m", "--key", "foo", cwd=str(tmp_path))
    assert_one_line_error(wrong, 2, ("--key 'foo' is not a part of the table 'm/config.json' gives", "--key cos"))
    assert run_in_process("identify", "m", "--key", "cos", cwd=str(tmp_path)).code == 0


def test_a_table_too_large_for_memory_and_disk_is_not_sent_to_a_file(cli, tmp_path, monkeypatch):
    """``generate --len 10**10`` with no -o advised "add -o FILE.npy", which the free-space check then refused.

    A file is suggested only when the disk here has room for it; otherwise the sizes the scheme has.
    """
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr("pecli.memory.available_memory", lambda: 1 << 20)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(1 << 40, 0, 1 << 30))
    fits_on_disk = cli("generate", "--d", "512", "--len", "4096")  # 8 MiB: more than memory, less than disk
    assert_one_line_error(fits_on_disk, 2, ("the table would take 8.0 MiB", "add -o FILE.npy"))
    too_large = cli("generate", "--d", "512", "--len", "10000000")  # 19.1 GiB: more than the 1 GiB free
    assert_one_line_error(too_large, 2, ("19.1 GiB", "use a smaller --len or --d", "1.0 GiB free on disk"))
    assert "-o" not in too_large.stderr
    alibi = cli("generate", "alibi", "--heads", "8", "--len", "100000")
    assert_one_line_error(alibi, 2, ("use a smaller --len:",))
    assert "--d" not in alibi.stderr and "-o" not in alibi.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("compare", "a.npy", "rope:base=-1"), ("in spec 'rope:base=-1': base must be", "e.g. base=10000")),
        (("compare", "a.npy", "sinusoidal:layout=nosuch"), ("in spec 'sinusoidal:layout=nosuch': layout 'nosuch'",)),
        (("compare", "a.npy", "rope:scaling=yarn,factor=4"), ("needs original_max_position", "max_position=4096")),
        (("compare", "rope:base=0", "rope", "--d", "8"), ("in spec 'rope:base=0': base must be",)),
        (("compare", "--properties", "rope:base=0"), ("in spec 'rope:base=0': base must be",)),
        (("compare", "--properties", "alibi:heads=0"), ("in spec 'alibi:heads=0': heads must be a positive integer",)),
    ],
)
def test_a_bad_value_in_a_spec_is_named_as_the_spec_names_it(cli, tmp_path, monkeypatch, args, words):
    """A spec's values were reported as flags the user never typed ("--base must be …" for rope:base=-1)."""
    monkeypatch.chdir(tmp_path)
    assert cli("generate", "--d", "64", "--len", "16", "-o", "a.npy").code == 0
    result = cli(*args)
    assert_one_line_error(result, 2, words)
    assert not re.search(r"--(?!d\b|len\b|properties\b)[a-z]", result.stderr), result.stderr


def test_a_missing_scaling_value_is_the_example_given(cli):
    """``--scaling yarn --factor 4`` was told "needs --original-max-position (e.g. --factor 4)"."""
    result = cli("generate", "rope", "--d", "8", "--len", "4", "--scaling", "yarn", "--factor", "4")
    assert_one_line_error(result, 2, ("needs --original-max-position", "e.g. --original-max-position 4096"))
    assert "e.g. --factor" not in result.stderr


def test_a_file_against_a_bias_spec_takes_no_dimension_from_the_file(cli, tmp_path, monkeypatch):
    """``compare a.npy alibi:heads=4``: the file's columns were passed as --d ("alibi has no --d (drop --d)")."""
    monkeypatch.chdir(tmp_path)
    assert cli("generate", "--d", "64", "--len", "16", "-o", "a.npy").code == 0
    mismatch = cli("compare", "a.npy", "alibi:heads=4")
    assert_one_line_error(mismatch, 2, ("shape mismatch", "16 × 64", "4 × 16 × 16"))
    assert "--d" not in mismatch.stderr.split("(")[0]
    assert cli("generate", "alibi", "--heads", "4", "--head", "1", "--len", "16", "-o", "h.npy").code == 0
    assert cli("compare", "h.npy", "alibi:heads=4,head=1").code == 0
    other_head = cli("compare", "h.npy", "alibi:heads=4,head=2")
    assert other_head.code == 1 and b"factor 4" in other_head.stdout


def test_t5_bucket_limits_name_both_flags_and_an_example_that_works(cli):
    """``--num-buckets 100000000`` was told "max_distance = 128 must exceed … (use max_distance > 25000000, e.g. 128)":
    Python names, a cause the user did not touch, and an example that fails the rule it states."""
    result = cli("distance", "t5", "--len", "16", "--num-buckets", "100000000", "--json")
    assert_one_line_error(result, 2, ("--max-distance 128 must exceed", "--num-buckets 100000000 // 4",
                                      "a smaller --num-buckets", "--max-distance 50000000"))  # fmt: skip
    assert "max_distance" not in result.stderr and "e.g. 128" not in result.stderr
    assert cli("distance", "t5", "--len", "16", "--num-buckets", "100000000", "--max-distance", "50000000",
               "--json").code == 0  # fmt: skip
    few = cli("distance", "t5", "--len", "16", "--num-buckets", "2", "--json")
    assert_one_line_error(few, 2, ("--num-buckets 2 leaves no exact bucket", "use --num-buckets 4 or more"))


def test_properties_take_a_spec_at_its_own_size_and_never_blame_a_default(cli):
    """--properties took its defaults (--d 64, --len 512) as given: a grid spec was told "--len 512 does not
    match grid=3,3 (drop --len)" (and with --len 9, "--len 144 …" from the growth checks), t5 "has no --d
    (drop --d)", and fourier "--d 64 is not 2·L + 1" as if typed."""
    grid = cli("compare", "--properties", "sincos2d:grid=3x3")
    assert grid.code == 0, grid.stderr
    assert "sincos2d:grid=3x3 (9 × 64)" in grid.out
    assert re.search(r"bounded\s+n/a", grid.out) and re.search(r"length-independent\s+n/a", grid.out)
    assert re.search(r"unique\s+✓", grid.out)
    assert cli("compare", "--properties", "sincos2d:grid=3x3", "--len", "9").code == 0
    t5 = cli("compare", "--properties", "t5")
    assert_one_line_error(t5, 2, ("'t5' is a table over query and key positions", "drop t5 from --properties"))
    fourier = cli("compare", "--properties", "fourier")
    assert_one_line_error(fourier, 2, ("at the default --len 512 and --d 64 of --properties", "use --d 63"))
    assert cli("compare", "--properties", "fourier", "--d", "63").code == 0
    mixed = cli("compare", "--properties", "sinusoidal", "alibi:heads=4")
    assert mixed.code == 0 and "(512 ×" not in mixed.out and "properties at d = 64, len = 512" in mixed.out


def test_properties_of_a_two_part_spec_ask_for_its_part_in_the_spec(cli):
    """``compare --properties rope2d:grid=4,4`` said "pick one with --part", an option compare does not have."""
    result = cli("compare", "--properties", "rope2d:grid=4,4")
    assert_one_line_error(result, 2, ("in spec 'rope2d:grid=4,4'", "pick one with part=cos|sin|angle"))
    assert "--part" not in result.stderr
    assert cli("compare", "--properties", "rope2d:grid=4,4,part=cos").code == 0
    single = cli("compare", "--properties", "rope", "--layer-type", "x")
    assert_one_line_error(single, 2, ("--layer-type does not apply to --properties", "drop it"))
