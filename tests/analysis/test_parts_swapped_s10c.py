"""compare names the parts a file's tensors hold (issue 30): an engine's cache saved as its ``cos`` and ``sin``
tensors, compared with another whose two tensors hold each other's values, is ``parts_swapped`` ("the cos and sin
are swapped"), not a sinusoidal table's ``flip_sin_to_cos`` (diffusers' get_timestep_embedding), which stays the
finding of unnamed tables side by side (.npy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

import pecli
from pecli.analysis.compare import compare_tables
from pecli.analysis.diagnosis import diagnose_difference
from tests.conftest import run_in_process

PARTS_SWAPPED = "the cos and sin are swapped: B holds the sin where the cos belongs, and the cos where the sin does"
FLIP = "the sin and cos halves are swapped: flip_sin_to_cos differs (diffusers' get_timestep_embedding)"


def _cos_sin(length: int = 16, width: int = 16) -> tuple[np.ndarray, np.ndarray]:
    cos, sin = (pecli.encode("rope", length, width, part=part).astype(np.float32) for part in ("cos", "sin"))
    return cos, sin


def _files(tmp_path: Path) -> dict[str, str]:
    """The same RoPE cache as named tensors (cos, sin) and as unnamed tables side by side, each also swapped."""
    cos, sin = _cos_sin()
    paths = {name: str(tmp_path / name) for name in ("a.safetensors", "b.safetensors", "a.npy", "b.npy")}
    save_file({"cos": cos, "sin": sin}, paths["a.safetensors"])
    save_file({"cos": sin, "sin": cos}, paths["b.safetensors"])
    np.save(paths["a.npy"], np.hstack([cos, sin]))
    np.save(paths["b.npy"], np.hstack([sin, cos]))
    return paths


def _diagnosis(*args: str) -> list[dict[str, object]]:
    result = run_in_process("compare", *args, "--json")
    assert result.code == 1, result.stderr
    return json.loads(result.stdout)["diagnosis"]


@pytest.mark.parametrize(
    ("a", "b"),
    [("a.safetensors", "b.safetensors"), ("a.safetensors", "b.npy"), ("a.npy", "b.safetensors")],
    ids=["both-named", "only-a-named", "only-b-named"],
)
def test_a_file_s_cos_and_sin_swapped_are_its_parts_swapped(tmp_path: Path, a: str, b: str) -> None:
    paths = _files(tmp_path)
    text = run_in_process("compare", paths[a], paths[b])
    assert text.code == 1, text.stderr
    assert f"diagnosis: {PARTS_SWAPPED}\n" in text.out
    assert "flip_sin_to_cos" not in text.out
    found = _diagnosis(paths[a], paths[b])
    assert [finding["code"] for finding in found] == ["parts_swapped"]
    assert found[0]["message"] == PARTS_SWAPPED
    assert found[0]["figures"]["permutation"] == [*range(16, 32), *range(16)]


def test_unnamed_tables_side_by_side_keep_flip_sin_to_cos(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    found = _diagnosis(paths["a.npy"], paths["b.npy"])
    assert [(finding["code"], finding["message"]) for finding in found] == [("flip_sin_to_cos", FLIP)]


def test_one_tensor_of_a_pair_side_by_side_is_not_named_by_its_key(tmp_path: Path) -> None:
    cos, sin = _cos_sin()
    save_file({"table": np.hstack([cos, sin])}, str(tmp_path / "a.safetensors"))
    save_file({"table": np.hstack([sin, cos])}, str(tmp_path / "b.safetensors"))
    found = _diagnosis(str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors"))
    assert [finding["code"] for finding in found] == ["flip_sin_to_cos"]


def test_the_core_names_the_parts_it_is_given_and_a_reference_s_first() -> None:
    from pecli.analysis.diagnosis import Reference
    from pecli.sources import resolve_parts

    cos, sin = _cos_sin(8, 8)
    pair, swapped = np.hstack([cos, sin]).astype(np.float64), np.hstack([sin, cos]).astype(np.float64)
    assert [f.code for f in diagnose_difference(pair, swapped, tolerance=1e-6)] == ["flip_sin_to_cos"]
    named = diagnose_difference(pair, swapped, tolerance=1e-6, parts=("cos", "sin"))
    assert [(f.code, f.message) for f in named] == [("parts_swapped", PARTS_SWAPPED)]
    # a reference's parts come first: its names, whatever the caller read
    params = {name: value for name, value in resolve_parts("rope", dim=8, length=8)[0].params.items() if name != "part"}
    reference = Reference("rope", params, parts=("sin", "cos"))
    by_reference = diagnose_difference(pair, swapped, tolerance=1e-6, reference=reference, parts=("cos", "sin"))
    assert by_reference[0].message.startswith("the sin and cos are swapped: B holds the cos where the sin belongs")
    compared = compare_tables(pair, swapped, parts=("cos", "sin"))
    assert not compared.agree
    assert [f.code for f in compared.diagnosis] == ["parts_swapped"]
