"""``pecli compare`` on tables larger than it may hold: peak RSS and speed of the streamed comparison.

Writes two tables of ``--len`` × ``--dim`` float32 (a .npy and a .safetensors of another layout,
so the comparison disagrees and diagnoses), then times ``pecli compare A B`` as a child process
and reports its peak resident memory (``getrusage``) against the goal of 512 MiB and its read
speed; deletes the files afterwards.

    python benchmarks/bench_compare_scale.py [--len 1048576] [--dim 1024] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from bench_scale import MEASURE
from harness import python_env, record, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--len", dest="length", type=int, default=1048576)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where to write (deleted afterwards)")
    args = parser.parse_args()
    nbytes = args.length * args.dim * 4
    if shutil.disk_usage(args.dir).free < 2.2 * nbytes:
        raise SystemExit(f"{args.dir} has not room for two tables of {nbytes / 2**30:.1f} GiB: use --len")
    env = python_env()
    workdir = tempfile.mkdtemp(prefix="pecli-bench-compare-", dir=args.dir)
    size = ["--d", str(args.dim), "--len", str(args.length)]
    pecli = [sys.executable, "-m", "pecli"]
    rows = []
    try:
        first, second = os.path.join(workdir, "a.npy"), os.path.join(workdir, "b.safetensors")
        subprocess.run([*pecli, "generate", *size, "-o", first], env=env, check=True)
        subprocess.run([*pecli, "generate", *size, "--layout", "split", "-o", second], env=env, check=True)
        for label, pair in (("same table (A, A)", [first, first]), ("other layout (A, B)", [first, second])):
            done = subprocess.run(
                [sys.executable, "-c", MEASURE, *pecli, "compare", *pair, "--json"],
                env=env,
                capture_output=True,
                text=True,
            )
            result = json.loads(done.stdout.strip().splitlines()[-1])
            read = 2 * nbytes / result["wall"] / 1e9
            rows.append(
                [label, result["rc"], f"{result['wall']:.1f}", f"{read:.2f}", f"{result['peak_rss'] / 2**20:.0f}"]
            )
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    peak = max(float(row[4]) for row in rows)
    body = (
        f"`pecli compare A B --json` on two {args.length} × {args.dim} float32 tables "
        f"({nbytes / 2**30:.1f} GiB each: A .npy, B .safetensors with the split layout), whole process, "
        "one run each; exit 0 = same, 1 = different (diagnosed on the leading rows); peak RSS from getrusage.\n\n"
        + table(["comparison", "exit", "seconds", "GB/s read", "peak RSS MiB"], rows)
        + f"\n\nPeak RSS {peak:.0f} MiB (goal < 512 MiB: {'met' if peak < 512 else 'NOT met'})."
    )
    print(body)
    record("compare-scale", "compare on tables larger than memory", body)


if __name__ == "__main__":
    main()
