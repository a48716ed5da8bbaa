"""How fast the analysis core runs on long tables, in-process on this machine.

- the offset profile of 262144 positions (``distance --profile``), which never builds the matrix;
- the whole 8192 × 8192 matrix in row blocks (``distance -o dist.npy``), blocks discarded;
- ``identify`` and ``compare`` (with its diagnosis) on a 65536 × 512 float32 table.

Each case runs ``--repeats`` times; the median is printed in a Markdown table.

    python benchmarks/bench_analysis.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pecli
from pecli.analysis import compare_tables, distance_blocks, identify_table, offset_profile


def _median_seconds(work: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    long_table = pecli.encode("sinusoidal", 262144, 64)
    square = pecli.encode("sinusoidal", 8192, 512)
    fairseq = pecli.encode(None, 65536, 512, preset="fairseq")
    tensor2tensor = pecli.encode(None, 65536, 512, preset="tensor2tensor")
    cases = {
        "profile, 262144 × 64, offsets 0..1024 (euclidean)": lambda: offset_profile(
            long_table, "euclidean", max_offset=1024
        ),
        "matrix in row blocks, 8192 × 512 (dot)": lambda: sum(len(b) for b in distance_blocks(square, "dot")),
        "identify, 65536 × 512 (fairseq)": lambda: identify_table(fairseq),
        "compare + diagnosis, 65536 × 512 (fairseq vs tensor2tensor)": lambda: compare_tables(fairseq, tensor2tensor),
    }
    today = datetime.date.today().isoformat()
    print(
        f"pecli analysis core, median of {args.repeats} runs ({today}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()})\n"
    )
    print("| case | median |")
    print("|---|---:|")
    for label, work in cases.items():
        print(f"| {label} | {_median_seconds(work, args.repeats):.2f} s |")


if __name__ == "__main__":
    main()
