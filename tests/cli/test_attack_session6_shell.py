"""Attack round, session 6: pecli in shell pipelines and odd environments (issue 30), in real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import run_pecli

FULL = "/dev/full"
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this system")


def _into_dev_full(*args: str, cwd=None) -> subprocess.CompletedProcess:
    """Run ``python -m pecli ARGS > /dev/full`` (every write to stdout fails: no space left)."""
    env = {k: v for k, v in os.environ.items() if k != "PECLI_DEBUG"}
    with open(FULL, "w") as full:
        return subprocess.run([sys.executable, "-m", "pecli", *args], stdout=full, stderr=subprocess.PIPE,
                              cwd=cwd, env=env, timeout=120)  # fmt: skip


@needs_dev_full
@pytest.mark.parametrize(
    "args",
    [
        ["schemes"],
        ["schemes", "--json"],
        ["--help"],
        ["--version"],
        ["generate", "--help"],
        ["generate", "sinusoidal", "--d", "8", "--len", "4"],
        ["generate", "sinusoidal", "--d", "8", "--len", "4", "-o", "-"],
        ["compare", "sinusoidal", "sinusoidal", "--d", "8", "--len", "4", "--json"],
    ],
)
def test_a_full_disk_on_stdout_is_one_line_and_exit_3(args):
    completed = _into_dev_full(*args)
    stderr = completed.stderr.decode()
    assert completed.returncode == 3, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    lines = stderr.strip().split("\n")
    assert len(lines) == 1, stderr
    assert lines[0].startswith("pecli: error: cannot write ") and "No space left on device" in lines[0]
    assert "disk is full" in lines[0]


# -- a stdout that cannot hold pecli's text, and file names that are not UTF-8 -------------------


@pytest.fixture
def table(tmp_path):
    import numpy as np

    np.save(tmp_path / "été.npy", np.arange(32, dtype=np.float32).reshape(8, 4))
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["info", "été.npy"],
        ["identify", "été.npy"],
        ["compare", "été.npy", "été.npy"],
        ["schemes"],
        ["plot", "été.npy", "--terminal", "--width", "40", "--height", "10"],
    ],
)
def test_an_ascii_stdout_gets_escapes_not_an_internal_error(table, args):
    result = run_pecli(*args, cwd=str(table), env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert result.code in (0, 1), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    result.stdout.decode("ascii")  # every byte ASCII
    if "été.npy" in args:
        assert b"\\xe9t\\xe9.npy" in result.stdout


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_json_is_valid_utf8_json_whatever_stdout_encoding(table, encoding):
    result = run_pecli("info", "été.npy", "--json", cwd=str(table), env={"PYTHONIOENCODING": encoding})
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout.decode("utf-8"))  # strict UTF-8, as RFC 8259 asks
    assert document["file"] == "été.npy"


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
def test_a_file_name_that_is_not_utf8_is_escaped_in_text_and_json(tmp_path):
    import numpy as np

    name = os.fsencode(str(tmp_path)) + b"/\xff.npy"
    with open(name, "wb") as handle:
        np.save(handle, np.zeros((2, 2), dtype=np.float32))
    text = run_pecli("info", "\udcff.npy", cwd=str(tmp_path), env={"LC_ALL": "C.UTF-8"})
    assert text.code == 0, text.stderr
    assert text.stdout.decode("utf-8").startswith("\\xff.npy: 1 tensor")  # no raw 0xff byte
    as_json = run_pecli("info", "\udcff.npy", "--json", cwd=str(tmp_path), env={"LC_ALL": "C.UTF-8"})
    assert as_json.code == 0, as_json.stderr
    assert json.loads(as_json.stdout.decode("utf-8"))["file"] == "\udcff.npy"  # Python's name for the byte


# -- the current directory removed under pecli ---------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "--d", "4", "--len", "4", "-o", "x.npy"],
        ["generate", "--d", "4", "--len", "4", "-o", "x.safetensors"],
        ["plot", "sinusoidal", "--d", "4", "--len", "4", "-o", "x.png"],
    ],
)
def test_a_removed_current_directory_is_named(tmp_path, args):
    gone = tmp_path / "gone"
    gone.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PECLI_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH")]))
    script = "import os, runpy, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); sys.argv[1:2] = []; "
    script += "runpy.run_module('pecli', run_name='__main__')"
    completed = subprocess.run([sys.executable, "-c", script, str(gone), *args], capture_output=True, env=env,
                               timeout=120)  # fmt: skip
    stderr = completed.stderr.decode()
    assert completed.returncode == 3, stderr
    assert (
        stderr == "pecli: error: the current directory no longer exists (cd to one that does, or give absolute paths)\n"
    )
    assert sorted(os.listdir(tmp_path)) == []


def _stdout_closed(*args: str) -> subprocess.CompletedProcess:
    """Run ``python -m pecli ARGS >&-``: the process starts without a stdout."""
    env = {k: v for k, v in os.environ.items() if k != "PECLI_DEBUG"}
    return subprocess.run([sys.executable, "-m", "pecli", *args], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1),
                          env=env, timeout=120, text=True)  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        ["generate", "--help"],
        ["plot", "-h"],
        ["compare", "--help", "--json"],
        ["generate", "-q", "--help"],
        ["--version"],
        [],  # no command: the help, which has nowhere to go either
    ],
)
def test_help_and_version_with_stdout_closed_are_one_line_and_exit_3(args):
    completed = _stdout_closed(*args)
    assert completed.returncode == 3, completed.stderr
    assert completed.stderr == (
        "pecli: error: stdout is closed, so the result has nowhere to go (redirect it to a file or a pipe)\n"
    )


def test_help_with_stdout_open_still_exits_0():
    completed = run_pecli("generate", "--help", timeout=120)
    assert completed.code == 0, completed.stderr
    assert completed.out.startswith("Usage: pecli generate")
    assert completed.stderr == ""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["generate", "--d", "0", "--len", "4", "--json"], 2),
        (["generate", "--d", "abc", "--len", "4", "--json"], 2),  # click's own usage error
        (["compare", "missing.npy", "sinusoidal", "--json"], 2),
        (["identify", "missing.npy", "--json"], 2),
        (["info", "missing.npy", "--json"], 2),
        (["schemes", "nosuch", "--json"], 2),
        (["distance", "sinusoidal", "--d", "4", "--len", "4", "--metric", "foo", "--json"], 2),
        (["generate", "--d", "4", "--len", "4", "-o", "no/such/dir/x.npy", "--json"], 3),
    ],
)
def test_with_json_an_error_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path, args, code):
    """What docs/scripting.md promises: parse stdout only after exit 0 or 1."""
    completed = run_pecli(*args, cwd=str(tmp_path), timeout=120)
    assert completed.code == code, completed.stderr
    assert completed.stdout == b""
    assert completed.stderr.startswith("pecli: error: ") and completed.stderr.count("\n") == 1, completed.stderr
