"""identify reads a cos/sin pair file (as ``pecli generate rope`` and ``rope2d`` write it) as one table (issue 30)."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

PAIR_FILES = [
    ("rope", "--d 32 --len 64", "rope: its defaults"),
    ("rope2d", "--grid 14,14 --d 32", "rope2d: grid=14,14"),
    ("rope2d", "--grid 8,12 --layout half --d 64", "rope2d: grid=8,12 layout=half"),
    ("rope2d", "--grid 4,6 --sections 2,6,8 --d 32", "rope2d: grid=4,6 sections=2,6,8"),  # Qwen2-VL's image
    ("rope2d", "--grid 14,14 --d 32 --dtype bfloat16", "rope2d: grid=14,14"),
    # one row of a grid: its cos part alone is as close to a llama3-scaled 1-D RoPE; the sin part tells them apart
    ("rope2d", "--grid 1,16 --d 32", "rope2d: grid=1,16"),
]


@pytest.mark.parametrize(("scheme", "options", "described"), PAIR_FILES)
def test_a_pair_file_is_identified_as_the_pair_and_reproduced(scheme, options, described, cli, tmp_path):
    written = tmp_path / "pair.safetensors"
    assert cli("generate", scheme, *shlex.split(options), "-o", str(written)).code == 0
    result = cli("identify", str(written), "--json")
    assert result.code == 0, result.out + result.stderr
    found = json.loads(result.out)
    assert found["match"] == "exact"
    assert found["best"]["scheme"] == scheme
    assert found["best"]["params"]["part"] is None
    assert found["parts"] == ["cos", "sin"]
    # the command writes the same file: both parts, bit for bit
    argv = shlex.split(found["command"])
    assert argv[:3] == ["pecli", "generate", scheme] or argv[:3] == ["pecli", "generate", "--preset"]
    again = tmp_path / "again.safetensors"
    argv[argv.index("-o") + 1] = str(again)
    assert cli(*argv[1:]).code == 0
    given, regenerated = load_file(str(written)), load_file(str(again))
    assert sorted(regenerated) == ["cos", "sin"]
    for part in ("cos", "sin"):
        np.testing.assert_array_equal(regenerated[part], given[part])
    text = cli("identify", str(written)).out
    assert f"match: {described}" in text.splitlines()[2]


def test_rope2d_pair_command_line(cli, tmp_path):
    written = tmp_path / "rg.safetensors"
    assert cli("generate", "rope2d", "--grid", "14,14", "--d", "32", "-o", str(written)).code == 0
    result = cli("identify", str(written))
    assert result.code == 0, result.out
    assert "reproduce: pecli generate rope2d --grid 14,14 --d 32 -o pe.safetensors" in result.out
    assert "no known convention" not in result.out


@pytest.mark.parametrize(("scheme", "options"), [("rope", "--d 32 --len 64"), ("rope2d", "--grid 14,14 --d 32")])
def test_an_unmatched_pair_reports_the_statistics_of_both_parts(scheme, options, cli, tmp_path):
    written = tmp_path / "pair.safetensors"
    assert cli("generate", scheme, *shlex.split(options), "-o", str(written)).code == 0
    cos = load_file(str(written))["cos"]
    sin = np.random.default_rng(0).uniform(-0.5, 1.0, cos.shape).astype(np.float32)  # no sin part of any table
    broken = tmp_path / "broken.safetensors"
    save_file({"cos": cos, "sin": sin}, str(broken))
    result = cli("identify", str(broken), "--json")
    assert result.code == 1, result.out + result.stderr
    found = json.loads(result.out)
    assert found["match"] == "none"
    both = np.concatenate([cos, sin]).astype(np.float64)
    assert found["value_mean"] == pytest.approx(both.mean(), rel=1e-9)
    assert found["value_std"] == pytest.approx(both.std(), rel=1e-9)
    assert both.std() > 0.3  # was: mean 0, standard deviation 0 (the cos part alone had matched)
