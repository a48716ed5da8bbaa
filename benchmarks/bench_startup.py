"""Issue 8, part 1: start-up of ``pecli generate --d 512 --len 2048 -o pe.safetensors``, whole process.

Compared, alternating, with the bare numpy + safetensors.numpy script and the PyTorch tutorial's
torch script (baselines/). Goals: pecli within 1.5× of the bare script, and ≥ 8× faster than torch.

    python benchmarks/bench_startup.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from harness import BENCHMARKS, median_ms, record, table, time_commands

LENGTH, DIM = 2048, 512


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as work:
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "python -c 'import numpy'": [python, "-c", "import numpy"],
            "bare numpy + safetensors.numpy": [
                python, str(BENCHMARKS / "baselines" / "bare_numpy.py"), str(LENGTH), str(DIM), "bare.safetensors",
            ],
            "pecli generate": [
                python, "-m", "pecli", "generate", "--d", str(DIM), "--len", str(LENGTH), "-o", "pe.safetensors",
            ],
            "torch (PyTorch tutorial)": [
                python, str(BENCHMARKS / "baselines" / "torch_tutorial.py"), str(LENGTH), str(DIM), "torch.safetensors",
            ],
        }  # fmt: skip
        times = time_commands(commands, repeats=args.repeats, cwd=work)
    medians = {label: median_ms(values) for label, values in times.items()}
    pecli, bare = medians["pecli generate"], medians["bare numpy + safetensors.numpy"]
    torch = medians["torch (PyTorch tutorial)"]
    rows = [[f"`{label}`" if label.startswith("python") else label, f"{ms:.0f}"] for label, ms in medians.items()]
    vs_bare, vs_torch = pecli / bare, torch / pecli
    summary = (
        f"pecli / bare script = {vs_bare:.2f}× (goal ≤ 1.5×: {'met' if vs_bare <= 1.5 else 'NOT met'}); "
        f"torch / pecli = {vs_torch:.1f}× (goal ≥ 8×: {'met' if vs_torch >= 8 else 'NOT met'})"
    )
    body = (
        f"`pecli generate --d {DIM} --len {LENGTH} -o pe.safetensors`, whole process, median of {args.repeats} "
        "alternating runs.\n\n" + table(["command", "median ms"], rows) + f"\n\n{summary}."
    )
    print(body)
    record("startup", "Start-up (issue 8, part 1)", body)


if __name__ == "__main__":
    main()
