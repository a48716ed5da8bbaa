"""DeepSeek V3's ``rope_interleave`` (transformers 5.23; also Mistral 4, GLM-4-MoE-Lite, AXK1, Youtu): true by
default, when the attention rotates ADJACENT pairs (``apply_rotary_pos_emb_interleave``) by the first half of the
module's cos/sin. pecli read every DeepSeek V3 config as halves (rotate_half): the pairing an engine porting it
must not use. Checked by rotating a query with transformers' own functions and with pecli's table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import ParameterError
from pecli.models import model_encoding
from pecli.models.transformers_families import INTERLEAVE_SWITCH
from pecli.schemes.rope import apply_rotary
from pecli.schemes.spec import TableSpec
from tests.conftest import require_module

DEEPSEEK = {
    "model_type": "deepseek_v3",
    "hidden_size": 64,
    "num_attention_heads": 2,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "kv_lora_rank": 16,
    "max_position_embeddings": 64,
    "rope_theta": 10000.0,
}
POSITIONS = 12


def _pecli_rotation(config, query):
    encoding = model_encoding(config)
    spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=POSITIONS, dim=encoding.dim)
    parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
    return encoding, apply_rotary(query, parts["cos"], parts["sin"], layout=encoding.params["layout"])


@pytest.mark.parametrize("interleave", [None, True, False])
def test_deepseek_v3_rotation_equals_transformers(tmp_path, interleave):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as module

    config = dict(DEEPSEEK, **({} if interleave is None else {"rope_interleave": interleave}))
    (tmp_path / "config.json").write_text(json.dumps(config))
    loaded = transformers.AutoConfig.from_pretrained(str(tmp_path))
    rotary = module.DeepseekV3RotaryEmbedding(loaded)
    query = torch.from_numpy(np.random.default_rng(0).normal(size=(1, 1, POSITIONS, 8)))
    with torch.no_grad():
        cos, sin = rotary(query.float(), torch.arange(POSITIONS)[None])
        apply = module.apply_rotary_pos_emb_interleave if loaded.rope_interleave else module.apply_rotary_pos_emb
        want = apply(query, query, cos.double(), sin.double())[0][0, 0].numpy()
    encoding, have = _pecli_rotation(config, query[0, 0].numpy())
    assert encoding.params["layout"] == ("half" if interleave is False else "interleaved")
    # transformers returns the rotated pairs de-interleaved (evens, then odds), for q and k alike: the same scores
    order = np.r_[0:8:2, 1:8:2] if loaded.rope_interleave else np.arange(8)
    np.testing.assert_allclose(have[:, order], want, atol=2e-6)
    wrong = apply_rotary(query[0, 0].numpy(), *(np.asarray(t[0], np.float64) for t in (cos, sin)), layout="half")
    if interleave is not False:  # the halves pairing (pecli's old answer) is not what the model applies
        assert np.abs(wrong[:, order] - want).max() > 0.1
        scores = have @ have.T  # q·k as the attention sees it: pecli's rotation and transformers' agree
        np.testing.assert_allclose(scores, want @ want.T, atol=1e-5)


def test_a_default_interleave_is_noted_and_a_non_boolean_refused():
    assert any("rope_interleave not given" in note for note in model_encoding(DEEPSEEK).notes)
    with pytest.raises(ParameterError, match=r"rope_interleave: expected true or false, got 'yes'"):
        model_encoding(dict(DEEPSEEK, rope_interleave="yes"))


def test_the_switching_families_match_the_installed_transformers_source():
    transformers = pytest.importorskip("transformers")
    models = Path(transformers.__file__).parent / "models"
    switching = set()
    for path in models.glob("*/modeling_*.py"):
        source = path.read_text()
        if "config.rope_interleave" in source and "apply_rotary_pos_emb_interleave" in source:
            config = (path.parent / f"configuration_{path.parent.name}.py").read_text()
            declared = re.search(r"model_type = \"([^\"]+)\"", config)
            switching.add(declared.group(1) if declared else path.parent.name)
    assert switching == set(INTERLEAVE_SWITCH)


def test_a_deepseek2_gguf_rotates_adjacent_pairs(cli, tmp_path):
    # llama.cpp's deepseek2 (DeepSeek V2 and V3) rotates adjacent pairs (LLAMA_ROPE_TYPE_NORM, no converter
    # permutation), as both transformers models do: it was read as halves
    gguf = require_module("gguf")
    path = tmp_path / "ds.gguf"
    writer = gguf.GGUFWriter(str(path), "deepseek2")
    writer.add_context_length(64)
    writer.add_embedding_length(64)
    writer.add_head_count(2)
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(8)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    made = cli("generate", "--from-config", str(path), "--len", "4", "-o", str(tmp_path / "t.safetensors"))
    assert made.code == 0, made.stderr
    shown = cli("info", str(tmp_path / "t.safetensors"), "--json")
    assert '"layout": "interleaved"' in shown.out and '"layout": "half"' not in shown.out
