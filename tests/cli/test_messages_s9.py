"""Errors about a file's table name the file; a file's dtype is named as the file's (issue 30, session 9).

Found by this session's hostile-file attack: each test fails on the code before it.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_in_process

COMMANDS = [
    ["identify"],
    ["compare", "{f}"],
    ["plot", "--width", "40", "--height", "10"],
    ["resample", "--len", "16", "-o", "{out}"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_long_double_table_is_refused_as_the_files_dtype(tmp_path, command):
    """A float128 .npy: resample said "unknown dtype 'float128' (did you mean …)", as if --dtype had been given."""
    path = tmp_path / "wide.npy"
    np.save(path, np.ones((8, 4), dtype=np.longdouble))
    if np.dtype(np.longdouble).itemsize <= 8:
        pytest.skip("long double is float64 on this platform")
    name = np.dtype(np.longdouble).name
    args = [a.format(f=str(path), out=str(tmp_path / "out.npy")) for a in command[1:]]
    result = run_in_process(command[0], str(path), *args)
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert f"{path}: tensor array has dtype {name} (extended precision), which pecli does not read" in result.stderr
    assert "save it as float64" in result.stderr
    assert "unknown dtype" not in result.stderr
    assert not (tmp_path / "out.npy").exists()
