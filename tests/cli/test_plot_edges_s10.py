"""pecli plot and distance at edge sizes: no error blames an option the user did not give (issue 30)."""

from __future__ import annotations

import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize("scheme", ["rope", "sinusoidal", "timestep"])
def test_the_precision_view_of_one_position_draws(scheme: str) -> None:
    # every error is 0 at position 0: the colour span was log10(floor) … log10(floor), "--vmin 12 must be below
    # --vmax 12" although neither was given
    result = run_in_process("plot", scheme, "--d", "2", "--len", "1", "--view", "precision", "--width", "60",
                            "--height", "14", "--no-color")  # fmt: skip
    assert result.code == 0, result.stderr
    assert "vmin" not in result.stderr
    assert "max |error| per arithmetic: bfloat16 0, float32 0, float16 0" in result.out


def test_one_option_a_relative_scheme_does_not_take_is_dropped_as_it() -> None:
    result = run_in_process("distance", "kerple", "--len", "3", "--metric", "cosine")
    assert result.code == 2
    assert result.stderr.strip() == (
        "pecli: error: --metric applies to tables of position vectors, not to kerple's bias (drop it)"
    )
