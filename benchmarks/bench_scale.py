"""A table larger than memory streams to disk: peak RSS, speed against the disk's, exactness.

Runs ``pecli generate --d 1024 --len 4194304 -o big.npy`` (16 GiB) and the same to .safetensors
as child processes, in rounds that alternate with a dd-style plain sequential write of as many
bytes (the disk's speed), so that a shared disk's swings reach all three alike. Reports each
one's median time, peak resident memory (``getrusage``) and ratio to the plain write (and
.safetensors' to .npy), checks that the file loads with ``np.load(mmap_mode='r')`` (or
safetensors' ``safe_open``) and that sampled rows equal the float64 formula within 1e-6, then
deletes every file it wrote. Use ``--len`` for a smaller table when the disk is short of space
(it needs the table's size free, plus a fifth).

    python benchmarks/bench_scale.py [--len 4194304] [--dim 1024] [--dir /tmp] [--rounds 3] [--chunk-mib 32 64]
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

import numpy as np
from harness import load_average, python_env, record, table

#: runs a command as a child and prints its wall time and peak RSS (bytes) as JSON
MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:])
wall = time.perf_counter() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": done.returncode, "wall": wall, "peak_rss": used.ru_maxrss * 1024,
                  "cpu": used.ru_utime + used.ru_stime}))
"""

#: a plain sequential write of N bytes in 32 MiB pieces, then fsync: what the disk can do
PLAIN_WRITE = """
import os, sys
path, total = sys.argv[1], int(sys.argv[2])
piece = bytes(32 << 20)
with open(path, "wb") as handle:
    written = 0
    while written < total:
        written += handle.write(piece[: min(len(piece), total - written)])
    handle.flush()
    os.fsync(handle.fileno())
"""


#: pecli's streaming write with another chunk size (what `generate -o` does, chunk size aside)
CHUNKED_WRITE = """
import sys
from pecli.schemes.spec import TableSpec
from pecli.io import Tensor, write_tensors
path, length, dim, chunk_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
spec = TableSpec.resolve("sinusoidal", None, {}, length=length, dim=dim)
tensor = Tensor(spec.shape, spec.dtype, lambda: spec.chunks(chunk_mib << 20))
write_tensors(path, {spec.name: tensor}, fmt="npy", metadata=spec.metadata())
"""


def measured(argv: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, *argv], env=env, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["rc"] != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr}")
    return result


