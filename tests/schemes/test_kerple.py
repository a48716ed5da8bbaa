"""KERPLE's log bias, added through the registry alone: generate, distance, plot and compare need no CLI code."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import pecli
from pecli.io import read_table
from tests.conftest import assert_clean_error, require_module


def _reference(length: int, r1: float, r2: float) -> list[list[float]]:
    """−r1·log(1 + r2·|i − j|), in plain Python floats (the paper's formula, §4)."""
    return [[-r1 * math.log1p(r2 * abs(i - j)) for j in range(length)] for i in range(length)]


@pytest.mark.parametrize(("r1", "r2"), [(1.0, 1.0), (2.0, 0.5), (0.25, 3.0)])
def test_kerple_table_is_the_log_kernel(r1, r2):
    table = pecli.encode("kerple", 6, None, r1=r1, r2=r2, dtype="float64")
    np.testing.assert_allclose(table, _reference(6, r1, r2), rtol=1e-15, atol=0)
    assert table[1, 0] == pytest.approx(-r1 * math.log(1 + r2))
    rows = pecli.encode("kerple", 6, None, r1=r1, r2=r2, dtype="float64", rows=range(2, 4))
    np.testing.assert_array_equal(rows, table[2:4])


def test_kerple_matches_the_authors_expression_in_torch():
    torch = require_module("torch")
    # ParallelKerpleLog: diff = |i − j| (its causal half), bias = -bias_p * torch.log(1 + bias_a * diff)
    bias_p, bias_a = torch.tensor(1.7, dtype=torch.float64), torch.tensor(0.3, dtype=torch.float64)
    diff = (torch.arange(9)[:, None] - torch.arange(9)[None, :]).abs().to(torch.float64)
    expected = (-bias_p * torch.log(1 + bias_a * diff)).numpy()
    np.testing.assert_allclose(pecli.encode("kerple", 9, None, r1=1.7, r2=0.3, dtype="float64"), expected,
                               rtol=1e-14, atol=1e-300)  # fmt: skip


def test_generate_distance_plot_and_compare_kerple(cli, tmp_path):
    path = tmp_path / "k.safetensors"  # its metadata names the scheme and parameters
    assert cli("generate", "kerple", "--len", "8", "--r1", "2", "--r2", "0.5", "-o", str(path)).code == 0
    np.testing.assert_allclose(read_table(str(path)).array, _reference(8, 2.0, 0.5), rtol=1e-6)
    profile = cli("distance", "kerple", "--len", "5", "--r1", "2", "--profile", "--json")
    document = json.loads(profile.out)
    # even in h: one side of the query; one head, named by its parameters
    assert document["offsets"] == [0, 1, 2, 3, 4] and document["heads"] == ["r1 2, r2 1"]
    np.testing.assert_allclose(document["bias"][0], [-2.0 * math.log1p(h) for h in range(5)], rtol=1e-15)
    matrix = json.loads(cli("distance", str(path), "--json").out)["matrix"]
    np.testing.assert_allclose(matrix[0], _reference(8, 2.0, 0.5), rtol=1e-15)  # from the metadata, exact
    terminal = cli("distance", "kerple", "--len", "64", "--width", "60", "--height", "12", "--no-color")
    assert terminal.code == 0 and "bias — kerple" in terminal.out and "-4.085" in terminal.out
    image = tmp_path / "k.png"
    assert cli("plot", "kerple", "--len", "16", "-o", str(image)).code == 0 and image.stat().st_size > 0
    properties = cli("compare", "--properties", "kerple:r1=2")
    # log grows without bound (2·log(8192) at len 8192) but never rises with |h|
    assert "✗ bounded: max |bias| 12.48 at len 512, 18.02 at len 8192" in properties.out
    assert "✓ decay" in properties.out and "✓ translation-invariant" in properties.out


@pytest.mark.parametrize("args", [("--r1", "0"), ("--r2", "-1"), ("--d", "8")])
def test_bad_kerple_values_are_one_line(cli, args):
    result = cli("generate", "kerple", "--len", "8", *args, "-o", "x.npy")
    assert_clean_error(result, 2)
