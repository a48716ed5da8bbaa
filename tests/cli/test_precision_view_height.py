"""plot --view precision --terminal never prints more lines than --height (found by the CLI property fuzz; issue 30).

Its summary is never cut and its heatmap keeps its least rows: at --height 13 it printed 14 lines."""

from __future__ import annotations

import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize("height", [10, 13, 14, 16, 22])
def test_precision_view_fits_its_height_or_is_refused(height):
    result = run_in_process("plot", "timestep", "--d", "24", "--len", "43", "--view", "precision", "--terminal",
                            "--width", "50", "--height", str(height), "--no-color")  # fmt: skip
    if result.code == 2:
        assert result.out == "" and result.stderr.count("\n") == 1
        assert f"--height {height} cannot hold the precision view" in result.stderr
    else:
        assert result.code == 0, result.stderr
        assert len(result.out.splitlines()) <= height
    assert result.code == (2 if height < 14 else 0)
