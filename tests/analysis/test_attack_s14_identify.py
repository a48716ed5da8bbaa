"""identify, session 14 (issue 30 class 5: identify crashes or lies at the edges).

Each table is written by pecli itself and read back; the reading is asserted against what wrote it.
"""

from __future__ import annotations

import json

from pecli.analysis.identify import identify_table
from pecli.schemes.timestep import timestep_embedding


def test_a_convention_whose_t_cannot_be_read_is_named_beside_the_match(cli, tmp_path):
    # d = 4 diffusers rows at max period 10000 in bfloat16 (t = 341, 965) are ldm's at max period 1000 within
    # rounding (t = 445.97, 444.00); diffusers' t cannot be pinned (t ± 2π writes them too), so only ldm's was
    # read, and it was claimed alone: "match: timestep … max_period=1000.0", nothing undetermined
    path = tmp_path / "t.safetensors"
    written = cli("timestep", "--d", "4", "--preset", "diffusers", "--dtype", "bfloat16", "341", "965", "-o", str(path))
    assert written.code == 0
    found = json.loads(cli("identify", str(path), "--json").out)
    conventions = [entry for entry in found["undetermined"] if entry["parameter"] == "convention"]
    assert conventions, found
    readings = conventions[0]["readings"]
    assert {"max_period": 10000.0, "flip_sin_to_cos": False, "freq_shift": 1.0} in [
        {name: reading[name] for name in ("max_period", "flip_sin_to_cos", "freq_shift")} for reading in readings
    ]
    text = cli("identify", str(path)).out
    assert "this table cannot tell: convention: the rows fit timestep (preset diffusers" in text


def test_the_python_result_names_the_other_convention_too():
    table = timestep_embedding([341.0, 965.0], 4, flip_sin_to_cos=False, freq_shift=1.0, dtype="bfloat16")
    found = identify_table(table, dtype="bfloat16")
    named_alone = found.matched and found.best.params["max_period"] != 10000.0
    assert not named_alone or any(entry.parameter == "convention" for entry in found.undetermined)
