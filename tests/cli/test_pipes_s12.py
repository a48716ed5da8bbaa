"""pecli in shell pipelines, on a stderr that refuses messages and on paths the system refuses (issue 30).

A message on stderr is about the result, never the result: stderr on a full disk (``2>/dev/full``),
a descriptor opened for reading (what ``2>&-`` becomes when a wrapper script's file takes fd 2), or
a reader gone from ``2>&1 | head`` loses the message and leaves the exit code as documented
(docs/scripting.md): before, the failed note turned into an invisible traceback and exit 1, which
a script reads as "the answer is no".
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest

from pecli.cli.output import Output
from tests.conftest import assert_clean_error, run_pecli


def _pecli(*args: str, stderr: object, cwd: str) -> int:
    """The exit code of ``python -m pecli ARGS`` with ``stderr`` as its standard error."""
    environment = {key: value for key, value in os.environ.items() if key != "PECLI_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "pecli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        cwd=cwd,
        env=environment,
        timeout=120,
    ).returncode


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("generate", "--d", "8", "--len", "4", "-o", "pe.npy"), 0),  # success, whose "wrote …" note is lost
        (("generate", "--d", "8", "--len", "4", "--bogus"), 2),  # a usage error, whose line is lost
        (("generate", "--d", "8", "--len", "4", "-o", "missing/pe.npy"), 3),  # a write that cannot happen
    ],
)
def test_a_full_stderr_keeps_the_documented_exit_code(tmp_path, args, code):
    with open("/dev/full", "w") as full:
        assert _pecli(*args, stderr=full, cwd=str(tmp_path)) == code
    if code == 0:
        assert np.load(tmp_path / "pe.npy").shape == (4, 8)


def test_a_stderr_open_for_reading_keeps_a_success(tmp_path):
    with open(os.devnull) as read_only:  # every write to it fails with EBADF
        assert _pecli("generate", "--d", "8", "--len", "4", "-o", "pe.npy", stderr=read_only, cwd=str(tmp_path)) == 0
    assert np.load(tmp_path / "pe.npy").shape == (4, 8)


def test_a_stderr_whose_reader_left_keeps_a_usage_error(tmp_path):
    read_end, write_end = os.pipe()
    os.close(read_end)  # 2>&1 | true: the reader is gone before pecli writes
    try:
        assert _pecli("generate", "--d", "8", "--bogus", stderr=write_end, cwd=str(tmp_path)) == 2
    finally:
        os.close(write_end)


def test_output_gives_up_a_stderr_that_refuses_a_line():
    class Refusing(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    refusing = Refusing()
    out = Output(stdout=io.StringIO(), stderr=refusing)
    out.note("wrote pe.npy")  # raised OSError before
    out.warn("overflow")
    out.error("the table is empty")
    assert out.stderr is not refusing


def test_an_output_path_longer_than_the_system_takes_says_so(tmp_path):
    too_long = str(tmp_path / ("d/" * 2100 + "pe.npy"))  # over PATH_MAX (4096 bytes)
    result = run_pecli("generate", "--d", "8", "--len", "4", "-o", too_long, cwd=str(tmp_path))
    # before: "directory … does not exist (create it first: mkdir -p …)", which mkdir cannot do either
    assert_clean_error(result, 3, "too long")
    assert "mkdir" not in result.stderr
    assert os.listdir(tmp_path) == []


def test_an_output_name_longer_than_255_bytes_says_so(tmp_path):
    result = run_pecli("generate", "--d", "8", "--len", "4", "-o", "n" * 300 + ".npy", cwd=str(tmp_path))
    assert_clean_error(result, 3, "too long", "255 bytes per name")
    assert os.listdir(tmp_path) == []
