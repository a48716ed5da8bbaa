"""Issues 8 and 32: how fast ``pecli plot`` draws, whole process, on this machine.

Goals:
- the terminal heatmap of a 2048 × 512 table (``--width 100``) within 1.5× of ``python -c "import numpy"``
  (issue 32; 1.8× in issue 8), taken pair by pair in the same run;
- the PNG heatmap of 2048 × 512 in under 1.5 s, and of 65536 × 1024 in under 5 s.

Commands run round-robin (numpy, terminal, PNG, numpy, …) so that a busy, shared machine slows
them alike; each runs once untimed first (disk cache, bytecode), then ``--repeats`` times. The
ratio to the numpy import is taken run by run (each terminal run over the numpy run just before
it) and quoted as median and min–max, with the load average before and after. The tables are
.npy files written by ``pecli generate`` into a temporary directory (the 65536 × 1024 one is 256 MiB).

    python benchmarks/bench_plot.py [--repeats 15] [--terminal-only]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from harness import load_average, median_ms, python_env, record, table, time_commands

TERMINAL = "terminal heatmap, 2048 × 512, --width 100"
NUMPY = 'python -c "import numpy"'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--terminal-only", action="store_true", help="time the terminal heatmap alone (no PNGs)")
    args = parser.parse_args()
    os.environ["COLORTERM"] = "truecolor"  # the terminal case draws 24-bit colour, its most expensive output
    os.environ.pop("NO_COLOR", None)
    python = sys.executable
    pecli = [python, "-m", "pecli"]
    with tempfile.TemporaryDirectory(prefix="bench-plot-") as workdir:
        small, large = os.path.join(workdir, "pe.npy"), os.path.join(workdir, "big.npy")
        subprocess.run([*pecli, "generate", "--d", "512", "--len", "2048", "-o", small], env=python_env(), check=True)
        commands = {
            NUMPY: [python, "-c", "import numpy"],
            TERMINAL: [*pecli, "plot", small, "--terminal", "--width", "100"],
        }
        if not args.terminal_only:
            subprocess.run(
                [*pecli, "generate", "--d", "1024", "--len", "65536", "-o", large], env=python_env(), check=True
            )
            commands["PNG heatmap, 2048 × 512"] = [*pecli, "plot", small, "-o", os.path.join(workdir, "small.png")]
            commands["PNG heatmap, 65536 × 1024"] = [*pecli, "plot", large, "-o", os.path.join(workdir, "large.png")]
        load_before = load_average()
        cpu: dict[str, list[float]] = {}
        times = time_commands(commands, repeats=args.repeats, cpu=cpu)
        load_after = load_average()

    ratios = [a / b for a, b in zip(times[TERMINAL], times[NUMPY], strict=True)]
    cpu_ratios = [a / b for a, b in zip(cpu[TERMINAL], cpu[NUMPY], strict=True)]
    ratio = statistics.median(ratios)
    goals = {
        TERMINAL: f"≤ 1.5× import numpy: {'met' if ratio <= 1.5 else 'NOT met'}",
        "PNG heatmap, 2048 × 512": "< 1.5 s",
        "PNG heatmap, 65536 × 1024": "< 5 s",
    }
    rows = [
        [label, f"{median_ms(seconds):.0f}", f"{min(seconds) * 1000:.0f}–{max(seconds) * 1000:.0f}",
         f"{median_ms(cpu[label]):.0f}", goals.get(label, "")]
        for label, seconds in times.items()
    ]  # fmt: skip
    summary = (
        f"terminal / numpy import, pair by pair: wall {ratio:.2f}× ({min(ratios):.2f}–{max(ratios):.2f}), "
        f"CPU {statistics.median(cpu_ratios):.2f}× ({min(cpu_ratios):.2f}–{max(cpu_ratios):.2f})"
    )
    text = (
        f"`pecli plot`, whole process, {args.repeats} alternating rounds; load average {load_before} before, "
        f"{load_after} after.\n\n"
        + table(["command", "median ms", "min–max ms", "CPU ms", "goal"], rows)
        + f"\n\n{summary}."
    )
    print(text)
    record("plot", "Plotting, whole process (issues 8 and 32)", text)


if __name__ == "__main__":
    main()
