"""identify and resample read a table: a scheme name is told to be written first, a name that is neither a file
nor a scheme is "no such file" (identify said 'nope' "names a scheme"; resample asked for --d, which it has not)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize("command", [["identify"], ["resample", "--len", "8", "-o", "out.npy"]])
def test_a_scheme_is_named_as_one(command, tmp_path) -> None:
    result = run_in_process(command[0], "binary", *command[1:], cwd=str(tmp_path))
    assert result.code == 2
    assert result.stderr.startswith(f"pecli: error: {command[0]} reads a table, but 'binary' names a scheme")
    assert "pecli generate binary" in result.stderr and "--d and --len" not in result.stderr
    assert not (tmp_path / "out.npy").exists()


@pytest.mark.parametrize("command", [["identify"], ["resample", "--len", "8", "-o", "out.npy"]])
def test_a_name_that_is_neither_is_no_such_file(command, tmp_path) -> None:
    result = run_in_process(command[0], "nope\x1b[2J", *command[1:], cwd=str(tmp_path))
    assert result.code == 2
    line = result.stderr.strip()
    assert line.startswith("pecli: error: no such file: 'nope\\x1b[2J'") and "names a scheme" not in line
    assert "\x1b" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_file_is_still_read(tmp_path) -> None:
    np.save(tmp_path / "t.npy", np.arange(32.0).reshape(8, 4))
    result = run_in_process("resample", "t.npy", "--len", "16", "-o", "out.npy", cwd=str(tmp_path))
    assert result.code == 0, result.stderr
    assert np.load(tmp_path / "out.npy").shape == (16, 4)


def test_identify_of_a_config_without_context_names_no_option_identify_lacks(tmp_path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "bloom", "n_head": 6}')  # ALiBi: its table's length is the context
    result = run_in_process("identify", str(config))
    assert result.code == 2
    assert "has no max_position_embeddings" in result.stderr
    assert "--len N -o table.npy" in result.stderr and "give the table's length as --len" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_resample_of_a_config_points_to_generate(tmp_path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "gemma3_text", "head_dim": 16, "num_hidden_layers": 6}')
    result = run_in_process("resample", str(config), "--len", "128", "-o", str(tmp_path / "out.npy"))
    assert result.code == 2
    assert "is a model's config" in result.stderr and "pecli generate --from-config" in result.stderr
    assert "--layer-type" not in result.stderr  # an option resample has not
    assert not (tmp_path / "out.npy").exists()
