"""Per-layer-type ``rope_parameters`` read as transformers 5.23 reads them (issue 30: the config is the reference).

transformers' ``nested_rope_parameter_keys`` counts a key of ``rope_parameters`` as a layer type's parameters only
when it is a layer type of the config (or its class's ``_rope_type_labels``); pecli took the dict as per layer type
when any value was an object, so a flat yarn set with ``beta_slow: {}`` was refused as "layer type 'rope_type'".
Each case here builds the config with transformers and compares its rotary module's output (or its failure)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.io import read_table
from pecli.models.rope_layers import MAX_LAYER_TYPES, ROPE_TYPE_LABELS, nested_rope_keys
from tests.conftest import assert_clean_error, require_module

POSITIONS = [0, 1, 5, 17, 63]
LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64}
GEMMA = {"model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
         "max_position_embeddings": 64, "num_hidden_layers": 2}  # fmt: skip


@pytest.fixture(scope="module")
def tf():
    require_module("torch")
    return require_module("transformers")


def _hf_config(tf, raw):
    """transformers' config class of ``raw["model_type"]`` built from the rest of ``raw``, as from_pretrained does."""
    fields = {key: value for key, value in raw.items() if key != "model_type"}
    return tf.CONFIG_MAPPING[raw["model_type"]](**json.loads(json.dumps(fields)))


def _module_tables(module, dim, **kwargs):
    import torch

    with torch.no_grad():
        cos, sin = module(torch.zeros(1, len(POSITIONS), dim), torch.tensor([POSITIONS]), **kwargs)
    return cos[0].numpy(), sin[0].numpy()


def _generate(cli, tmp_path, raw, *extra):
    (tmp_path / "config.json").write_text(json.dumps(raw))
    out = tmp_path / "rope.safetensors"
    result = cli("generate", "--from-config", str(tmp_path / "config.json"), "--len", "64", "-o", str(out), *extra)
    return result, out


def _assert_tables(out, cos, sin, prefix=""):
    for part, expected in (("cos", cos), ("sin", sin)):
        table = read_table(str(out), key=prefix + part).array
        np.testing.assert_allclose(table[POSITIONS], expected, rtol=0, atol=2e-6, err_msg=prefix + part)


