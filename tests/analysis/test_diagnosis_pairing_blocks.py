"""compare names RoPE's other pairing when a file's cos and sin are compared side by side (issue 30).

An engine's rotary cache is a cos and a sin tensor; compare joins them (cos | sin). The pairing mistake
(rotate_half's halves against GPT-J's adjacent pairs) was found only for one tensor; joined, it was
told as an anonymous column permutation."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from pecli.analysis.compare import compare_tables
from tests.conftest import run_in_process


def _cache(length: int, dim: int, rotary: int, *, adjacent: bool) -> dict[str, np.ndarray]:
    """A rotary cache written out with numpy: HF's cat(freqs, freqs) or GPT-J's repeat_interleave."""
    inv = 10000.0 ** -(np.arange(0, rotary, 2) / rotary)
    angles = np.arange(length, dtype=np.float64)[:, None] * inv[None, :]
    full = np.repeat(angles, 2, axis=1) if adjacent else np.concatenate([angles, angles], axis=1)
    full = np.concatenate([full, np.zeros((length, dim - rotary))], axis=1)  # pass-through columns: angle 0
    return {"cos": np.cos(full).astype(np.float32), "sin": np.sin(full).astype(np.float32)}


@pytest.mark.parametrize(("dim", "rotary"), [(64, 64), (64, 32), (128, 96)])
@pytest.mark.parametrize("engine_adjacent", [True, False])
def test_joined_cos_and_sin_name_the_pairing(dim, rotary, engine_adjacent):
    reference, engine = (_cache(256, dim, rotary, adjacent=adjacent) for adjacent in (not engine_adjacent,
                                                                                       engine_adjacent))  # fmt: skip
    joined = [np.concatenate([cache["cos"], cache["sin"]], axis=1).astype(np.float64) for cache in (reference, engine)]
    result = compare_tables(*joined)
    assert not result.agree
    found = result.diagnosis[0]
    assert found.code == "pairing", found.message
    assert found.figures["blocks"] == 2 and found.figures["rotary_columns"] == rotary
    assert found.figures["b_pairing"] == ("adjacent pairs" if engine_adjacent else "halves")


def test_the_command_names_the_pairing_of_an_engines_cache(tmp_path):
    save_file(_cache(128, 64, 64, adjacent=True), str(tmp_path / "engine.safetensors"))
    result = run_in_process("compare", "rope", str(tmp_path / "engine.safetensors"), "--d", "64", "--len", "128")
    assert result.code == 1
    assert "the pairing differs: A pairs halves (NeoX, rotate_half), B adjacent pairs" in result.out
