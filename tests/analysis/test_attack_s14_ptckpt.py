"""pecli resample --in-checkpoint on a PyTorch checkpoint (.pt, .pth, .bin): a torch.save copy with one tensor
replaced, everything else as torch.load(weights_only=True) gives it."""

from __future__ import annotations

import hashlib
import os
import pathlib

import numpy as np
import pytest

from tests.conftest import assert_clean_error, require_module

torch = require_module("torch")

GRID = ("--key", "model.module.pos_embed", "--grid", "3x4", "--prefix-tokens", "1")


def _checkpoint(path, dtype=None) -> dict:
    """A training checkpoint as timm's and DeiT's scripts save one: a state dict under "model" with
    DataParallel's "module." prefix, an EMA copy, Adam's state, tied and shared tensors, plain values."""
    generator = torch.Generator().manual_seed(0)
    dtype = dtype or torch.float32
    shared = torch.randn(6, 4, generator=generator)
    model = {
        "module.pos_embed": torch.nn.Parameter(torch.randn(1, 17, 8, generator=generator).to(dtype)),
        "module.cls_token": torch.randn(1, 1, 8, generator=generator).to(dtype),
        "module.head.weight": shared,
        "module.head.weight_view": shared[2:],  # a view: one storage, kept one
        "module.step": torch.arange(5, dtype=torch.int64),
        "module.half": torch.randn(3, generator=generator).half(),
    }
    state = {
        "model": model,
        "model_ema": {"module.pos_embed": model["module.pos_embed"].detach().clone()},
        "optimizer": {
            "state": {
                0: {"step": torch.tensor(10.0), "exp_avg": torch.zeros(1, 17, 8), "exp_avg_sq": torch.ones(1, 17, 8)}
            },
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1]}],
        },
        "epoch": 299,
        "args": {"model": "deit_small", "input_size": 224, "pair": (1, 2.5)},
    }
    torch.save(state, path)
    return state


def _digest(path) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def _equal(first, second) -> bool:
    """Same structure, tensors equal in values and dtype, everything else equal."""
    if isinstance(first, torch.Tensor):
        return isinstance(second, torch.Tensor) and first.dtype == second.dtype and torch.equal(first, second)
    if isinstance(first, dict):
        return (
            type(first) is type(second)
            and list(first) == list(second)
            and all(_equal(first[k], second[k]) for k in first)
        )
    if isinstance(first, (list, tuple)):
        return type(first) is type(second) and len(first) == len(second) and all(map(_equal, first, second))
    return type(first) is type(second) and first == second


@pytest.mark.parametrize("suffix", [".pt", ".pth", ".bin"])
def test_copy_replaces_only_the_tensor_with_the_plain_path_values(tmp_path, cli, suffix):
    source, target, plain = tmp_path / f"c{suffix}", tmp_path / f"new{suffix}", tmp_path / "plain.npy"
    _checkpoint(source)
    before = _digest(source)
    result = cli("resample", str(source), *GRID, "--in-checkpoint", "-o", str(target))
    assert result.code == 0, result.stderr
    assert cli("resample", str(source), *GRID, "-o", str(plain)).code == 0
    assert _digest(source) == before  # the input never modified
    original = torch.load(source, weights_only=True)
    copy = torch.load(target, weights_only=True)
    table = copy["model"]["module.pos_embed"]
    assert isinstance(table, torch.nn.Parameter) and table.requires_grad
    assert table.dtype == torch.float32 and table.shape == (1, 13, 8)
    assert np.array_equal(table.detach().numpy(), np.load(plain))
    del original["model"]["module.pos_embed"], copy["model"]["module.pos_embed"]
    assert _equal(original, copy)
    # one storage in the input, one in the copy
    head, view = copy["model"]["module.head.weight"], copy["model"]["module.head.weight_view"]
    assert head.untyped_storage().data_ptr() == view.untyped_storage().data_ptr()
    assert view.storage_offset() == 8
    assert sorted(os.listdir(tmp_path)) == sorted(["plain.npy", source.name, target.name])
    # Adam's state and the EMA copy keep the old shape: one warning names them
    warnings = [line for line in result.stderr.splitlines() if line.startswith("pecli: warning:")]
    assert len(warnings) == 1, result.stderr
    for name in ("optimizer.state.0.exp_avg", "optimizer.state.0.exp_avg_sq", "model_ema.module.pos_embed"):
        assert name in warnings[0]


