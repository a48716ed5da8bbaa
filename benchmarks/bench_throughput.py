"""Issue 8, part 2: throughput of a 65536 × 1024 float32 sinusoidal table, in fresh processes.

Compared, alternating, with the PyTorch tutorial's method (torch.sin/cos of float32 angles into
a float32 table) and with merely allocating and filling a fresh float32 array of that size.
Goals: ≥ 5× the tutorial's speed, no slower than 1/0.7 of allocate-and-fill, and every value
within 1e-6 of the float64 formula.

    python benchmarks/bench_throughput.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from harness import median_ms, record, table, time_in_fresh_processes

LENGTH, DIM = 65536, 1024

SETUP = {
    "pecli.encode": "import numpy as np, pecli\npecli.encode('sinusoidal', 4, 4)",
    "torch (PyTorch tutorial)": "import math, torch",
    "allocate + fill (numpy)": "import numpy as np",
}
SNIPPETS = {
    "pecli.encode": f"table = pecli.encode('sinusoidal', {LENGTH}, {DIM})",
    "torch (PyTorch tutorial)": (
        f"position = torch.arange({LENGTH}).unsqueeze(1)\n"
        f"div_term = torch.exp(torch.arange(0, {DIM}, 2) * (-math.log(10000.0) / {DIM}))\n"
        f"pe = torch.zeros({LENGTH}, {DIM})\n"
        "pe[:, 0::2] = torch.sin(position * div_term)\n"
        "pe[:, 1::2] = torch.cos(position * div_term)"
    ),
    "allocate + fill (numpy)": f"table = np.full(({LENGTH}, {DIM}), 1.0, dtype=np.float32)",
}


def max_errors() -> dict[str, float]:
    """Largest absolute difference from sin/cos of p·ω computed per element in float64."""
    import pecli

    position = np.arange(LENGTH, dtype=np.float64)[:, None]
    inv_freq = np.exp(-math.log(10000.0) * np.arange(0, DIM, 2) / DIM)
    angles = position * inv_freq
    errors = {}
    table = pecli.encode("sinusoidal", LENGTH, DIM)
    errors["pecli.encode"] = max(
        float(np.abs(table[:, 0::2] - np.sin(angles)).max()), float(np.abs(table[:, 1::2] - np.cos(angles)).max())
    )
    try:
        import torch
    except ImportError:
        return errors
    angles32 = (
        torch.arange(LENGTH).unsqueeze(1) * torch.exp(torch.arange(0, DIM, 2) * (-math.log(10000.0) / DIM))
    ).numpy()
    errors["torch (PyTorch tutorial)"] = max(
        float(np.abs(np.sin(angles32).astype(np.float64) - np.sin(angles)).max()),
        float(np.abs(np.cos(angles32).astype(np.float64) - np.cos(angles)).max()),
    )
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {label: [] for label in SNIPPETS}
    for _ in range(args.repeats):  # one fresh process per run, methods alternating
        for label, snippet in SNIPPETS.items():
            times[label] += time_in_fresh_processes({label: snippet}, setup=SETUP[label], repeats=1)[label]
    medians = {label: median_ms(values) for label, values in times.items()}
    errors = max_errors()
    rows = [[label, f"{ms:.0f}", f"{errors[label]:.1e}" if label in errors else "–"] for label, ms in medians.items()]
    pecli, torch, fill = (
        medians["pecli.encode"],
        medians["torch (PyTorch tutorial)"],
        medians["allocate + fill (numpy)"],
    )
    speedup, versus_fill = torch / pecli, fill / pecli
    summary = (
        f"torch / pecli = {speedup:.1f}× (goal ≥ 5×: {'met' if speedup >= 5 else 'NOT met'}); "
        f"allocate-and-fill / pecli = {versus_fill:.2f} (goal ≥ 0.7: {'met' if versus_fill >= 0.7 else 'NOT met'}); "
        f"pecli's max error {errors['pecli.encode']:.1e} (goal ≤ 1e-6: "
        f"{'met' if errors['pecli.encode'] <= 1e-6 else 'NOT met'})"
    )
    body = (
        f"A {LENGTH} × {DIM} float32 sinusoidal table, timed inside fresh processes (imports excluded), "
        f"median of {args.repeats} alternating runs; error = max |value − float64 formula|.\n\n"
        + table(["method", "median ms", "max error"], rows)
        + f"\n\n{summary}."
    )
    print(body)
    record("throughput", "Throughput (issue 8, part 2)", body)


if __name__ == "__main__":
    main()
