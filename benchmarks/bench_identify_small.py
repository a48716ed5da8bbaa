"""How fast ``identify`` names a SMALL table (what compare's readings and most tests ask), against generating it.

Issue 32: ``compare a.npy b.npy`` reads each side with identify, so identify of a 128 × 64 table sets its
time. The anchor is ``pecli.encode`` of the same table in the same run: identify's floor is a few
regenerations of it, so "× generate" is how many tables' worth of work identify does, and a busy machine
slows both alike (a time alone swung 3× with the load). Cases run round-robin after one untimed warm-up.

    python benchmarks/bench_identify_small.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pecli
from benchmarks.harness import load_average, record, table
from pecli.analysis.identify import identify_table
from pecli.schemes.timestep import timestep_embedding

#: (label, generate): each small table, as the cases in issue 32 name them
_TIMESTEPS = np.arange(0.0, 1000.0, 10.0)[::-1]
CASES: dict[str, Callable[[], np.ndarray]] = {
    "128 × 64 rope cos": lambda: pecli.encode("rope", 128, 64, part="cos"),
    "64 × 64 sinusoidal": lambda: pecli.encode("sinusoidal", 64, 64),
    "100 × 256 timestep (t = 990, 980, …, 0)": lambda: timestep_embedding(
        _TIMESTEPS, 256, dtype="float32", flip_sin_to_cos=True, freq_shift=0.0
    ),
}


def _median(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tables = {label: generate() for label, generate in CASES.items()}
    for values in tables.values():  # warm-up
        identify_table(values)
    samples: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in CASES}
    for _ in range(args.repeats):
        for label, generate in CASES.items():
            samples[label][0].append(_median(generate, 5))
            samples[label][1].append(_median(lambda values=tables[label]: identify_table(values), 1))
    rows = []
    for label, (generated, identified) in samples.items():
        generate, identify = statistics.median(generated), statistics.median(identified)
        rows.append([label, f"{identify * 1000:.0f}", f"{generate * 1000:.2f}", f"{identify / generate:.0f}"])
    body = (
        f"In one process, warm, cases alternating; {args.repeats} runs each (load average {load_average()}). "
        "× generate = identify's median over the median of pecli.encode of the same table in this run.\n\n"
        + table(["case", "identify ms", "generate ms", "× generate"], rows)
    )
    print(body)
    record("identify-small", "identify of small tables", body)


if __name__ == "__main__":
    main()
