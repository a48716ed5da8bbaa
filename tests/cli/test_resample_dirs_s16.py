"""``pecli resample --in-checkpoint`` on model directories (issue 30, round s16): a directory of
``pytorch_model.bin`` (or its shards) alone is copied with the one tensor replaced; the shard of a sharded
safetensors model that holds the tensor is the one rewritten; a weight file beside the loaded ones that still
holds the old table (``pytorch_model.bin`` beside ``model.safetensors``) is named in a warning. Real GPT-2s
written by transformers, loaded back by transformers at the new size."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import numpy as np
import pytest

from pecli.analysis.resample_checkpoint import copy_notes, stored_table
from pecli.io.checkpoint_files import CheckpointCopy
from tests.conftest import assert_clean_error, require_module

ROWS, WIDTH, LONGER = 64, 32, 128
WPE = "transformer.wpe.weight"


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _digests(folder) -> dict[str, str]:
    return {name: _digest(os.path.join(folder, name)) for name in sorted(os.listdir(folder))}


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """A tiny GPT-2 (learned 64 × 32 wpe) saved by transformers as safetensors, shards, and a torch.save
    ``pytorch_model.bin`` (the tied lm_head left out, as save_pretrained left it); its state dict."""
    torch = require_module("torch")
    transformers = require_module("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=WIDTH, n_head=2, n_positions=ROWS, vocab_size=100)
    model = transformers.GPT2LMHeadModel(config)
    root = tmp_path_factory.mktemp("gpt2")
    model.save_pretrained(root / "st")
    model.save_pretrained(root / "shards", max_shard_size="20KB")
    state = {name: tensor.clone() for name, tensor in model.state_dict().items() if name != "lm_head.weight"}
    os.makedirs(root / "bin")
    shutil.copy(root / "st" / "config.json", root / "bin")
    torch.save(state, root / "bin" / "pytorch_model.bin")
    return root, {name: tensor.numpy() for name, tensor in state.items()}


def _linear(table: np.ndarray, rows: int) -> np.ndarray:
    """torch's interpolate(mode="linear", align_corners=False) along the rows: the reference, from torch itself."""
    torch = require_module("torch")
    stretched = torch.nn.functional.interpolate(torch.from_numpy(table.T[None]).double(), size=rows, mode="linear")
    return stretched[0].T.numpy()


def _load(folder, rows: int):
    """The copy loaded by transformers, its config's n_positions set to ``rows`` first (as pecli's note says)."""
    transformers = require_module("transformers")
    config = json.loads((folder / "config.json").read_text())
    config["n_positions"] = rows
    (folder / "config.json").write_text(json.dumps(config))
    return transformers.GPT2LMHeadModel.from_pretrained(folder)


def _resample(cli, source, target):
    return cli("resample", str(source), "--key", "wpe", "--len", str(LONGER), "--in-checkpoint", "-o", str(target))


def test_a_directory_of_pytorch_model_bin_alone_is_copied_with_the_table_replaced(cli, gpt2, tmp_path):
    root, state = gpt2
    before = _digests(root / "bin")
    result = _resample(cli, root / "bin", tmp_path / "long")
    assert result.code == 0, result.stderr
    assert "n_positions = 64 (copied as it was): set it to 128" in result.stderr
    assert _digests(root / "bin") == before  # the input untouched
    assert sorted(os.listdir(tmp_path / "long")) == ["config.json", "pytorch_model.bin"]
    model = _load(tmp_path / "long", LONGER)
    wpe = model.transformer.wpe.weight.detach().numpy()
    assert wpe.shape == (LONGER, WIDTH)
    np.testing.assert_allclose(wpe, _linear(state[WPE], LONGER), rtol=1e-6, atol=1e-7)
    for name in ("transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", "transformer.ln_f.bias"):
        np.testing.assert_array_equal(model.state_dict()[name].numpy(), state[name], err_msg=name)


def test_the_bin_directory_finds_its_one_table_without_key(gpt2):
    root, _ = gpt2
    assert stored_table(str(root / "bin"), None) == (WPE, (ROWS, WIDTH), "float32")


def test_a_pytorch_model_bin_beside_model_safetensors_is_named_as_still_holding_the_old_table(cli, gpt2, tmp_path):
    root, state = gpt2
    both = tmp_path / "both"
    shutil.copytree(root / "st", both)
    shutil.copy(root / "bin" / "pytorch_model.bin", both)
    result = _resample(cli, both, tmp_path / "long")
    assert result.code == 0, result.stderr
    warning = next(line for line in result.stderr.splitlines() if line.startswith("pecli: warning:"))
    assert "pytorch_model.bin still holds transformer.wpe.weight at its old shape 64 × 32" in warning
    assert "transformers loads model.safetensors" in warning
    # the .bin copied byte for byte, model.safetensors rewritten: transformers loads the new table
    assert _digest(tmp_path / "long" / "pytorch_model.bin") == _digest(both / "pytorch_model.bin")
    wpe = _load(tmp_path / "long", LONGER).transformer.wpe.weight.detach().numpy()
    np.testing.assert_allclose(wpe, _linear(state[WPE], LONGER), rtol=1e-6, atol=1e-7)


