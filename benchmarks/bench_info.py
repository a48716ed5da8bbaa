"""``pecli info --stats`` on files with many tensors: one pass over the file, whatever the count.

Writes a .safetensors file of N small float32 tensors (4 × 4 each) and times ``pecli info FILE
--stats`` and ``pecli info FILE --stats --json`` on it as whole processes (start-up included), next to
``pecli info FILE`` (the header alone) and ``python -c "import numpy"`` (the start-up floor),
alternating; median and range of wall and CPU (user + system) time, with the load average. The
goal: 10,000 tensors well under a second for the whole process; before the file was opened once,
each tensor re-read the file (40 s for 2,000 tensors).

    python benchmarks/bench_info.py [--tensors 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
from harness import load_average, median_ms, record, table, time_commands


def write_many(path: str, count: int) -> None:
    """A safetensors file of ``count`` float32 tensors of shape 4 × 4, through pecli's writer."""
    from pecli.io import Tensor, write_tensors

    rng = np.random.default_rng(0)
    tensors = {f"layer{i:05d}.weight": Tensor.from_array(rng.standard_normal((4, 4), np.float32)) for i in range(count)}
    write_tensors(path, tensors, fmt="safetensors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "many.safetensors")
        write_many(path, args.tensors)
        pecli = [sys.executable, "-m", "pecli", "info", path]
        load_before = load_average()
        cpu: dict[str, list[float]] = {}
        times = time_commands(
            {
                'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
                "pecli info (header)": pecli,
                "pecli info --stats": [*pecli, "--stats"],
                "pecli info --stats --json": [*pecli, "--stats", "--json"],
            },
            repeats=args.repeats,
            cpu=cpu,
        )
        load_after = load_average()
        size = os.path.getsize(path)
    rows = [
        [
            label,
            f"{median_ms(seconds):.0f} ({min(seconds) * 1e3:.0f}–{max(seconds) * 1e3:.0f})",
            f"{median_ms(cpu[label]):.0f} ({min(cpu[label]) * 1e3:.0f}–{max(cpu[label]) * 1e3:.0f})",
        ]
        for label, seconds in times.items()
    ]
    body = f"`pecli info` on a {size / 1024:.0f} KiB .safetensors file of {args.tensors} tensors (4 × 4 float32), "
    body += f"whole process, alternating, median (min–max) of {args.repeats}; load average {load_before} before, "
    body += f"{load_after} after. On a busy machine the wall time includes waiting for other jobs; "
    body += "the CPU time is what the process used.\n\n"
    body += table(["command", "wall ms", "CPU ms"], rows)
    print(body)
    record("info-many-tensors", "info --stats on many tensors (one pass)", body)


if __name__ == "__main__":
    main()
