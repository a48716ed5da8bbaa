"""Session 11 (issue 30): a resampled copy's config note for a non-square ViT grid (image_size as a (height,
width) pair) and for BART (its offset of 2 rows, and the decoder's table the same key sizes), checked by loading
the copy with transformers; distance's float32 overflow (was numpy's raw warning and a matrix of inf)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file

from tests.conftest import assert_clean_error

transformers = pytest.importorskip("transformers")


def _fixed(directory, **changes):
    """A copy of ``directory`` with its config.json changed as the note says."""
    fixed = directory.parent / (directory.name + "-fixed")
    shutil.copytree(directory, fixed)
    config = json.loads((directory / "config.json").read_text())
    (fixed / "config.json").write_text(json.dumps({**config, **changes}))
    return str(fixed)


def _notes(done):
    return [line for line in done.stderr.splitlines() if "config.json" in line or "rows too" in line]


def test_a_non_square_vit_grid_names_the_image_size_pair_that_loads(cli, tmp_path):
    config = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=8, num_hidden_layers=1,
                                    num_attention_heads=2, intermediate_size=16)  # fmt: skip
    transformers.ViTModel(config, add_pooling_layer=False).save_pretrained(tmp_path / "vit")
    copy = tmp_path / "copy"
    done = cli("resample", str(tmp_path / "vit"), "--grid", "4x6", "--prefix-tokens", "1", "--in-checkpoint",
               "-o", str(copy))  # fmt: skip
    assert done.code == 0, done.stderr
    (note,) = _notes(done)
    assert "still says image_size = 32" in note and "set it to [32, 48] (height, width)" in note
    assert "for the 24-patch grid (4x6)" in note
    with pytest.raises(RuntimeError):  # as copied: refused
        transformers.ViTModel.from_pretrained(str(copy), add_pooling_layer=False)
    model = transformers.ViTModel.from_pretrained(_fixed(copy, image_size=[32, 48]), add_pooling_layer=False)
    written = load_file(str(copy / "model.safetensors"))["embeddings.position_embeddings"]
    assert np.array_equal(model.embeddings.position_embeddings.detach().numpy(), written)
    torch = pytest.importorskip("torch")
    assert model(torch.zeros(1, 3, 32, 48)).last_hidden_state.shape == (1, 25, 8)


def test_a_non_square_grid_for_a_config_of_one_number_says_it_may_not_load(cli, tmp_path):
    directory = tmp_path / "clip"
    directory.mkdir()
    config = {"model_type": "clip_vision_model", "image_size": 32, "patch_size": 8, "hidden_size": 8}
    (directory / "config.json").write_text(json.dumps(config))
    from safetensors.numpy import save_file

    table = np.random.default_rng(0).normal(0, 0.02, (17, 8)).astype(np.float32)
    save_file({"embeddings.position_embedding.weight": table}, str(directory / "model.safetensors"))
    done = cli("resample", str(directory), "--grid", "2x8", "--prefix-tokens", "1", "--in-checkpoint",
               "-o", str(tmp_path / "copy"))  # fmt: skip
    assert done.code == 0, done.stderr
    (note,) = _notes(done)
    assert "set it to [16, 64] (height, width)" in note and "(CLIP, SigLIP) cannot load a non-square grid" in note


def test_bart_names_its_offset_its_length_and_its_other_table(cli, tmp_path):
    config = transformers.BartConfig(vocab_size=50, d_model=8, encoder_layers=1, decoder_layers=1,
                                     encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
                                     decoder_ffn_dim=16, max_position_embeddings=16)  # fmt: skip
    transformers.BartModel(config).save_pretrained(tmp_path / "bart")
    first = tmp_path / "first"
    done = cli("resample", str(tmp_path / "bart"), "--key", "encoder", "--len", "34", "--in-checkpoint",
               "-o", str(first))  # fmt: skip
    assert done.code == 0, done.stderr
    assert "first 2 rows precede its first position (bart offsets positions by 2)" in done.stderr
    assert "--keep-rows 2 keeps them" in done.stderr
    (note,) = _notes(done)
    assert "still says max_position_embeddings = 16" in note and "set it to 32 for the 34-row table" in note
    assert "resample decoder.embed_positions.weight to 34 rows too" in note
    with pytest.raises(RuntimeError):  # the config alone set: the decoder's 18 rows refused
        transformers.BartModel.from_pretrained(_fixed(first, max_position_embeddings=32))
    both = tmp_path / "both"
    done = cli("resample", str(first), "--key", "decoder", "--len", "34", "--keep-rows", "2", "--in-checkpoint",
               "-o", str(both))  # fmt: skip
    assert done.code == 0, done.stderr
    assert "precede" not in done.stderr  # --keep-rows 2 given
    (note,) = _notes(done)
    assert "set it to 32 for the 34-row table, or transformers refuses" in note  # the encoder is already done
    model = transformers.BartModel.from_pretrained(_fixed(both, max_position_embeddings=32))
    written = load_file(str(both / "model.safetensors"))
    for name in ("encoder.embed_positions.weight", "decoder.embed_positions.weight"):
        assert np.array_equal(model.state_dict()[name].numpy(), written[name])


@pytest.fixture
def huge(tmp_path):
    table = np.full((4, 3), 3e38, np.float32)
    table[::2] *= -1
    path = tmp_path / "T.npy"
    np.save(path, table)
    return str(path)


@pytest.mark.parametrize("output", ["d.npy", "-"])
def test_distance_past_float32_is_refused_before_writing(cli, tmp_path, huge, output):
    target = str(tmp_path / output) if output != "-" else output
    refused = cli("distance", huge, "--metric", "euclidean", "-o", target)
    assert_clean_error(refused, 2, "the euclidean values reach 1.039e+39, past float32's largest", "--dtype float64")
    assert "warning" not in refused.stderr and refused.out == ""
    assert not (tmp_path / "d.npy").exists()


def test_distance_dtype_float64_writes_the_values(cli, tmp_path, huge):
    done = cli("distance", huge, "--metric", "euclidean", "--dtype", "float64", "-o", str(tmp_path / "d.npy"))
    assert done.code == 0 and "warning" not in done.stderr, done.stderr
    matrix = np.load(tmp_path / "d.npy")
    expected = 2 * 3e38 * np.sqrt(3) * (np.add.outer(np.arange(4), np.arange(4)) % 2)  # opposite signs every other row
    assert matrix.dtype == np.float64
    np.testing.assert_allclose(matrix, expected, rtol=1e-6)


def test_distance_json_and_cosine_need_no_dtype(cli, huge):
    done = cli("distance", huge, "--metric", "dot", "--json")
    assert done.code == 0 and "warning" not in done.stderr, done.stderr
    matrix = np.array(json.loads(done.out)["matrix"])
    np.testing.assert_allclose(np.abs(matrix), np.float64(np.float32(3e38)) ** 2 * 3, rtol=1e-12)
    assert cli("distance", huge, "--metric", "cosine", "-o", "-", "--format", "csv").code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [(("--dtype", "float16", "-o", "x.npy"), "unknown --dtype 'float16'"), (("--dtype", "float64"), "--dtype applies")],
)
def test_distance_dtype_refusals(cli, huge, args, message):
    assert_clean_error(cli("distance", huge, *args), 2, message)