def test_a_weight_file_pecli_cannot_read_is_named_but_training_args_is_not(cli, gpt2, tmp_path):
    root, _ = gpt2
    folder = tmp_path / "extra"
    shutil.copytree(root / "st", folder)
    (folder / "tf_model.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(64))
    (folder / "training_args.bin").write_bytes(b"not weights")
    result = _resample(cli, folder, tmp_path / "long")
    assert result.code == 0, result.stderr
    assert "pecli: warning:" not in result.stderr
    assert "tf_model.h5 copied as it was, not rewritten (pecli cannot read it)" in result.stderr
    assert "training_args.bin" not in result.stderr


def test_a_sharded_model_rewrites_the_shard_holding_the_table_and_no_other(cli, gpt2, tmp_path):
    root, state = gpt2
    shards = root / "shards"
    index = json.loads((shards / "model.safetensors.index.json").read_text())
    holding = index["weight_map"][WPE]
    before = _digests(shards)
    result = _resample(cli, shards, tmp_path / "long")
    assert result.code == 0, result.stderr
    assert "pecli: warning:" not in result.stderr  # every shard is read by the loader: none is stale
    after = _digests(tmp_path / "long")
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {holding, "model.safetensors.index.json"}
    copied = json.loads((tmp_path / "long" / "model.safetensors.index.json").read_text())
    assert copied["weight_map"] == index["weight_map"]
    assert copied["metadata"]["total_size"] == index["metadata"]["total_size"] + (LONGER - ROWS) * WIDTH * 4
    wpe = _load(tmp_path / "long", LONGER).transformer.wpe.weight.detach().numpy()
    np.testing.assert_allclose(wpe, _linear(state[WPE], LONGER), rtol=1e-6, atol=1e-7)


def test_a_sharded_pytorch_model_bin_rewrites_its_shard(cli, gpt2, tmp_path):
    torch = require_module("torch")
    root, state = gpt2
    folder = tmp_path / "binshards"
    os.makedirs(folder)
    shutil.copy(root / "bin" / "config.json", folder)
    names = sorted(state)
    halves = {"pytorch_model-00001-of-00002.bin": names[: len(names) // 2],
              "pytorch_model-00002-of-00002.bin": names[len(names) // 2 :]}  # fmt: skip
    weight_map = {}
    for file, part in halves.items():
        torch.save({name: torch.from_numpy(state[name]) for name in part}, folder / file)
        weight_map.update(dict.fromkeys(part, file))
    index = {"metadata": {"total_size": sum(value.nbytes for value in state.values())}, "weight_map": weight_map}
    (folder / "pytorch_model.bin.index.json").write_text(json.dumps(index))
    result = _resample(cli, folder, tmp_path / "long")
    assert result.code == 0, result.stderr
    before, after = _digests(folder), _digests(tmp_path / "long")
    assert {name for name in before if before[name] != after[name]} == {weight_map[WPE], "pytorch_model.bin.index.json"}
    copied = json.loads((tmp_path / "long" / "pytorch_model.bin.index.json").read_text())
    assert copied["metadata"]["total_size"] == index["metadata"]["total_size"] + (LONGER - ROWS) * WIDTH * 4
    model = _load(tmp_path / "long", LONGER)
    np.testing.assert_allclose(
        model.transformer.wpe.weight.detach().numpy(), _linear(state[WPE], LONGER), rtol=1e-6, atol=1e-7
    )


def test_an_existing_output_directory_is_refused_for_a_bin_directory_too(cli, gpt2, tmp_path):
    root, _ = gpt2
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("")
    assert_clean_error(_resample(cli, root / "bin", tmp_path / "taken"), 2, "exists")
    assert os.listdir(tmp_path / "taken") == ["x"]


def test_copy_notes_name_parameters_not_flags():
    """The core's notes name Python parameters; the CLI spells them as flags."""
    done = CheckpointCopy("w", (3,), (3,), "float32", "m/model.safetensors", 12, 12,
                          old_files=("a.bin", "b.bin", "c.bin", "d.bin"))  # fmt: skip
    warnings, notes = copy_notes(done, "m.safetensors", "out", {"length": 3, "keep_rows": 0})
    assert notes == []
    assert warnings == ["out: a.bin, b.bin, c.bin and 1 more still hold w at its old shape 3 (copied as they were, "
                        "not rewritten; transformers loads model.safetensors): delete them from the copy, or "
                        "resample them too"]  # fmt: skip
