"""Attack round on model files (issue 30, round three): each test failed on the code before its fix.

``pecli info`` warns of settings engines read otherwise (:func:`pecli.models.info.config_warnings`); those
warnings computed with a config's values before anything had checked them, so a wrong type there was an
internal error (exit 3) instead of the refusal that ``generate`` gives and ``info`` shows (or, for an
``mscale`` beside a given ``attention_factor``, a value transformers never reads).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_clean_error

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64}
DEEPSEEK = {"model_type": "deepseek_v3", "hidden_size": 64, "num_attention_heads": 4, "qk_rope_head_dim": 16,
            "max_position_embeddings": 128}  # fmt: skip
YARN = {"type": "yarn", "factor": 4, "original_max_position_embeddings": 32}


def _write(tmp_path, raw):
    (tmp_path / "config.json").write_text(json.dumps(raw))
    return tmp_path


@pytest.mark.parametrize(
    "raw",
    [
        {**LLAMA, "rope_parameters": {"rope_type": [], "rope_theta": 10000.0}},
        {**LLAMA, "rope_scaling": {"rope_type": ["linear"], "factor": 2.0}},
        {**LLAMA, "model_type": "gemma3_text", "head_dim": 16, "layer_types": ["sliding_attention", "full_attention"],
         "rope_parameters": {"sliding_attention": {"rope_type": {}}, "full_attention": {"rope_type": "default"}}},
        {**DEEPSEEK, "rope_scaling": {**YARN, "mscale": "x", "mscale_all_dim": 1.0, "attention_factor": 1.0}},
        {**DEEPSEEK, "rope_scaling": {**YARN, "mscale": 1.0, "mscale_all_dim": [1], "attention_factor": 1.0}},
        {"model_type": "gptj", "n_embd": 64, "n_head": 4, "rotary_dim": 8, "head_dim": 1e300,
         "partial_rotary_factor": 1e300},
    ],
    ids=["rope_type-list", "rope_scaling.rope_type-list", "layer-rope_type-object", "mscale-str", "mscale_all_dim-list",
         "rotary-overflow"],
)  # fmt: skip
def test_info_on_a_wrong_rope_value_describes_the_config_and_generate_is_clean(cli, tmp_path, raw):
    directory = _write(tmp_path, raw)
    for extra in ((), ("--json",)):
        result = cli("info", str(directory), *extra)
        assert result.code == 0, result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    out = tmp_path / "rope.safetensors"
    result = cli("generate", "--from-config", str(directory / "config.json"), "--len", "16", "-o", str(out))
    if raw.get("rope_scaling", {}).get("attention_factor") == 1.0:  # mscale is not read beside it (transformers)
        assert result.code == 0, result.stderr
    else:
        assert_clean_error(result, 2)
        assert not out.exists()


def test_info_computes_no_attention_factor_from_an_mscale_that_is_no_number(cli, tmp_path):
    """``mscale = mscale_all_dim = [2]`` was shown as "the attention factor cancels to 1", beside the refusal."""
    directory = _write(tmp_path, {**DEEPSEEK, "rope_scaling": {**YARN, "mscale": [2], "mscale_all_dim": [2]}})
    result = cli("info", str(directory))
    assert result.code == 0, result.stderr
    assert "rope_scaling.mscale: expected a finite number, got [2]" in result.out
    assert "cancels" not in result.out
