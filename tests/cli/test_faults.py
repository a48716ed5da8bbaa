"""Faults while writing: kill -9, a full disk, Ctrl-C, a reader that goes away, odd targets.

The process tests wait for pecli's temporary file to appear (the write is under way) before they
strike, so they do not depend on timing.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import pecli
from pecli.errors import OutputError
from pecli.io import TEMP_MARKER, Tensor, check_free_space, read_table, write_tensors
from tests.conftest import assert_clean_error, default_sigint, run_pecli
from tests.mounts import tmpfs

PRECIOUS = b"the previous table, which must survive"
#: a 1 GiB table: far longer to write than the moment it takes to strike once the write began
LARGE = ("generate", "--d", "1024", "--len", "262144")


def _start(*args: str, cwd: str) -> subprocess.Popen:
    environment = {k: v for k, v in os.environ.items() if k != "PECLI_DEBUG"}
    return subprocess.Popen(
        [sys.executable, "-m", "pecli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
        preexec_fn=default_sigint,
    )


def _temporaries(directory) -> list[str]:
    return [name for name in os.listdir(directory) if TEMP_MARKER in name]


def _wait_for_write(process: subprocess.Popen, directory, timeout: float = 60) -> str:
    """Block until ``process`` has written bytes into its temporary file; return its name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode()
        for name in _temporaries(directory):
            try:
                if os.path.getsize(os.path.join(directory, name)) > 0:
                    return name
            except FileNotFoundError:
                pass
        time.sleep(0.005)
    process.kill()
    raise AssertionError("the write never started")


@pytest.mark.parametrize("existing", [True, False], ids=["previous-file", "no-file"])
def test_kill_9_during_a_large_write_keeps_the_previous_file(tmp_path, existing):
    target = tmp_path / "pe.npy"
    if existing:
        target.write_bytes(PRECIOUS)
    process = _start(*LARGE, "-o", "pe.npy", cwd=tmp_path)
    temporary = _wait_for_write(process, tmp_path)
    process.kill()
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    if existing:
        assert target.read_bytes() == PRECIOUS
    else:
        assert not target.exists()
    assert temporary.startswith(f".pe.npy{TEMP_MARKER}{process.pid}-")  # recognisable: target, marker, pid
    assert _temporaries(tmp_path) == [temporary]  # kill -9 leaves it; the next write next to it cleans up


def test_stale_temporaries_do_not_pile_up(tmp_path):
    for _ in range(2):
        process = _start(*LARGE, "-o", "pe.npy", cwd=tmp_path)
        _wait_for_write(process, tmp_path)
        process.kill()
        process.wait(timeout=30)
    assert len(_temporaries(tmp_path)) >= 1
    result = run_pecli("generate", "--d", "8", "--len", "4", "-o", "pe.npy", cwd=str(tmp_path))
    assert result.code == 0, result.stderr
    assert os.listdir(tmp_path) == ["pe.npy"]
    np.testing.assert_array_equal(np.load(tmp_path / "pe.npy"), pecli.encode(None, 4, 8))


def test_ctrl_c_exits_130_quietly_and_leaves_no_partial_file(tmp_path):
    (tmp_path / "pe.safetensors").write_bytes(PRECIOUS)
    process = _start(*LARGE, "-o", "pe.safetensors", cwd=tmp_path)
    _wait_for_write(process, tmp_path)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stderr.decode().strip() == "pecli: interrupted"
    assert os.listdir(tmp_path) == ["pe.safetensors"]
    assert (tmp_path / "pe.safetensors").read_bytes() == PRECIOUS


