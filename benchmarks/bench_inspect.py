"""Issue 32: inspecting a big table in bounded memory (compare against a spec, info --stats, identify).

Writes a 65536 × 1024 float32 table (256 MiB) with ``pecli generate`` as .npy and .safetensors and
times, as whole processes, alternating: ``pecli compare BIG sinusoidal``, ``pecli info BIG --stats``
and ``pecli identify BIG`` for both files, next to the anchors ``python -c "import numpy;
numpy.load('big.npy')"`` (reading the table: the time anchor, and its peak RSS is the memory anchor,
one table) and ``python -c "import numpy"`` (start-up). Each command runs once untimed first, so the
page cache is warm. Peak RSS of each child comes from ``os.wait4``. Goals: compare ≤ 2 s and
≤ 3× one table; info --stats ≤ 1.5× one table; identify ≤ 2 s. And ``pecli identify`` of a RoPE cos table
of the same size (``pecli generate rope --part cos``, the table users most often hold): ≤ 3 s.

    python benchmarks/bench_inspect.py [--repeats 5] [--len 65536] [--d 1024]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

from harness import load_average, python_env, record, table

MIB = 1024 * 1024


def run_once(argv: Sequence[str], cwd: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one whole process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=python_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode not in (0, 1):  # compare exits 1 when the tables differ
        raise SystemExit(f"benchmark command failed ({child.returncode}): {' '.join(argv)}\n{stderr}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024 / MIB


def measure(
    commands: Mapping[str, Sequence[str]], *, repeats: int, cwd: str
) -> dict[str, list[tuple[float, float, float]]]:
    """Runs of each command, alternating, after one untimed run each (page cache, bytecode)."""
    for argv in commands.values():
        run_once(argv, cwd)
    runs: dict[str, list[tuple[float, float, float]]] = {label: [] for label in commands}
    for _ in range(repeats):
        for label, argv in commands.items():
            runs[label].append(run_once(argv, cwd))
    return runs


def spread(values: Sequence[float], scale: float = 1.0, digits: int = 0) -> str:
    """``median (min–max)`` of ``values`` times ``scale``."""
    middle, low, high = (f"{v * scale:.{digits}f}" for v in (statistics.median(values), min(values), max(values)))
    return f"{middle} ({low}–{high})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--len", dest="length", type=int, default=65536)
    parser.add_argument("--d", dest="dim", type=int, default=1024)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as work:
        for name in ("big.npy", "big.safetensors"):
            argv = [python, "-m", "pecli", "generate", "--d", str(args.dim), "--len", str(args.length), "-o", name]
            subprocess.run(argv, cwd=work, env=python_env(), check=True, stdout=subprocess.DEVNULL)
        rope = [python, "-m", "pecli", "generate", "rope", "--part", "cos", "--d", str(args.dim)]
        rope += ["--len", str(args.length), "-o", "rope.npy"]
        subprocess.run(rope, cwd=work, env=python_env(), check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(os.path.join(work, "big.npy"))
        read, start = "numpy.load('big.npy')", 'python -c "import numpy"'
        commands: dict[str, list[str]] = {
            start: [python, "-c", "import numpy"],
            read: [python, "-c", "import numpy; numpy.load('big.npy')"],
        }
        for name in ("big.npy", "big.safetensors"):
            commands[f"compare {name} sinusoidal"] = [python, "-m", "pecli", "compare", name, "sinusoidal"]
            commands[f"info {name} --stats"] = [python, "-m", "pecli", "info", name, "--stats"]
            commands[f"identify {name}"] = [python, "-m", "pecli", "identify", name]
        commands["identify rope.npy"] = [python, "-m", "pecli", "identify", "rope.npy"]
        load_before = load_average()
        runs = measure(commands, repeats=args.repeats, cwd=work)
        load_after = load_average()
    wall = {label: [r[0] for r in values] for label, values in runs.items()}
    cpu = {label: [r[1] for r in values] for label, values in runs.items()}
    rss = {label: [r[2] for r in values] for label, values in runs.items()}
    table_mib = statistics.median(rss[read])  # numpy.load's peak: the interpreter plus one table
    # seconds and multiples of one table, per verb (None: no goal)
    goals: dict[str, tuple[float | None, float | None]] = {
        "compare": (2.0, 3.0),
        "info": (None, 1.5),
        "identify": (2.0, None),
        "identify rope.npy": (3.0, None),  # RoPE's readings (layout, part, base, scalings) and its own candidates
    }
    rows = []
    verdicts = []
    for label in commands:
        seconds, peak = statistics.median(wall[label]), statistics.median(rss[label])
        read_ratios = [a / b for a, b in zip(wall[label], wall[read], strict=True)]
        goal_text = []
        verb = label if label in goals else label.split()[0]
        if verb in goals:
            time_goal, rss_goal = goals[verb]
            if time_goal is not None:
                ok = seconds <= time_goal
                goal_text.append(f"≤ {time_goal:g} s: {'met' if ok else 'NOT met'}")
            if rss_goal is not None:
                ok = peak <= rss_goal * table_mib
                goal_text.append(f"≤ {rss_goal:g}× one table: {'met' if ok else 'NOT met'}")
            figures = f"{label}: {seconds:.2f} s, {peak:.0f} MiB = {peak / table_mib:.2f}× one table"
            verdicts.append(f"{figures}; " + "; ".join(goal_text))
        rows.append([
            f"`{label}`", spread(wall[label], 1000), spread(cpu[label], 1000), spread(rss[label]),
            f"{peak / table_mib:.2f}", f"{statistics.median(read_ratios):.1f}", "; ".join(goal_text),
        ])  # fmt: skip
    body = (
        f"A {args.length} × {args.dim} float32 table ({size / MIB:.0f} MiB) as .npy and .safetensors (written by "
        f"`pecli generate`); whole process, page cache warm (one untimed run each first), {args.repeats} alternating "
        f"rounds, median (min–max); peak RSS from `os.wait4`. One table = the peak RSS of `{read}` "
        f"({table_mib:.0f} MiB, the interpreter included); × read = wall time over the read's, run by run. "
        f"Load average {load_before} before, {load_after} after (2 cores: on a busy machine the wall time includes "
        "waiting for other jobs; the CPU time is what the process used).\n\n"
        + table(["command", "wall ms", "CPU ms", "peak RSS MiB", "× one table", "× read", "goal (issue 32)"], rows)
    )
    print(body)
    print("\n" + "\n".join(verdicts))
    record("inspect-big", "Inspecting a big table: compare, info --stats, identify (issue 32)", body)


if __name__ == "__main__":
    main()
