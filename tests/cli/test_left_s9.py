"""Defects found last session and left (issue 30): each test failed on the code before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize(
    "command",
    [
        ("generate", "sinusoidal", "--d", "8", "--len", "4"),
        ("timestep", "1", "2", "--d", "8"),
        ("compare", "sinusoidal", "sinusoidal", "--d", "8", "--len", "4"),
        ("distance", "t5", "--len", "8"),
        ("plot", "sinusoidal", "--d", "8", "--len", "4"),
        ("resample", "TABLE", "--len", "8"),
    ],
    ids=lambda command: command[0],
)
@pytest.mark.parametrize("spelling", [("-o", ""), ("--output=",)])
def test_an_empty_output_path_is_a_usage_error(tmp_path, command, spelling):
    # generate, distance, plot and resample exited 3 (a runtime failure: "the output cannot be written")
    table = tmp_path / "t.npy"
    np.save(table, np.zeros((4, 8), np.float32))
    args = [str(table) if word == "TABLE" else word for word in command]
    result = run_in_process(*args, *spelling, cwd=str(tmp_path))
    assert result.code == 2, result.stderr
    message = "pecli: error: -o: the output path is empty (give a file name after -o, or leave -o out)"
    assert result.stderr.strip() == message
    assert result.stdout == b""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t.npy"]
