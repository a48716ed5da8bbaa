"""``pecli info`` of configs, attacked (issue 30, leftovers): ``info --as gguf`` read back, a config without
``max_position_embeddings`` said as absent (never ``None``), per-layer rope, transformers 5's
``rope_parameters`` against ``rope_scaling``, unknown layer types."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import assert_clean_error

SMALL = {"hidden_size": 64, "num_attention_heads": 4}

#: name -> a config whose rope pecli's GGUF keys hold fully
GGUF_CONFIGS = {
    "llama3": {
        "model_type": "llama",
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    },
    "yarn-mscale": {
        "model_type": "deepseek_v3",
        "qk_rope_head_dim": 16,
        "max_position_embeddings": 163840,
        "rope_theta": 10000,
        "rope_scaling": {
            "type": "yarn",
            "factor": 40,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
        },
    },
    "yarn": {
        "model_type": "qwen2",
        "max_position_embeddings": 32768,
        "rope_theta": 1e6,
        "rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 8192},
    },
    "linear": {
        "model_type": "llama",
        "max_position_embeddings": 4096,
        "rope_theta": 10000,
        "rope_scaling": {"rope_type": "linear", "factor": 2},
    },
    "longrope-partial": {
        "model_type": "phi3",
        "max_position_embeddings": 1024,
        "original_max_position_embeddings": 256,
        "rope_theta": 10000,
        "partial_rotary_factor": 0.5,
        "rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 3, 4]},
    },
    "no-context": {"model_type": "llama", "rope_theta": 10000},
}


def _write(path, config):
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize("name", sorted(GGUF_CONFIGS))
def test_info_as_gguf_reads_back_as_the_same_table(cli, tmp_path, name):
    config = _write(tmp_path / "config.json", SMALL | GGUF_CONFIGS[name])
    written = cli("info", config, "--as", "gguf")
    assert written.code == 0, written.stderr
    view = _write(tmp_path / "view.json", json.loads(written.stdout))
    # as compare's input, and as --from-config: the table of the config it came from
    assert cli("compare", view, config, "--len", "600", "-q").code == 0
    cli("generate", "--from-config", view, "--len", "600", "--part", "angle", "-o", str(tmp_path / "a.npy"))
    cli("generate", "--from-config", config, "--len", "600", "--part", "angle", "-o", str(tmp_path / "b.npy"))
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    assert a.shape == b.shape and a.shape[0] == 600
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    described = cli("info", view, "--json")
    assert described.code == 0 and json.loads(described.stdout)["problem"] is None


def test_gguf_view_differs_from_another_config(cli, tmp_path):
    view = json.loads(cli("info", _write(tmp_path / "c.json", SMALL | GGUF_CONFIGS["linear"]), "--as", "gguf").stdout)
    other = _write(tmp_path / "other.json", SMALL | GGUF_CONFIGS["linear"] | {"rope_scaling": None})
    assert cli("compare", _write(tmp_path / "view.json", view), other, "--len", "600", "-q").code == 1


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"tensors": {"rope_freqs.weight": ["x"]}}, "tensors.rope_freqs.weight: expected a list of numbers"),
        ({"tensors": [1]}, "tensors: expected an object"),
        ({"tensors": {"rope_freqs.weight": [1.0, 2.0]}}, "holds 2 factors"),
    ],
)
def test_a_broken_gguf_view_names_what_is_wrong(cli, tmp_path, change, expected):
    view = json.loads(cli("info", _write(tmp_path / "c.json", SMALL | GGUF_CONFIGS["llama3"]), "--as", "gguf").stdout)
    view.update(change)
    result = cli("generate", "--from-config", _write(tmp_path / "view.json", view), "--len", "4", "-o", "-")
    assert_clean_error(result, 2, expected)
    assert "model_type ''" not in result.stderr


def test_absent_context_is_said_not_printed_as_none(cli, tmp_path):
    config = _write(tmp_path / "config.json", SMALL | GGUF_CONFIGS["no-context"])
    text = cli("info", config)
    assert text.code == 0 and "None" not in text.out
    assert "max_position_embeddings = not given" in text.out
    assert "note: max_position_embeddings is not given: --len gives the table's length" in text.out
    document = json.loads(cli("info", config, "--json").stdout)
    assert document["config"]["max_position_embeddings"] is None
    assert document["context_length"] is None
    assert "max_position_embeddings is not given: --len gives the table's length" in document["notes"]
    # a model directory with weights: the same, in its text and its JSON
    (tmp_path / "model").mkdir()
    _write(tmp_path / "model" / "config.json", SMALL | GGUF_CONFIGS["no-context"])
    from safetensors.numpy import save_file

    weights = {"model.embed_tokens.weight": np.zeros((4, 4), np.float32)}
    save_file(weights, str(tmp_path / "model" / "model.safetensors"))
    directory = cli("info", str(tmp_path / "model"))
    assert "None" not in directory.out and "--len gives the table's length" in directory.out
    described = json.loads(cli("info", str(tmp_path / "model"), "--json").stdout)["positional_encoding"]
    assert "max_position_embeddings is not given: --len gives the table's length" in described["notes"]


def test_rope_scaling_wins_over_rope_parameters_as_in_transformers(cli, tmp_path):
    # transformers 5.23: LlamaConfig(**this).rope_parameters == {rope_type linear, factor 4, rope_theta 10000}
    both = {
        "model_type": "llama",
        "max_position_embeddings": 1024,
        "rope_theta": 10000,
        "rope_scaling": {"rope_type": "linear", "factor": 4},
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000},
    }
    layer = json.loads(cli("info", _write(tmp_path / "c.json", SMALL | both), "--json").out)["layers"][0]
    assert (layer["base"], layer["scaling"], layer["scaling_parameters"]) == (10000.0, "linear", {"factor": 4})
