"""Attack round on ``pecli resample`` (issue 30): hostile tables and outputs that would clobber the input.

Each case checks exit 2, one line naming the option and the fix, and no file written or changed — the input
above all. pecli runs in process through the real entry point (argv parsing, the error handler, the exit
code): that checks the same, and a warning raised during the run lands in the captured stderr as a real
process would print it.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import numpy as np
import pytest

from tests.conftest import run_in_process

MODELS = os.path.join(os.path.dirname(__file__), os.pardir, "data", "models")


def _digests(directory) -> dict[str, str]:
    return {
        os.path.relpath(os.path.join(root, name), directory): hashlib.sha256(
            open(os.path.join(root, name), "rb").read()
        ).hexdigest()
        for root, _, names in os.walk(directory)
        for name in names
    }


def _assert_refused(result, words: tuple[str, ...]) -> None:
    assert result.code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pecli: error: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize(
    "output",
    ["table.npy", "./table.npy", "hard.npy", "link.npy"],
    ids=["same", "spelled-differently", "hard-link", "symlink"],
)
def test_output_that_is_the_input_is_refused(tmp_path, output):
    # resample t.npy -o t.npy replaced the input with the resampled table, exit 0
    np.save(tmp_path / "table.npy", np.random.default_rng(0).random((197, 8)).astype(np.float32))
    os.link(tmp_path / "table.npy", tmp_path / "hard.npy")
    os.symlink("table.npy", tmp_path / "link.npy")
    before = _digests(tmp_path)
    result = run_in_process("resample", "table.npy", "--grid", "4x4", "--prefix-tokens", "1", "-o", output,
                       cwd=str(tmp_path))  # fmt: skip
    _assert_refused(result, ("-o", "would overwrite the input", "give a new path"))
    assert _digests(tmp_path) == before


def test_a_checkpoint_resampled_onto_itself_keeps_its_other_tensors(tmp_path):
    # without --in-checkpoint, -o INPUT.safetensors left a file holding only the resampled tensor
    from safetensors.numpy import save_file

    save_file({"pos_embed": np.ones((1, 5, 4), np.float32), "head": np.ones(3, np.float32)},
              str(tmp_path / "ck.safetensors"))  # fmt: skip
    before = _digests(tmp_path)
    result = run_in_process("resample", "ck.safetensors", "--key", "pos_embed", "--grid", "3x3", "--prefix-tokens", "1",
                       "-o", "ck.safetensors", cwd=str(tmp_path))  # fmt: skip
    _assert_refused(result, ("-o 'ck.safetensors' would overwrite the input",))
    assert _digests(tmp_path) == before


@pytest.mark.parametrize(  # the outputs each mode takes: a table file, or a checkpoint copy (a file or a directory)
    ("output", "in_checkpoint"),
    [("model/sub/table.npy", False), ("model/model.safetensors", True), ("model/copy", True)],
)
def test_output_inside_the_input_model_directory_is_refused(tmp_path, output, in_checkpoint):
    # -o model/model.safetensors beside a sharded index made the input directory load as the new table
    shutil.copytree(os.path.join(MODELS, "tiny-bert"), tmp_path / "model")
    before = _digests(tmp_path)
    extra = ["--in-checkpoint"] if in_checkpoint else []
    result = run_in_process("resample", "model", "--key", "position", "--len", "100", *extra, "-o", output,
                       cwd=str(tmp_path))  # fmt: skip
    _assert_refused(result, ("would write into the input model directory 'model'", "outside it"))
    assert _digests(tmp_path) == before


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("target", [("--len", "32"), ("--grid", "2x2")])
def test_a_table_with_values_that_are_not_finite_is_named_as_such(tmp_path, bad, target):
    # the message blamed a parameter ("a parameter is too large or not a number ... use smaller parameter
    # values") that the user never gave, and inf leaked numpy's "invalid value encountered in matmul"
    table = np.random.default_rng(1).random((16, 4))
    table[3, 2] = bad
    np.save(tmp_path / "t.npy", table)
    result = run_in_process("resample", "t.npy", *target, "-o", "out.npy", cwd=str(tmp_path))
    _assert_refused(result, ("1 value that is not finite", f"first {bad}", "index [3, 2]", "finite values"))
    assert "warning" not in result.stderr and "parameter" not in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["t.npy"]


@pytest.mark.parametrize(("flag", "target"), [("--keep-rows", ("--len", "8")), ("--prefix-tokens", ("--grid", "2x2"))])
def test_negative_kept_rows_are_named(tmp_path, flag, target):
    # --keep-rows -1 said it "leaves no positions of the table's 17 rows"
    np.save(tmp_path / "t.npy", np.ones((17, 4)))
    result = run_in_process("resample", "t.npy", *target, flag, "-1", "-o", "out.npy", cwd=str(tmp_path))
    _assert_refused(result, (f"{flag} must be >= 0, got -1",))
    assert sorted(os.listdir(tmp_path)) == ["t.npy"]
