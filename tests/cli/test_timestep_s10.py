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


def test_repeat_only_refuses_the_sinusoid_options_it_would_ignore() -> None:
    # --repeat-only --scale 2 wrote t unscaled, exit 0, the summary saying scale=2.0
    result = run_in_process("timestep", "--dim", "4", "--repeat-only", "--scale", "2", "1")
    assert result.code == 2
    assert result.stderr.startswith("pecli: error: --scale shapes the sinusoid, which --repeat-only does not compute")
    result = run_in_process("timestep", "--dim", "4", "--repeat-only", "--max-period", "5", "--no-flip-sin-to-cos", "1")
    assert result.code == 2
    assert "--max-period, --no-flip-sin-to-cos shape the sinusoid" in result.stderr
    plain = run_in_process("timestep", "--dim", "3", "--repeat-only", "--json", "7")
    assert plain.code == 0, plain.stderr
    assert '"repeat_only": true' in plain.out


def test_float16_arithmetic_names_the_timestep_it_cannot_hold() -> None:
    # was: "float16 cannot hold the table's values … (use a wider --dtype …, or smaller --len …)": timestep has
    # no --len, and --dtype was float32
    result = run_in_process("timestep", "--dim", "4", "--arithmetic", "float16", "70000")
    assert result.code == 2
    message = result.stderr.strip()
    assert message.startswith("pecli: error: timestep 70000 overflows float16 (its largest is 65504)")
    assert "--len" not in message and "--dtype" not in message
    held = run_in_process("timestep", "--dim", "4", "--arithmetic", "float16", "65519", "-o", "-")
    assert held.code == 0, held.stderr  # rounds to 65504, which float16 holds
