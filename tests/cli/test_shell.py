"""pecli as a shell citizen, in real processes: pipes, Ctrl-C, exit codes, JSON, colour, quiet, start-up.

What only checks printed text (one JSON document, literal help) runs in process through the entry point."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import typer

import pecli
from pecli.cli.app import COMMANDS, app
from pecli.io import TEMP_MARKER
from tests.conftest import default_sigint, require_tool, run_in_process, run_in_terminal, run_pecli


def _sh(command: str, env: dict[str, str], cwd=None) -> subprocess.CompletedProcess:
    """Run a bash pipeline; ``pecli`` on its PATH runs this checkout. PIPESTATUS goes to stderr's last line."""
    require_tool("bash")
    script = f'set -o pipefail; {command}; echo "status: ${{PIPESTATUS[*]}}" >&2'
    return subprocess.run(["bash", "-c", script], capture_output=True, env=env, cwd=cwd, timeout=120)


def _stderr_without_status(completed: subprocess.CompletedProcess) -> tuple[str, list[int]]:
    *lines, last = completed.stderr.decode().rstrip("\n").split("\n")
    return "\n".join(lines), [int(code) for code in last.removeprefix("status: ").split()]


# -- pipes ---------------------------------------------------------------------------------------


def test_csv_into_head_ends_quietly(shell_env):
    completed = _sh("pecli generate --d 64 --len 20000 -o - --format csv | head -3", shell_env)
    stderr, statuses = _stderr_without_status(completed)
    rows = completed.stdout.decode().splitlines()
    assert len(rows) == 3 and len(rows[1].split(",")) == 64
    np.testing.assert_allclose([float(v) for v in rows[1].split(",")], pecli.encode(None, 2, 64)[1], rtol=1e-6)
    assert stderr == "" and statuses == [0, 0]


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "--d", "8", "--len", "5"],  # summary: still in stdout's buffer at interpreter exit
        ["generate", "--d", "4", "--len", "3", "-o", "-", "--format", "csv"],
        ["generate", "--d", "4", "--len", "3", "--json"],
        ["schemes"],
        ["--help"],
        [],
    ],
)
def test_reader_gone_before_the_first_write_is_quiet(args):
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        completed = subprocess.run([sys.executable, "-m", "pecli", *args], stdout=write_end, capture_output=False,
                                   stderr=subprocess.PIPE, timeout=60)  # fmt: skip
    finally:
        os.close(write_end)
    assert completed.stderr.decode() == "" and completed.returncode == 0


def test_generate_into_plot(shell_env, tmp_path):
    figure = tmp_path / "pe.png"
    completed = _sh(f"pecli generate --d 32 --len 64 -o - | pecli plot - -o '{figure}'", shell_env)
    stderr, statuses = _stderr_without_status(completed)
    assert statuses == [0, 0], stderr
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_seq_into_timestep_into_distance_into_numpy(shell_env):
    reader = "import sys, io, numpy as np; m = np.load(io.BytesIO(sys.stdin.buffer.read())); print(m.shape, m.dtype)"
    completed = _sh(
        f"seq 0 999 | pecli timestep --dim 64 - -o - | pecli distance - -o - | {sys.executable} -c '{reader}'",
        shell_env,
    )
    stderr, statuses = _stderr_without_status(completed)
    assert statuses == [0, 0, 0, 0], stderr
    assert completed.stdout.decode().startswith("(1000, 1000)")


def test_generate_into_compare(shell_env):
    recipe = "pecli generate --d 64 --len 128 -o - | pecli compare - sinusoidal --d 64 --len 128"
    same = _sh(recipe, shell_env)
    assert _stderr_without_status(same)[1] == [0, 0], same.stderr
    other = _sh(recipe.replace("sinusoidal", "sinusoidal:base=500"), shell_env)  # a scheme spec
    assert _stderr_without_status(other)[1] == [0, 1], other.stderr


# -- Ctrl-C --------------------------------------------------------------------------------------


def test_ctrl_c_during_a_large_write_exits_130_and_leaves_nothing(tmp_path):
    target = tmp_path / "x.npy"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [sys.executable, "-m", "pecli", "generate", "--len", "1000000", "--d", "1024", "-o", str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while not any(TEMP_MARKER in name and (tmp_path / name).stat().st_size > 0 for name in os.listdir(tmp_path)):
        assert process.poll() is None and time.monotonic() < deadline, "the write never started"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)  # what the terminal sends on Ctrl-C
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr, stderr
    assert stdout == b"" and os.listdir(tmp_path) == []


