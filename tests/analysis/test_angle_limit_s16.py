"""float32's angle noise (2^-23 · p) is allowed only where it still determines a value (issue 30: a false "same").

At position 10^18 the allowance was 1.2e11 for cos values in [-1, 1]: any two tables were "same within float32
arithmetic", exit 0. From 2^23 on (a radian of noise) rows are held to their rounding, with a note saying so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pecli
from pecli.analysis.diagnosis._precision import precision_findings
from pecli.schemes.spec import TableSpec
from tests.conftest import run_in_process


def test_a_table_against_one_at_position_1e18_differs(tmp_path: Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, pecli.encode("rope", 64, 32, dtype="float32", part="cos"))
    spec = "rope:offset=1000000000000000000,part=cos"
    result = run_in_process("compare", str(path), spec, "--d", "32", "--len", "64")
    assert result.code == 1, result.stderr
    assert "same within" not in result.out and result.stderr == ""
    assert "held to their rounding" in result.out


def test_float32_arithmetic_is_allowed_its_noise_below_2_23_and_shown_past_it(tmp_path: Path) -> None:
    for offset, exit_code in ((1_000_000, 0), (10_000_000, 1)):
        path = tmp_path / f"f{offset}.safetensors"
        made = run_in_process(
            "generate", "sinusoidal", "--d", "64", "--len", "4096", "--offset", str(offset),
            "--arithmetic", "float32", "-o", str(path),
        )  # fmt: skip
        assert made.code == 0, made.stderr
        result = run_in_process("compare", str(path), f"sinusoidal:offset={offset}", "--d", "64", "--len", "4096")
        assert result.code == exit_code, result.out + result.stderr
        assert ("held to their rounding" in result.out) == (exit_code == 1)
        # the float32 table really is off by a large part of the amplitude there: a true "different"
        table = np.asarray(pecli.encode("sinusoidal", 4096, 64, offset=offset, dtype="float64"))
        written = np.asarray(pecli.encode("sinusoidal", 4096, 64, offset=offset, arithmetic="float32"), np.float64)
        assert (np.abs(written - table).max() > 0.05) == (exit_code == 1)


def test_positions_rounded_below_the_first_are_not_indexed() -> None:
    """An offset whose rounded positions fall before the table's first row (a negative index) crashed."""
    a = np.zeros((64, 4))

    reference = TableSpec.resolve("rope", None, {"offset": 10**18, "part": "cos"}, length=64, dim=4)
    assert precision_findings(a, a + 1.0, 1e-9, reference) == []
