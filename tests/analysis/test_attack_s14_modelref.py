"""Attack on a model's config as the reference (issue 30): ``pecli compare MODEL_DIR engine.npy``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pecli.models.info import config_warnings
from tests.conftest import run_in_process


def test_info_reads_a_flat_rope_set_with_an_object_among_its_values_as_flat() -> None:
    # transformers' nested_rope_parameter_keys: only keys that are layer types nest; "foo" is an unread key
    config = {"model_type": "llama", "rope_scaling": {"rope_type": "linear", "factor": 2, "bad_key": 1, "foo": {}}}
    assert config_warnings(config) == [
        "rope_scaling.bad_key, rope_scaling.foo: transformers' linear RoPE never reads them"
    ]


def test_info_names_no_key_inside_an_object_rope_type() -> None:
    # a rope_type that is no string is refused where it is read; its inner keys are no set of rope parameters
    config = {"model_type": "llama", "rope_scaling": {"rope_type": {"x": 1}, "factor": 2, "bad_key": 1}}
    assert not any("rope_type.x" in warning for warning in config_warnings(config))


def _qwen2_dir(tmp_path: Path) -> Path:
    """A Qwen2 config as transformers saves it (the keys its rotary module reads): base 1e6, head_dim 64."""
    config = {
        "model_type": "qwen2", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4,
        "num_hidden_layers": 1, "max_position_embeddings": 128,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
    }  # fmt: skip
    (tmp_path / "qwen2").mkdir()
    (tmp_path / "qwen2" / "config.json").write_text(json.dumps(config))
    return tmp_path / "qwen2"


def _cos(length: int, dim: int, base: float, *, adjacent: bool) -> np.ndarray:
    """transformers' rotary module's cos in float32 (halves), or an engine's adjacent pairs."""
    inv_freq = (1.0 / base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim)).astype(np.float32)
    angles = np.arange(length, dtype=np.float32)[:, None] * inv_freq[None, :]
    doubled = np.repeat(angles, 2, axis=1) if adjacent else np.concatenate([angles, angles], axis=1)
    return np.cos(doubled).astype(np.float32)


def test_adjacent_pairs_against_a_large_base_are_the_pairing_not_a_sinusoid_permutation(tmp_path: Path) -> None:
    # at base 1e6 over 32 positions float32's cos of the slowest frequencies is 1 in every row: each half's last
    # columns are constant, and the pairing was sought over the turning ones only (60 of 64); the columns then
    # read as a sinusoidal table's "A split [sin … | cos …], B interleaved" (sin columns in a cos table)
    model = _qwen2_dir(tmp_path)
    assert np.all(_cos(32, 64, 1e6, adjacent=False)[:, 29:32] == 1.0)
    np.save(tmp_path / "engine.npy", _cos(32, 64, 1e6, adjacent=True))
    result = run_in_process("compare", str(model), str(tmp_path / "engine.npy"), "--key-a", "cos", "--json")
    assert result.code == 1
    codes = [finding["code"] for finding in json.loads(result.out)["diagnosis"]]
    assert codes == ["pairing"]
    np.save(tmp_path / "right.npy", _cos(32, 64, 1e6, adjacent=False))
    assert run_in_process("compare", str(model), str(tmp_path / "right.npy"), "--key-a", "cos").code == 0


def test_one_cos_table_against_a_model_directory_names_the_key_not_a_spec_size(tmp_path: Path) -> None:
    # the hint was "for a scheme spec, --d and --len set its shape": neither applies to a model's config
    model = _qwen2_dir(tmp_path)
    np.save(tmp_path / "engine.npy", _cos(32, 64, 1e6, adjacent=False))
    result = run_in_process("compare", str(model), str(tmp_path / "engine.npy"))
    assert result.code == 2
    assert "--key-a cos" in result.stderr and "--d" not in result.stderr
    np.save(tmp_path / "head.npy", _cos(32, 96, 1e6, adjacent=False))  # as wide as no part: still the key
    result = run_in_process("compare", str(tmp_path / "head.npy"), str(model))
    assert result.code == 2 and "--key-b cos" in result.stderr and "--d" not in result.stderr