def test_bfloat16_rounded_once_and_plain_state_dict(tmp_path, cli):
    source, target, plain = tmp_path / "pytorch_model.bin", tmp_path / "new.bin", tmp_path / "plain.pt"
    weights = {"embeddings.position_embeddings.weight": torch.randn(16, 8).bfloat16(), "pooler.bias": torch.randn(8)}
    torch.save(weights, source)
    args = ("--key", "position_embeddings", "--len", "24", "--keep-rows", "2")
    result = cli("resample", str(source), *args, "--in-checkpoint", "-o", str(target))
    assert result.code == 0, result.stderr
    assert "warning" not in result.stderr
    assert cli("resample", str(source), *args, "-o", str(plain)).code == 0
    copy = torch.load(target, weights_only=True)
    expected = next(iter(torch.load(plain, weights_only=True).values()))
    table = copy["embeddings.position_embeddings.weight"]
    assert table.dtype == torch.bfloat16 and torch.equal(table, expected)
    assert torch.equal(copy["pooler.bias"], weights["pooler.bias"])


def test_tuple_holding_the_tensor(tmp_path, cli):
    source, target = tmp_path / "c.pt", tmp_path / "new.pt"
    torch.save({"pair": (torch.randn(10, 4), 7)}, source)
    assert (
        cli("resample", str(source), "--key", "pair.0", "--len", "12", "--in-checkpoint", "-o", str(target)).code == 0
    )
    copy = torch.load(target, weights_only=True)
    assert copy["pair"][0].shape == (12, 4) and copy["pair"][1] == 7


def _refused(tmp_path, result, code, *words):
    assert_clean_error(result, code, *words)
    assert not [name for name in os.listdir(tmp_path) if name.startswith(("new", "."))]  # no copy, no temporary


def test_tied_target_refused_naming_both(tmp_path, cli):
    source = tmp_path / "c.pt"
    table = torch.randn(10, 4)
    torch.save({"encoder.pos": table, "decoder.pos": table}, source)  # one tensor under two keys
    result = cli(
        "resample",
        str(source),
        "--key",
        "encoder.pos",
        "--len",
        "12",
        "--in-checkpoint",
        "-o",
        str(tmp_path / "new.pt"),
    )
    _refused(tmp_path, result, 2, "'encoder.pos'", "'decoder.pos'", "tied")
    shared = torch.randn(10, 4)
    torch.save({"pos": shared[:5], "other": shared[5:]}, source)  # two views of one storage
    result = cli(
        "resample", str(source), "--key", "pos", "--len", "12", "--in-checkpoint", "-o", str(tmp_path / "new.pt")
    )
    _refused(tmp_path, result, 2, "'pos'", "'other'")


def test_pickled_object_refused(tmp_path, cli):
    source = tmp_path / "c.pt"
    torch.save({"pos": torch.randn(10, 4), "path": pathlib.PurePosixPath("runs/1")}, source)
    result = cli(
        "resample", str(source), "--key", "pos", "--len", "12", "--in-checkpoint", "-o", str(tmp_path / "new.pt")
    )
    _refused(tmp_path, result, 2, "cannot be loaded safely", "PurePosixPath", "weights_only=True")


def test_output_is_input_refused(tmp_path, cli):
    source = tmp_path / "c.pt"
    _checkpoint(source)
    before = _digest(source)
    link = tmp_path / "link.pt"
    link.symlink_to(source)
    for output in (source, link, tmp_path / "." / "c.pt"):
        result = cli("resample", str(source), *GRID, "--in-checkpoint", "-o", str(output))
        assert_clean_error(result, 2, "overwrite the input")
    assert _digest(source) == before


@pytest.mark.parametrize(
    ("output", "extra", "words"),
    [
        ("new.safetensors", (), ["not a .pt"]),
        ("-", (), ["not stdout"]),
        ("new.pt", ("--format", "safetensors"), ["--format"]),
    ],
)
def test_other_outputs_refused(tmp_path, cli, output, extra, words):
    source = tmp_path / "c.pt"
    _checkpoint(source)
    target = output if output == "-" else str(tmp_path / output)
    result = cli("resample", str(source), *GRID, "--in-checkpoint", "-o", target, *extra)
    _refused(tmp_path, result, 2, *words)


def test_failed_write_leaves_no_file(tmp_path, cli, monkeypatch):
    source, target = tmp_path / "c.pt", tmp_path / "new.pt"
    _checkpoint(source)

    import contextlib

    import pecli.io.pt_checkpoint

    atomic_file = pecli.io.pt_checkpoint.atomic_file

    class FullDisk:  # the disk fills after the archive's first bytes
        def __init__(self, handle):
            self.handle, self.written = handle, 0

        def write(self, data):
            self.written += len(data)
            if self.written > 4096:
                raise OSError(28, "No space left on device")
            return self.handle.write(data)

        def flush(self):
            self.handle.flush()

    @contextlib.contextmanager
    def filling(path):
        with atomic_file(path) as handle:
            yield FullDisk(handle)

    monkeypatch.setattr(pecli.io.pt_checkpoint, "atomic_file", filling)
    result = cli("resample", str(source), *GRID, "--in-checkpoint", "-o", str(target))
    _refused(tmp_path, result, 3, "no space left")