@pytest.mark.parametrize(
    ("signum", "code", "name"),
    [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP")],
    ids=["sigterm", "sighup"],
)
def test_sigterm_and_sighup_stop_like_ctrl_c(tmp_path, signum, code, name):
    """`timeout`, `docker stop` and systemd send SIGTERM; a closed terminal SIGHUP: no temporary is left."""
    (tmp_path / "pe.npy").write_bytes(PRECIOUS)
    process = _start(*LARGE, "-o", "pe.npy", cwd=tmp_path)
    _wait_for_write(process, tmp_path)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    assert stderr.decode().strip() == f"pecli: stopped by {name}"
    assert os.listdir(tmp_path) == ["pe.npy"]
    assert (tmp_path / "pe.npy").read_bytes() == PRECIOUS


def test_ctrl_c_once_the_file_is_written_is_a_success(tmp_path):
    """The rename is the commit: an interrupt after it (while "wrote" is printed, or at exit) exits 0."""
    for attempt in range(3):
        process = _start("generate", "--d", "64", "--len", "64", "-o", "pe.npy", cwd=tmp_path)
        line = process.stderr.readline()  # "wrote pe.npy: …", printed after the rename
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        assert process.wait(timeout=60) == 0, (attempt, line, rest)
        assert line.startswith(b"wrote pe.npy") and b"interrupted\n" not in rest.replace(b"written", b""), rest
        np.testing.assert_array_equal(np.load(tmp_path / "pe.npy"), pecli.encode(None, 64, 64))


def _python(source: str) -> subprocess.CompletedProcess:
    """Run ``source`` in a fresh interpreter (a signal's effects stay in that process)."""
    return subprocess.run([sys.executable, "-c", source], capture_output=True, timeout=60, check=False)


def test_a_signal_after_the_rename_reports_success():
    """Inside the process: an interrupt once a write completed says so and exits 0, not 130."""
    code = _python(
        "import sys, types, typer, pecli.io.atomic as atomic, pecli.cli.app as app\n"
        "atomic._COMPLETED.append('pe.npy')\n"
        "def interrupted(*args, **kwargs):\n"
        "    raise KeyboardInterrupt\n"
        "typer.main.get_command = lambda built: types.SimpleNamespace(main=interrupted)\n"
        "sys.exit(app.main(['generate']))",
    )
    assert code.returncode == 0, code.stderr
    assert code.stderr.decode().strip() == "pecli: interrupted after 'pe.npy' was completely written"


def test_an_interrupt_while_the_command_winds_down_reports_success():
    """The window CI once hit: Ctrl-C after the command returned, as pecli sets the signals aside for
    its exit. It is answered like one during the work (exit 0 after a completed write), no traceback."""
    code = _python(
        "import signal, sys, pecli.io.atomic as atomic, pecli.cli.app as app\n"
        "def finished(argv, output):\n"
        "    atomic._COMPLETED.append('pe.npy')\n"
        "    return 0\n"
        "app._run = finished\n"
        "setting_aside = signal.signal\n"
        "def interrupted(signum, handler):\n"
        "    if handler is signal.SIG_IGN:\n"
        "        raise KeyboardInterrupt\n"
        "    return setting_aside(signum, handler)\n"
        "signal.signal = interrupted\n"
        "sys.exit(app.main())",
    )
    assert code.returncode == 0, code.stderr
    assert code.stderr.decode().strip() == "pecli: interrupted after 'pe.npy' was completely written"


def test_an_interrupt_while_numpy_is_being_imported_is_one_line():
    """Ctrl-C in the middle of ``import numpy`` (the first half second of a run) left numpy half
    initialised; answering it imported pecli.io, so numpy again: "ImportError: cannot load module
    more than once per process", a traceback and exit 1. Now: one line, 130."""
    code = _python(
        "import sys, types, typer, pecli.cli.app as app\n"
        "def interrupted_importing_numpy(*args, **kwargs):\n"
        "    sys.modules['numpy'] = None  # as a broken import leaves it: importing it again fails\n"
        "    raise KeyboardInterrupt\n"
        "typer.main.get_command = lambda built: types.SimpleNamespace(main=interrupted_importing_numpy)\n"
        "sys.exit(app.main(['generate']))",
    )
    assert code.returncode == 130, code.stderr
    assert code.stderr.decode().strip() == "pecli: interrupted"


@pytest.mark.parametrize(
    ("args", "take"),
    [
        (("--format", "csv"), lambda stream: stream.readline()),
        ((), lambda stream: stream.read(100)),
    ],
    ids=["csv-head-1", "npy-head-c"],
)
def test_a_closed_stdout_pipe_is_quiet(tmp_path, args, take):
    """`pecli generate … -o - | head -1`: no traceback, no "Exception ignored", exit 0."""
    process = _start("generate", "--d", "256", "--len", "200000", "-o", "-", *args, cwd=tmp_path)
    assert take(process.stdout)
    process.stdout.close()  # what head does after its first line
    stderr = process.stderr.read()
    assert process.wait(timeout=60) == 0
    assert stderr == b""


def test_closed_pipe_through_a_real_shell(tmp_path):
    command = f"{sys.executable} -m pecli generate --d 64 --len 100000 -o - --format csv | head -1"
    completed = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, cwd=tmp_path, timeout=60, check=False
    )
    assert completed.returncode == 0 and completed.stderr == b""
    assert completed.stdout.decode().count(",") == 63


