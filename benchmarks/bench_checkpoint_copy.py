"""The checkpoint copy of ``resample --in-checkpoint`` against a plain copy of the same file (issue 33).

A 1 GiB .safetensors checkpoint (a 1 + 37×37 × 1024 float32 position table among large weights) is
written to a temporary directory; then, 5 times each, warm, in one run:

* ``shutil.copyfile`` of it (the plain copy: ``cp``'s work), and the same followed by ``fsync``
  (what pecli's atomic write does before its rename: the copy is on disk when pecli says so);
* :func:`pecli.io.checkpoint.replace_tensor` with the table resampled to 64×64.

Each pecli copy runs in a subprocess that reports its peak memory (``resource.getrusage`` maxrss),
compared with the table's size (the goal: ≤ 2×, over the interpreter's own baseline, which is
measured by the same subprocess before it reads anything). The files are deleted afterwards.

    python benchmarks/bench_checkpoint_copy.py [--size-mib 1024] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

CHILD = r"""
import json, resource, sys, time
import numpy as np
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from pecli.analysis.resample import resample_grid
from pecli.io.checkpoint import replace_tensor
from pecli.io import read_table
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
table = read_table(sys.argv[1], key="pos_embed").array
new = resample_grid(table, (64, 64), prefix_tokens=1, method="bicubic", antialias=True, dtype="float32")
resampled = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
copy_start = time.perf_counter()
replace_tensor(sys.argv[1], sys.argv[2], "pos_embed", new)
elapsed = time.perf_counter() - start
copy_seconds = time.perf_counter() - copy_start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "copy_seconds": copy_seconds, "peak_kib": peak, "base_kib": imported,
                  "resampled_kib": resampled, "table_bytes": new.nbytes}))
"""


def _checkpoint(path: str, size: int) -> None:
    from pecli.io import Tensor, write_tensors

    rng = np.random.default_rng(0)
    table = rng.standard_normal((1, 1 + 37 * 37, 1024)).astype(np.float32)
    rows = (size - table.nbytes) // (4 * 4096 * 4)
    tensors = {"pos_embed": Tensor.from_array(table)}
    for part in range(4):  # large weights written chunk by chunk: little memory while writing
        chunk = rng.standard_normal((256, 4096)).astype(np.float32)
        count = rows // 256
        tensors[f"blocks.{part}.weight"] = Tensor((count * 256, 4096), "float32", lambda c=chunk, n=count: [c] * n)
    write_tensors(path, tensors, fmt="safetensors", metadata={"format": "pt"})


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)), help="same disk as the repo")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = tempfile.mkdtemp(dir=args.dir, prefix=".bench-checkpoint-")
    try:
        source = os.path.join(folder, "model.safetensors")
        _checkpoint(source, args.size_mib << 20)
        size = os.path.getsize(source)
        plain, synced, pecli, peaks = [], [], [], []
        shutil.copyfile(source, os.path.join(folder, "warm"))  # warm the page cache
        os.unlink(os.path.join(folder, "warm"))
        for run in range(args.repeat):
            target = os.path.join(folder, f"plain{run}")
            start = time.perf_counter()
            shutil.copyfile(source, target)
            plain.append(time.perf_counter() - start)
            os.unlink(target)
            start = time.perf_counter()
            shutil.copyfile(source, target)
            descriptor = os.open(target, os.O_RDONLY)
            os.fsync(descriptor)
            os.close(descriptor)
            synced.append(time.perf_counter() - start)
            os.unlink(target)
            target = os.path.join(folder, f"new{run}.safetensors")
            env = {**os.environ, "PYTHONPATH": root}
            done = subprocess.run([sys.executable, "-c", CHILD, source, target], capture_output=True, text=True,
                                  env=env, check=True)  # fmt: skip
            report = json.loads(done.stdout)
            pecli.append(report["seconds"])
            peaks.append(report)
            os.unlink(target)
        table = peaks[0]["table_bytes"]
        extra = [(p["peak_kib"] - p["base_kib"]) * 1024 for p in peaks]
        print(f"file {size / 2**30:.2f} GiB; new table {table / 2**20:.1f} MiB; {args.repeat} runs each, warm")
        copies = [p["copy_seconds"] for p in peaks]
        print(f"shutil.copyfile:           {_spread(plain)}")
        print(f"shutil.copyfile + fsync:   {_spread(synced)}")
        print(f"replace_tensor (the copy): {_spread(copies)}")
        print(f"read + resample + copy:    {_spread(pecli)}")
        for name, base in (("a plain copy", plain), ("a copy + fsync", synced)):
            ratio = statistics.median(copies) / statistics.median(base)
            print(f"the copy (medians): {ratio:.2f}x {name}")
        during = max(max(0, p["peak_kib"] - p["resampled_kib"]) for p in peaks) * 1024
        print(f"the copy raised the memory high-water mark by {during / 2**20:.1f} MiB")
        peak = max(p["peak_kib"] for p in peaks) / 1024
        print(f"peak memory over the imported interpreter: {max(extra) / 2**20:.1f} MiB "
              f"= {max(extra) / table:.2f}x the new table (peak {peak:.0f} MiB)")  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
