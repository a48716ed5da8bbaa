"""The terminal wavelength chart fits --height or is refused with the lines it takes (issue 30, found by the
session-9 fuzz: at --width 20 --height 13 the wrapped title and the least plot printed 14 lines)."""

from __future__ import annotations

import pytest

from tests.conftest import run_in_process

ARGS = ("plot", "rope", "--d", "32", "--len", "50", "--scaling", "llama3", "--factor", "2",
        "--original-max-position", "32", "--view", "wavelength", "--terminal")  # fmt: skip


@pytest.mark.parametrize("width", [20, 21, 23, 30, 60])  # below 20 plot refuses --width
@pytest.mark.parametrize("height", [8, 10, 13, 16, 24])
def test_wavelength_chart_fits_or_is_refused(width: int, height: int) -> None:
    result = run_in_process(*ARGS, "--width", str(width), "--height", str(height))
    if result.code == 0:
        assert len(result.out.splitlines()) <= height
        return
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert f"--height {height} cannot hold the wavelength chart at --width {width}: it takes" in result.stderr


def test_the_height_it_names_holds_the_chart() -> None:
    refused = run_in_process(*ARGS, "--width", "20", "--height", "13")
    assert refused.code == 2
    taken = int(refused.stderr.split("it takes ")[1].split(" lines")[0])
    fits = run_in_process(*ARGS, "--width", "20", "--height", str(taken))
    assert fits.code == 0 and len(fits.out.splitlines()) == taken
