"""Attack fixes on model files (issue 30, session 16): each test failed on the code before its fix.

* an integer of more digits than Python reads (5000) in config.json leaked Python's own advice
  (``sys.set_int_max_str_digits()``) instead of naming the field;
* a ``layer_types`` name transformers refuses ("banana") gave the class's default tables, exit 0;
* a corrupt ``pytorch_model.bin.index.json`` was named ``model.safetensors.index.json`` in the error;
* Qwen2-VL's text config (``qwen2_vl_text``) was said to have no rotary module in transformers: its rotary class
  is annotated with the composite config, and the families table (scripts/rope_families.py) missed the text type.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.models import model_encoding
from pecli.models.rope_layers import KNOWN_LAYER_TYPES
from pecli.schemes.spec import TableSpec
from tests.conftest import assert_clean_error

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 128}
GEMMA3 = {"model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 2, "head_dim": 32,
          "num_hidden_layers": 4, "max_position_embeddings": 128}  # fmt: skip


def _write(tmp_path, text):
    (tmp_path / "config.json").write_text(text)
    return tmp_path


# --- an integer too long for Python to read ---------------------------------------------------------------------


@pytest.mark.parametrize("command", [("info",), ("generate", "--from-config")])
def test_a_5000_digit_integer_names_its_field_not_python_advice(cli, tmp_path, command):
    raw = json.dumps(LLAMA)[:-1] + ', "rope_theta": 1' + "0" * 5000 + "}"
    directory = _write(tmp_path, raw)
    out = tmp_path / "o.safetensors"
    result = cli(*command, str(directory), *(("-o", str(out)) if command[0] == "generate" else ()))
    message = result.stderr if result.code else result.out  # info describes the config: the reason in its output
    assert "set_int_max_str_digits" not in message and "sys." not in message, message
    assert "'rope_theta' has 5001 digits" in message and "config.json" in message, message
    assert "with fewer digits" in message, message  # the fix: write the number shorter
    if command[0] == "generate":
        assert_clean_error(result, 2, "'rope_theta' has 5001 digits")
        assert not out.exists()


def test_a_long_integer_in_a_list_names_its_line(cli, tmp_path):
    raw = '{"model_type": "llama",\n "x": [1,\n  ' + "9" * 4400 + "]}"
    result = cli("generate", "--from-config", str(_write(tmp_path, raw)), "-o", str(tmp_path / "o.safetensors"))
    assert_clean_error(result, 2, "the number on line 3 has 4400 digits")


def test_an_integer_of_4300_digits_is_still_read_and_refused_by_its_own_check(cli, tmp_path):
    raw = json.dumps(LLAMA)[:-1] + ', "rope_theta": 1' + "0" * 4299 + "}"
    result = cli("generate", "--from-config", str(_write(tmp_path, raw)), "-o", str(tmp_path / "o.safetensors"))
    assert_clean_error(result, 2, "rope_theta: expected a finite number")


# --- layer_types names transformers refuses ---------------------------------------------------------------------


def test_an_unknown_layer_type_is_refused_naming_layer_types_and_the_names(cli, tmp_path):
    directory = _write(tmp_path, json.dumps({**GEMMA3, "layer_types": ["banana"] * 4}))
    out = tmp_path / "o.safetensors"
    result = cli("generate", "--from-config", str(directory), "-o", str(out))
    assert_clean_error(
        result, 2, "layer_types: 'banana' is no layer type", "one of", "full_attention", "sliding_attention"
    )
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_every_layer_type_transformers_allows_is_known():
    configuration_utils = pytest.importorskip("transformers.configuration_utils")
    allowed = {*configuration_utils.ALLOWED_LAYER_TYPES, *configuration_utils._LEGACY_LAYER_TYPE_REMAP}
    assert allowed <= KNOWN_LAYER_TYPES, sorted(allowed - KNOWN_LAYER_TYPES)
    assert "banana" not in KNOWN_LAYER_TYPES


@pytest.mark.parametrize("name", sorted(KNOWN_LAYER_TYPES - {"linear_attention", "conv"}))
def test_a_known_layer_type_gives_a_table(cli, tmp_path, name):
    """Every known name passes, with layers of the known attention types beside it (the rope layers' tables)."""
    types = [name, "full_attention", "sliding_attention", name]
    directory = _write(tmp_path, json.dumps({**GEMMA3, "layer_types": types}))
    result = cli("generate", "--from-config", str(directory), "--len", "8", "-o", str(tmp_path / "o.safetensors"))
    assert result.code == 0, result.stderr


# --- the shard index named as the file read ---------------------------------------------------------------------


def test_a_corrupt_pytorch_index_is_named_as_itself(cli, tmp_path):
    torch = pytest.importorskip("torch")
    model = tmp_path / "model"
    model.mkdir()
    shard = "pytorch_model-00001-of-00001.bin"
    torch.save({"wte.weight": torch.zeros(8, 4)}, str(model / shard))
    weight_map = {"wte.weight": shard, "wpe.weight": shard}  # wpe is in no shard
    (model / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (model / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 4, "n_positions": 8, "n_head": 1}))
    result = cli("resample", str(model), "--len", "16", "-o", str(tmp_path / "out.npy"))
    assert_clean_error(result, 2, f"{model / 'pytorch_model.bin.index.json'} places 'wpe.weight' in {shard}")
    assert "model.safetensors.index.json" not in result.stderr
    assert not (tmp_path / "out.npy").exists()