# -- machine-readable output ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["schemes", "--json"], ["generate", "--d", "4", "--len", "3", "--json"], ["generate", "--list-presets", "--json"]],
)
def test_json_mode_prints_exactly_one_document(args):
    result = run_in_process(*args)
    assert result.code == 0, result.stderr
    json.loads(result.out)  # raises on anything besides one document
    assert result.stderr == ""


def test_json_file_output_and_info_are_one_document_each(tmp_path):
    target = str(tmp_path / "pe.safetensors")
    written = run_in_process("generate", "--d", "4", "--len", "3", "-o", target, "--json")
    assert json.loads(written.out)["output"] == target
    assert json.loads(run_in_process("info", target, "--json", "--stats").out)["tensors"][0]["shape"] == [3, 4]


# -- colour, quiet, literal help -----------------------------------------------------------------


def _in_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """Run pecli with stdout and stderr on a pseudo-terminal; (exit code, everything it drew)."""
    return run_in_terminal(*args, env=env)


COLOUR = re.compile(rb"\x1b\[[0-9;]*m")


def test_progress_colour_follows_no_color_term_dumb_and_the_flag(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)  # a short name: a long path in the description leaves the bar no room
    big = ["generate", "--d", "1024", "--len", "8300", "--dtype", "float64", "-o", "x.npy"]  # 68 MB > the bar threshold
    code, drawn = _in_terminal(big, {"TERM": "xterm-256color"})
    assert code == 0 and COLOUR.search(drawn), drawn  # the control: a coloured bar when nothing forbids it
    for args, env in (
        (big, {"TERM": "xterm-256color", "NO_COLOR": "1"}),
        (big, {"TERM": "dumb"}),
        ([*big, "--no-color"], {"TERM": "xterm-256color"}),
    ):
        code, drawn = _in_terminal(args, env)
        assert code == 0 and not COLOUR.search(drawn), (env, args, drawn)
    code, drawn = _in_terminal([*big, "-q"], {"TERM": "xterm-256color"})
    assert code == 0 and drawn == b""  # quiet: no bar, no "wrote" note


def test_quiet_keeps_errors_only():
    result = run_pecli("generate", "--d", "4", "--len", "3", "-q")
    assert result.code == 0 and result.stderr == "" and result.out == ""  # the exit code is the answer
    assert run_pecli("generate", "--d", "0", "--len", "3", "-q").stderr.startswith("pecli: error: --d")


def test_help_renders_brackets_literally():
    root = typer.main.get_command(app)
    bracketed = 0
    for name in COMMANDS:
        shown = "".join(run_in_process(name, "--help").out.split())  # click wraps at spaces and after hyphens
        for param in root.commands[name].params:
            text = "".join((getattr(param, "help", None) or "").split())
            if "[" in text:  # e.g. --layout's "[sin, cos, …]": every one must survive as written
                bracketed += 1
                assert text in shown, (name, text)
    assert bracketed > 0
    assert "shape (e.g. [len, d])" in " ".join(run_in_process("info", "--help").out.split())
    # the app's own settings (rich_markup_mode=None) keep even a Rich closing tag as text
    probe = typer.Typer(rich_markup_mode=app.rich_markup_mode, add_completion=False)

    @probe.command(help="Rows [len, d]; a closing tag [/x] and [bold]not bold[/bold].")
    def show(flag: bool = typer.Option(False, help="Switch [/x] on.")) -> None: ...

    from typer.testing import CliRunner

    shown = " ".join(CliRunner().invoke(probe, ["--help"]).output.split())
    assert "Rows [len, d]; a closing tag [/x] and [bold]not bold[/bold]." in shown and "Switch [/x] on." in shown


# -- start-up ------------------------------------------------------------------------------------


def test_help_imports_no_numpy_torch_or_matplotlib():
    code = (
        "import sys\n"
        "from pecli.cli.app import COMMANDS, main\n"
        "for args in ([], *([c] for c in COMMANDS)):\n"
        "    try:\n"
        "        main([*args, '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    heavy = sorted(m for m in ('numpy', 'torch', 'matplotlib') if m in sys.modules)\n"
        "    print(' '.join(args) or 'pecli', heavy, file=sys.stderr)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    report = completed.stderr.strip().splitlines()
    assert len(report) == len(COMMANDS) + 1, completed.stderr
    assert all(line.endswith(" []") for line in report), report
