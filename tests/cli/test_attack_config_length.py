"""A config.json without max_position_embeddings (issue 30): transformers takes its config class's default
(LlamaConfig: 2048), so the file is a valid model; with --len the table is known and pecli makes it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from tests.conftest import run_in_process

LLAMA = os.path.join(os.path.dirname(__file__), os.pardir, "data", "models", "llama-default", "config.json")


def _without_context(tmp_path) -> str:
    config = json.loads(Path(LLAMA).read_text())
    del config["max_position_embeddings"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_len_given_makes_the_table(tmp_path):
    # was "has no max_position_embeddings (add max_position_embeddings to the config)", exit 2, even with --len
    config = _without_context(tmp_path)
    made = run_in_process(
        "generate", "--from-config", config, "--len", "16", "--part", "cos", "-o", "a.npy", cwd=str(tmp_path)
    )
    assert made.code == 0, made.stderr
    reference = run_in_process("generate", "--from-config", LLAMA, "--len", "16", "--part", "cos", "-o", "b.npy",
                          cwd=str(tmp_path))  # fmt: skip
    assert reference.code == 0, reference.stderr
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    same = run_in_process("compare", config, LLAMA, "--len", "16")
    assert same.code == 0, same.stderr


def test_without_len_the_message_says_to_pass_it(tmp_path):
    config = _without_context(tmp_path)
    result = run_in_process("generate", "--from-config", config, "-o", "a.npy", cwd=str(tmp_path))
    assert result.code == 2
    line = result.stderr.strip()
    assert "\n" not in line and "has no max_position_embeddings" in line and "--len" in line, line
    assert not (tmp_path / "a.npy").exists()


def test_settings_written_for_other_tools_invent_no_context(tmp_path):
    config = _without_context(tmp_path)
    written = run_in_process("info", config, "--as", "hf-v5")
    assert written.code == 0, written.stderr
    settings = json.loads(written.out)
    assert "max_position_embeddings" not in settings and settings["rope_parameters"]["rope_theta"] == 500000.0


def test_a_rope_type_that_reads_the_context_takes_the_config_class_default(tmp_path):
    # dynamic NTK reads the context: without max_position_embeddings, transformers takes LlamaConfig's 2048 (this
    # was refused before pecli knew the config classes' defaults); the table is the one of an explicit 2048
    config = json.loads(Path(LLAMA).read_text())
    del config["max_position_embeddings"]
    config["rope_parameters"] = {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "explicit.json").write_text(json.dumps({**config, "max_position_embeddings": 2048}))
    result = run_in_process("generate", "--from-config", str(tmp_path / "config.json"), "--len", "16",
                            "-o", "a.safetensors", cwd=str(tmp_path))  # fmt: skip
    assert result.code == 0, result.stderr
    assert "max_position_embeddings not given: llama's default 2048, read by 'dynamic'" in result.stderr
    same = run_in_process("compare", "a.safetensors", "explicit.json", "--exact", cwd=str(tmp_path))
    assert same.code == 0, same.stdout
