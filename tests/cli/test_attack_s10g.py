"""attack7's findings in the round's new code (issue 30): a resampled model directory's config left stating the
old length with no word, a directory copy written under a file's name, a multi-tensor file's --key hint that
left out its ALiBi biases, and timestep options given after '--' blamed as missing or as not numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.conftest import assert_clean_error


def _model(directory, model_type: str, length_key: str, stated: int, weight: str, rows: int) -> str:
    """A learned-position model directory: config.json and model.safetensors holding the table and one weight."""
    directory.mkdir()
    config = {"model_type": model_type, length_key: stated, "hidden_size": 8, "n_embd": 8}
    (directory / "config.json").write_text(json.dumps(config))
    table = np.random.default_rng(0).normal(0, 0.02, (rows, 8)).astype(np.float32)
    save_file({weight: table, "other.weight": np.ones((8, 8), np.float32)}, str(directory / "model.safetensors"))
    return str(directory)


@pytest.mark.parametrize(
    ("model_type", "length_key", "weight", "stated", "rows", "new_rows", "needed"),
    [
        ("bert", "max_position_embeddings", "embeddings.position_embeddings.weight", 40, 40, 64, 64),
        ("gpt2", "n_positions", "wpe.weight", 24, 24, 48, 48),
        ("opt", "max_position_embeddings", "decoder.embed_positions.weight", 40, 42, 66, 64),  # OPT: 2 offset rows
    ],
)
def test_a_resampled_directory_copy_names_its_stale_config_length(
    cli, tmp_path, model_type, length_key, weight, stated, rows, new_rows, needed
):
    source = _model(tmp_path / "m", model_type, length_key, stated, weight, rows)
    copy = tmp_path / "copy"
    done = cli("resample", source, "--len", str(new_rows), "--in-checkpoint", "-o", str(copy))
    assert done.code == 0, done.stderr
    note = [line for line in done.stderr.splitlines() if "config.json" in line]
    assert len(note) == 1
    assert f"still says {length_key} = {stated}" in note[0] and f"set it to {needed} " in note[0]
    assert json.loads((copy / "config.json").read_text())[length_key] == stated  # copied as it was, as documented


def test_a_copy_whose_config_agrees_gets_no_note(cli, tmp_path):
    source = _model(tmp_path / "m", "bert", "max_position_embeddings", 64, "embeddings.position_embeddings.weight", 40)
    done = cli("resample", source, "--len", "64", "--in-checkpoint", "-o", str(tmp_path / "copy"))
    assert done.code == 0, done.stderr
    assert "config.json" not in done.stderr


@pytest.mark.parametrize("name", ["copy.safetensors", "copy.npy"])
def test_a_directory_copy_is_not_written_under_a_files_name(cli, tmp_path, name):
    source = _model(tmp_path / "m", "bert", "max_position_embeddings", 40, "embeddings.position_embeddings.weight", 40)
    refused = cli("resample", source, "--len", "64", "--in-checkpoint", "-o", str(tmp_path / name))
    assert_clean_error(refused, 2, "model directory is copied to a new directory", "-o resampled-model")
    assert not (tmp_path / name).exists()


def test_the_key_hint_lists_alibi_biases(cli, tmp_path):
    path = tmp_path / "a.safetensors"
    save_file({"other": np.zeros((3, 4), np.float32), "alibi": np.zeros((8, 3, 10), np.float32)}, str(path))
    refused = cli("compare", str(path), "alibi")
    assert_clean_error(refused, 2, "choose one with --key", "(heads, q, k)")
    assert "'alibi' [8, 3, 10]; 'other' [3, 4]" in refused.stderr  # the bias first, by its name


@pytest.mark.parametrize(
    "args",
    [("--", "--dim", "4", "-1"), ("--dim", "4", "--", "-1", "--scale", "2"), ("--dim", "4", "--", "-1", "-o", "t.npy")],
)
def test_an_option_after_the_separator_says_to_move_it(cli, tmp_path, args):
    refused = cli("timestep", *args)
    assert_clean_error(refused, 2, "was read as a timestep: every word after '--' is one", "before '--'")
    assert not (tmp_path / "t.npy").exists()


def test_negative_numbers_after_the_separator_still_read(cli):
    done = cli("timestep", "--dim", "4", "--", "-1", "-2e3")
    assert done.code == 0, done.stderr
    assert "-2000" in done.out


def test_a_key_part_that_one_position_tensor_holds_picks_it_in_a_model_directory(cli, tmp_path):
    """BART's --key encoder: 'encoder' is in the decoder's encoder_attn weights too, but in one position tensor."""
    directory = tmp_path / "bart"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"model_type": "bart", "max_position_embeddings": 4}))
    rng = np.random.default_rng(0)
    encoder, decoder = (rng.normal(0, 0.02, (6, 8)).astype(np.float32) for _ in range(2))
    weights = {"encoder.embed_positions.weight": encoder, "decoder.embed_positions.weight": decoder,
               "decoder.layers.0.encoder_attn.k_proj.weight": np.ones((8, 8), np.float32)}  # fmt: skip
    save_file(weights, str(directory / "model.safetensors"))
    for part, table in (("encoder", encoder), ("decoder", decoder)):
        out = tmp_path / f"{part}.npy"
        done = cli("resample", str(directory), "--key", part, "--len", "6", "-o", str(out))
        assert done.code == 0, done.stderr
        assert np.array_equal(np.load(out), table)  # the same length: that tensor's values as they are
    refused = cli("resample", str(directory), "--key", "weight", "--len", "6", "-o", str(tmp_path / "w.npy"))
    assert_clean_error(refused, 2, "3 weights whose names contain 'weight'")


def test_a_resampled_vit_copy_names_its_stale_image_size(cli, tmp_path):
    """A ViT's pos_embed to a 6x6 grid of 8-pixel patches needs image_size 48 (transformers' ViTModel loads it so)."""
    directory = tmp_path / "vit"
    directory.mkdir()
    config = {"model_type": "vit", "image_size": 32, "patch_size": 8, "hidden_size": 8}
    (directory / "config.json").write_text(json.dumps(config))
    table = np.random.default_rng(0).normal(0, 0.02, (1, 17, 8)).astype(np.float32)
    save_file({"embeddings.position_embeddings": table}, str(directory / "model.safetensors"))
    done = cli("resample", str(directory), "--grid", "6x6", "--prefix-tokens", "1", "--in-checkpoint",
               "-o", str(tmp_path / "copy"))  # fmt: skip
    assert done.code == 0, done.stderr
    note = [line for line in done.stderr.splitlines() if "config.json" in line]
    assert len(note) == 1 and "still says image_size = 32" in note[0]
    assert "set it to 48 for the 36-patch grid" in note[0]
    same = cli("resample", str(directory), "--grid", "4x4", "--prefix-tokens", "1", "--in-checkpoint",
               "-o", str(tmp_path / "same"))  # fmt: skip
    assert same.code == 0 and "config.json" not in same.stderr


def test_a_learned_models_config_points_resample_to_its_directory(cli, tmp_path):
    """Was: 'a model's config, whose tables pecli computes (pecli generate --from-config …)', which refuses a
    learned config in turn ('learns its positions … not a formula'): a dead end."""
    source = _model(tmp_path / "m", "bert", "max_position_embeddings", 40, "embeddings.position_embeddings.weight", 40)
    refused = cli("resample", f"{source}/config.json", "--len", "64", "-o", str(tmp_path / "r.npy"))
    assert_clean_error(refused, 2, "its model's weights do", f"pecli resample {source} ")
    assert not (tmp_path / "r.npy").exists()
    done = cli("resample", source, "--len", "64", "-o", str(tmp_path / "r.npy"))  # the advice works
    assert done.code == 0 and np.load(tmp_path / "r.npy").shape == (64, 8)


@pytest.mark.parametrize("source", [("--", "70000", "-1"), ("--range", "0:70000:1000")])
def test_repeat_only_names_the_timestep_float16_cannot_hold(cli, tmp_path, source):
    """Was: "float16 cannot hold the table's values … or smaller --len", an option timestep does not have."""
    out = tmp_path / "t.npy"
    refused = cli("timestep", "--dim", "4", "--repeat-only", "--dtype", "float16", "-o", str(out), *source)
    assert_clean_error(refused, 2, "overflows float16 (its largest is 65504)", "--dtype float32")
    assert "--len" not in refused.stderr and not out.exists()
    done = cli("timestep", "--dim", "4", "--repeat-only", "--dtype", "float16", "-o", str(out), "65519")
    assert done.code == 0 and np.load(out).tolist() == [[65504.0] * 4]  # float16 rounds 65519 to its largest


@pytest.mark.parametrize("existing", ["file", "directory"])
def test_a_directory_copy_over_an_existing_path_names_the_fix(cli, tmp_path, existing):
    source = _model(tmp_path / "m", "bert", "max_position_embeddings", 40, "embeddings.position_embeddings.weight", 40)
    target = tmp_path / "out"
    if existing == "file":
        target.write_bytes(b"keep")
    else:
        target.mkdir()
        (target / "keep.txt").write_bytes(b"keep")
    refused = cli("resample", source, "--len", "64", "--in-checkpoint", "-o", str(target))
    assert_clean_error(refused, 2, "exists; a model directory is copied to a new (or empty) directory",
                       "give a new directory, e.g. -o resampled-model")  # fmt: skip
    assert (target.read_bytes() if existing == "file" else (target / "keep.txt").read_bytes()) == b"keep"
