"""--range START:STOP:STEP holds the values start + k·step (as float64 computes them) that lie before STOP, and
no other: the quotient (stop − start) / step alone rounds (0.1:0.4:0.1 took in 0.4000000000000001)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pecli.schemes.timestep import parse_range


def _before(value: float, stop: float, step: float) -> bool:
    return value < stop if step > 0 else value > stop


def test_the_documented_example_excludes_stop() -> None:
    assert parse_range("0.1:0.4:0.1").array().tolist() == [0.1, 0.2, 0.30000000000000004]


def test_every_value_lies_before_stop_and_the_next_one_does_not() -> None:
    rng = random.Random(0)
    for _ in range(3000):
        start = round(rng.uniform(-5, 5), rng.choice([0, 1, 2, 3]))
        step = round(rng.choice([-1, 1]) * rng.uniform(0.001, 2), rng.choice([1, 2, 3]))
        if step == 0:
            continue
        stop = round(start + step * rng.randint(1, 60) + rng.choice([0.0, 1e-12, -1e-12]), 12)
        text = f"{start!r}:{stop!r}:{step!r}"
        try:
            timesteps = parse_range(text)
        except Exception:  # no elements: then the first value must not lie before stop
            assert not _before(start, stop, step), text
            continue
        values = timesteps.array()
        assert all(_before(float(v), stop, step) for v in values), text
        following = float(np.float64(start) + np.float64(step) * np.float64(len(values)))
        assert not _before(following, stop, step), text


@pytest.mark.parametrize(("text", "count"), [("0:1000:10", 100), ("999:-1:-1", 1000), ("0:1:0.1", 10)])
def test_whole_ranges_keep_their_counts(text: str, count: int) -> None:
    assert len(parse_range(text)) == count
