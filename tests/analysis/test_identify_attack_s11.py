"""identify attacked, session 11 (issue 30): half-precision RoPE tables of few frequencies, and tables at the edges.

A RoPE table of d = 4 in float16 or bfloat16 whose second frequency never turns within its rows (its cos is 1 in
every row) was no RoPE table to the search; a bfloat16 table of base 10⁶ was named by a half-type twin at 998000
whose error was 1e-5 smaller than the round base's (far below the table's own rounding).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

import pecli
from pecli.analysis.identify import BASES, identify_rope_pair
from pecli.analysis.identify.rotary import rope_candidates


def _rope(length: int, dim: int, base: float, part: str, dtype: str = "bfloat16") -> np.ndarray:
    """pecli's RoPE ``part`` rounded once to ``dtype``, widened to float32 as safetensors and torch read it."""
    return pecli.encode("rope", length, dim, base=base, part=part, dtype=dtype).astype(np.float32)


def _reference_cos(length: int, dim: int, base: float) -> np.ndarray:
    """HF Llama's cos (rotate_half layout): inv_freq = base^(−2i/d), cat(freqs, freqs), in float64."""
    inv_freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
    return np.cos(np.concatenate([angles, angles], axis=1))


def test_a_round_base_is_read_before_its_half_type_twin_in_a_bfloat16_table():
    # within bfloat16's rounding both write the table: the round exact base is the simpler reading
    table = _rope(20, 8, 1e6, "cos")
    np.testing.assert_allclose(table, _reference_cos(20, 8, 1e6), atol=2.0**-8)
    first = next(rope_candidates(table, BASES))
    assert first["base"] == 1e6
    assert first.get("freqs_dtype") is None


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_d4_cos_table_whose_slow_column_never_turns_is_still_read_as_rope(dtype):
    table = _rope(20, 4, 1e6, "cos", dtype)
    assert (table[:, 1] == 1).all()  # cos(19 · 10⁶^(−1/2)) = 1 − 1.8e-4 rounds to 1
    readings = list(rope_candidates(table, BASES))
    assert readings, "no RoPE reading of a RoPE table"
    # regenerating decides: a base whose cos rounds to this very table (10⁶ itself, or one turning as little)
    # is among the unscaled readings, and 10⁴, whose second column turns to cos 0.19 = 0.982 by row 19, is not
    plain = [reading["base"] for reading in readings if reading.get("scaling") is None]
    again = [pecli.encode("rope", 20, 4, base=base, part="cos", dtype=dtype).astype(np.float32) for base in plain]
    assert any(np.array_equal(written, table) for written in again)
    assert 1e6 in plain and 10000.0 not in plain


@pytest.mark.slow  # identify over a d = 4 table tries every scaling its two frequencies agree with (~4 s)
def test_a_d4_bfloat16_pair_is_read_off_its_sin_part_when_its_cos_part_cannot_tell_the_base():
    cos, sin = _rope(20, 4, 1e7, "cos"), _rope(20, 4, 1e7, "sin")
    found = identify_rope_pair(cos, sin, dtype="bfloat16")
    assert found.level == "exact"
    assert found.best.params["base"] == 1e7
    assert found.best.params["part"] is None
    # its command writes both parts again, within bfloat16's rounding of the float64 formula
    assert found.best.max_error <= found.tolerance
    np.testing.assert_allclose(cos, _reference_cos(20, 4, 1e7), atol=2.0**-8)


EDGES = {
    "one.safetensors": torch.ones(1, 1, dtype=torch.bfloat16),
    "row.safetensors": torch.tensor([[0.0, 1.0]], dtype=torch.float16),
    "column.safetensors": torch.tensor([[0.0], [1.0]], dtype=torch.bfloat16),
    "zeros4d.safetensors": torch.zeros(1, 1, 8, 4, dtype=torch.bfloat16),
    "constant.safetensors": torch.full((4, 4), 0.5, dtype=torch.float16),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_tables_are_answered_without_a_traceback(name, cli, tmp_path):
    path = tmp_path / name
    save_file({"pe": EDGES[name]}, str(path))
    result = cli("identify", str(path), "--json")
    assert result.code in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    found = json.loads(result.out)
    if name == "column.safetensors":  # [0, 1]: count indexing (row p holds p), written again exactly
        assert found["match"] == "exact" and found["best"]["scheme"] == "count"
    else:
        assert found["match"] == "none"
