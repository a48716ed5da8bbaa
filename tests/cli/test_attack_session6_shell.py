"""Attack round, session 6: pecli in shell pipelines and odd environments (issue 30), in real processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
