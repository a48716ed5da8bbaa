"""Issue 8, part 4: how fast ``pecli plot`` draws, whole process, on this machine.

Goals:
- the terminal heatmap of a 2048 × 512 table within 1.8× of ``python -c "import numpy"``;
- the PNG heatmap of 2048 × 512 in under 1.5 s, and of 65536 × 1024 in under 5 s.

Commands run round-robin (numpy, terminal, PNG, numpy, …) so that a busy, shared machine slows
them alike; each runs once untimed first (disk cache, bytecode), then ``--repeats`` times; the
medians of wall and CPU time and the ratios are printed as a Markdown table. The tables are .npy files written by
``pecli generate`` into a temporary directory (the 65536 × 1024 one is 256 MiB).

    python benchmarks/bench_plot.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLORTERM"] = "truecolor"  # the terminal case draws 24-bit colour, its most expensive output
    env.pop("NO_COLOR", None)
    env.pop("PECLI_DEBUG", None)
    return env


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(argv)}\n{done.stderr.decode()}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _time_round_robin(commands: dict[str, list[str]], repeats: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each command, run alternately."""
    env = _environment()
    for argv in commands.values():
        _run(argv, env)
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for _ in range(repeats):
        for label, argv in commands.items():
            times[label].append(_run(argv, env))
    return {
        label: (statistics.median(t[0] for t in samples), statistics.median(t[1] for t in samples))
        for label, samples in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    pecli = [python, "-m", "pecli"]
    env = _environment()
    with tempfile.TemporaryDirectory(prefix="bench-plot-") as workdir:
        small, large = os.path.join(workdir, "pe.npy"), os.path.join(workdir, "big.npy")
        _run([*pecli, "generate", "--d", "512", "--len", "2048", "-o", small], env)
        _run([*pecli, "generate", "--d", "1024", "--len", "65536", "-o", large], env)
        commands = {
            'python -c "import numpy"': [python, "-c", "import numpy"],
            "terminal heatmap, 2048 × 512": [*pecli, "plot", small, "--terminal", "--width", "120", "--height", "40"],
            "PNG heatmap, 2048 × 512": [*pecli, "plot", small, "-o", os.path.join(workdir, "small.png")],
            "PNG heatmap, 65536 × 1024": [*pecli, "plot", large, "-o", os.path.join(workdir, "large.png")],
        }
        medians = _time_round_robin(commands, args.repeats)

    numpy_s = medians['python -c "import numpy"'][0]
    wall = {label: pair[0] for label, pair in medians.items()}
    goals = {
        "terminal heatmap, 2048 × 512": ("≤ 1.8× import numpy", wall["terminal heatmap, 2048 × 512"] / numpy_s <= 1.8),
        "PNG heatmap, 2048 × 512": ("< 1.5 s", wall["PNG heatmap, 2048 × 512"] < 1.5),
        "PNG heatmap, 65536 × 1024": ("< 5 s", wall["PNG heatmap, 65536 × 1024"] < 5.0),
    }
    today = datetime.date.today().isoformat()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"pecli plot, whole process, median of {args.repeats} alternating runs ({today}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {load}, Python {platform.python_version()})\n")  # fmt: skip
    print("| command | wall | CPU (user+sys) | wall × import numpy | goal | met |")
    print("|---|---:|---:|---:|---|---|")
    for label, (seconds, cpu) in medians.items():
        goal, met = goals.get(label, ("", None))
        verdict = "" if met is None else ("yes" if met else "NO")
        ratio = seconds / numpy_s
        print(f"| {label} | {seconds * 1000:.0f} ms | {cpu * 1000:.0f} ms | {ratio:.2f} | {goal} | {verdict} |")
    print("\nA busy machine inflates wall times; the CPU column is what the process itself used.")


if __name__ == "__main__":
    main()
