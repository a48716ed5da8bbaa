"""Defects found by the lead's attack of session six (issue 30): timestep's presets named as another
command's, and a timestep table too large for the disk described with advice (-o) the disk could not take."""

from __future__ import annotations

import json

import numpy as np
import pytest

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


@pytest.mark.parametrize(
    ("made", "code", "words"),
    [
        (("--base", "500000"), "base_differs", "the base differs"),
        (("--freq-shift", "1"), "freq_shift_1", "tensor2tensor's and fairseq's frequencies base^(-i/(d/2 - 1))"),
    ],
)
def test_a_sinusoidal_table_against_its_spec_names_the_mistake(tmp_path, made, code, words):
    # sinusoidal declared no mistakes: "no known cause explains the difference" for a wrong base or denominator
    written = run_in_process("generate", "--d", "64", "--len", "512", *made, "-o", "a.npy", cwd=str(tmp_path))
    assert written.code == 0, written.stderr
    for pair in (("a.npy", "sinusoidal"), ("sinusoidal", "a.npy")):
        found = run_in_process("compare", *pair, "--json", cwd=str(tmp_path))
        assert found.code == 1, found.stderr
        diagnosis = json.loads(found.out)["diagnosis"]
        assert [finding["code"] for finding in diagnosis] == [code]
        assert words in diagnosis[0]["message"]
        assert diagnosis[0]["figures"]["residual"] < 1e-6


def test_a_fairseq_denominator_against_vaswanis_spec_is_named_the_other_way():
    spec = "sinusoidal:freq_shift=1"
    found = run_in_process("compare", "sinusoidal", spec, "--d", "64", "--len", "512", "--json")
    assert found.code == 1, found.stderr
    assert [finding["code"] for finding in json.loads(found.out)["diagnosis"]] in (
        ["freq_shift_1"],
        ["vaswani_frequencies"],
    )


def test_exact_integers_against_a_half_step_shift_that_fits_float16_differ(tmp_path):
    # 256 … 287 and the same + 0.5 (every value a float16): "same within float16 rounding (tolerance 1.1)",
    # exit 0 — four float16 roundings covered the shift; against exact values the other table can only be
    # their rounding, within one unit in its last place (0.25 here)
    exact = np.arange(256, 288, dtype=np.float64).reshape(4, 8)
    np.save(tmp_path / "i.npy", exact)
    np.save(tmp_path / "shifted.npy", exact + 0.5)
    np.save(tmp_path / "half.npy", exact.astype(np.float16).astype(np.float32))
    found = run_in_process("compare", "i.npy", "shifted.npy", "--json", cwd=str(tmp_path))
    assert found.code == 1, found.stderr
    result = json.loads(found.out)
    assert result["max_abs"] == 0.5
    assert result["diagnosis"][0]["code"] == "constant_offset"
    assert result["diagnosis"][0]["figures"]["offset"] == pytest.approx(0.5, abs=1e-12)
    assert "rounding_only" not in {finding["code"] for finding in result["diagnosis"]}
    same = run_in_process("compare", "i.npy", "half.npy", cwd=str(tmp_path))
    assert same.code == 0, same.out


def test_a_count_table_with_a_bias_added_is_named_an_offset(tmp_path):
    made = run_in_process("generate", "count", "--d", "4", "--len", "256", "-o", "c.npy", cwd=str(tmp_path))
    assert made.code == 0, made.stderr
    np.save(tmp_path / "biased.npy", np.load(tmp_path / "c.npy") + np.float32(0.4))
    found = run_in_process("compare", "c.npy", "biased.npy", "--json", cwd=str(tmp_path))
    assert found.code == 1
    finding = json.loads(found.out)["diagnosis"][0]
    assert (finding["code"], round(finding["figures"]["offset"], 5)) == ("constant_offset", 0.4)
