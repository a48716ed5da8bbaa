"""pecli timestep at its edges: messages name the flag, labels and summaries show each t as it reads back (issue 30)."""

from __future__ import annotations

from tests.conftest import run_in_process


def test_a_non_finite_freq_shift_names_the_flag() -> None:
    result = run_in_process("timestep", "--dim", "4", "--freq-shift", "nan", "1")
    assert result.code == 2
    expected = "pecli: error: --freq-shift must be a finite number, got nan (pass e.g. --freq-shift 0)"
    assert result.stderr.strip() == expected


def test_huge_timesteps_are_labelled_short_and_exact() -> None:
    result = run_in_process("timestep", "--dim", "4", "--", "-1e308", "1234567.5", "0.1")
    assert result.code == 0, result.stderr
    text = result.stdout.decode()
    assert "  timesteps: -1e+308, 1234567.5, 0.1\n" in text  # not 1.23457e+06, which reads back as another t
    rows = [line.split()[0] for line in text.splitlines() if line.startswith((" ", "1", "0")) and "[" not in line]
    assert rows[-3:] == ["-1e+308", "1234567.5", "0.1"]  # not a 309-digit integer
    assert max(len(line) for line in text.splitlines()) < 120
