"""A model type transformers has no rotary module for (a made-up config, a GGUF architecture llama.cpp has and
transformers not) is read with Llama's keys and rotate_half pairs — said on stderr, not silently; a remote-code
config (auto_map) and the known families stay quiet."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import run_in_process
from tests.models.test_attack_gguf import write_gguf

pytestmark = pytest.mark.xdist_group("transformers")

_NOTE = "has no rotary module in transformers"


def _config(tmp_path, **config) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"head_dim": 8, "max_position_embeddings": 16, "rope_theta": 10000.0, **config}))
    return str(path)


def test_a_made_up_model_type_is_noted(tmp_path) -> None:
    result = run_in_process("generate", "--from-config", _config(tmp_path, model_type="notamodel"), "-o",
                            str(tmp_path / "t.safetensors"))  # fmt: skip
    assert result.code == 0, result.stderr
    assert _NOTE in result.stderr and "'notamodel'" in result.stderr and "rotate_half" in result.stderr
    llama = run_in_process("generate", "--from-config", _config(tmp_path, model_type="llama"), "-o",
                           str(tmp_path / "l.safetensors"))  # fmt: skip
    assert llama.code == 0 and _NOTE not in llama.stderr
    # the table itself is Llama's: the note changes what is said, not what is written
    from safetensors.numpy import load_file

    np.testing.assert_array_equal(load_file(str(tmp_path / "t.safetensors"))["cos"],
                                  load_file(str(tmp_path / "l.safetensors"))["cos"])  # fmt: skip


def test_remote_code_is_not_noted_twice(tmp_path) -> None:
    config = _config(tmp_path, model_type="internlm2", auto_map={"AutoConfig": "configuration_internlm2.X"})
    result = run_in_process("generate", "--from-config", config, "-o", str(tmp_path / "t.safetensors"))
    assert result.code == 0, result.stderr
    assert _NOTE not in result.stderr


def test_a_gguf_architecture_transformers_lacks_is_noted(tmp_path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, arch="notamodel")
    result = run_in_process("generate", "--from-config", str(path), "--len", "8", "-o", str(tmp_path / "t.safetensors"))
    assert result.code == 0, result.stderr
    assert _NOTE in result.stderr and "'notamodel'" in result.stderr
    known = tmp_path / "l.gguf"
    write_gguf(known, arch="llama")
    result = run_in_process(
        "generate", "--from-config", str(known), "--len", "8", "-o", str(tmp_path / "l.safetensors")
    )
    assert result.code == 0 and _NOTE not in result.stderr
