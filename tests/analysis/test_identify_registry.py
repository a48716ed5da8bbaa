"""The registry-wide property: ``identify`` of any table ``generate`` writes prints a command that writes it again.

Every scheme, every preset, and a seeded random sample of parameters per scheme (its choices, a base,
a first position, a non-square grid): the command identify prints, run through the CLI in-process,
regenerates the table within its noise (the rounding of an exact match; float32 arithmetic's
eps32 per radian for an approximate one). Random schemes (a seed) say they are a random table.
"""

from __future__ import annotations

import shlex

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table
from pecli.analysis.identify.candidates import _GRID_BASES
from pecli.cli.reproduce import reproduce
from pecli.io import read_table
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.presets import PRESETS

#: sampled parameter sets per scheme (besides its defaults and presets)
SAMPLES = 4
LENGTH, DIM = 40, 16
#: schemes identify does not search: query × key biases without a searcher (T5's buckets, KERPLE)
_NOT_SEARCHED = {name for name, scheme in SCHEMES.items() if scheme.search == "none" and "seed" not in scheme.defaults}


def _sizes(scheme: str, rng: np.random.Generator) -> dict:
    axes = SCHEMES[scheme].axes
    if axes in ("grid", "patches", "pixels"):
        height = int(rng.integers(2, 6))
        dim = int(rng.integers(2, 4)) if axes == "pixels" else 8  # CoordConv: 2 channels, or 3 with the radius
        return {"length": None, "dim": dim, "grid": f"{height},{height + int(rng.integers(1, 4))}"}
    if axes == "query-key":
        return {"length": 12, "dim": None}
    return {"length": LENGTH, "dim": DIM}


def _cases():
    rng = np.random.default_rng(31)
    for name, scheme in SCHEMES.items():
        yield pytest.param(name, None, {}, _sizes(name, rng), id=f"{name}-defaults")
        for scheme_name, preset in PRESETS:
            if scheme_name == name:
                yield pytest.param(name, preset, {}, _sizes(name, rng), id=f"{name}-{preset}")
        for sample in range(SAMPLES):
            params = {key: str(rng.choice(values)) for key, values in scheme.choices.items() if key != "scaling"}
            # frequencies rounded to a half type (an engine's inv_freq.half()): identify reads them (issue 30)
            if "base" in scheme.defaults:  # identify reads a sequence's base off the table; a grid's is one of three
                params["base"] = float(rng.choice([100.0, 10000.0, 500000.0] if scheme.is_sequence else _GRID_BASES))
            # a RoPE table's first position is not searched (a gap: see test_rope_offset_is_not_searched)
            if "offset" in scheme.defaults and scheme.axes == "positions" and name != "rope":
                params["offset"] = int(rng.integers(0, 6))
            yield pytest.param(name, None, params, _sizes(name, rng), id=f"{name}-{sample}")


def _run(cli, tmp_path, command: str) -> np.ndarray:
    argv = shlex.split(command)
    assert argv[0] == "pecli"
    output = argv.index("-o") + 1
    argv[output] = str(tmp_path / argv[output])
    result = cli(*argv[1:])
    assert result.code == 0, (command, result.stderr)
    return read_table(argv[output]).array


@pytest.mark.parametrize(("scheme", "preset", "params", "sizes"), list(_cases()))
def test_identify_reproduces_every_table_generate_writes(scheme, preset, params, sizes, cli, tmp_path):
    sizes = dict(sizes)
    if SCHEMES[scheme].default_parts and "part" not in params:  # one tensor of the parts (RoPE's cos)
        params = {**params, "part": SCHEMES[scheme].default_parts[0]}
    length, dim = sizes.pop("length"), sizes.pop("dim")
    try:
        table = np.asarray(pecli.encode(scheme, length, dim, preset=preset, **sizes, **params), dtype=np.float32)
    except pecli.PecliError:
        pytest.skip("this sample does not exist at this size")
    found = identify_table(table)
    if "seed" in SCHEMES[scheme].defaults:
        assert not found.matched, found.best.describe()
        return
    if scheme in _NOT_SEARCHED:
        return
    assert found.matched, (scheme, preset, params, found.best.describe())
    command = reproduce(found)
    regenerated = _run(cli, tmp_path, command)
    assert regenerated.shape == table.shape, command
    scale = max(float(np.abs(table).max()), 1.0)
    noise = found.tolerance
    if found.level == "approximate":  # float32 arithmetic: eps32 per radian of angle
        noise = 2.0**-23 * scale * (len(table) + 8 + params.get("offset", 0)) * 4
    error = float(np.abs(regenerated.astype(np.float64) - table).max())
    assert error <= noise, (command, error, noise)


@pytest.mark.xfail(strict=True, reason="identify does not read a RoPE table's first position (offset) yet")
def test_rope_offset_is_not_searched():
    found = identify_table(pecli.encode("rope", LENGTH, DIM, part="sin", offset=3))
    assert found.matched and found.best.params["offset"] == 3
