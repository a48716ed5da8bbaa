"""Inputs read as their engines name them (issue 30): a RoPE cache pair under its common spellings."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from pecli.cli.inputs import rope_pair_names
from tests.conftest import run_in_process

_PAIRS = [
    ("cos", "sin"),
    ("cos_cached", "sin_cached"),  # old transformers / GPT-NeoX buffers
    ("cos_cache", "sin_cache"),
    ("freqs_cos", "freqs_sin"),
    ("rope.cos", "rope.sin"),
    ("model.rotary_emb.cos_cached", "model.rotary_emb.sin_cached"),
]


@pytest.mark.parametrize(("cos", "sin"), _PAIRS)
def test_a_cache_pair_is_named_under_its_common_spellings(cos, sin):
    entries = {sin: ((6, 8), "float32"), cos: ((6, 8), "float32")}
    assert rope_pair_names(entries) == (cos, sin)


@pytest.mark.parametrize(
    "names",
    [("acos", "asin"), ("q_cos", "k_sin"), ("cos_a", "sin_b"), ("cos_cos", "sin_sin"), ("cosine", "sine"),
     ("cos", "cos_cached")],
)  # fmt: skip
def test_two_unrelated_tensors_are_no_pair(names):
    assert rope_pair_names({name: ((6, 8), "float32") for name in names}) is None


def _rope_file(tmp_path, cos_name: str, sin_name: str) -> str:
    positions = np.arange(6.0)[:, None]
    inv_freq = 10000.0 ** (-np.arange(0, 8, 2) / 8.0)
    angles = np.concatenate([positions * inv_freq] * 2, axis=1)  # the half-split layout pecli writes
    path = str(tmp_path / "cache.safetensors")
    save_file({cos_name: np.cos(angles).astype(np.float32), sin_name: np.sin(angles).astype(np.float32)}, path)
    return path


def test_compare_and_identify_read_a_cos_cached_pair(tmp_path):
    path = _rope_file(tmp_path, "cos_cached", "sin_cached")
    reference = str(tmp_path / "r.safetensors")
    assert run_in_process("generate", "rope", "--d", "8", "--len", "6", "-o", reference).code == 0
    # was: 'holds 2 tensors; choose one with --key', exit 2
    result = run_in_process("compare", path, reference)
    assert result.code == 0, result.stderr
    assert "same within" in result.out
    found = run_in_process("identify", path)
    assert found.code == 0, found.stderr
    assert "match: rope" in found.out


@pytest.mark.parametrize("preset", ["diffusers", "ldm"])
def test_timestep_repeat_only_refuses_a_preset(tmp_path, preset):
    path = tmp_path / "t.safetensors"
    # was: accepted, the preset's flip_sin_to_cos / freq_shift recorded in the file though never used
    result = run_in_process("timestep", "--repeat-only", "--preset", preset, "--dim", "4", "1", "2", "-o", str(path))
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        f"pecli: error: --preset {preset} shapes the sinusoid, which --repeat-only does not compute "
        "(it repeats t d times) (drop it)"
    ]
    assert not path.exists()
    # an unknown preset is named as unknown; without --preset, --repeat-only still writes t
    assert (
        "unknown preset 'nosuch'"
        in run_in_process("timestep", "--repeat-only", "--preset", "nosuch", "--dim", "4", "1").stderr
    )
    assert run_in_process("timestep", "--repeat-only", "--dim", "4", "1", "2", "-o", str(path)).code == 0
    assert run_in_process("timestep", "--preset", preset, "--dim", "4", "1", "2").code == 0
