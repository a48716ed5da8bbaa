"""Configs as they ship leave out keys their transformers config class fills in (issue 30): Gemma 3's
text_config has no num_attention_heads, head_dim, rope_theta or layer_types; a llama3 scaling with
high_freq_factor <= low_freq_factor is a warning in transformers, and a table.

The live tests build transformers' own config class from the same dict and compare its rotary module with
``generate --from-config``; they skip where transformers is missing, and fail in CI (CI set).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pecli.io import read_table
from pecli.models.class_defaults import with_class_defaults
from pecli.models.config import model_encoding
from pecli.models.transformers_families import CLASS_DEFAULTS, TRANSFORMERS_VERSION

pytestmark = pytest.mark.xdist_group("transformers")

#: google/gemma-3-4b-it's config.json text_config, as it ships
GEMMA3_4B_TEXT = {
    "hidden_size": 2560,
    "intermediate_size": 10240,
    "model_type": "gemma3_text",
    "num_hidden_layers": 34,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024,
}
GEMMA3_4B = {"model_type": "gemma3", "text_config": GEMMA3_4B_TEXT, "vision_config": {"model_type": "siglip"}}


def _transformers():
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("transformers is not installed (the test extra has it)")
        pytest.skip("transformers is not installed")
    if transformers.__version__ != TRANSFORMERS_VERSION:
        pytest.skip(f"defaults written for transformers {TRANSFORMERS_VERSION}")
    transformers.logging.set_verbosity_error()
    return transformers


def _module_tables(module, positions, layer_type=None):
    import torch

    kwargs = {} if layer_type is None else {"layer_type": layer_type}
    with torch.no_grad():
        cos, sin = module(torch.zeros(1, len(positions), 8), torch.tensor([positions]), **kwargs)
    return cos[0].numpy().astype(np.float64), sin[0].numpy().astype(np.float64)


def test_gemma3_4b_text_config_fills_its_class_defaults_with_notes():
    encoding = model_encoding(GEMMA3_4B)
    notes = "\n".join(encoding.notes)
    assert "num_attention_heads not given: gemma3_text's default 8" in notes
    assert "head_dim not given: gemma3_text's default 256" in notes
    assert "rope_theta not given: gemma3_text's default 1000000.0" in notes
    assert "rope_local_base_freq not given: gemma3_text's default 10000.0" in notes
    assert "layer_types not given: gemma3_text derives them from sliding_window_pattern's default 6" in notes
    layers = dict(encoding.layers)
    assert layers["full_attention"].params == {"base": 1e6, "layout": "half", "scaling": "linear", "factor": 8.0}
    assert layers["sliding_attention"].params == {"base": 1e4, "layout": "half"}
    assert layers["full_attention"].dim == layers["sliding_attention"].dim == 256  # not 2560/8 = 320


def test_a_key_the_config_gives_is_never_overridden():
    config = dict(GEMMA3_4B_TEXT, num_attention_heads=4, head_dim=128, rope_theta=5e5, rope_local_base_freq=2e3)
    filled, notes = with_class_defaults(config, "gemma3_text")
    assert (filled["num_attention_heads"], filled["head_dim"], filled["rope_theta"]) == (4, 128, 5e5)
    assert filled["rope_local_base_freq"] == 2e3
    assert not [note for note in notes if "layer_types" not in note]
    layers = dict(model_encoding(config).layers)
    assert layers["full_attention"].params["base"] == 5e5 and layers["sliding_attention"].params["base"] == 2e3
    assert layers["full_attention"].dim == 128
    # a head count spelled another way is given: no default written beside it
    assert "num_attention_heads" not in with_class_defaults({"n_heads": 4}, "llama")[0]
    # a remote-code config runs its own class: nothing filled
    assert with_class_defaults({"auto_map": {}}, "llama") == ({"auto_map": {}}, ())


def test_the_defaults_table_is_transformers_config_classes():
    transformers = _transformers()
    from transformers import CohereConfig, Gemma3TextConfig, LlamaConfig

    gemma = Gemma3TextConfig()
    expected = {
        "head_dim": gemma.head_dim,
        "num_attention_heads": gemma.num_attention_heads,
        "hidden_size": gemma.hidden_size,
        "num_hidden_layers": gemma.num_hidden_layers,
        "max_position_embeddings": gemma.max_position_embeddings,
        "rope_theta": gemma.rope_parameters["full_attention"]["rope_theta"],
        "rope_local_base_freq": gemma.rope_parameters["sliding_attention"]["rope_theta"],
    }
    assert CLASS_DEFAULTS["gemma3_text"] == expected
    assert CLASS_DEFAULTS["llama"]["max_position_embeddings"] == LlamaConfig().max_position_embeddings == 2048
    # a config without rope_theta takes the class's default_theta: Cohere's 500000, not 10000
    cohere = {"model_type": "cohere", "hidden_size": 64, "num_attention_heads": 2, "rope_scaling": {"factor": 2.0}}
    cohere["rope_scaling"]["rope_type"] = "linear"
    assert model_encoding(cohere).params["base"] == CohereConfig(**cohere).rope_parameters["rope_theta"] == 5e5
    assert len(CLASS_DEFAULTS) > 200 and transformers.__version__ == TRANSFORMERS_VERSION


def test_gemma3_4b_layer_types_are_the_ones_transformers_derives():
    _transformers()
    from transformers import Gemma3TextConfig

    filled, _ = with_class_defaults(GEMMA3_4B_TEXT, "gemma3_text")
    assert filled["layer_types"] == Gemma3TextConfig(**GEMMA3_4B_TEXT).layer_types
    assert [i for i, name in enumerate(filled["layer_types"]) if name == "full_attention"] == [5, 11, 17, 23, 29]
    pattern = with_class_defaults(dict(GEMMA3_4B_TEXT, sliding_window_pattern=2), "gemma3_text")[0]["layer_types"]
    assert pattern == Gemma3TextConfig(**GEMMA3_4B_TEXT, sliding_window_pattern=2).layer_types


def test_gemma3_4b_as_shipped_gives_transformers_table_per_layer_type(cli, tmp_path):
    _transformers()
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    (tmp_path / "config.json").write_text(json.dumps(GEMMA3_4B))
    length = 4096
    output = str(tmp_path / "g.safetensors")
    result = cli("generate", "--from-config", str(tmp_path), "--len", str(length), "-o", output)
    assert result.code == 0, result.stderr
    assert "num_attention_heads not given: gemma3_text's default 8" in result.stderr
    module = Gemma3RotaryEmbedding(Gemma3TextConfig(**GEMMA3_4B_TEXT))
    positions = [0, 1, 7, 100, 1023, 2047, 4095]
    tolerance = 4 * 2.0**-23 * max(positions) + 2.0**-22
    for layer_type in ("full_attention", "sliding_attention"):
        cos, sin = _module_tables(module, positions, layer_type)
        for part, expected in (("cos", cos), ("sin", sin)):
            table = read_table(str(tmp_path / "g.safetensors"), key=f"{layer_type}.{part}").array
            assert table.shape == (length, 256)
            np.testing.assert_allclose(table[positions], expected, rtol=0, atol=tolerance, err_msg=layer_type)
    # the two layer types really differ (linear ×8 at base 1e6 against base 1e4)
    full = read_table(str(tmp_path / "g.safetensors"), key="full_attention.cos").array
    local = read_table(str(tmp_path / "g.safetensors"), key="sliding_attention.cos").array
    assert abs(full[100, 2] - local[100, 2]) > 0.1


@pytest.mark.parametrize(("low", "high"), [(4.0, 4.0), (4.0, 2.0)])
def test_llama3_with_high_freq_factor_not_above_low_says_what_transformers_does(cli, tmp_path, low, high):
    """transformers warns and computes a step; pecli's rope refuses the pair from any caller, and says so."""
    scaling = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": 256,
    }
    config = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 1024}
    config.update(rope_theta=10000.0, rope_scaling=scaling)
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = cli("generate", "--from-config", str(tmp_path), "--len", "64", "-o", str(tmp_path / "l.safetensors"))
    assert result.code == 2 and "Traceback" not in result.stderr
    assert f"rope_scaling.high_freq_factor = {high!r} is not greater than rope_scaling.low_freq_factor" in result.stderr
    assert "transformers warns and divides every wavelength above 64 positions by factor" in result.stderr
