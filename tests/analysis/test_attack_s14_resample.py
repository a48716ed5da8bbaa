"""Attack round on ``pecli resample`` (issue 30, round three): a model directory's copy that silently lacked its
subdirectories, and the values checked against torch where the cases are odd (torch is the reference)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pecli.analysis.resample import resample_grid
from pecli.io import Tensor, write_tensors
from pecli.io.checkpoint import replace_in_directory
from tests.conftest import run_in_process


def _model_directory(folder) -> str:
    """A ViT-shaped model directory with a sentence-transformers module's subdirectory and a hidden one."""
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as handle:
        handle.write('{"model_type": "vit", "image_size": 64, "patch_size": 16}')
    table = np.random.default_rng(0).standard_normal((1, 1 + 4 * 4, 8)).astype(np.float32)
    write_tensors(os.path.join(folder, "model.safetensors"), {"pos_embed": Tensor.from_array(table)}, fmt="safetensors")
    os.makedirs(os.path.join(folder, "1_Pooling"))
    with open(os.path.join(folder, "1_Pooling", "config.json"), "w") as handle:
        handle.write("{}")
    os.makedirs(os.path.join(folder, "evil\x1b[2J"))
    os.makedirs(os.path.join(folder, ".cache"))
    return str(folder)


def test_a_directory_copy_names_the_subdirectories_it_leaves_out(tmp_path):
    """`pecli resample MODEL --grid 2x2 --prefix-tokens 1 --in-checkpoint -o NEW` left MODEL/1_Pooling/ out of NEW
    without a word ("every other tensor copied"; the docs: "every other file copied"): a sentence-transformers
    model copied so loads without its pooling."""
    source = _model_directory(tmp_path / "model")
    done = replace_in_directory(source, str(tmp_path / "new"), "pos_embed", np.zeros((1, 5, 8), np.float32))
    assert done.left_out == ("1_Pooling", "evil\x1b[2J")  # hidden ones are no part of the model
    result = run_in_process("resample", source, "--grid", "2x2", "--prefix-tokens", "1", "--in-checkpoint",
                            "-o", str(tmp_path / "copy"))  # fmt: skip
    assert result.code == 0, result.stderr
    assert "lacks 1_Pooling/" in result.stderr
    assert "\x1b" not in result.stderr  # a name from the directory never reaches the terminal raw
    assert "evil\\x1b[2J/" in result.stderr


torch = pytest.importorskip("torch")


def _torch_grid(table, prefix, source, grid, method, antialias):
    values = torch.from_numpy(np.asarray(table, dtype=np.float64)).reshape(-1, table.shape[-1])
    head, positions = values[:prefix], values[prefix:].T.reshape(1, -1, *source)
    kwargs = {"align_corners": False, "antialias": antialias} if method in ("bicubic", "bilinear") else {}
    result = torch.nn.functional.interpolate(positions, size=grid, mode=method, **kwargs)
    return torch.cat([head, result.reshape(values.shape[1], -1).T]).numpy()


@pytest.mark.parametrize("method", ["bicubic", "bilinear", "nearest", "area"])
@pytest.mark.parametrize(("source", "grid"), [((16, 12), (7, 31)), ((1, 9), (3, 40)), ((4, 4), (96, 96))])
def test_odd_grids_with_registers_match_torch(method, source, grid):
    """A class token and four registers before a non-square, a 1×N and a 24× upsampled grid: torch's values."""
    antialias = method in ("bicubic", "bilinear")
    table = np.random.default_rng(1).standard_normal((5 + source[0] * source[1], 3))
    got = resample_grid(table, grid, from_grid=source, prefix_tokens=5, method=method, antialias=antialias)
    np.testing.assert_allclose(got, _torch_grid(table, 5, source, grid, method, antialias), rtol=0, atol=1e-12)


def test_a_float16_table_is_rounded_once_from_float64():
    """torch's float64 -> float16 goes through float32 (two roundings); pecli rounds once, as its contract says.

    torch's x86 kernels (AVX2, AVX-512) fuse a multiply-add where its default kernel does not, which moves a float64
    result by an ulp or so: where that lands on a float16 midpoint the two roundings may differ, nowhere else.
    """
    table = np.random.default_rng(0).standard_normal((1 + 16 * 12, 8)).astype(np.float16)
    got = resample_grid(table, (100, 100), from_grid=(16, 12), prefix_tokens=1, antialias=True)
    wide = _torch_grid(table, 1, (16, 12), (100, 100), "bicubic", True)
    rounded = wide.astype(np.float16)  # numpy: once, to nearest
    differ = got != rounded
    below, above = np.minimum(got, rounded).astype(np.float64), np.maximum(got, rounded).astype(np.float64)
    np.testing.assert_allclose(wide[differ], (below[differ] + above[differ]) / 2, rtol=1e-13)
    assert differ.sum() < 5
