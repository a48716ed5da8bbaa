"""Shared test helpers: run pecli in-process (fast) or as a real subprocess (pipes, exit codes)."""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def _load_numpy_with_one_blas_thread() -> None:
    """Load numpy's OpenBLAS with one thread in this (test or xdist worker) process only.

    OpenBLAS starts one thread per core and spins them while waiting for work: with an xdist worker
    per core that oversubscribes the cores, and the spinning alone doubled the CPU time of the
    SVD-heavy test files (tests/analysis/test_pca.py: 10.0 s → 4.0 s of CPU). OpenBLAS reads the
    variable once, when it loads, so it is restored at once: the children the tests start (pecli as
    a real process, tests/schemes/test_determinism.py's runs under other thread counts) inherit the
    environment as it was. A value the caller set is kept.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


_load_numpy_with_one_blas_thread()


def _cache_bytecode() -> None:
    """Let Python cache what it compiles, as it does by default, where the environment turned that off.

    With PYTHONDONTWRITEBYTECODE set (this project's machines set it), every pecli process a test starts
    compiles pecli from source again (0.40 s of CPU for ``generate --d 8 --len 8`` against 0.31 s from the
    cache), and pytest rewrites every test module's asserts again in each worker. The children inherit the
    change; what they run is the same code either way (benchmarks/harness.py does the same for timings).
    """
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_cache_bytecode()


@dataclass
class Result:
    code: int
    stdout: bytes
    stderr: str

    @property
    def out(self) -> str:
        return self.stdout.decode()


class _Stdout(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


def run_in_process(*args: str, stdin: bytes = b"", cwd: str | None = None) -> Result:
    """Run ``pecli ARGS`` in this process through the real entry point; returns a :class:`Result`.

    The streams, the working directory and the warning filters are restored afterwards. A warning
    raised during the run is written to the result's stderr as Python would print it, so that a
    check for a clean error sees it (pytest would otherwise record it out of sight).
    """
    import warnings

    from pecli.cli.app import main

    raw_out = io.BytesIO()
    stdout = _Stdout(raw_out, encoding="utf-8", write_through=True)
    stderr = io.StringIO()
    stdin_stream = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        patch.setattr(sys, "stdout", stdout)
        patch.setattr(sys, "stderr", stderr)
        patch.setattr(sys, "stdin", stdin_stream)
        if cwd is not None:
            patch.chdir(cwd)
        code = main(list(args))
        stdout.flush()
    printed = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in caught)
    return Result(code, raw_out.getvalue(), stderr.getvalue() + printed)


@pytest.fixture
def cli():
    """:func:`run_in_process` as a fixture: ``cli("generate", …)``."""
    return run_in_process


def run_pecli(
    *args: str, stdin: bytes | None = None, cwd: str | None = None, env: dict | None = None, timeout: float = 120
):
    """Run ``python -m pecli ARGS`` as a real process."""
    environment = {**os.environ, **(env or {})}
    environment.pop("PECLI_DEBUG", None)
    completed = subprocess.run(
        [sys.executable, "-m", "pecli", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=environment,
        timeout=timeout,
    )
    return Result(completed.returncode, completed.stdout, completed.stderr.decode())


def default_sigint() -> None:
    """``preexec_fn`` for a child that the test interrupts or stops: Ctrl-C (SIGINT), SIGTERM and SIGHUP act
    as they do in a terminal.

    A shell starts a background job (``pytest … &``) with SIGINT ignored, ``nohup`` starts one with SIGHUP
    ignored, and an ignored signal stays ignored across exec (pecli keeps it so, on purpose), so without
    this the child would never see the test's signal.
    """
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def assert_clean_error(result: Result, code: int, *words: str) -> None:
    """A one-line error on stderr naming the problem, the exit code, and no traceback."""
    assert result.code == code, (result.code, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pecli: error: "), lines[0]
    for word in words:
        assert word.lower() in lines[0].lower(), (word, lines[0])


def assert_reproduces(run: Callable[..., Result], output: str, target: Path, tmp_path: Path, suffix: str = "") -> None:
    """The ``reproduce:`` command identify printed in ``output``, run by ``run`` with ``-o`` redirected into
    ``tmp_path`` (a file of ``suffix``, else of ``target``'s), writes a table compare finds the same as ``target``."""
    line = next(line for line in output.splitlines() if line.strip().startswith("reproduce:"))
    words = shlex.split(line.split("reproduce:", 1)[1])
    written = tmp_path / ("again" + (suffix or target.suffix))
    words[words.index("-o") + 1] = str(written)
    assert run(*words[1:]).code == 0, line
    compared = run("compare", str(target), str(written))
    assert compared.code == 0, compared.out


#: the address space a memory test's child process gets (1.5 GiB): a regression cannot take the machine down
CAPPED_BYTES = 3 << 29


def run_capped(*args: str, code: str | None = None, timeout: int = 240) -> subprocess.CompletedProcess[str]:
    """``pecli ARGS`` (or Python ``code``) in a real process under an address-space cap of :data:`CAPPED_BYTES`,
    run from the checkout: for tests whose subject is the memory a command takes."""
    from tests.paths import ROOT

    prefix = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({CAPPED_BYTES}, {CAPPED_BYTES}))\n"
    body = code or f"import sys; sys.argv = ['pecli', *{list(args)!r}]\nfrom pecli.__main__ import main\nmain()\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PECLI_DEBUG", None)
    return subprocess.run([sys.executable, "-c", prefix + body], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(ROOT))  # fmt: skip