@pytest.mark.parametrize(
    "raw",
    [
        {**LLAMA, "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "beta_slow": {}}},
        {**LLAMA, "rope_parameters": {"full_attention": {"rope_theta": 5.0}}},
        {**LLAMA, "num_hidden_layers": 2, "layer_types": ["full_attention", "sliding_attention"],
         "rope_parameters": {"full_attention": {"rope_theta": 5.0}, "rope_theta": 5.0, "main": {}}},
        {**GEMMA, "layer_types": ["sliding_attention"] * 2,
         "rope_parameters": {"sliding_attention": {}, "full_attention": {}, "rope_type": "linear"}},
    ],
    ids=["flat-with-object", "no-layer-types", "layer-types", "gemma-one-type"],
)  # fmt: skip
def test_per_layer_is_decided_as_transformers_decides(tf, raw):
    config = _hf_config(tf, raw)
    assert nested_rope_keys(raw) == config.nested_rope_parameter_keys(raw["rope_parameters"])


def test_rope_type_labels_are_transformers_own(tf):
    for model_type, labels in ROPE_TYPE_LABELS.items():
        assert tf.CONFIG_MAPPING[model_type]._rope_type_labels == labels, model_type


def test_a_flat_set_with_an_object_value_names_that_value(cli, tmp_path, tf):
    # was: "rope_parameters.rope_type: expected an object (the rope parameters of layer type 'rope_type')"
    raw = {**LLAMA, "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e4, "beta_slow": {}}}
    assert _hf_config(tf, raw).nested_rope_parameter_keys(raw["rope_parameters"]) == []
    result, out = _generate(cli, tmp_path, raw)
    assert_clean_error(result, 2, "rope_parameters.beta_slow: expected a finite number, got {}")
    assert not out.exists()
    raw["rope_parameters"]["beta_slow"] = 2.0  # the same set with a number: transformers' table
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    result, out = _generate(cli, tmp_path, raw)
    assert result.code == 0, result.stderr
    _assert_tables(out, *_module_tables(LlamaRotaryEmbedding(_hf_config(tf, raw)), 16))


def test_layer_type_keys_without_layer_types_are_not_read_as_transformers_does(cli, tmp_path, tf):
    # was: base 5 ("every layer type (full_attention) has the same rope parameters"); transformers reads the set
    # as flat, warns of the unrecognized key, and rotates with its default base 10000
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    raw = {**LLAMA, "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5.0}}}
    result, out = _generate(cli, tmp_path, raw)
    assert result.code == 0, result.stderr
    _assert_tables(out, *_module_tables(LlamaRotaryEmbedding(_hf_config(tf, raw)), 16))
    assert "rope_parameters.full_attention: not read (the config has no layer_types)" in result.stderr


def test_rope_type_null_is_refused_as_transformers_fails_on_it(cli, tmp_path, tf):
    # was: read as default rope; transformers keeps the null and its rotary init fails (ROPE_INIT_FUNCTIONS[None])
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    raw = {**LLAMA, "rope_parameters": {"rope_type": None, "rope_theta": 1e4}}
    with pytest.raises(KeyError):
        LlamaRotaryEmbedding(_hf_config(tf, raw))
    result, out = _generate(cli, tmp_path, raw)
    assert_clean_error(result, 2, "rope_parameters.rope_type is null")
    assert not out.exists()


def test_a_layer_type_gemma3_leaves_out_takes_its_class_default(cli, tmp_path, tf):
    # was: one table (base 10) for every layer, no note; Gemma3TextConfig fills full_attention with base 1e6
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    raw = {**GEMMA, "layer_types": ["sliding_attention", "full_attention"],
           "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10.0}}}  # fmt: skip
    module = Gemma3RotaryEmbedding(_hf_config(tf, raw))
    result, out = _generate(cli, tmp_path, raw)
    assert result.code == 0, result.stderr
    assert "rope_parameters.full_attention not given" in result.stderr
    for layer_type in ("full_attention", "sliding_attention"):
        _assert_tables(out, *_module_tables(module, 16, layer_type=layer_type), prefix=f"{layer_type}.")


def test_gemma3_flat_rope_parameters_are_not_read_as_transformers_does(cli, tmp_path, tf):
    # Gemma3TextConfig keys rope_parameters by layer type whatever it is given: the flat linear set is ignored
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    raw = {**GEMMA, "layer_types": ["sliding_attention", "full_attention"], "rope_local_base_freq": 50.0,
           "rope_parameters": {"rope_type": "linear", "factor": 8.0, "rope_theta": 5.0}}  # fmt: skip
    module = Gemma3RotaryEmbedding(_hf_config(tf, raw))
    result, out = _generate(cli, tmp_path, raw)
    assert result.code == 0, result.stderr
    for layer_type in ("full_attention", "sliding_attention"):
        _assert_tables(out, *_module_tables(module, 16, layer_type=layer_type), prefix=f"{layer_type}.")


def test_a_layer_type_without_rope_parameters_is_refused_where_transformers_fails(cli, tmp_path, tf):
    # was: one table and no warning; LagunaRotaryEmbedding reads rope_parameters[layer_type]: KeyError
    from transformers.models.laguna.modeling_laguna import LagunaRotaryEmbedding

    raw = {"model_type": "laguna", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
           "num_hidden_layers": 2, "layer_types": ["full_attention", "sliding_attention"],
           "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 100.0}}}  # fmt: skip
    with pytest.raises(KeyError, match="sliding_attention"):
        LagunaRotaryEmbedding(_hf_config(tf, raw))
    result, out = _generate(cli, tmp_path, raw)
    assert_clean_error(result, 2, "layer_types has 'sliding_attention' but rope_parameters has no entry for it")
    assert not out.exists()


def test_more_layer_types_than_the_cap_are_refused_before_any_table(cli, tmp_path):
    # was: ≈ 13 to 40 ms per layer type (800 types 32 s, 5,000 not done in 60 s)
    count = MAX_LAYER_TYPES + 1
    types = [f"t{index}" for index in range(count)]
    raw = {**LLAMA, "num_hidden_layers": count, "layer_types": types,
           "rope_parameters": {name: {"rope_theta": 100.0 + i} for i, name in enumerate(types)}}  # fmt: skip
    result, out = _generate(cli, tmp_path, raw)
    assert_clean_error(result, 2, f"rope_parameters gives {count} layer types their own rope parameters",
                       f"at most {MAX_LAYER_TYPES}")  # fmt: skip
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_hf_v5_settings_of_gemma3_are_read_by_transformers_as_the_config(cli, tmp_path, tf):
    # the hf-v5 view wrote a flat rope_parameters, which Gemma3TextConfig does not read (base 1e4, not 5000)
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    raw = {**GEMMA, "layer_types": ["sliding_attention"] * 2, "rope_theta": 1e4, "rope_local_base_freq": 5000.0}
    (tmp_path / "config.json").write_text(json.dumps(raw))
    view = cli("info", str(tmp_path / "config.json"), "--as", "hf-v5")
    assert view.code == 0, view.stderr
    written = json.loads(view.stdout)
    written.update(num_hidden_layers=2, hidden_size=64, num_attention_heads=4)
    module = Gemma3RotaryEmbedding(_hf_config(tf, written))
    result, out = _generate(cli, tmp_path, raw)
    assert result.code == 0, result.stderr
    cos, sin = _module_tables(module, 16, layer_type="sliding_attention")
    _assert_tables(out, cos, sin)
    assert _hf_config(tf, written).rope_parameters["sliding_attention"]["rope_theta"] == 5000.0
