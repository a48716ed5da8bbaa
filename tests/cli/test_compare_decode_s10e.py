"""compare of an engine's ALiBi bias while decoding, (heads, q, k) with q < k, against a spec or a config
(issue 30: 'shape mismatch', exit 2): the spec's (heads, k, k) biases, their last q query rows."""

from __future__ import annotations

import json

import numpy as np

from tests.conftest import run_in_process


def _decode(tmp_path, rows: int = 3) -> tuple[str, np.ndarray]:
    full = str(tmp_path / "full.npy")
    assert run_in_process("generate", "alibi", "--heads", "4", "--len", "16", "-o", full).code == 0
    bias = np.load(full)[:, -rows:, :]
    path = str(tmp_path / "decode.npy")
    np.save(path, bias)
    return path, bias


def test_a_decoding_bias_is_the_spec_s_last_query_rows(tmp_path):
    path, _ = _decode(tmp_path)
    for argv in ([path, "alibi"], ["alibi", path], [path, "alibi:heads=4"]):
        result = run_in_process("compare", *argv)
        assert result.code == 0, result.stderr
        assert "max |A − B|        0" in result.out
        assert "query rows 13..15 of the 16 x 16 biases" in result.stderr
    # the other side's --len sets the keys: a mismatch is still one
    assert "shape mismatch" in run_in_process("compare", path, "alibi", "--len", "20").stderr


def test_a_decoding_bias_is_diagnosed_per_head(tmp_path):
    _, bias = _decode(tmp_path)
    reversed_heads = str(tmp_path / "rev.npy")
    np.save(reversed_heads, bias[::-1].copy())
    result = run_in_process("compare", reversed_heads, "alibi")
    assert result.code == 1
    assert "heads are in reverse order" in result.out
    negated = str(tmp_path / "neg.npy")
    np.save(negated, -bias)
    result = run_in_process("compare", negated, "alibi")
    assert result.code == 1
    assert "opposite sign" in result.out


def test_a_decoding_bias_against_a_bloom_config(tmp_path):
    config = tmp_path / "bloom" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"model_type": "bloom", "n_head": 4, "hidden_size": 64}))
    full = str(tmp_path / "bfull.npy")
    assert run_in_process("generate", "--from-config", str(config), "--len", "16", "-o", full).code == 0
    # the full (4, 16, 16) against its config: the config was built at 4 rows (the heads) and refused as 3-D
    result = run_in_process("compare", full, str(config))
    assert result.code == 0, result.stderr
    decode = str(tmp_path / "bdec.npy")
    np.save(decode, np.load(full)[:, -5:, :])
    for argv in ([decode, str(config)], [str(config.parent), decode]):  # config.json, or its directory
        result = run_in_process("compare", *argv)
        assert result.code == 0, result.stderr
        assert "max |A − B|        0" in result.out
    np.save(decode, -np.load(full)[:, -5:, :])
    result = run_in_process("compare", decode, str(config))
    assert result.code == 1
    assert "opposite sign" in result.out


def test_one_query_row_per_head_is_kept(tmp_path):
    full = str(tmp_path / "full.npy")
    assert run_in_process("generate", "alibi:form=key", "--heads", "4", "--len", "16", "-o", full).code == 0
    one = str(tmp_path / "one.npy")
    np.save(one, np.load(full)[:, :1, :])
    result = run_in_process("compare", one, "alibi")
    assert result.code == 0, result.stderr
    assert "query 0 of each head" in result.out