#: resident memory of the interpreter with numpy and pecli imported, no table read (measured: 60–70 MB)
INTERPRETER_MB = 110


def run_peak(*args: str) -> tuple[int, str, str, float]:
    """``pecli ARGS`` in a child capped as :func:`run_capped`: its exit code, stdout, stderr, and peak resident
    memory in MB (VmHWM, read by the child itself as it ends)."""
    code = (
        f"import sys; sys.argv = ['pecli', *{list(args)!r}]\n"
        "from pecli.__main__ import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    sys.stdout.flush()\n"
        "    peak = [line for line in open('/proc/self/status') if line.startswith('VmHWM')][0]\n"
        "    sys.stderr.write('\\n' + peak.split()[1] + '\\n')\n"
    )
    done = run_capped(code=code)
    *lines, peak = done.stderr.rstrip("\n").split("\n")
    return done.returncode, done.stdout, "\n".join(lines).strip(), int(peak) / 1024.0


def run_measured(
    *args: str, cwd: str | None = None, address_limit: int | None = None, timeout: int = 300
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m pecli ARGS`` in a fresh child (under ``address_limit`` bytes of address space, when given):
    its result and its peak resident memory in MiB, for tests whose subject is the memory a command takes."""
    from tests.paths import ROOT

    code = (
        "import resource, subprocess, sys;"
        + (f"resource.setrlimit(resource.RLIMIT_AS, ({address_limit}, {address_limit}));" if address_limit else "")
        + "r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr);"
        "sys.exit(r.returncode)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("PECLI_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "pecli", *args], capture_output=True,
                          text=True, cwd=cwd or str(ROOT), env=env, timeout=timeout, check=False)  # fmt: skip
    *lines, peak = done.stderr.rstrip("\n").split("\n")
    done.stderr = "\n".join(lines)
    return done, int(peak) / 1024.0


def require_tool(name: str) -> str:
    """The path of an external tool; a missing one skips the test, but fails it in CI (CI set)."""
    import shutil

    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (.ci/run installs it: apt-get install -y {name})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def require_module(name: str) -> Any:
    """A module the test extra installs (torch, transformers, diffusers, gguf…); a missing one skips the
    test, but fails it in CI (CI set), as :func:`require_tool` does for external tools."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"{name} is not installed (the test extra has it: pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def shell_env(tmp_path_factory) -> dict[str, str]:
    """An environment whose PATH has a ``pecli`` running this checkout with this interpreter."""
    bin_dir = tmp_path_factory.mktemp("bin")
    launcher = bin_dir / "pecli"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pecli "$@"\n')
    launcher.chmod(0o755)
    python = bin_dir / "python"  # the docs' python -c lines run with this interpreter (numpy installed)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BASH_FUNC_", "_PECLI"))}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent), env.get("PYTHONPATH")])),
        HOME=str(tmp_path_factory.mktemp("home")),
    )
    return env


def run_in_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Run ``python -m pecli ARGS`` on a pseudo-terminal (stdin, stdout, stderr); (exit code, all it drew)."""
    pty = pytest.importorskip("pty")
    pid, fd = pty.fork()
    if pid == 0:  # child: the terminal is its controlling tty
        os.environ.update(env or {})
        os.execvp(sys.executable, [sys.executable, "-m", "pecli", *args])
    output = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        output += data
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which turns numprocesses into workers
def pytest_cmdline_main(config):
    """Spread the tests over every core when pytest-xdist is installed (the ``test`` extra has it).

    Most of the suite's time is child processes and numpy, which two workers overlap; ``-n 0``
    runs everything in this process (as does ``--pdb``).
    """
    if (
        config.pluginmanager.hasplugin("xdist")
        and config.getoption("numprocesses", None) is None
        and not hasattr(config, "workerinput")
        and not config.getoption("collectonly")
    ):
        config.option.numprocesses = "auto"
        if config.getoption("dist", "no") == "no":
            config.option.dist = "loadgroup"  # a module marked xdist_group stays in one worker (one slow import)


#: the slowest tests by ``--durations`` (identify over every preset and peer table, the docs' console
#: examples, the installed wheel): marked ``slow`` so that ``-m "not slow"`` skips them while working
SLOW_TESTS = (
    "tests/analysis/test_identify.py::",
    "tests/schemes/test_peer_corpus.py::",
    "tests/test_docs.py::test_console_examples_show_real_output",
    "tests/test_packaging.py::test_installed_wheel_runs_without_the_checkout",
)


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)


class _LoadGroupIds:
    """Give a test marked ``xdist_group`` the ``@group`` suffix that ``--dist loadgroup`` schedules by.

    pytest-xdist 3.8 sets ``item._nodeid``, which pytest 9 no longer reads (a node's id is ``item._id``):
    every ``xdist_group`` mark was a no-op, and a module fixture that builds something (the gallery,
    the sdist and wheel) or imports transformers ran once in each worker.
    """

    @pytest.hookimpl(trylast=True)  # after xdist's own hook, which means to add the suffix
    def pytest_collection_modifyitems(self, config, items):
        from _pytest.nodeid import NodeId

        for item in items:
            names = {mark.args[0] if mark.args else mark.kwargs.get("name", "default")
                     for mark in item.iter_markers("xdist_group")}  # fmt: skip
            suffix = "@" + "_".join(sorted(map(str, names)))
            if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
                item._id = NodeId.parse(item.nodeid + suffix)


def pytest_configure(config):
    if getattr(config.option, "loadgroup", False):  # set in an xdist worker under --dist loadgroup
        config.pluginmanager.register(_LoadGroupIds(), "pecli-loadgroup-ids")
