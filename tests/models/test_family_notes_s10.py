"""Families whose table pecli describes only in part (issue 30, round s10): Mistral Large 4's learned alpha and
DeepSeek V3.2's indexer, each a one-line note with every description of the config, as transformers 5.23 runs them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from tests.conftest import run_in_process

_ROPE = {"rope_type": "default", "rope_theta": 10000.0}
_MISTRAL = {"model_type": "mistral_large4_text", "hidden_size": 512, "num_attention_heads": 4, "head_dim": 16,
            "max_position_embeddings": 4096, "rope_parameters": _ROPE}  # fmt: skip
_DEEPSEEK = {"model_type": "deepseek_v32", "hidden_size": 512, "num_attention_heads": 4, "qk_rope_head_dim": 16,
             "max_position_embeddings": 4096, "rope_theta": 10000.0}  # fmt: skip
_ALPHA = "the table assumes the learned alpha is 0: the model multiplies its rotary frequencies by exp(alpha)"
_INDEXER = "the table is the main attention's (adjacent pairs); the sparse-attention indexer rotates the same angles"


@pytest.mark.parametrize(
    ("config", "note", "prefix"),
    [
        (_MISTRAL, _ALPHA, "mistral_large4_text: "),
        ({"model_type": "mistral_large4", "text_config": _MISTRAL}, _ALPHA, "mistral_large4/mistral_large4_text: "),
        (_DEEPSEEK, _INDEXER, "deepseek_v32: "),
    ],
)
def test_generate_and_info_say_what_the_table_leaves_out(tmp_path, config, note, prefix):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    done = run_in_process("generate", "--from-config", str(path), "--len", "8", "-o", str(tmp_path / "t.safetensors"))
    assert done.code == 0, done.stderr
    noted = [line for line in done.stderr.splitlines() if note in line]
    assert len(noted) == 1 and noted[0].startswith(prefix), done.stderr
    # the table itself is the plain one (exp(0) = 1 on every frequency), in adjacent pairs as both attentions rotate
    table = load_file(str(tmp_path / "t.safetensors"))
    angle = np.arange(8)[:, None] * 10000.0 ** (-np.arange(0, 16, 2) / 16)[None, :]
    np.testing.assert_allclose(table["cos"], np.cos(np.repeat(angle, 2, axis=1)), atol=1e-6)
    shown = run_in_process("info", str(path))
    assert shown.code == 0, shown.stderr
    assert sum(note in line for line in shown.out.splitlines()) == 1, shown.out


def test_a_family_without_a_gap_gets_no_such_note(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**_MISTRAL, "model_type": "mistral"}))
    done = run_in_process("generate", "--from-config", str(path), "--len", "8", "-o", str(tmp_path / "t.safetensors"))
    assert done.code == 0, done.stderr
    assert "alpha" not in done.stderr and "indexer" not in done.stderr
