"""Defects found by the session-11 attack on generate, timestep, info, schemes and completion (issue 30)."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from tests.conftest import assert_clean_error, run_in_process


@pytest.mark.parametrize(
    ("argv", "named", "offered"),
    [
        (["--factor", "4"], "--factor is a parameter", ["--scaling linear", "--scaling yarn", "--scaling llama3"]),
        (
            ["--factor", "4", "--low-freq-factor", "2"],
            "--factor, --low-freq-factor are parameters",
            ["--scaling llama3"],
        ),
    ],
)
def test_a_scaling_parameter_without_a_scaling_names_the_scalings_that_take_it(argv, named, offered):
    """``generate rope --factor 4`` said "--scaling none does not take --factor": a flag the user never gave."""
    result = run_in_process("generate", "rope", "--d", "8", "--len", "4", *argv)
    assert_clean_error(result, 2, named, "no --scaling is chosen", *offered)
    assert "--scaling none" not in result.stderr
    if "--low-freq-factor" in argv:  # only llama3 takes both
        assert "--scaling linear" not in result.stderr and "--scaling yarn" not in result.stderr


def test_scaling_parameters_no_scaling_takes_together_are_refused_without_a_pick():
    result = run_in_process("generate", "rope", "--d", "8", "--len", "4", "--beta-fast", "3", "--short-factor", "1,1")
    assert_clean_error(result, 2, "--beta-fast, --short-factor are parameters", "drop them, or pick a --scaling")


def test_the_spec_in_generates_help_writes_the_table_it_describes():
    """generate's help offered the spec rope:base=500000,factor=4, which was refused (factor without a scaling)."""
    from pecli.cli.generate import HELP

    spec = re.search(r"it may be a spec, (\S+)", HELP)
    assert spec is not None
    result = run_in_process("generate", spec.group(1), "--d", "8", "--len", "6", "--part", "angle",
                            "--dtype", "float64", "-o", "-")  # fmt: skip
    assert result.code == 0, result.stderr
    angle = np.load(io.BytesIO(result.stdout))
    inv_freq = 500000.0 ** (-np.arange(0, 8, 2) / 8)
    expected = np.arange(6)[:, None] / 4.0 * inv_freq  # linear scaling: positions divided by the factor
    np.testing.assert_allclose(angle, np.concatenate([expected, expected], axis=1), rtol=1e-12, atol=0)


def test_schemes_completes_the_presets_it_accepts():
    """``pecli schemes fair<TAB>`` offered nothing, though ``pecli schemes fairseq`` shows the preset."""
    from pecli.cli.schemes import complete_scheme_or_preset
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.presets import PRESETS

    names = [name for name, _ in complete_scheme_or_preset("")]
    assert len(names) == len(set(names))  # diffusers, a preset of three schemes, once
    assert set(names) == set(SCHEMES) | {preset.name for preset in PRESETS.values()}
    assert [name for name, _ in complete_scheme_or_preset("fair")] == ["fairseq"]
    assert dict(complete_scheme_or_preset("diffusers"))["diffusers"] == "preset of sinusoidal, timestep, sincos2d"
    for name in ("fairseq", "diffusers", "eva02"):
        assert run_in_process("schemes", name).code == 0
