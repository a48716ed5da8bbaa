"""How fast the relative-scheme views run: RoPE's decay profile of a million offsets, whole commands.

- ``pecli distance rope --profile --len 1000000 --d 128 -o profile.npy`` (goal: seconds; the
  profile is O(len·d), never the len × len matrix);
- ``pecli distance rope --len 100000 --d 128 -o score.png``: the figure's exact block means from
  the profile over ±len offsets;
- ``rope_profile(1_000_000, 128)`` in process.

Each case runs ``--repeats`` times, alternating; the median is printed in a Markdown table.

    python benchmarks/bench_relative.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import machine, median_ms, table, time_commands, time_in_fresh_processes

#: the issue's goal for the million-offset profile, whole process
GOAL_SECONDS = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pecli = [sys.executable, "-m", "pecli", "distance", "rope"]
    commands = {
        "distance rope --profile --len 1000000 --d 128 -o profile.npy": [
            *pecli, "--profile", "--len", "1000000", "--d", "128", "-o", "profile.npy"],
        "distance rope --len 100000 --d 128 -o score.png": [*pecli, "--len", "100000", "--d", "128", "-o", "score.png"],
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        times = time_commands(commands, repeats=args.repeats, cwd=folder)
    times |= time_in_fresh_processes(
        {"rope_profile(1_000_000, 128), in process": "rope_profile(1_000_000, 128)"},
        setup="from pecli.analysis.relative import rope_profile",
        repeats=args.repeats,
    )
    print(f"{machine()}; median of {args.repeats} runs\n")
    print(table(("case", "median ms"), [(label, f"{median_ms(samples):.0f}") for label, samples in times.items()]))
    profile = median_ms(next(iter(times.values()))) / 1000
    verdict = "met" if profile <= GOAL_SECONDS else "missed"
    print(f"\nmillion-offset profile: {profile:.1f} s (goal ≤ {GOAL_SECONDS:g} s: {verdict})")


if __name__ == "__main__":
    main()
