"""Attack round 11 on the model-reading paths (issue 30): each test failed on the code before its fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import assert_clean_error, require_module
from tests.models.test_attack_gguf import write_gguf

pytestmark = pytest.mark.xdist_group("transformers")


def _config(tmp_path, config):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


LLAMA = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 4096}


@pytest.mark.parametrize("base", [-5, 0, 1])
def test_info_warns_of_a_base_generate_refuses(cli, tmp_path, base):
    # before: `info` said "rope, base -5" with exit 0 and no warning, while generate refused the table
    path = _config(tmp_path, {**LLAMA, "rope_theta": base})
    refused = cli("generate", "--from-config", str(path), "--len", "4", "-o", str(tmp_path / "pe.safetensors"))
    assert_clean_error(refused, 2, "rope_theta", "greater than 1")
    assert not (tmp_path / "pe.safetensors").exists()
    text = cli("info", str(path))
    assert text.code == 0, text.stderr
    (warning,) = [line for line in text.out.splitlines() if line.startswith("warning: rope_theta")]
    assert f"got {float(base)!r}" in warning and "generate, compare and plot refuse this table" in warning
    document = json.loads(cli("info", str(path), "--json").stdout)
    assert any(w.startswith("rope_theta must be a finite number greater than 1") for w in document["warnings"])


def test_info_of_a_good_base_has_no_refusal(cli, tmp_path):
    text = cli("info", str(_config(tmp_path, {**LLAMA, "rope_theta": 500000.0})))
    assert text.code == 0 and "refuse" not in text.out, text.out


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"rope_parameters": {"rope_type": "linear", "rope_theta": 1e4}},
         ("rope_parameters.rope_type 'linear'", "needs rope_parameters.factor")),
        ({"rope_scaling": {"type": "dynamic"}}, ("rope_scaling.type 'dynamic'", "needs rope_scaling.factor")),
        ({"layer_types": ["sliding_attention", "full_attention"], "model_type": "gemma3_text",
          "rope_parameters": {"full_attention": {"rope_type": "llama3", "rope_theta": 1e6},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
         ("rope_parameters.full_attention.rope_type 'llama3'", "needs rope_parameters.full_attention.factor")),
    ],
)  # fmt: skip
def test_a_missing_factor_is_named_where_it_belongs(cli, tmp_path, settings, words):
    # before: "config.json: rope_type needs factor": no rope type, no field the user could find
    path = _config(tmp_path, {**LLAMA, **settings})
    result = cli("generate", "--from-config", str(path), "--len", "4", "-o", str(tmp_path / "pe.safetensors"))
    assert_clean_error(result, 2, *words)


def test_an_error_in_text_config_names_text_config(cli, tmp_path):
    # before: "config.json: head_dim: expected a positive integer" for a file with no top-level head_dim
    path = _config(tmp_path, {"model_type": "llava", "text_config": {**LLAMA, "head_dim": "x", "rope_theta": 1e4}})
    result = cli("generate", "--from-config", str(path), "--len", "4", "-o", str(tmp_path / "pe.safetensors"))
    assert_clean_error(result, 2, "config.json's text_config: head_dim: expected a positive integer, got 'x'")
    text = cli("info", str(path))
    assert text.code == 0 and "config.json's text_config: head_dim" in text.out, text.out


YARN = {"rope_type": "yarn", "rope_theta": 10000.0, "original_max_position_embeddings": 1024}


def test_yarn_without_factor_warns_that_transformers_refuses_it(cli, tmp_path):
    # before: info and generate read factor = 4096 / 1024 without a word; transformers refuses the config
    transformers = require_module("transformers")
    torch = require_module("torch")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    with pytest.raises(KeyError, match="factor"):
        transformers.AutoConfig.for_model(**LLAMA, rope_parameters=YARN)
    path = _config(tmp_path, {**LLAMA, "rope_parameters": YARN})
    text = cli("info", str(path))
    assert text.code == 0, text.stderr
    (warning,) = [line for line in text.out.splitlines() if "factor is absent" in line]
    assert "refuses a yarn config without it" in warning and "= 4," in warning
    # what pecli reads is transformers' table for factor: null
    config = transformers.AutoConfig.for_model(**LLAMA, rope_parameters={**YARN, "factor": None})
    inv_freq, attention = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    angles = torch.outer(torch.arange(16, dtype=torch.float64), inv_freq.double())
    expected = (torch.cat([angles, angles], -1).cos() * attention).numpy()
    from pecli.sources import resolve

    table = resolve(str(path), key="cos", length=16, dtype="float64").array
    np.testing.assert_allclose(table, expected, atol=1e-6)
    (tmp_path / "null").mkdir()
    null = _config(tmp_path / "null", {**LLAMA, "rope_parameters": {**YARN, "factor": None}})
    assert "factor is absent" not in cli("info", str(null)).out


def test_gguf_with_rope_keys_but_no_head_count_says_so(cli, tmp_path):
    # before: `info` dropped the positional encoding without a word (text and JSON); generate refused it
    path = write_gguf(tmp_path / "m.gguf", without=("llama.attention.head_count",))
    message = "has no llama.attention.head_count"
    assert_clean_error(cli("generate", "--from-config", str(path), "--len", "4", "-o", "-"), 2, message)
    text = cli("info", str(path))
    assert text.code == 0, text.stderr
    (problem,) = [line for line in text.out.splitlines() if line.startswith("positional encoding: ")]
    assert message in problem
    document = json.loads(cli("info", str(path), "--json").stdout)
    assert message in document["positional_encoding"]["problem"]