# --- Qwen2-VL's text config -------------------------------------------------------------------------------------

TEXT = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "intermediate_size": 64,
        "num_hidden_layers": 1, "max_position_embeddings": 64, "partial_rotary_factor": 0.5,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 6, 6]}}  # fmt: skip


@pytest.mark.parametrize(
    ("model_type", "module_name", "class_name"),
    [("qwen2_vl", "qwen2_vl", "Qwen2VLRotaryEmbedding"), ("qwen2_5_vl", "qwen2_5_vl", "Qwen2_5_VLRotaryEmbedding")],
)
def test_a_qwen2_vl_text_config_is_read_as_its_rotary_module_computes(
    cli, tmp_path, model_type, module_name, class_name
):
    torch = pytest.importorskip("torch")
    modeling = pytest.importorskip(f"transformers.models.{module_name}.modeling_{module_name}")
    config = {"model_type": model_type, "text_config": {"model_type": f"{model_type}_text", **TEXT}}
    directory = _write(tmp_path, json.dumps(config))
    result = cli("info", str(directory))
    assert result.code == 0, result.stderr
    assert "no rotary module" not in result.out, result.out
    # pecli's table against the module transformers' text model builds with the text config
    encoding = model_encoding(config)
    spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=12, dim=encoding.dim)
    parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
    rotary = getattr(modeling, class_name)(_text_config(module_name, model_type))
    with torch.no_grad():
        cos, sin = (t[0].double().numpy() for t in rotary(torch.zeros(1, 12, 32), torch.arange(12)[None]))
    np.testing.assert_allclose(parts["cos"], cos, atol=1e-6)  # the full head_dim: partial_rotary_factor not read
    np.testing.assert_allclose(parts["sin"], sin, atol=1e-6)


def _text_config(module_name, model_type):
    import importlib

    configuration = importlib.import_module(f"transformers.models.{module_name}.configuration_{module_name}")
    text_class = next(
        obj for obj in vars(configuration).values()
        if isinstance(obj, type) and getattr(obj, "model_type", "") == f"{model_type}_text"
    )  # fmt: skip
    return text_class(**TEXT)


def test_a_config_path_with_braces_is_shown_as_it_is(cli, tmp_path):
    """bounded.py's messages interpolated the path raw: a folder named ``a{len}b`` read as ``a--lenb``."""
    directory = tmp_path / "a{len}b"
    directory.mkdir()
    (directory / "config.json").write_text("{bad")
    result = cli("generate", "--from-config", str(directory), "-o", str(tmp_path / "o.safetensors"))
    assert_clean_error(result, 2, f"cannot read {directory / 'config.json'}:")