# ---------------------------------------------------------------------------------------------
# a full disk


def _fill_all_but(directory: str, keep_free: int) -> None:
    free = shutil.disk_usage(directory).free
    with open(os.path.join(directory, "filler"), "wb") as handle:
        handle.write(b"\0" * (free - keep_free))


def test_full_tmpfs_gives_a_clear_error_and_no_partial_file(tmp_path):
    """The space check passes (the data fits exactly) but the .npy header does not: a real ENOSPC."""
    with tmpfs(str(tmp_path / "small"), size="1m") as disk:
        with open(os.path.join(disk, "pe.npy"), "wb") as handle:
            handle.write(PRECIOUS)
        rows = shutil.disk_usage(disk).free // 4096  # rows of 1024 float32 = one 4 KiB page each
        result = run_pecli("generate", "--d", "1024", "--len", str(rows), "-o", "pe.npy", cwd=disk)
        assert_clean_error(result, 3, "cannot write 'pe.npy'", "disk is full")
        assert sorted(os.listdir(disk)) == ["pe.npy"]
        with open(os.path.join(disk, "pe.npy"), "rb") as handle:
            assert handle.read() == PRECIOUS


def test_full_tmpfs_refused_before_writing_when_the_table_is_larger_than_the_space(tmp_path):
    with tmpfs(str(tmp_path / "small"), size="1m") as disk:
        result = run_pecli("generate", "--d", "1024", "--len", "1024", "-o", "pe.safetensors", cwd=disk)
        assert_clean_error(result, 3, "would take 4.0 MiB", "free")
        assert os.listdir(disk) == []


def test_a_stale_temporary_is_removed_before_the_space_check(tmp_path):
    """After a kill -9 on a nearly full disk, the rerun must not count the dead run's temporary as used."""
    with tmpfs(str(tmp_path / "small"), size="1m") as disk:
        stale = os.path.join(disk, f".pe.npy{TEMP_MARKER}999999999-dead")
        with open(stale, "wb") as handle:
            handle.write(b"\0" * (shutil.disk_usage(disk).free - (300 << 10)))
        result = run_pecli("generate", "--d", "1024", "--len", "100", "-o", "pe.npy", cwd=disk)  # 400 KiB
        assert result.code == 0, result.stderr
        assert os.listdir(disk) == ["pe.npy"]


def test_unbuffered_stdout_on_a_full_disk_fails_instead_of_truncating(tmp_path):
    """With PYTHONUNBUFFERED=1 a write to stdout may take part of the bytes: every one is written, or exit 3."""
    with tmpfs(str(tmp_path / "small"), size="64k") as disk:
        with open(os.path.join(disk, "o.npy"), "wb") as sink:
            completed = subprocess.run(
                [sys.executable, "-m", "pecli", "generate", "--d", "64", "--len", "1000", "-o", "-"],
                stdout=sink,
                stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                timeout=60,
                check=False,
            )
        result = type("Result", (), {"code": completed.returncode, "stderr": completed.stderr.decode()})()
        assert_clean_error(result, 3, "no space left on device")


def test_unbuffered_stdout_writes_every_byte(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "pecli", "generate", "--d", "64", "--len", "5000", "-o", "-", "-q"],
        capture_output=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    np.testing.assert_array_equal(np.load(io.BytesIO(completed.stdout)), pecli.encode(None, 5000, 64))


def test_devices_and_pipes_are_not_checked_for_free_space(tmp_path):
    """/dev/null and a FIFO hold anything: the free space of the file system they live on does not apply."""
    fifo = tmp_path / "pe.fifo"
    os.mkfifo(fifo)
    for target in (os.devnull, str(fifo)):
        check_free_space(target, shutil.disk_usage(os.path.dirname(target)).free + (1 << 40))
    with pytest.raises(OutputError, match="more than the"):  # a regular file still is checked
        check_free_space(str(tmp_path / "pe.npy"), shutil.disk_usage(tmp_path).free + (1 << 40))


class _FullDisk:
    """A file object whose writes fail with ENOSPC once ``room`` bytes are written."""

    def __init__(self, handle, room: int) -> None:
        self._handle, self._room = handle, room

    def write(self, data) -> int:
        size = memoryview(data).nbytes
        if size > self._room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= size
        return self._handle.write(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()


@pytest.mark.parametrize("fmt", ["npy", "safetensors", "pt", "csv"])
def test_injected_enospc_mid_write(cli, tmp_path, monkeypatch, fmt):
    target = tmp_path / f"pe.{fmt}"
    target.write_bytes(PRECIOUS)
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: _FullDisk(real_fdopen(fd, *a, **k), room=1000))
    result = cli("generate", "--d", "64", "--len", "64", "-o", str(target))
    monkeypatch.undo()
    assert_clean_error(result, 3, f"cannot write '{target}'", "no space left", "disk is full")
    assert os.listdir(tmp_path) == [target.name]
    assert target.read_bytes() == PRECIOUS


