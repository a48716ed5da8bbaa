"""Defects found by the lead's attack of session six (issue 30): timestep's presets named as another
command's, and a timestep table too large for the disk described with advice (-o) the disk could not take."""

from __future__ import annotations

from tests.conftest import run_in_process


def test_timestep_names_its_own_presets_for_another_schemes_preset():
    # was "(drop the scheme or use 'sinusoidal')": timestep takes no scheme to drop
    refused = run_in_process("timestep", "1", "--dim", "8", "--preset", "vaswani")
    assert refused.code == 2
    assert refused.stderr == (
        "pecli: error: preset 'vaswani' is a 'sinusoidal' preset, not 'timestep' "
        "(timestep's presets: ldm, guided-diffusion, diffusers, ddpm)\n"
    )


def test_timestep_lists_only_its_presets_for_an_unknown_one():
    # was every scheme's 17 presets (vaswani, fairseq, eva02, …), none of which timestep takes
    refused = run_in_process("timestep", "1", "--dim", "8", "--preset", "lmd")
    assert refused.code == 2
    assert refused.stderr == (
        "pecli: error: unknown preset 'lmd' for timestep (did you mean 'ldm'? valid: ldm, guided-diffusion, "
        "diffusers, ddpm)\n"
    )


def test_generate_names_the_schemes_presets_for_another_schemes_preset():
    refused = run_in_process("generate", "sinusoidal", "--preset", "ldm", "--d", "8", "--len", "8")
    assert refused.code == 2
    assert "not 'sinusoidal' (sinusoidal's presets: vaswani, " in refused.stderr


def test_timestep_too_large_for_the_disk_is_not_told_to_write_a_file(tmp_path):
    # 10^12 timesteps print at once (no pass over the table); their summary said "(write it with -o)" and the
    # hint "save it with -o t_emb.safetensors" for a 29.1 TiB table that no disk here holds
    shown = run_in_process("timestep", "--dim", "8", "--range", "0:1e12:1", cwd=str(tmp_path))
    assert shown.code == 0, shown.stderr
    assert "  values: not computed for a table over 64.0 MiB\n" in shown.out
    assert "-o" not in shown.out + shown.stderr
    assert shown.stderr.startswith("hint: a file of it would take 29.1 TiB, with ")
    assert shown.stderr.endswith(" free on disk here: save fewer timesteps or a smaller --dim\n")
    small = run_in_process("timestep", "--dim", "8", "1", cwd=str(tmp_path))
    assert small.stderr == "hint: save it with -o t_emb.safetensors (or .npy, .pt, .csv, .tsv; -o - for stdout)\n"
