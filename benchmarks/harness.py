"""A small benchmark harness: whole-process timings of alternating commands, medians, ratios.

Commands run round-robin (A, B, C, A, B, C, …) so that a noisy, shared machine slows them all
alike; every command also runs once untimed first (disk cache, bytecode). Results go to stdout
and into one section of ``benchmarks/RESULTS.md`` (each script owns a section, marked by HTML
comments, so the scripts can run in any order).

>>> median_ms([0.1, 0.3, 0.2])
200.0
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
RESULTS = BENCHMARKS / "RESULTS.md"


def python_env() -> dict[str, str]:
    """The environment for child processes: this checkout's pecli first on the path.

    Bytecode caching stays on (as after ``pip install``): with PYTHONDONTWRITEBYTECODE set, every
    run would compile pecli's edited modules from source and time the compiler.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("PECLI_DEBUG", None)
    return env


def time_commands(
    commands: Mapping[str, Sequence[str]],
    *,
    repeats: int,
    cwd: str | Path | None = None,
    cpu: dict[str, list[float]] | None = None,
) -> dict[str, list[float]]:
    """Seconds per run of each command (whole process, stdout/stderr discarded), alternating.

    With ``cpu``, each run's CPU seconds (user + system of the child) are appended there too: on a
    shared machine the wall time includes waiting for other jobs' turns, the CPU time does not.
    """
    env = python_env()

    def children_cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    def once(argv: Sequence[str], label: str | None = None) -> float:
        before = children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(argv)}\n{done.stderr.decode()}")
        if cpu is not None and label is not None:
            cpu.setdefault(label, []).append(children_cpu() - before)
        return elapsed

    for argv in commands.values():
        once(argv)
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(repeats):
        for label, argv in commands.items():
            times[label].append(once(argv, label))
    return times


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages (/proc/loadavg), as one would quote them."""
    with open("/proc/loadavg") as loadavg:
        return ", ".join(loadavg.read().split()[:3])


def time_in_fresh_processes(snippets: Mapping[str, str], *, setup: str = "", repeats: int) -> dict[str, list[float]]:
    """Seconds of ``snippet`` timed inside fresh Python processes (after ``setup``), alternating.

    Each run is a new process, so that the address layout of the output and its temporaries
    (which can swing a memory-bound loop by 4×) is drawn anew, as it is for a user.
    """
    env = python_env()
    template = "import time\n{setup}\nstart = time.perf_counter()\n{snippet}\nprint(time.perf_counter() - start)\n"
    times: dict[str, list[float]] = {label: [] for label in snippets}
    for _ in range(repeats):
        for label, snippet in snippets.items():
            code = template.format(setup=setup, snippet=snippet)
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"benchmark snippet {label!r} failed:\n{done.stderr}")
            times[label].append(float(done.stdout.split()[-1]))
    return times


def median_ms(seconds: Sequence[float]) -> float:
    """Median of timings in seconds, as milliseconds."""
    return round(statistics.median(seconds) * 1000, 1)


def machine() -> str:
    """One line naming the machine: CPU model, cores usable, Python and numpy versions."""
    model = platform.processor() or platform.machine()
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    import numpy

    return f"{model}, {cores} cores, Linux, Python {platform.python_version()}, numpy {numpy.__version__}"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table.

    >>> print(table(["a", "b"], [[1, 2]]))
    | a | b |
    |---|---|
    | 1 | 2 |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def record(section: str, title: str, body: str) -> None:
    """Replace (or add) ``section`` of RESULTS.md with ``body``, stamped with the date and machine."""
    stamp = f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}."
    block = f"<!-- {section} -->\n## {title}\n\n{stamp}\n\n{body.strip()}\n<!-- /{section} -->"
    fresh = "# Benchmark results\n\nWritten by the scripts in `benchmarks/`.\n"
    text = RESULTS.read_text() if RESULTS.exists() else fresh
    pattern = re.compile(rf"<!-- {re.escape(section)} -->.*?<!-- /{re.escape(section)} -->", re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)
    print(f"\n(recorded in {RESULTS.relative_to(ROOT)}, section {section!r})")
