"""A ViT model directory's stored ``(1, N, C)`` position table is read by identify, plot and compare, as it
is by resample, not refused for the config's lack of position settings (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

import pecli


@pytest.fixture
def vit_directory(tmp_path):
    """A ViT checkpoint whose pos_embed is MAE's 2-D sin-cos table of a 4 × 4 grid with a class token."""
    directory = tmp_path / "vit"
    directory.mkdir()
    config = {"model_type": "vit", "hidden_size": 32, "image_size": 32, "patch_size": 8, "num_attention_heads": 4}
    (directory / "config.json").write_text(json.dumps(config))
    table = pecli.encode(None, None, 32, preset="mae", grid="4,4", cls_token=True).astype(np.float32)
    save_file({"vit.embeddings.position_embeddings": table[None], "vit.embeddings.cls_token": table[None, :1]},
              str(directory / "model.safetensors"))  # fmt: skip
    return directory, table


def test_identify_reads_the_stored_table(vit_directory, cli):
    directory, _ = vit_directory
    result = cli("identify", str(directory))
    assert result.code == 0, result.stderr
    assert "match: sincos2d (preset mae): grid=4,4 cls_token=True" in result.out


def test_compare_reads_the_stored_table(vit_directory, cli, tmp_path):
    directory, table = vit_directory
    np.save(tmp_path / "shifted.npy", table + 0.25)
    same = cli("compare", str(directory), "mae:grid=4,4,cls_token=true")
    assert same.code == 0, same.stderr
    assert cli("compare", str(directory), str(tmp_path / "shifted.npy")).code == 1


def test_info_says_the_config_problem_once(vit_directory, cli):
    directory, _ = vit_directory
    result = cli("info", str(directory))
    assert result.code == 0, result.stderr
    assert "vit.embeddings.position_embeddings  [1, 17, 32]  float32" in result.out
    assert result.out.count("has no position settings pecli knows") == 1, result.out
