"""Issue 8, part 1: start-up of ``pecli generate --d 512 --len 2048 -o pe.safetensors``, whole process.

Compared, alternating, with the bare numpy + safetensors.numpy script and the PyTorch tutorial's
torch script (baselines/). Goals: pecli within 1.5× of the bare script, and ≥ 8× faster than torch.

    python benchmarks/bench_startup.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

from harness import BENCHMARKS, load_average, median_ms, record, table, time_commands

LENGTH, DIM = 2048, 512
TORCH = "torch (PyTorch tutorial)"


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
        load_before = load_average()
        times = time_commands(commands, repeats=args.repeats, cwd=work)
        load_after = load_average()
    medians = {label: median_ms(values) for label, values in times.items()}
    # ratios run by run (each pecli run over the bare run just before it), so that drift cancels
    pecli, bare, torch = (times[label] for label in ("pecli generate", "bare numpy + safetensors.numpy", TORCH))
    vs_bare_runs = [a / b for a, b in zip(pecli, bare, strict=True)]
    vs_torch_runs = [a / b for a, b in zip(torch, pecli, strict=True)]
    rows = [
        [f"`{label}`" if label.startswith("python") else label, f"{ms:.0f}",
         f"{min(times[label]) * 1000:.0f}–{max(times[label]) * 1000:.0f}"]
        for label, ms in medians.items()
    ]  # fmt: skip
    vs_bare, vs_torch = statistics.median(vs_bare_runs), statistics.median(vs_torch_runs)
    summary = (
        f"pecli / bare script = {vs_bare:.2f}× ({min(vs_bare_runs):.2f}–{max(vs_bare_runs):.2f}; goal ≤ 1.2× "
        f"(issue 32; 1.5× in issue 8): {'met' if vs_bare <= 1.2 else 'NOT met'}); torch / pecli = {vs_torch:.1f}× "
        f"({min(vs_torch_runs):.1f}–{max(vs_torch_runs):.1f}; goal ≥ 8×: {'met' if vs_torch >= 8 else 'NOT met'})"
    )
    body = (
        f"`pecli generate --d {DIM} --len {LENGTH} -o pe.safetensors`, whole process, {args.repeats} alternating "
        f"rounds; load average {load_before} before, {load_after} after.\n\n"
        + table(["command", "median ms", "min–max ms"], rows)
        + f"\n\n{summary}."
    )
    print(body)
    record("startup", "Start-up (issue 8, part 1)", body)


if __name__ == "__main__":
    main()
