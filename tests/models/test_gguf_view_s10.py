"""``pecli info --as gguf`` of Gemma 3 and Llama 4 text configs (issue 30, round s10): llama.cpp's architecture
names (gguf.constants.MODEL_ARCH_NAMES: gemma3, llama4), Gemma 3's sliding layers' base as rope.freq_base_swa,
and the view read back (as JSON, and as a .gguf file gguf's GGUFWriter writes) giving the config's own tables."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from tests.conftest import run_in_process
from tests.models.test_info_config import write_gguf

_BASE = {"head_dim": 16, "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 4096}
_FULL = {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}
_GEMMA = {**_BASE, "model_type": "gemma3_text", "layer_types": ["sliding_attention", "full_attention"],
          "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                              "full_attention": _FULL}}  # fmt: skip
_LLAMA4 = {**_BASE, "model_type": "llama4_text", "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}


def _write_gguf(path, view) -> str:
    """The ``info --as gguf`` view written as a real .gguf file (the metadata only)."""
    return str(write_gguf(path, {**view, "tensors": {}}))


def _tables(source, out) -> dict[str, np.ndarray]:
    done = run_in_process("generate", "--from-config", str(source), "--len", "64", "-o", str(out))
    assert done.code == 0, done.stderr
    return load_file(str(out))


@pytest.mark.parametrize(("config", "arch"), [(_GEMMA, "gemma3"), (_LLAMA4, "llama4")])
def test_the_gguf_view_names_llama_cpps_architecture_and_reads_back(tmp_path, config, arch):
    # was: general.architecture gemma3_text / llama4_text (transformers' names, which llama.cpp does not load),
    # and Gemma 3's two layer types refused ("different rope parameters, which the GGUF keys pecli reads cannot hold")
    (tmp_path / "config.json").write_text(json.dumps(config))
    shown = run_in_process("info", str(tmp_path / "config.json"), "--as", "gguf")
    assert shown.code == 0, shown.stderr
    view = json.loads(shown.out)
    assert view["metadata"]["general.architecture"] == arch
    assert all(key == "general.architecture" or key.startswith(f"{arch}.") for key in view["metadata"])
    if arch == "gemma3":
        assert view["metadata"]["gemma3.rope.freq_base"] == 1000000.0
        assert view["metadata"]["gemma3.rope.scaling.factor"] == 8.0
        assert view["metadata"]["gemma3.rope.freq_base_swa"] == 10000.0
    (tmp_path / "view.json").write_text(shown.out)
    original = _tables(tmp_path / "config.json", tmp_path / "original.safetensors")
    if arch == "gemma3":
        assert sorted(original) == [f"{t}.{p}" for t in ("full_attention", "sliding_attention") for p in ("cos", "sin")]
    for again in (tmp_path / "view.json", _write_gguf(tmp_path / "model.gguf", view)):
        tables = _tables(again, tmp_path / "again.safetensors")
        assert sorted(tables) == sorted(original)
        for name, table in original.items():
            np.testing.assert_array_equal(tables[name], table)


def test_a_gemma3_sliding_layer_with_scaling_is_still_refused(tmp_path):
    # llama.cpp's Gemma 3 sliding layers are unscaled: a config that scales them has no GGUF keys
    scaled = json.loads(json.dumps(_GEMMA))
    scaled["rope_parameters"]["sliding_attention"] = {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}
    (tmp_path / "config.json").write_text(json.dumps(scaled))
    done = run_in_process("info", str(tmp_path / "config.json"), "--as", "gguf")
    assert done.code == 2 and "different rope parameters" in done.stderr, done.stderr
