"""Where ``pecli generate``'s start-up goes: ``python -X importtime``, grouped by top-level package.

Median self-times of the imports of ``pecli generate --d 512 --len 2048 -o pe.safetensors``
over several runs, summed per top-level package (typer, numpy, pecli…; the standard library
as one row), next to the bare numpy + safetensors.numpy script's.

    python benchmarks/import_profile.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

from harness import BENCHMARKS, python_env, record, table

LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def self_times(argv: list[str], repeats: int, cwd: str) -> dict[str, float]:
    """Median self-time (ms) of each imported module over ``repeats`` runs."""
    samples: dict[str, list[int]] = defaultdict(list)
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", *argv], cwd=cwd, env=python_env(), capture_output=True, text=True
        )
        for match in LINE.finditer(done.stderr):
            samples[match.group(2)].append(int(match.group(1)))
    return {module: statistics.median(values) / 1000 for module, values in samples.items()}


def by_package(times: dict[str, float]) -> dict[str, float]:
    stdlib = set(sys.stdlib_module_names)
    groups: dict[str, float] = defaultdict(float)
    for module, ms in times.items():
        top = module.split(".")[0].lstrip("_")
        groups["(standard library)" if top in stdlib or module in stdlib else top] += ms
    return dict(groups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        pecli = by_package(
            self_times(
                ["-m", "pecli", "generate", "--d", "512", "--len", "2048", "-o", "pe.safetensors"], args.repeats, work
            )
        )
        bare_script = str(BENCHMARKS / "baselines" / "bare_numpy.py")
        bare = by_package(self_times([bare_script, "2048", "512", "bare.safetensors"], args.repeats, work))
    names = sorted(set(pecli) | set(bare), key=lambda name: -max(pecli.get(name, 0), bare.get(name, 0)))
    rows = [
        [name, f"{pecli.get(name, 0):.1f}", f"{bare.get(name, 0):.1f}"]
        for name in names
        if max(pecli.get(name, 0), bare.get(name, 0)) >= 0.5
    ]
    rows.append(["**total**", f"{sum(pecli.values()):.1f}", f"{sum(bare.values()):.1f}"])
    body = (
        f"Import self-times (ms, median of {args.repeats} runs of `python -X importtime`), summed per top-level "
        "package; packages under 0.5 ms left out.\n\n" + table(["package", "pecli generate", "bare numpy script"], rows)
    )
    print(body)
    record("imports", "Where start-up goes (issue 8, part 1)", body)


if __name__ == "__main__":
    main()
