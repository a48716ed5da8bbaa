"""Session 7's attack on costs and messages (issue 30, classes 3 and 4): an out-of-memory refusal names
only flags the command takes, and never an output the user already gave."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from pecli.cli.app import _command_flags, _out_of_memory

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ADDRESS_LIMIT = 1536 << 20  # 1.5 GiB: a regression cannot take the machine down


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_LIMIT, _ADDRESS_LIMIT))


def _run_capped(*args: str, cwd: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "pecli", *args],
        capture_output=True, text=True, cwd=cwd, env=env, preexec_fn=_limit, timeout=120,
    )


@pytest.mark.skipif(sys.platform != "linux", reason="address-space limit as Linux applies it")
def test_plot_out_of_memory_does_not_suggest_a_data_file(tmp_path):
    # 4 × 10^8 float64 = 3.2 GB past a 1.5 GiB cap: plot draws figures, so writing a .npy is no fix
    done = _run_capped("plot", "sinusoidal", "--d", "100000000", "--len", "4",
                       "--terminal", "--width", "80", "--height", "20", cwd=str(tmp_path))
    assert done.returncode in (2, 3), done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert ".npy" not in line and "--d" in line, line


def _flags(command: str) -> frozenset[str] | None:
    import typer

    from pecli.cli.app import COMMANDS, build_app

    group = typer.main.get_command(build_app(COMMANDS))
    return _command_flags(group, [command])


def test_resample_out_of_memory_names_no_rows_flag(tmp_path):
    table = tmp_path / "t.npy"
    table.write_bytes(b"\x93NUMPY")
    line = _out_of_memory(["resample", str(table), "--len", "9"], _flags("resample"))
    assert "--rows" not in line and "--key" in line, line  # resample takes --key, not --rows


def test_timestep_out_of_memory_names_range_not_len():
    line = _out_of_memory(["timestep", "--d", "8", "--range", "0:9"], _flags("timestep"))
    assert "--len" not in line and "--range" in line and "--d" in line, line


def test_out_of_memory_never_suggests_the_output_already_given():
    line = _out_of_memory(["generate", "sinusoidal", "--d", "8", "-o", "x.npy"], _flags("generate"))
    assert ".npy" not in line, line
