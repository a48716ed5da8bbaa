"""Throughput of a 65536 × 1024 sinusoidal table, in process, against the machine's memory-write limit.

Every method runs in this one process, warm (one untimed run first), methods alternating
(A, B, C, A, B, C, …) so that a busy, shared machine slows them alike; median and spread
(25th–75th percentile) of many repeats. References:

- fresh fill: ``np.full(shape, 1.0, dtype)``: allocation and first touch (page faults) of a new array
- buffer fill: ``buf.fill(1.0)`` of a pre-touched array: the memory-write limit; its bytes / time
  is the write bandwidth stated

``pecli.encode`` allocates its table (so it compares with the fresh fill); ``encode(..., out=buf)``
fills a pre-touched buffer (so it compares with the buffer fill). A figure faster than the limit
is a measurement error. The PyTorch tutorial's method (torch.sin/cos of float32 angles) is timed
the same way when torch is installed. Error = max |value − float64 formula| over the table.

    python benchmarks/bench_throughput.py [--repeats 21] [--dtypes float16 bfloat16]

With ``--dtypes`` (a subset) the figures are printed, not recorded. The machine's load average
before and after is printed with them (a shared machine shrinks every ratio's meaning).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
from harness import record, table

import pecli
from pecli.dtypes import numpy_dtype

LENGTH, DIM = 65536, 1024
DTYPES = ("float32", "float64", "float16", "bfloat16")


def tutorial() -> Callable[[], object] | None:
    """The PyTorch tutorial's table (pytorch/tutorials, beginner_source/transformer_tutorial.py), or None."""
    try:
        import torch
    except ImportError:
        return None

    def build() -> object:
        position = torch.arange(LENGTH).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, DIM, 2) * (-math.log(10000.0) / DIM))
        pe = torch.zeros(LENGTH, DIM)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        return pe

    return build


def timings(methods: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds per run of each method, warm, alternating."""
    for method in methods.values():
        method()
    seconds: dict[str, list[float]] = {label: [] for label in methods}
    for _ in range(repeats):
        for label, method in methods.items():
            start = time.perf_counter()
            method()
            seconds[label].append(time.perf_counter() - start)
    return seconds


def spread(values: list[float]) -> str:
    """Median and interquartile range, in ms."""
    quartiles = statistics.quantiles(values, n=4)
    return f"{statistics.median(values) * 1e3:.0f}", f"{quartiles[0] * 1e3:.0f}–{quartiles[2] * 1e3:.0f}"


def max_error(values: np.ndarray) -> float:
    """Largest |value − sin/cos(p·ω)| with p·ω and its sin/cos in float64, in row chunks."""
    inv_freq = np.exp(-math.log(10000.0) * np.arange(0, DIM, 2) / DIM)
    worst = 0.0
    for start in range(0, LENGTH, 4096):
        angles = np.arange(start, start + 4096, dtype=np.float64)[:, None] * inv_freq
        chunk = values[start : start + 4096].astype(np.float64)
        worst = max(worst, float(np.abs(chunk[:, 0::2] - np.sin(angles)).max()))
        worst = max(worst, float(np.abs(chunk[:, 1::2] - np.cos(angles)).max()))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--dtypes", nargs="+", choices=DTYPES, default=list(DTYPES))
    args = parser.parse_args()
    rows, summary = [], []
    load_before = os.getloadavg()[0]
    for dtype in args.dtypes:
        kind = numpy_dtype(dtype)
        buffer = np.zeros((LENGTH, DIM), dtype=kind)  # touched: its pages exist
        methods: dict[str, Callable[[], object]] = {
            "fresh fill: np.full": lambda kind=kind: np.full((LENGTH, DIM), 1.0, dtype=kind),
            "buffer fill: buf.fill (limit)": lambda buffer=buffer: buffer.fill(1.0),
            "pecli.encode": lambda dtype=dtype: pecli.encode("sinusoidal", LENGTH, DIM, dtype=dtype),
            "pecli.encode(out=buf)": lambda dtype=dtype, buffer=buffer: pecli.encode(
                "sinusoidal", LENGTH, DIM, dtype=dtype, out=buffer
            ),
        }
        seconds = timings(methods, args.repeats)
        build = tutorial()
        if dtype == "float32" and build is not None:
            # timed after, in its own loop: alternating with np.full, torch's allocations slowed the
            # fresh fill 4× (median 363 ms, IQR 84–670) and made pecli look faster than the reference
            label = "torch (PyTorch tutorial)"
            seconds[label] = timings({label: build}, args.repeats)[label]
        median = {label: statistics.median(values) for label, values in seconds.items()}
        fresh, limit = median["fresh fill: np.full"], median["buffer fill: buf.fill (limit)"]
        errors = {
            "pecli.encode": max_error(pecli.encode("sinusoidal", LENGTH, DIM, dtype=dtype)),
            "pecli.encode(out=buf)": max_error(buffer),
        }
        if "torch (PyTorch tutorial)" in seconds:
            errors["torch (PyTorch tutorial)"] = max_error(build().numpy())
        for label, values in seconds.items():
            ms, quartiles = spread(values)
            rows.append(
                [
                    dtype,
                    label,
                    ms,
                    quartiles,
                    f"{buffer.nbytes / median[label] / 1e9:.1f}",
                    f"{fresh / median[label]:.2f}",
                    f"{limit / median[label]:.2f}",
                    f"{errors[label]:.1e}" if label in errors else "–",
                ]
            )
        versus_fresh = fresh / median["pecli.encode"]
        summary.append(
            f"{dtype}: write bandwidth (buffer fill) {buffer.nbytes / limit / 1e9:.1f} GB/s; "
            f"pecli.encode = {versus_fresh:.2f}× a fresh fill"
            + (f" (goal ≥ 0.7×: {'met' if versus_fresh >= 0.7 else 'NOT met'})" if dtype == "float32" else "")
            + f", encode(out=buf) = {limit / median['pecli.encode(out=buf)']:.2f}× the buffer fill (the limit)"
            + (
                f"; torch tutorial / pecli.encode = {median['torch (PyTorch tutorial)'] / median['pecli.encode']:.1f}×"
                if "torch (PyTorch tutorial)" in median
                else ""
            )
        )
    header = ["dtype", "method", "median ms", "IQR ms", "GB/s written", "× fresh fill", "× limit", "max error"]
    body = (
        f"A {LENGTH} × {DIM} sinusoidal table, in one process, warm, methods alternating; "
        f"median and interquartile range of {args.repeats} runs; × = speed relative to the reference "
        "(> 1 is faster); error = max |value − float64 formula|.\n\n"
        + table(header, rows)
        + "\n\n"
        + "\n".join(f"- {line}." for line in summary)
        + f"\n- load average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after."
    )
    print(body)
    if list(args.dtypes) == list(DTYPES):
        record("throughput", "Throughput (issue 16, part 1)", body)


if __name__ == "__main__":
    main()
