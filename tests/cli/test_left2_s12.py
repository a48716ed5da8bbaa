"""Session 12, issue 30: `info --key` counts every tensor of the file; `plot --view pca --grid` refuses a grid
that would read most of the table as class tokens."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from pecli.analysis.resample import MAX_PREFIX_TOKENS


@pytest.fixture
def vit_file(tmp_path):
    """A ViT-like checkpoint of 3 tensors; the position table is 1 + 14×14 rows."""
    rng = np.random.default_rng(0)
    tensors = {
        "pos_embed": rng.standard_normal((1, 197, 8)).astype(np.float32),
        "cls_token": np.zeros((1, 1, 8), np.float32),
        "head.weight": np.ones((10, 8), np.float32),
    }
    path = tmp_path / "vit.safetensors"
    save_file(tensors, str(path))
    return path, tensors


@pytest.mark.parametrize("suffix", ["safetensors", "pt"])
def test_info_key_counts_every_tensor_and_names_the_one_shown(cli, tmp_path, vit_file, suffix):
    path, tensors = vit_file
    if suffix == "pt":
        torch = pytest.importorskip("torch")
        path = tmp_path / "vit.pt"
        torch.save({name: torch.from_numpy(array) for name, array in tensors.items()}, str(path))
    result = cli("info", str(path), "--stats", "--key", "pos_embed")
    assert result.code == 0, result.stderr
    header, *rows = result.out.splitlines()
    assert header.startswith(f"{path}: 3 tensors, ") and header.endswith(", showing pos_embed")
    assert len(rows) == 1 and rows[0].split()[0] == "pos_embed"
    report = json.loads(cli("info", str(path), "--stats", "--key", "pos_embed", "--json").out)
    assert report["tensor_count"] == 3 and report["key"] == "pos_embed"
    (shown,) = report["tensors"]
    assert shown["name"] == "pos_embed" and shown["shape"] == [1, 197, 8]
    assert shown["stats"]["max"] == pytest.approx(float(tensors["pos_embed"].max()), rel=1e-6)
    assert report["size"] == path.stat().st_size  # the whole file's size, stated as such beside the count


def test_info_without_key_lists_and_counts_all(cli, vit_file):
    path, _ = vit_file
    report = json.loads(cli("info", str(path), "--json").out)
    assert report["tensor_count"] == 3 and report["key"] is None and len(report["tensors"]) == 3
    assert cli("info", str(path)).out.splitlines()[0].endswith(" KiB")  # no "showing" without --key


def test_pca_refuses_a_grid_that_leaves_thousands_of_class_tokens(cli, tmp_path):
    path = tmp_path / "pe.npy"
    np.save(path, np.random.default_rng(1).standard_normal((2048, 16)).astype(np.float32))
    result = cli("plot", str(path), "--view", "pca", "--grid", "3x3", "--json")
    assert result.code == 2 and result.out == ""
    (line,) = result.stderr.splitlines()
    assert "3x3" in line and "2048 rows" in line and "2039 leading rows" in line and "--grid HxW" in line
    assert "Traceback" not in result.stderr


def test_pca_allows_up_to_the_shared_number_of_prefix_tokens_and_suggests_the_grid(cli, tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "pe.npy"
    np.save(path, rng.standard_normal((MAX_PREFIX_TOKENS + 16, 6)).astype(np.float32))
    report = json.loads(cli("plot", str(path), "--view", "pca", "--grid", "4x4", "--json").out)
    assert report["prefix_tokens"] == MAX_PREFIX_TOKENS and report["positions"] == 16
    np.save(path, rng.standard_normal((MAX_PREFIX_TOKENS + 17, 6)).astype(np.float32))
    result = cli("plot", str(path), "--view", "pca", "--grid", "4x4")
    assert result.code == 2 and f"{MAX_PREFIX_TOKENS + 1} leading rows" in result.stderr
    vit = tmp_path / "vit.npy"
    np.save(vit, rng.standard_normal((1, 197, 6)).astype(np.float32))
    refused = cli("plot", str(vit), "--view", "pca", "--grid", "4x4")
    assert refused.code == 2 and "e.g. --grid 14x14" in refused.stderr
    report = json.loads(cli("plot", str(vit), "--view", "pca", "--grid", "14x14", "--json").out)
    assert report["prefix_tokens"] == 1 and report["grid"] == [14, 14] and report["positions"] == 196
