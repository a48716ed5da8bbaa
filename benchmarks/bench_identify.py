"""How fast ``identify`` names a table, in-process and warm, against reading the same table from disk.

Goals: a 512 × 384 table (a trained-BERT-like random one, and a sinusoidal one) in ≤ 2 s, a
65536 × 512 table in ≤ 5 s, the 65536 × 1024 sinusoidal float32 table (256 MiB, issue 32) in
≤ 2 s, a 1 × 10^6 sinusoidal row (4 MB, issue 30 class 4: 50–60 s when every candidate was
screened at full width) in ≤ 5 s. The baseline of each size is ``np.load`` of its .npy file, timed in the same run, so a
busy machine slows both alike. Cases run round-robin after one untimed warm-up; the median,
interquartile range and median CPU time (the process's own, which a busy machine does not
inflate) are printed and recorded in benchmarks/RESULTS.md.

    python benchmarks/bench_identify.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pecli
from benchmarks.harness import record, table
from pecli.analysis.identify import identify_table

#: the goals, seconds, by table size
GOALS = {(512, 384): 2.0, (65536, 512): 5.0, (65536, 1024): 2.0, (1, 10**6): 5.0}


def _tables() -> dict[str, np.ndarray]:
    random = np.random.default_rng(0)
    return {
        "512 × 384 random (BERT-like, N(0, 0.02²))": random.normal(0.0, 0.02, (512, 384)).astype(np.float32),
        "512 × 384 sinusoidal": pecli.encode("sinusoidal", 512, 384),
        "65536 × 512 sinusoidal": pecli.encode("sinusoidal", 65536, 512),
        "65536 × 512 random": random.normal(0.0, 0.02, (65536, 512)).astype(np.float32),
        "65536 × 1024 sinusoidal": pecli.encode("sinusoidal", 65536, 1024),
        # wide: a few hundred candidates, each screened on a sample of the columns first
        "1 × 1000000 sinusoidal": pecli.encode("sinusoidal", 1, 10**6),
    }


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-identify-") as workdir:
        cases: dict[str, tuple[Callable[[], object], tuple[int, int]]] = {}
        for label, values in _tables().items():
            path = Path(workdir) / f"{len(cases)}.npy"
            np.save(path, values)
            read = f"np.load, {label.split(' ')[0]} × {label.split(' ')[2]}"
            cases.setdefault(read, (lambda path=path: np.load(path), values.shape))
            cases[f"identify, {label}"] = (lambda path=path: identify_table(np.load(path)), values.shape)
        for work, _ in cases.values():
            work()
        samples: dict[str, list[tuple[float, float]]] = {label: [] for label in cases}
        for _ in range(args.repeats):
            for label, (work, _) in cases.items():
                samples[label].append(_timed(work))
    rows = []
    for label, timings in samples.items():
        walls = sorted(wall for wall, _ in timings)
        median = statistics.median(walls)
        q1, _, q3 = statistics.quantiles(walls, n=4) if len(walls) > 1 else (median, median, median)
        shape = cases[label][1]
        read = statistics.median(wall for wall, _ in samples[f"np.load, {shape[0]} × {shape[1]}"])
        goal = GOALS[shape] if label.startswith("identify") else None
        rows.append(
            [
                label,
                f"{median * 1000:.0f}",
                f"{q1 * 1000:.0f}–{q3 * 1000:.0f}",
                f"{statistics.median(cpu for _, cpu in timings) * 1000:.0f}",
                f"{median / read:.1f}",
                f"≤ {goal:g} s: {'met' if median <= goal else 'NOT met'}" if goal else "",
            ]
        )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    body = (
        f"In one process, warm, cases alternating; {args.repeats} runs each (load average {load}). × read = "
        "median over the median of np.load of the same .npy file in this run; on a busy machine the "
        "CPU column is what identify itself used.\n\n"
        + table(["case", "median ms", "IQR ms", "CPU ms", "× read", "goal"], rows)
    )
    print(body)
    record("identify", "identify speed", body)


if __name__ == "__main__":
    main()
