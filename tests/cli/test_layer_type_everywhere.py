"""``--layer-type`` on plot, distance, compare and identify (issue 30): a config whose rope parameters differ by
layer type (Gemma 3's sliding_attention and full_attention) was refused by each with "pick one with
--layer-type", an option only generate had. Now each reads the layer type picked, as generate --from-config
writes it; the option is refused for an input that is no model's config."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import run_in_process

GEMMA = {
    "model_type": "gemma3_text",
    "head_dim": 16,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "max_position_embeddings": 64,
    "layer_types": ["sliding_attention", "full_attention"],
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
    },
}


@pytest.fixture
def model(tmp_path):
    """gem.json, and the tables generate --from-config writes for each layer type (full.safetensors, sliding...)."""
    (tmp_path / "gem.json").write_text(json.dumps(GEMMA))
    for layer, name in (("full_attention", "full"), ("sliding_attention", "sliding")):
        made = run_in_process("generate", "--from-config", "gem.json", "--layer-type", layer,
                              "-o", f"{name}.safetensors", cwd=str(tmp_path))  # fmt: skip
        assert made.code == 0, made.stderr
    return tmp_path


def _body(stdout: bytes) -> list[str]:
    """A terminal heatmap without its title line (the title names the input)."""
    return stdout.decode().splitlines()[1:]


def test_plot_draws_the_layer_type_picked(model):
    # was: "No such option: --layer-type" (and without it: "pick one with --layer-type"), exit 2
    size = ("--terminal", "--width", "60", "--height", "12", "--no-color")
    drawn = run_in_process("plot", "gem.json", "--layer-type", "full_attention", "--key", "cos", *size, cwd=str(model))
    assert drawn.code == 0, drawn.stderr
    assert "base=1000000.0, part=cos, scaling=linear" in drawn.stdout.decode().splitlines()[0]
    written = run_in_process("plot", "full.safetensors", "--key", "cos", *size, cwd=str(model))
    other = run_in_process("plot", "gem.json", "--layer-type", "sliding_attention", "--key", "cos", *size,
                           cwd=str(model))  # fmt: skip
    assert written.code == 0 and other.code == 0, written.stderr + other.stderr
    assert _body(drawn.stdout) == _body(written.stdout)
    assert _body(drawn.stdout) != _body(other.stdout)
    both = run_in_process("plot", "gem.json", "--layer-type", "full_attention", "-o", "f.png", cwd=str(model))
    assert both.code == 0, both.stderr  # cos and sin, as two panels
    assert (model / "f.png").stat().st_size > 0


def test_compare_a_config_with_the_file_generate_wrote(model):
    for pair in (("gem.json", "full.safetensors"), ("full.safetensors", "gem.json"), ("gem.json", "gem.json")):
        same = run_in_process("compare", *pair, "--layer-type", "full_attention", cwd=str(model))
        assert same.code == 0, (pair, same.stderr)
        assert "max |A − B|        0 " in same.stdout.decode()
    differ = run_in_process("compare", "gem.json", "full.safetensors", "--layer-type", "sliding_attention",
                            cwd=str(model))  # fmt: skip
    assert differ.code == 1, differ.stderr
    keyed = run_in_process("compare", "gem.json", "sliding.safetensors", "--layer-type", "sliding_attention",
                           "--key", "sin", cwd=str(model))  # fmt: skip
    assert keyed.code == 0, keyed.stderr


def test_distance_scores_the_layer_types_rope(model):
    # a config was read as a table file here ("unrecognised content"), whatever its layer types
    scored = run_in_process("distance", "gem.json", "--layer-type", "full_attention", "--json", cwd=str(model))
    written = run_in_process("distance", "full.safetensors", "--json", cwd=str(model))
    other = run_in_process("distance", "gem.json", "--layer-type", "sliding_attention", "--json", cwd=str(model))
    assert scored.code == written.code == other.code == 0, scored.stderr + written.stderr + other.stderr
    matrix, reference = (np.array(json.loads(run.stdout)["matrix"]) for run in (scored, written))
    assert matrix.shape == (64, 64)
    np.testing.assert_array_equal(matrix, reference)
    assert not np.allclose(matrix, np.array(json.loads(other.stdout)["matrix"]))


def test_identify_names_the_layer_types_rope(model):
    found = run_in_process("identify", "gem.json", "--layer-type", "full_attention", cwd=str(model))
    assert found.code == 0, found.stderr
    assert "match: rope: base=1000000.0 scaling=linear factor=8.0" in found.stdout.decode()
    local = run_in_process("identify", "gem.json", "--layer-type", "sliding_attention", cwd=str(model))
    assert local.code == 0, local.stderr
    assert "match: rope: its defaults" in local.stdout.decode()


@pytest.mark.parametrize(
    "args",
    [
        ("plot", "a.npy", "--terminal", "--width", "40", "--height", "10"),
        ("distance", "a.npy"),
        ("identify", "a.npy"),
        ("compare", "a.npy", "a.npy"),
        ("compare", "a.npy", "rope"),
    ],
)
def test_refused_for_a_file(model, args):
    np.save(model / "a.npy", np.zeros((4, 4), dtype=np.float32))
    refused = run_in_process(*args, "--layer-type", "full_attention", cwd=str(model))
    assert refused.code == 2
    assert refused.stderr == (
        "pecli: error: --layer-type picks a layer type of a model's config; 'a.npy' is a file (drop --layer-type)\n"
    )


@pytest.mark.parametrize("command", ["plot", "distance"])
def test_refused_for_a_scheme(model, command):
    refused = run_in_process(command, "rope", "--d", "8", "--len", "8", "--layer-type", "full_attention",
                             cwd=str(model))  # fmt: skip
    assert refused.code == 2
    assert refused.stderr == (
        "pecli: error: --layer-type picks a layer type of a model's config; 'rope' is a scheme (drop --layer-type)\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("plot", "gem.json", "--terminal", "--width", "40", "--height", "10"),
        ("distance", "gem.json"),
        ("identify", "gem.json"),
        ("compare", "gem.json", "full.safetensors"),
    ],
)
def test_an_unknown_layer_type_names_the_valid_ones(model, args):
    refused = run_in_process(*args, "--layer-type", "global", cwd=str(model))
    assert refused.code == 2
    assert refused.stderr == (
        "pecli: error: gem.json has no layer type 'global' in rope_parameters "
        "(valid: sliding_attention, full_attention)\n"
    )


LLAMA = {"model_type": "llama", "head_dim": 16, "hidden_size": 64, "num_attention_heads": 4,
         "max_position_embeddings": 64, "rope_theta": 10000.0}  # fmt: skip


def test_compare_two_configs_picks_the_layer_type_of_the_one_that_has_them(model):
    # the hint "drop --layer-type" made gem.json fail: one rope set for every layer is every layer type's
    (model / "ll.json").write_text(json.dumps(LLAMA))
    for pair in (("gem.json", "ll.json"), ("ll.json", "gem.json")):
        same = run_in_process("compare", *pair, "--layer-type", "sliding_attention", cwd=str(model))
        assert same.code == 0, (pair, same.stderr)  # gem's sliding layers: default rope, base 10000, as llama
        assert "ll.json has one set of rope parameters for every layer: --layer-type picks the other's" in same.stderr
        differ = run_in_process("compare", *pair, "--layer-type", "full_attention", cwd=str(model))
        assert differ.code == 1, (pair, differ.stderr)


def test_compare_two_configs_neither_with_layer_types_is_refused(model):
    (model / "ll.json").write_text(json.dumps(LLAMA))
    refused = run_in_process("compare", "ll.json", "ll.json", "--layer-type", "full_attention", cwd=str(model))
    assert refused.code == 2
    assert refused.stderr == (
        "pecli: error: ll.json has one set of rope parameters for every layer, so no layer type 'full_attention' "
        "(drop --layer-type)\n"
    )


def test_a_layer_type_not_in_layer_types_is_refused_with_one_rope_set(model):
    # layer_types with one flat rope set: any name was accepted (exit 0) and the table written
    config = {**LLAMA, "layer_types": ["linear_attention", "full_attention"]}
    (model / "q.json").write_text(json.dumps(config))
    typo = run_in_process("generate", "--from-config", "q.json", "--layer-type", "ful_attention", "-o", "q.safetensors",
                          cwd=str(model))  # fmt: skip
    assert typo.code == 2
    assert typo.stderr.startswith("pecli: error: q.json has no layer type 'ful_attention' in layer_types (did you mean")
    linear = run_in_process("generate", "--from-config", "q.json", "--layer-type", "linear_attention",
                            "-o", "q.safetensors", cwd=str(model))  # fmt: skip
    assert linear.code == 2
    assert "layers of type 'linear_attention' have no positional encoding" in linear.stderr
    assert not (model / "q.safetensors").exists()
    named = run_in_process("generate", "--from-config", "q.json", "--layer-type", "full_attention",
                           "-o", "q.safetensors", cwd=str(model))  # fmt: skip
    assert named.code == 0, named.stderr
