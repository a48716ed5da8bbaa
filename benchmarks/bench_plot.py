"""Issues 8 and 32: how fast ``pecli plot`` draws, whole process, on this machine.

Goals:
- the terminal heatmap of a 2048 × 512 table (``--width 100``) within 1.5× of ``python -c "import numpy"``
  (issue 32; 1.8× in issue 8), taken pair by pair in the same run;
- the PNG heatmap of 2048 × 512 in under 1.5 s, and of 65536 × 1024 in under 5 s;
- ALiBi's 16 heads as small multiples (``plot alibi --heads 16 --len 512 -o a.png``) within 1.2× of
  a bare matplotlib script drawing the same 16 panels (:data:`BARE_PANELS`), pair by pair (issue 32).

Commands run round-robin (numpy, terminal, PNG, numpy, …) so that a busy, shared machine slows
them alike; each runs once untimed first (disk cache, bytecode), then ``--repeats`` times. The
ratio to the numpy import is taken run by run (each terminal run over the numpy run just before
it) and quoted as median and min–max, with the load average before and after. The tables are
.npy files written by ``pecli generate`` into a temporary directory (the 65536 × 1024 one is 256 MiB).

    python benchmarks/bench_plot.py [--repeats 15] [--terminal-only | --panels-only]
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
PANELS = "PNG small multiples, alibi 16 heads × 512"
BARE = "bare matplotlib script, the same 16 panels"
#: the anchor for the small multiples: what one would write by hand for the same figure (8 × 6 in at
#: 100 dpi, constrained layout, imshow of each 512 × 512 head, one colourbar, titles and axis labels)
BARE_PANELS = """
import sys
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

heads, length = 16, 512
slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)
distance = -np.abs(np.subtract.outer(np.arange(length), np.arange(length)))
figure = Figure(figsize=(8, 6), dpi=100, layout="constrained")
FigureCanvasAgg(figure)
grid = figure.subplots(4, 4, sharex=True, sharey=True)
for index, (axes, slope) in enumerate(zip(grid.flat, slopes)):
    image = axes.imshow(distance * slope, aspect="auto", vmin=distance.min() * slopes[0], vmax=0)
    axes.set_title(f"head {index}, slope {slope:.4g}", fontsize=8)
figure.colorbar(image, ax=grid.ravel().tolist(), label="value")
figure.suptitle(f"alibi, {length}: heads={heads}")
figure.supxlabel("Key position j")
figure.supylabel("Query position i")
figure.savefig(sys.argv[1], dpi=100)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--terminal-only", action="store_true", help="time the terminal heatmap alone (no PNGs)")
    parser.add_argument("--panels-only", action="store_true", help="time the small multiples and their anchor alone")
    args = parser.parse_args()
    os.environ["COLORTERM"] = "truecolor"  # the terminal case draws 24-bit colour, its most expensive output
    os.environ.pop("NO_COLOR", None)
    python = sys.executable
    pecli = [python, "-m", "pecli"]
    with tempfile.TemporaryDirectory(prefix="bench-plot-") as workdir:
        small, large = os.path.join(workdir, "pe.npy"), os.path.join(workdir, "big.npy")
        if not args.panels_only:
            subprocess.run(
                [*pecli, "generate", "--d", "512", "--len", "2048", "-o", small], env=python_env(), check=True
            )
        commands = {
            NUMPY: [python, "-c", "import numpy"],
            TERMINAL: [*pecli, "plot", small, "--terminal", "--width", "100"],
        }
        if args.panels_only:
            commands = {}
        if not args.terminal_only:
            commands[BARE] = [python, "-c", BARE_PANELS, os.path.join(workdir, "bare.png")]
            commands[PANELS] = [*pecli, "plot", "alibi", "--heads", "16", "--len", "512", "-o",
                                os.path.join(workdir, "panels.png")]  # fmt: skip
        if not (args.terminal_only or args.panels_only):
            subprocess.run(
                [*pecli, "generate", "--d", "1024", "--len", "65536", "-o", large], env=python_env(), check=True
            )
            commands["PNG heatmap, 2048 × 512"] = [*pecli, "plot", small, "-o", os.path.join(workdir, "small.png")]
            commands["PNG heatmap, 65536 × 1024"] = [*pecli, "plot", large, "-o", os.path.join(workdir, "large.png")]
        load_before = load_average()
        cpu: dict[str, list[float]] = {}
        times = time_commands(commands, repeats=args.repeats, cpu=cpu)
        load_after = load_average()

    def pairs(label: str, anchor: str) -> str:
        """``label`` over ``anchor`` run by run (each over the anchor's run in the same round): wall and CPU."""
        if label not in times or anchor not in times:
            return ""
        wall = [a / b for a, b in zip(times[label], times[anchor], strict=True)]
        used = [a / b for a, b in zip(cpu[label], cpu[anchor], strict=True)]
        return (f"wall {statistics.median(wall):.2f}× ({min(wall):.2f}–{max(wall):.2f}), "
                f"CPU {statistics.median(used):.2f}× ({min(used):.2f}–{max(used):.2f})")  # fmt: skip

    def ratio_of(label: str, anchor: str) -> float:
        if label not in times or anchor not in times:
            return float("nan")
        return statistics.median(a / b for a, b in zip(times[label], times[anchor], strict=True))

    ratio, panels_ratio = ratio_of(TERMINAL, NUMPY), ratio_of(PANELS, BARE)
    goals = {
        PANELS: f"≤ 1.2× the bare script: {'met' if panels_ratio <= 1.2 else 'NOT met'}",
        TERMINAL: f"≤ 1.5× import numpy: {'met' if ratio <= 1.5 else 'NOT met'}",
        "PNG heatmap, 2048 × 512": "< 1.5 s",
        "PNG heatmap, 65536 × 1024": "< 5 s",
    }
    rows = [
        [label, f"{median_ms(seconds):.0f}", f"{min(seconds) * 1000:.0f}–{max(seconds) * 1000:.0f}",
         f"{median_ms(cpu[label]):.0f}", goals.get(label, "")]
        for label, seconds in times.items()
    ]  # fmt: skip
    summary = "; ".join(
        f"{what}, pair by pair: {pairs(label, anchor)}"
        for what, label, anchor in (
            ("terminal / numpy import", TERMINAL, NUMPY),
            ("small multiples / bare script", PANELS, BARE),
        )
        if pairs(label, anchor)
    )
    text = (
        f"`pecli plot`, whole process, {args.repeats} alternating rounds; load average {load_before} before, "
        f"{load_after} after.\n\n"
        + table(["command", "median ms", "min–max ms", "CPU ms", "goal"], rows)
        + f"\n\n{summary}."
    )
    print(text)
    section = ("plot-panels", "Small multiples against a bare matplotlib script (issue 32)") if args.panels_only else (
        "plot", "Plotting, whole process (issues 8 and 32)")  # fmt: skip
    record(*section, text)


if __name__ == "__main__":
    main()