def sample_rows(length: int, rng: np.random.Generator) -> np.ndarray:
    edges = [0, 1, length // 2, length - 2, length - 1]
    return np.unique(np.clip(np.concatenate([edges, rng.integers(0, length, 60)]), 0, length - 1))


def check_file(path: str, fmt: str, length: int, dim: int) -> float:
    """Max |file − float64 formula| over sampled rows, reading the file without loading it."""
    if fmt == "npy":
        data = np.load(path, mmap_mode="r")
    else:
        from safetensors import safe_open

        handle = safe_open(path, framework="numpy")
        data = handle.get_slice("pe")
    assert tuple(data.shape if fmt == "npy" else data.get_shape()) == (length, dim)
    inv_freq = np.exp(-np.log(10000.0) * np.arange(0, dim, 2) / dim)
    worst = 0.0
    for row in sample_rows(length, np.random.default_rng(0)):
        values = np.asarray(data[int(row) : int(row) + 1], dtype=np.float64)[0]
        angles = float(row) * inv_freq
        worst = max(worst, float(np.abs(values[0::2] - np.sin(angles)).max()))
        worst = max(worst, float(np.abs(values[1::2] - np.cos(angles)).max()))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--len", dest="length", type=int, default=4194304)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where to write (deleted afterwards)")
    parser.add_argument("--formats", nargs="+", default=["npy", "safetensors"])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (the median is reported)")
    parser.add_argument("--chunk-mib", nargs="+", type=int, default=[], help="also try these chunk sizes")
    args = parser.parse_args()
    nbytes = args.length * args.dim * 4
    free = shutil.disk_usage(args.dir).free
    if free < nbytes * 1.2:
        raise SystemExit(
            f"{args.dir} has {free / 2**30:.1f} GiB free, the table needs {nbytes / 2**30:.1f} GiB: use --len"
        )
    env = python_env()
    load_before = load_average()
    workdir = tempfile.mkdtemp(prefix="pecli-bench-scale-", dir=args.dir)
    plain_label = "plain sequential write (dd-style, 32 MiB writes + fsync)"
    commands = {plain_label: ("plain", None)}
    commands.update({f"pecli generate -o big.{fmt}": (fmt, None) for fmt in args.formats})
    commands.update({f"pecli generate -o big.npy (chunks of {mib} MiB)": ("npy", mib) for mib in args.chunk_mib})
    walls: dict[str, list[float]] = {label: [] for label in commands}
    cpus: dict[str, list[float]] = {label: [] for label in commands}
    peaks: dict[str, int] = dict.fromkeys(commands, 0)
    errors: dict[str, float] = dict.fromkeys(commands, 0.0)
    try:
        labels = list(commands)
        for round_number in range(args.rounds):
            # each round starts one command later: in a fixed order .safetensors always came
            # straight after .npy's write, read-back and unlink of as many bytes
            shift = round_number % len(labels)
            for label in labels[shift:] + labels[:shift]:
                fmt, chunk_mib = commands[label]
                target = os.path.join(workdir, f"big.{fmt}")
                if fmt == "plain":
                    command = [sys.executable, "-c", PLAIN_WRITE, target, str(nbytes)]
                elif chunk_mib:
                    command = [sys.executable, "-c", CHUNKED_WRITE, target, str(args.length), str(args.dim)]
                    command.append(str(chunk_mib))
                else:
                    command = [sys.executable, "-m", "pecli", "generate", "--d", str(args.dim)]
                    command += ["--len", str(args.length), "-o", target]
                result = measured(command, env)
                if fmt != "plain":
                    errors[label] = max(errors[label], check_file(target, fmt, args.length, args.dim))
                    peaks[label] = max(peaks[label], result["peak_rss"])
                os.unlink(target)
                walls[label].append(result["wall"])
                cpus[label].append(result["cpu"])
                print(f"{label}: {result['wall']:.1f} s, CPU {result['cpu']:.1f} s", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    median = {label: statistics.median(times) for label, times in walls.items()}
    disk = median[plain_label]
    rows = []
    for label, times in walls.items():
        fmt = commands[label][0]
        rows.append(
            [
                label,
                f"{median[label]:.1f} ({min(times):.1f}–{max(times):.1f})",
                f"{statistics.median(cpus[label]):.1f}",
                f"{nbytes / median[label] / 1e9:.2f}",
                f"{median[label] / disk:.2f}×",
                "–" if fmt == "plain" else f"{peaks[label] / 2**20:.0f}",
                "–" if fmt == "plain" else f"{errors[label]:.1e}",
            ]
        )
    npy_label, st_label = "pecli generate -o big.npy", "pecli generate -o big.safetensors"
    versus = (
        f" .safetensors takes {median[st_label] / median[npy_label]:.2f}× the time of .npy (goal ≤ 1.1×)."
        if npy_label in median and st_label in median
        else ""
    )
    peak = max(peaks.values()) / 2**20
    body = (
        f"`pecli generate --d {args.dim} --len {args.length}` ({nbytes / 2**30:.1f} GiB float32) in {args.dir}, "
        f"whole process, {args.rounds} rounds, each starting one command later, median (min–max); "
        f"load average {load_before} before, {load_average()} after; CPU = user + system of the process; "
        "time ratio to the plain write; "
        "peak RSS from getrusage; error = max |value − float64 formula| over 65 sampled rows read back with "
        "np.load(mmap_mode='r') / safe_open.\n\n"
        + table(["command", "seconds", "CPU s", "GB/s", "time / plain write", "peak RSS MiB", "max error"], rows)
        + f"\n\nPeak RSS {peak:.0f} MiB (goal < 512 MiB: {'met' if peak < 512 else 'NOT met'}).{versus}"
    )
    print(body)
    record("scale", "Tables larger than memory: streaming to disk", body)


if __name__ == "__main__":
    main()
