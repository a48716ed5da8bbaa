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
from tests.conftest import run_pecli


@pytest.mark.parametrize(
    ("nbytes", "shown"),
    [(2**62, "4.0 EiB"), (2**80, "1.0 YiB"), (2**100, "1.3e+30 bytes"), (10**400, "more than 1e+308 bytes")],
)
def test_format_bytes_stays_short_however_large(nbytes, shown):
    assert format_bytes(nbytes) == shown


def test_an_absurd_output_size_is_said_in_human_units_without_flags_the_scheme_lacks(tmp_path):
    """ALiBi has no --d and no --rows: the free-space hint named both, with a 32-digit number of TiB."""
    result = run_pecli("generate", "alibi", "--heads", "65536", "--len", "9223372036854775807", "-o", "b.npy",
                       cwd=str(tmp_path))  # fmt: skip
    assert_one_line_error(result, 3, ("the output would take 2.2e+43 bytes", "free"))
    assert "--d" not in result.stderr and "--rows" not in result.stderr and not re.search(r"\d{10}", result.stderr)
    assert not (tmp_path / "b.npy").exists()


def test_positions_past_2_53_blame_the_length_when_no_offset_was_given(tmp_path):
    result = run_pecli("distance", "sinusoidal", "--d", "4", "--len", "9223372036854775807", "-o", "d.npy",
                       cwd=str(tmp_path))  # fmt: skip
    assert_one_line_error(result, 2, ("2^53", "use a smaller --len"))
    assert "--offset" not in result.stderr
    shifted = run_pecli("generate", "--d", "4", "--len", "4", "--offset", str(2**60), cwd=str(tmp_path))
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
    result = run_pecli("distance", "cube.npy", cwd=str(tmp_path))
    assert_one_line_error(result, 2, ("(2, 3, 4)", "save a 2-D slice"))
    assert "--key" not in result.stderr


@pytest.mark.parametrize(("shape", "fix"), [((), "save the table, not one number"), ((2, 3, 4, 5), "2-D slice")])
def test_identify_of_a_npy_that_holds_no_table_is_not_told_to_pick_a_key(tmp_path, shape, fix):
    """identify of a scalar or 4-D .npy said "choose a tensor with --key", which a .npy cannot have."""
    import numpy as np

    np.save(tmp_path / "t.npy", np.zeros(shape))
    result = run_pecli("identify", "t.npy", cwd=str(tmp_path))
    assert_one_line_error(result, 2, (f"shape {shape}", fix))
    assert "--key" not in result.stderr


def test_a_config_read_as_a_table_asks_for_its_part_in_plain_words(tmp_path):
    """identify of a model directory: "the table 'm/config.json' implies has several tensors" read wrong;
    a directory without weights whose config is faulty said "m has no weights", hiding the config's fault."""
    import json

    (tmp_path / "m").mkdir()
    config = {"model_type": "llama", "rope_theta": 10000, "hidden_size": 64, "num_attention_heads": 4}
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    faulty = run_pecli("identify", "m", "--key", "cos", cwd=str(tmp_path))
    assert_one_line_error(faulty, 2, ("m/config.json has no max_position_embeddings",))
    assert "no weights" not in faulty.stderr
    (tmp_path / "m" / "config.json").write_text(json.dumps(dict(config, max_position_embeddings=32)))
    several = run_pecli("identify", "m", cwd=str(tmp_path))
    assert_one_line_error(several, 2, ("'m/config.json' gives a table of several tensors (cos, sin)", "--key cos|sin"))
    wrong = run_pecli("identify", "m", "--key", "foo", cwd=str(tmp_path))
    assert_one_line_error(wrong, 2, ("--key 'foo' is not a part of the table 'm/config.json' gives", "--key cos"))
    assert run_pecli("identify", "m", "--key", "cos", cwd=str(tmp_path)).code == 0


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
