"""identify's readings of small RoPE tables, session 11 (issue 30).

A 20 × 4 RoPE table of base 2e6 was named "base=500000 yarn factor=2 original_max_position=16" (true: it regenerates
the table, but it is not the simplest reading); its bfloat16 pair "dynamic factor=16 original_max_position=11".
A d = 4 table has one frequency besides ω_0 = 1, so every YaRN or Llama 3 reading of it has a plain twin: its grid
of ~9,500 scaling checks is not tried. M-RoPE tables at a base other than the round ones matched nothing.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import pecli
import pecli.analysis.identify.rotary as rotary
from pecli.analysis.identify import BASES, identify_rope_pair, identify_table
from pecli.analysis.identify.rotary import rope_candidates, section_bases


def _reference(length: int, dim: int, base: float, part: str) -> np.ndarray:
    """HF Llama's cos or sin (rotate_half layout): inv_freq = base^(−2i/d), cat(freqs, freqs), in float64."""
    inv_freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles) if part == "cos" else np.sin(angles)


@pytest.mark.parametrize("part", ["sin", "cos"])
def test_a_plain_base_of_few_digits_is_named_before_scalings_of_a_round_base(part, cli, tmp_path):
    path = tmp_path / "t.npy"
    assert (
        cli("generate", "rope", "--d", "4", "--len", "20", "--base", "2000000", "--part", part, "-o", str(path)).code
        == 0
    )
    table = np.load(path)
    np.testing.assert_allclose(table, _reference(20, 4, 2e6, part), atol=2.0**-23)
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.params["base"] == 2e6
    assert found.best.params.get("scaling") in (None, "none")
    result = cli("identify", str(path))
    assert result.code == 0
    assert "--base 2000000 " in result.out and "--scaling" not in result.out.split("reproduce:")[1].splitlines()[0]


def test_a_bfloat16_pair_of_base_2e6_is_named_by_its_plain_base():
    cos, sin = (
        pecli.encode("rope", 20, 4, base=2e6, part=part, dtype="bfloat16").astype(np.float32) for part in ("cos", "sin")
    )
    np.testing.assert_allclose(sin, _reference(20, 4, 2e6, "sin"), atol=2.0**-8)
    found = identify_rope_pair(cos, sin, dtype="bfloat16")
    assert found.level == "exact"
    assert found.best.params["base"] == 2e6
    assert found.best.params.get("scaling") in (None, "none")


def test_a_d4_table_tries_no_yarn_or_llama3_grid(monkeypatch):
    calls: list[str] = []
    agrees = rotary._agrees

    def counted(*args, **kwargs):
        calls.append(args[6])  # the scaling
        return agrees(*args, **kwargs)

    monkeypatch.setattr(rotary, "_agrees", counted)
    table = pecli.encode("rope", 20, 4, base=2e6, part="sin")
    readings = list(rope_candidates(table, BASES))
    assert readings[0] == {"layout": "half", "part": "sin", "base": 2e6}
    assert "yarn" not in calls and "llama3" not in calls
    assert len(calls) < 1000  # was ~11,000 (yarn and llama3 over 7+ factors × 14 originals × ~20 bases)
    # d = 6 has two frequencies besides ω_0 = 1: YaRN's ramp shows, and its grid is still tried
    calls.clear()
    list(rope_candidates(pecli.encode("rope", 20, 6, base=2e6, part="cos"), BASES))
    assert "yarn" in calls and "llama3" in calls


def test_a_d4_identify_is_fast():
    table = pecli.encode("rope", 20, 4, base=2e6, part="sin")
    start = time.process_time()
    identify_table(table)
    assert time.process_time() - start < 1.5  # was ~2 s of CPU on the same machine, ~0.4 s now


def test_a_d4_yarn_table_is_still_written_again_by_its_reading():
    # YaRN keeps ω_0 = 1 and lowers ω_1 (by the ramp): the plain base read off ω_1 writes the same table
    table = pecli.encode("rope", 20, 4, base=10000.0, part="sin", scaling="yarn", factor=4.0, original_max_position=16)
    found = identify_table(table)
    assert found.level == "exact" and found.best.max_error <= found.tolerance
    assert found.best.params.get("scaling") in (None, "none")
    base = found.best.params["base"]
    np.testing.assert_allclose(_reference(20, 4, base, "sin"), table, atol=float(found.tolerance))


@pytest.mark.parametrize(
    ("grid", "sections", "dim", "base", "part", "layout"),
    [
        ("8,8", "8,12,12", 64, 100.0, "cos", None),
        ("8,8", "8,12,12", 64, 300.0, "sin", "interleaved"),
        ("6,8", "4,6,6", 32, 2000.0, "angle", None),
        ("2,4,6", "4,6,6", 32, 250.0, "cos", None),  # a video: 2 frames of 4 × 6
    ],
)
def test_mrope_at_a_base_off_the_round_grid_is_read_off_its_sections(grid, sections, dim, base, part, layout):
    extra = {} if layout is None else {"layout": layout}
    table = pecli.encode("rope2d", None, dim, grid=grid, sections=sections, base=base, part=part, **extra)
    found = identify_table(table)
    assert found.level == "exact", found.best.describe()
    params = found.best.params
    assert (found.best.scheme, params["grid"], params["sections"], params["base"]) == ("rope2d", grid, sections, base)


def test_section_bases_reads_the_1d_ropes_frequencies_at_their_index():
    # the w section of token (0, w) holds cos(w · base^(−2k/d)), k = 20 … 31 of d = 64
    w = np.arange(8, dtype=np.float64)[:, None]
    k = np.arange(20, 32)
    columns = np.cos(w * 37.0 ** (-2.0 * k / 64))
    assert section_bases(columns, "cos", 20, 64) == [37.0]
    assert section_bases(np.zeros((8, 12)), "cos", 20, 64) == []  # no cos table: no base
