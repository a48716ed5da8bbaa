"""Seeded random parameters of the lucidrains-style peers, found by cross-checking them (issue 30).

The tables are the libraries' own (tests/data/peers, written by tests/data/make_peer_tables.py); the
tests never import the libraries. test_peer_corpus.py also checks them against their expected commands.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table
from pecli.cli.reproduce import reproduce
from tests.paths import DATA

PEERS = DATA / "peers"
RECORDS = json.loads((PEERS / "PROVENANCE.json").read_text())


@pytest.mark.parametrize(
    ("name", "dim", "length"),
    [
        ("rotary_embedding_torch_angle_theta500_155x30", 30, 155),  # RotaryEmbedding(dim=30, theta=500)
        ("x_transformers_rotary_base500_193x20", 20, 193),  # x-transformers RotaryEmbedding(20, base=500)
    ],
)
def test_identify_names_a_plain_rope_not_a_scaling_that_changes_nothing(name, dim, length):
    """llama3's factor 2 (original 8192 or more) leaves base 500's short wavelengths alone: identify
    named that scaling for the libraries' plain base-500 RoPE; it names the plain RoPE."""
    table = np.load(PEERS / f"{name}.npy")
    found = identify_table(table)
    assert found.level == "exact"
    assert found.best.params["base"] == 500.0 and found.best.params["scaling"] in (None, "none")
    command = reproduce(found)
    assert "--scaling" not in command and "--base 500 " in command, command
    ours = pecli.encode("rope", length, dim, part="angle", layout="interleaved", base=500.0, dtype="float64")
    assert np.abs(ours - table).max() <= 2e-6 * np.abs(table).max()


@pytest.mark.parametrize(
    ("name", "heads", "total", "length"),
    [
        ("x_transformers_alibi_6heads_total8_68x68", 6, 8, 68),
        ("x_transformers_alibi_10heads_total18_41x41", 10, 18, 41),  # not a power of two: get_slopes' interleaving
    ],
)
def test_identify_reads_x_transformers_padded_alibi_heads(name, heads, total, length):
    """AlibiPositionalBias(heads, total_heads) pads with unbiased heads: identify found no match (exit 1)
    for a convention pecli generates (--total-heads); it names heads and total_heads."""
    table = np.load(PEERS / f"{name}.npy")
    assert not table[heads:].any() and table[:heads].any()
    found = identify_table(table)
    assert found.level == "exact", found.best.describe()
    assert found.best.params["heads"] == heads and found.best.params["total_heads"] == total
    assert f"--heads {heads} --total-heads {total} --len {length}" in reproduce(found)
    ours = pecli.encode("alibi", length, None, heads=heads, total_heads=total, dtype="float64")
    assert np.abs(ours - table).max() <= 1e-6 * np.abs(table).max()
