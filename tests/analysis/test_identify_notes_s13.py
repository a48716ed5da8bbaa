"""identify, session 13 (issue 30): identify says what the table cannot tell (``undetermined``) instead of
asserting one reading: a base it only bounds, ALiBi heads that write a head identically, M-RoPE sections
assumed, timesteps it cannot read; and the reading that writes the table exactly wins.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table
from pecli.schemes.alibi import alibi_slopes, alibi_table
from pecli.schemes.timestep import timestep_embedding


def _entry(found, parameter: str):
    entries = [entry for entry in found.undetermined if entry.parameter == parameter]
    assert entries, (parameter, found.undetermined)
    return entries[0]


def test_a_base_only_bounded_is_said_to_be(cli, tmp_path):
    # d = 4 bfloat16 cos at base 2e6: "match: base=500000" as if the table said so
    path = tmp_path / "t.safetensors"
    assert cli("generate", "rope", "--d", "4", "--len", "16", "--base", "2e6", "--dtype", "bfloat16",
               "--part", "cos", "-o", str(path), "-q").code == 0  # fmt: skip
    found = json.loads(cli("identify", str(path), "--json").out)
    bound = next(entry for entry in found["undetermined"] if entry["parameter"] == "base")
    read = found["best"]["params"]["base"]
    assert bound["low"] <= read and "high" not in bound
    # the bound is true: every base above it writes the table within the rounding; just below it does not
    table = pecli.encode("rope", 16, 4, base=2e6, part="cos", dtype="bfloat16").astype(np.float64)
    for base in (bound["low"], 10 * bound["low"], 1e9):
        assert np.abs(pecli.encode("rope", 16, 4, base=base, part="cos", dtype="float64") - table).max() <= 2**-5
    assert (
        np.abs(pecli.encode("rope", 16, 4, base=0.9 * bound["low"], part="cos", dtype="float64") - table).max() > 2**-5
    )
    text = cli("identify", str(path)).out
    assert f"this table cannot tell: base: any base ≥ {bound['low']:.2g}" in text and f"{read:g}, read" in text


def test_the_pair_bounds_the_base_with_both_parts():
    cos, sin = (pecli.encode("rope", 16, 4, base=2e6, part=part, dtype="bfloat16") for part in ("cos", "sin"))
    found = pecli.analysis.identify.identify_rope_pair(cos, sin)
    low = _entry(found, "base").low
    assert low > 1e5  # the sin part turns linearly: a tighter bound than the cos part's 3.6e3
    assert found.best.params["base"] >= low


def test_a_single_alibi_head_lists_the_head_counts_that_write_it():
    # was "heads=5 head=4" alone: (8, 0), (16, 1) … write it identically, and were dropped as runners-up
    table = alibi_table(16, heads=8)[0]
    found = identify_table(np.asarray(table))
    entry = _entry(found, "heads, head")
    pairs = {(reading["heads"], reading["head"]) for reading in entry.readings}
    assert {(8, 0), (16, 1), (5, 4), (found.best.params["heads"], found.best.params["head"])} <= pairs
    for heads, head in [(8, 0), (16, 1), (32, 3), (5, 4)]:
        assert alibi_slopes(heads)[head] == 0.5
    assert (4, 0) not in pairs and "(8, 0), (16, 1)" in entry.note


@pytest.mark.parametrize(("dim", "sections"), [(64, "8,12,12"), (128, "16,24,24")])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_mrope_with_a_slow_w_section_matches_with_the_split_assumed(dim, sections, dtype):
    # was "no known convention matches": w's first frequency turns cos by ~1e-7 over 4 tokens at base 1e6
    cos = pecli.encode("rope2d", None, dim, grid="4,4", sections=sections, base=1e6, part="cos", dtype=dtype)
    found = identify_table(cos)
    assert found.level == "exact" and found.best.params["sections"] == sections
    assert "assumed" in _entry(found, "sections").note


def test_mrope_pair_in_float32_reads_the_split_off_the_sin_part():
    cos, sin = (
        pecli.encode("rope2d", None, 64, grid="4,4", sections="8,12,12", base=1e6, part=part) for part in ("cos", "sin")
    )
    found = pecli.analysis.identify.identify_rope_pair(cos, sin)
    assert found.level == "exact" and found.best.params["sections"] == "8,12,12"
    assert not [entry for entry in found.undetermined if entry.parameter == "sections"]


def test_a_refused_timestep_reading_says_why(cli, tmp_path):
    # was plain "no known convention matches": t ± 2π writes each row within bfloat16's rounding
    path = tmp_path / "t.safetensors"
    assert cli("timestep", "--d", "4", "--preset", "diffusers", "--dtype", "bfloat16", "0", "250", "999",
               "-o", str(path), "-q").code == 0  # fmt: skip
    found = json.loads(cli("identify", str(path), "--json").out)
    assert found["match"] == "none"
    entry = next(entry for entry in found["undetermined"] if entry["parameter"] == "timesteps")
    conventions = [(r["flip_sin_to_cos"], r["freq_shift"], r["max_period"]) for r in entry["readings"]]
    assert (False, 1.0, 10000.0) in conventions  # the diffusers convention that wrote it
    assert "t cannot be read" in cli("identify", str(path)).out


def test_a_readable_timestep_table_has_no_such_note():
    found = identify_table(timestep_embedding([0.0, 250.0, 999.0], 32, flip_sin_to_cos=False, freq_shift=1.0))
    assert found.level == "exact" and found.undetermined == ()


@pytest.mark.parametrize("dim", [32, 64])
def test_the_exact_one_line_grid_wins_over_a_fitted_rope(dim):
    # was "rope base=1e8 … llama3 factor=4" (3.06e-7 off; at d = 64 "approximate", the grid not named)
    table = pecli.encode("rope2d", None, dim, grid="1,16", part="cos")
    found = identify_table(table)
    assert found.level == "exact" and found.best.scheme == "rope2d" and found.best.params["grid"] == "1,16"
    assert found.best.max_error <= 2.0**-24


def test_a_plain_table_asserts_nothing_undetermined():
    for table in (pecli.encode("rope", 64, 32, part="cos"), pecli.encode("sinusoidal", 64, 32)):
        assert identify_table(table).undetermined == ()
