"""``pecli timestep --preset <TAB>`` offers only the presets timestep accepts (issue 30)."""

from __future__ import annotations

import typer

from pecli.cli.app import app
from pecli.cli.options import complete_preset
from pecli.schemes.presets import PRESETS
from tests.cli.test_completions import _bash_complete

TIMESTEP_PRESETS = [p.name for p in PRESETS.values() if p.scheme == "timestep"]


def test_timestep_presets_are_timesteps_own():
    assert TIMESTEP_PRESETS == ["ldm", "guided-diffusion", "diffusers", "ddpm"]


def test_bash_completes_only_timesteps_presets(shell_env):
    assert _bash_complete(shell_env, "pecli", "timestep", "--preset", "") == TIMESTEP_PRESETS
    assert _bash_complete(shell_env, "pecli", "timestep", "--preset", "d") == ["diffusers", "ddpm"]
    # another scheme's preset is refused by timestep, so it is not offered either
    assert _bash_complete(shell_env, "pecli", "timestep", "--preset", "fair") == []


def test_generate_still_completes_every_scheme_preset():
    context = typer.Context(typer.main.get_command(app).commands["generate"])
    names = [name for name, _ in complete_preset(context, "")]
    assert "fairseq" in names and "ldm" in names


def test_every_completed_timestep_preset_is_accepted(cli):
    context = typer.Context(typer.main.get_command(app).commands["timestep"])
    for name, _ in complete_preset(context, ""):
        result = cli("timestep", "1", "--dim", "4", "--preset", name, "--json")
        assert result.code == 0, (name, result.stderr)
