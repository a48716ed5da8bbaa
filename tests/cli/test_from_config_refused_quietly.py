"""generate --from-config of a config pecli refuses prints its one error line only (issue 30).

The config's notes (T5's "the encoder's self-attention buckets …") were printed before its values were
checked, so a refused config left two note lines on stderr above the error; found by the CLI property
fuzz (tests/cli/test_cli_properties_fuzz2.py).
"""

from __future__ import annotations

import json

from tests.conftest import run_in_process

T5 = {"model_type": "t5", "d_model": 32, "num_heads": 2, "num_layers": 1, "relative_attention_num_buckets": 32}


def test_a_refused_config_prints_one_error_line_and_no_notes(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(T5 | {"relative_attention_max_distance": 16}))  # within the exact buckets
    refused = run_in_process("generate", "--from-config", str(config), "--len", "4", "-o", str(tmp_path / "t.npy"))
    assert refused.code == 2
    assert refused.stderr.startswith("pecli: error: ") and refused.stderr.count("\n") == 1, refused.stderr
    assert "relative_attention_max_distance 16 must exceed" in refused.stderr
    assert not (tmp_path / "t.npy").exists()


def test_an_accepted_config_still_prints_its_notes(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(T5 | {"relative_attention_max_distance": 128}))
    made = run_in_process("generate", "--from-config", str(config), "--len", "4", "-o", str(tmp_path / "t.safetensors"))
    assert made.code == 0, made.stderr
    assert "t5 (encoder): the encoder's self-attention buckets (bidirectional)" in made.stderr
    assert "t5 (decoder): the decoder's self-attention buckets (causal)" in made.stderr
