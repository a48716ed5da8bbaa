"""stdin read once per run, and names from the filesystem escaped wherever they are shown (issue 30, class 6)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.paths import DATA


def _pecli(*args, stdin=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pecli", *map(str, args)], input=stdin, capture_output=True, timeout=120, cwd=cwd
    )


@pytest.fixture
def bias(tmp_path):
    path = tmp_path / "bias.npy"
    np.save(path, np.random.default_rng(0).standard_normal((32, 4)))
    return path


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (["generate", "t5", "--part", "bias", "--len", "8"], "t.npy"),
        (["distance", "t5", "--part", "bias", "--len", "8"], "t.npy"),
        (["plot", "t5", "--part", "bias", "--len", "8"], "t.png"),
    ],
    ids=["generate", "distance", "plot"],
)
def test_bias_from_stdin_reads_the_table_once_and_gives_what_the_file_gives(tmp_path, bias, command, output):
    """The scheme read its bias file twice (its sizes, then its values): the second read found '<stdin> is empty'."""
    from_stdin = _pecli(*command, "--bias-from", "-", "-o", tmp_path / f"stdin-{output}", stdin=bias.read_bytes())
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert b"empty" not in from_stdin.stderr
    from_file = _pecli(*command, "--bias-from", bias, "-o", tmp_path / f"file-{output}")
    assert from_file.returncode == 0, from_file.stderr
    if output.endswith(".npy"):
        np.testing.assert_array_equal(np.load(tmp_path / f"stdin-{output}"), np.load(tmp_path / f"file-{output}"))
    else:
        assert (tmp_path / f"stdin-{output}").stat().st_size > 1000


def test_bias_from_an_empty_stdin_is_one_line_exit_2(tmp_path):
    result = _pecli("generate", "t5", "--part", "bias", "--len", "8", "--bias-from", "-", "-o", tmp_path / "t.npy",
                    stdin=b"")  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1 and "<stdin> is empty" in result.stderr.decode()
    assert not (tmp_path / "t.npy").exists()


MODELS = DATA / "models"


@pytest.mark.parametrize(
    "command",
    [["info", "{d}"], ["identify", "{d}"], ["compare", "{d}", "{d}"],
     ["plot", "{d}", "--width", "60", "--height", "10"], ["distance", "{d}", "--width", "60", "--height", "10"]],
    ids=["info", "identify", "compare", "plot", "distance"],
)  # fmt: skip
def test_a_model_directory_named_with_control_characters_is_shown_escaped(tmp_path, command):
    """The directory's name reached the terminal raw (ESC, BEL) in info's heading and every table's label."""
    import shutil

    name = "m\x1b[31mX\x07"
    shutil.copytree(MODELS / "tiny-gpt2", tmp_path / name)
    result = _pecli(*(arg.format(d=name) for arg in command), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert b"\x1b" not in result.stdout + result.stderr and b"\x07" not in result.stdout + result.stderr
    assert b"m\\x1b[31mX\\x07" in result.stdout
