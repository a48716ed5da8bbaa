"""The transformers sweep, replayed without transformers: each architecture's default config (as
``save_pretrained`` wrote it) and its rotary module's cos/sin over 16 positions, committed in
tests/data/sweep/ by scripts/sweep_transformers_rope.py --write-corpus (the transformers version is in
record.json). Every architecture that passed when the corpus was written must still pass.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest

from pecli.errors import PecliError
from pecli.models import model_encoding
from pecli.schemes.spec import TableSpec
from tests.paths import DATA

CORPUS = DATA / "sweep"
RECORD = json.loads((CORPUS / "record.json").read_text())
CONFIGS = json.loads((CORPUS / "configs.json").read_text())


def _expected() -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    tables: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    with np.load(CORPUS / "tables.npz") as data:
        for key in data.files:
            architecture, layer_type, part = key.split("/")
            entry = tables.setdefault(architecture, {}).setdefault(layer_type, [None, None])
            entry[0 if part == "cos" else 1] = data[key]
    return tables


EXPECTED = _expected()


def _max_error(architecture: str) -> float:
    """Max |pecli − module| over every layer type's cos and sin (a module of one half: compared with it)."""
    config, positions, error = CONFIGS[architecture], RECORD["positions"], 0.0
    for layer_type, (cos, sin) in EXPECTED[architecture].items():
        encoding = model_encoding(config, layer_type=layer_type or None)
        spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=positions, dim=encoding.dim)
        parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
        for want, have in ((cos, parts["cos"]), (sin, parts["sin"])):
            if want.shape[1] * 2 == have.shape[1]:
                # a module of one half: gpt-oss's (half layout: the first half), DeepSeek V4's (each column twice)
                have = have[:, ::2] if np.array_equal(have[:, ::2], have[:, 1::2]) else have[:, : want.shape[1]]
            assert want.shape == have.shape, (architecture, layer_type)
            error = max(error, float(np.abs(want - have).max()))
    return error


@pytest.mark.parametrize("architecture", RECORD["passed"])
def test_architecture_that_passed_still_passes(architecture):
    assert _max_error(architecture) <= RECORD["atol"]


def test_corpus_pass_fraction(capsys):
    """The figure docs/generate.md reports: architectures that pass, of those the corpus can check."""
    passed = 0
    for architecture in EXPECTED:
        with contextlib.suppress(PecliError, AssertionError):
            passed += _max_error(architecture) <= RECORD["atol"]
    checkable = sum(status in ("pass", "fail", "refused") for status, _ in RECORD["results"].values())
    with capsys.disabled():
        print(f"\nsweep corpus (transformers {RECORD['transformers']}): {passed} of {len(EXPECTED)} pass")
    assert passed >= len(RECORD["passed"])
    assert len(RECORD["passed"]) / checkable >= 0.95  # 169 of 174 when written
    assert (CORPUS / "tables.npz").stat().st_size + (CORPUS / "configs.json").stat().st_size < 2 << 20


@pytest.mark.parametrize("architecture", RECORD["reinterleaved"])
def test_reinterleaving_families_are_compared_with_what_their_attention_applies(architecture):
    """GLM, GLM-4, ERNIE 4.5, Helium, Moonshine: the corpus holds the re-interleaved cos/sin (each frequency in two
    adjacent columns), and pecli reads the family's pairing as ``interleaved``."""
    for cos, sin in EXPECTED[architecture].values():
        for table in (cos, sin):
            assert np.array_equal(table[:, ::2], table[:, 1::2])
            assert not np.allclose(table[:, : table.shape[1] // 2], table[:, table.shape[1] // 2 :])
    assert model_encoding(CONFIGS[architecture]).params["layout"] == "interleaved"
