"""pecli resample: equal to torch's interpolate, timm's and transformers' conventions, the Longformer recipe.

The command's tests run pecli in process (the real entry point): their subject is the table written and the
error printed; tests/cli/test_attack_resample.py runs resample as real processes."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pecli.analysis.resample import CONVENTIONS, resample_grid, resample_length
from tests.conftest import assert_clean_error, require_module, run_in_process
from tests.paths import DATA

DATA = DATA
GRIDS = [((7, 7), (12, 12)), ((12, 12), (5, 5)), ((4, 6), (9, 3)), ((5, 3), (5, 8)), ((16, 16), (7, 11))]
MODES = [("bicubic", False), ("bicubic", True), ("bilinear", False), ("bilinear", True), ("nearest", False),
         ("area", False)]  # fmt: skip


def _table(rng, rows: int, channels: int = 6) -> np.ndarray:
    return rng.standard_normal((1, rows, channels)).astype(np.float32)


@pytest.mark.parametrize(("grids", "mode"), [(g, m) for g in GRIDS for m in MODES])
def test_grid_equals_torch_interpolate(grids, mode):
    torch = require_module("torch")
    (h, w), (height, width) = grids
    method, antialias = mode
    table = _table(np.random.default_rng(h * 100 + w), 1 + h * w)
    ours = resample_grid(table, (height, width), from_grid=(h, w), prefix_tokens=1, method=method, antialias=antialias)
    grid = torch.from_numpy(table[0, 1:]).double().reshape(1, h, w, -1).permute(0, 3, 1, 2)
    options = {"align_corners": False} if method in ("bicubic", "bilinear") else {}
    expected = torch.nn.functional.interpolate(grid, size=(height, width), mode=method, antialias=antialias, **options)
    expected = expected.permute(0, 2, 3, 1).reshape(1, height * width, -1).numpy()
    assert ours.shape == (1, 1 + height * width, 6) and ours.dtype == np.float32
    np.testing.assert_array_equal(ours[0, 0], table[0, 0])  # the class token kept as it is
    np.testing.assert_allclose(ours[:, 1:], expected, atol=2e-6, rtol=0)


def test_channels_first_grid_keeps_its_layout_and_equals_torch():
    torch = require_module("torch")
    grid = np.random.default_rng(1).standard_normal((5, 6, 4)).astype(np.float32)
    ours = resample_grid(grid, (9, 7), method="bicubic", antialias=True)
    expected = torch.nn.functional.interpolate(torch.from_numpy(grid)[None].double(), size=(9, 7), mode="bicubic",
                                               antialias=True, align_corners=False)[0].numpy()  # fmt: skip
    assert ours.shape == (5, 9, 7)
    np.testing.assert_allclose(ours, expected, atol=2e-6, rtol=0)


def test_dinov2_original_samples_at_its_scale_factor():
    torch = require_module("torch")
    table = _table(np.random.default_rng(2), 1 + 8 * 8)
    convention = CONVENTIONS["dinov2-original"]
    ours = resample_grid(table, (13, 13), prefix_tokens=1, method="bicubic", scale_offset=convention.scale_offset)
    grid = torch.from_numpy(table[0, 1:]).double().reshape(1, 8, 8, -1).permute(0, 3, 1, 2)
    expected = torch.nn.functional.interpolate(grid, scale_factor=(13.1 / 8, 13.1 / 8), mode="bicubic")
    np.testing.assert_allclose(ours[0, 1:], expected.permute(0, 2, 3, 1).reshape(169, -1).numpy(), atol=2e-6)
    # the offset moves the samples: not the size= result
    plain = resample_grid(table, (13, 13), prefix_tokens=1, method="bicubic")
    assert np.abs(plain - ours).max() > 1e-3


@pytest.mark.parametrize("case", ["up", "down", "nonsquare"])
def test_timm_convention_equals_committed_timm_output(case):
    data = np.load(DATA / "resample_timm.npz")
    assert "timm 1.0.31" in str(data["provenance"][0])
    table, expected = data[f"{case}_input"], data[f"{case}_output"]
    source = {"up": (7, 7), "down": (12, 12), "nonsquare": (4, 6)}[case]
    target = {"up": (12, 12), "down": (5, 5), "nonsquare": (9, 5)}[case]
    timm = CONVENTIONS["timm"]
    ours = resample_grid(table, target, from_grid=source, prefix_tokens=timm.prefix_tokens, method=timm.method,
                         antialias=timm.antialias)  # fmt: skip
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, atol=3e-6, rtol=0)


@pytest.mark.parametrize(("size", "new"), [(4, 7), (6, 3)])
def test_hf_convention_equals_vit_interpolate_pos_encoding(size, new):
    torch = require_module("torch")
    transformers = require_module("transformers")
    config = transformers.ViTConfig(hidden_size=8, image_size=size * 4, patch_size=4, num_channels=3)
    embeddings = transformers.models.vit.modeling_vit.ViTEmbeddings(config)
    with torch.no_grad():
        embeddings.position_embeddings.normal_(generator=torch.Generator().manual_seed(5))
        table = embeddings.position_embeddings.numpy().copy()
        expected = embeddings.interpolate_pos_encoding(torch.zeros(1, 1 + new * new, 8), new * 4, new * 4).numpy()
    hf = CONVENTIONS["hf"]
    ours = resample_grid(table, (new, new), prefix_tokens=hf.prefix_tokens, method=hf.method, antialias=hf.antialias)
    np.testing.assert_allclose(ours, expected, atol=3e-6, rtol=0)


def test_linear_length_equals_torch_and_keeps_rows():
    torch = require_module("torch")
    table = np.random.default_rng(3).standard_normal((514, 8)).astype(np.float32)
    for length in (1026, 300):
        ours = resample_length(table, length, method="linear", keep_rows=2)
        rows = torch.from_numpy(table[2:]).double().T[None]
        expected = torch.nn.functional.interpolate(rows, size=length - 2, mode="linear", align_corners=False)
        np.testing.assert_array_equal(ours[:2], table[:2])
        np.testing.assert_allclose(ours[2:], expected[0].T.numpy(), atol=2e-6, rtol=0)


def test_tile_is_the_longformer_recipe():
    table = np.random.default_rng(4).standard_normal((514, 4)).astype(np.float32)
    # allenai/longformer, scripts/convert_model_to_long.ipynb, create_long_model
    max_pos, expected = 4096 + 2, np.empty((4098, 4), dtype=np.float32)
    expected[:2] = table[:2]
    k, step = 2, 514 - 2
    while k < max_pos - 1:
        expected[k : k + step] = table[2:]
        k += step
    np.testing.assert_array_equal(resample_length(table, 4098, method="tile", keep_rows=2), expected)


def test_half_tables_round_once_from_float64():
    table = np.random.default_rng(6).standard_normal((1 + 16, 4)).astype(np.float16)
    ours = resample_grid(table, (6, 6), prefix_tokens=1, method="bicubic", antialias=True)
    wide = resample_grid(table.astype(np.float64), (6, 6), prefix_tokens=1, method="bicubic", antialias=True)
    assert ours.dtype == np.float16
    np.testing.assert_array_equal(ours, wide.astype(np.float16))


# -- the command ------------------------------------------------------------------------------------


@pytest.fixture
def vit_file(tmp_path):
    path = tmp_path / "vit.npy"
    np.save(path, _table(np.random.default_rng(7), 1 + 4 * 6))
    return path


def test_command_writes_the_resampled_table(tmp_path, vit_file):
    output = tmp_path / "new.safetensors"
    result = run_in_process("resample", str(vit_file), "--grid", "8x8", "--from-grid", "4x6", "--prefix-tokens", "1",
                       "--method", "bilinear", "--no-antialias", "-o", str(output), "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["output_shape"] == [1, 65, 6] and summary["from_grid"] == [4, 6] and not summary["antialias"]
    from safetensors.numpy import load_file

    written = load_file(output)["position_embeddings"]
    expected = resample_grid(np.load(vit_file), (8, 8), from_grid=(4, 6), prefix_tokens=1, method="bilinear")
    np.testing.assert_array_equal(written, expected)


def test_command_convention_hf_and_length(tmp_path):
    table = _table(np.random.default_rng(8), 1 + 9)
    np.save(tmp_path / "t.npy", table)
    assert run_in_process("resample", str(tmp_path / "t.npy"), "--grid", "5x5", "--convention", "hf", "-o",
                     str(tmp_path / "g.npy")).code == 0  # fmt: skip
    expected = resample_grid(table, (5, 5), prefix_tokens=1, method="bicubic", antialias=False)
    np.testing.assert_array_equal(np.load(tmp_path / "g.npy"), expected)
    assert run_in_process("resample", str(tmp_path / "t.npy"), "--len", "23", "--keep-rows", "1", "--method", "tile",
                     "-o", str(tmp_path / "l.npy")).code == 0  # fmt: skip
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy")[0, 10:19], table[0, 1:10])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--grid", "8x8", "--prefix-tokens", "1"], ["not a square grid", "--from-grid"]),
        (["--grid", "8x8", "--from-grid", "5x5", "--prefix-tokens", "1"], ["5x5", "24", "--from-grid"]),
        (["--grid", "8x8", "--prefix-tokens", "25"], ["--prefix-tokens 25", "25 rows"]),
        (["--grid", "0x8", "--from-grid", "4x6", "--prefix-tokens", "1"], ["no positions", "--grid"]),
        (["--grid", "300000x300000", "--from-grid", "4x6", "--prefix-tokens", "1"], ["would take", "TiB"]),
        (["--len", "0"], ["--len 0", "no positions"]),
        (["--grid", "8x8", "--len", "9"], ["--grid", "--len"]),
        (["--grid", "8x8", "--convention", "timn"], ["timn"]),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, vit_file, args, words):
    before = vit_file.read_bytes()
    output = tmp_path / "out.npy"
    assert_clean_error(run_in_process("resample", str(vit_file), *args, "-o", str(output)), 2, *words)
    assert not output.exists() and vit_file.read_bytes() == before
    assert os.listdir(tmp_path) == ["vit.npy"]


@pytest.mark.parametrize(
    ("array", "words"),
    [
        (np.arange(20.0), ["1-D", "not a position table"]),
        (np.zeros((1, 1, 4, 4)), ["4-D", "not a position table"]),
        (np.arange(20).reshape(5, 4), ["int64", "not a position table"]),
    ],
)
def test_tensors_that_are_not_position_tables_are_refused(tmp_path, array, words):
    np.save(tmp_path / "t.npy", array)
    for target in (["--grid", "2x2"], ["--len", "8"]):
        result = run_in_process("resample", str(tmp_path / "t.npy"), *target, "-o", str(tmp_path / "o.npy"))
        assert_clean_error(result, 2, *words)
        assert not (tmp_path / "o.npy").exists()
