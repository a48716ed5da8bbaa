"""The wide run of a seeded CLI property fuzz, outside pytest: many cases, each failure printed, a tally."""

from __future__ import annotations

import collections
import json
import random
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any


def wide_run(count: int, first: int, kinds: list[str], run: Callable[[str, random.Random, Path, int], Any]) -> None:
    """Run cases ``first`` … ``first + count − 1``, case ``i`` of kind ``kinds[i % len(kinds)]`` seeded by ``i``,
    each in its own temporary folder; print every failure and crash, then the tally of ``run``'s results."""
    tally: collections.Counter = collections.Counter()
    failures = 0
    for index in range(first, first + count):
        kind = kinds[index % len(kinds)]
        with tempfile.TemporaryDirectory() as folder:
            try:
                tally[run(kind, random.Random(index), Path(folder), index)] += 1
            except AssertionError as error:
                failures += 1
                print(f"FAIL case {index} {kind}: {str(error)[:700]}", flush=True)
            except Exception:
                failures += 1
                print(f"CRASH case {index} {kind}: {traceback.format_exc()[-900:]}", flush=True)
    print(json.dumps(dict(sorted(tally.items())), indent=0))
    print(f"{count} cases, {failures} failures")