# ---------------------------------------------------------------------------------------------
# odd targets


def test_a_device_is_written_in_place_not_replaced(tmp_path):
    before = os.stat(os.devnull)
    write_tensors(os.devnull, {"pe": Tensor.from_array(np.zeros((4, 4), np.float32))}, fmt="npy")
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_a_symlink_keeps_pointing_at_the_replaced_table(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "pe.npy").write_bytes(PRECIOUS)
    (tmp_path / "latest.npy").symlink_to(tmp_path / "tables" / "pe.npy")
    write_tensors(str(tmp_path / "latest.npy"), {"pe": Tensor.from_array(np.ones((2, 2), np.float32))}, fmt="npy")
    assert (tmp_path / "latest.npy").is_symlink()
    assert read_table(str(tmp_path / "tables" / "pe.npy")).array.tolist() == [[1, 1], [1, 1]]
    assert sorted(os.listdir(tmp_path / "tables")) == ["pe.npy"]


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "pe.npy"
    target.write_bytes(PRECIOUS)
    target.chmod(0o600)
    write_tensors(str(target), {"pe": Tensor.from_array(np.ones((2, 2), np.float32))}, fmt="npy")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_named_pipe_is_read_whole(tmp_path):
    """`pecli plot <(pecli generate … -o -)` hands over a pipe whose size is unknown up front."""
    fifo = tmp_path / "pe.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        [sys.executable, "-m", "pecli", "generate", "--d", "8", "--len", "5", "-o", str(fifo), "--format", "npy"]
    )
    table = read_table(str(fifo))
    assert writer.wait(timeout=60) == 0
    np.testing.assert_array_equal(table.array, pecli.encode(None, 5, 8))


def test_dev_stdout_on_a_pipe_is_written_in_place(tmp_path):
    result = run_pecli("generate", "--d", "8", "--len", "5", "-o", "/dev/stdout", "--format", "npy", "-q")
    assert result.code == 0, result.stderr
    np.testing.assert_array_equal(np.load(io.BytesIO(result.stdout)), pecli.encode(None, 5, 8))


# ---------------------------------------------------------------------------------------------
# exit codes: a runtime failure is 3, never the 1 that means "no"


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (RuntimeError("the angle cache is inconsistent"), ("internal error: RuntimeError", "PECLI_DEBUG=1")),
        (MemoryError(), ("out of memory", "--len")),
        (OSError(errno.EIO, os.strerror(errno.EIO), "pe.npy"), (os.strerror(errno.EIO), "'pe.npy'")),
    ],
    ids=["bug", "memory", "io-error"],
)
def test_unforeseen_failures_exit_3(cli, tmp_path, monkeypatch, fault, words):
    def fail(*args, **kwargs):
        raise fault

    monkeypatch.setattr("pecli.cli.common.write_table", fail)
    result = cli("generate", "--d", "4", "--len", "2", "-o", str(tmp_path / "pe.npy"))
    assert_clean_error(result, 3, *words)


def test_compare_tells_different_from_unwritable(cli, tmp_path):
    """1 is the answer "they differ"; a figure that cannot be written is a failure (3), even for equal tables."""
    assert cli("compare", "sinusoidal", "sinusoidal:base=500", "--d", "8", "--len", "4").code == 1
    result = cli("compare", "sinusoidal", "sinusoidal", "--d", "8", "--len", "4", "-o", str(tmp_path / "no" / "d.png"))
    assert_clean_error(result, 3, "does not exist")


def test_out_of_memory_on_a_file_names_the_file_not_the_generator_flags(tmp_path, monkeypatch, cli):
    """A MemoryError while reading a file is about that file and its size, never "--len or --d"."""
    np.save(tmp_path / "pe.npy", np.zeros((4, 8), np.float32))
    monkeypatch.chdir(tmp_path)

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("pecli.analysis.file_info.describe", exhausted)
    result = cli("info", "pe.npy")
    assert_clean_error(result, 3, "out of memory reading pe.npy (256 B)")
    assert "--len" not in result.stderr and "--d" not in result.stderr
