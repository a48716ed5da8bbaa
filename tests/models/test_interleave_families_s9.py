"""Families whose attention always calls ``apply_rotary_pos_emb_interleave`` (issue 30, class 1).

transformers 5.23's DeepSeek V3.2, AXK2, Bailing hybrid, GLM-MoE-DSA, LongCat-Flash, Mistral Large 4 and dots3
rotate adjacent pairs (q and k de-interleaved before rotate_half) with no ``rope_interleave`` key. pecli read
them as halves: q·k scores off by up to 6.5 on DeepSeek V3.2. Checked with transformers' own rotary module and
apply function on tiny configs: the attention scores of pecli's rotation equal the model's.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from pecli.models import model_encoding
from pecli.models.rope_family import transformers_cache_layout
from pecli.schemes.rope import apply_rotary
from pecli.schemes.spec import TableSpec
from tests.conftest import require_module

POSITIONS = 16
#: model type, package, rotary class
FAMILIES = [
    ("deepseek_v32", "deepseek_v32", "DeepseekV32RotaryEmbedding"),
    ("axk2", "axk2", "AXK2RotaryEmbedding"),
    ("bailing_hybrid", "bailing_hybrid", "BailingHybridRotaryEmbedding"),
    ("glm_moe_dsa", "glm_moe_dsa", "GlmMoeDsaRotaryEmbedding"),
    ("longcat_flash", "longcat_flash", "LongcatFlashRotaryEmbedding"),
    ("mistral_large4_text", "mistral_large4", "MistralLarge4TextRotaryEmbedding"),
    ("dots3_note_text", "dots3_note", "Dots3NoteTextRotaryEmbedding"),
]
TINY = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16,
        "qk_rope_head_dim": 8, "rope_theta": 1000.0, "max_position_embeddings": 64, "num_hidden_layers": 2}  # fmt: skip


def _scores(q, k):
    return np.einsum("pd,sd->ps", q, k)


@pytest.mark.parametrize(("model_type", "package", "rotary_name"), FAMILIES)
def test_scores_equal_transformers_attention(model_type, package, rotary_name):
    torch = require_module("torch")
    transformers = require_module("transformers")
    module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    config_cls = transformers.AutoConfig.for_model(model_type).__class__
    defaults = config_cls().to_dict()
    built = config_cls(**{key: value for key, value in TINY.items() if key in defaults})
    rotary = getattr(module, rotary_name)(built)
    # dots3's module keys its frequencies by layer type (``{layer_type}_inv_freq``)
    layer_type = next(iter(getattr(rotary, "rope_type", None) or {}), None) if model_type == "dots3_note_text" else None
    kwargs = {} if layer_type is None else {"layer_type": layer_type}
    inv_freq = getattr(rotary, "inv_freq" if layer_type is None else f"{layer_type}_inv_freq")
    width = int(inv_freq.shape[-1]) * 2
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, POSITIONS, width))
    with torch.no_grad():
        cos, sin = rotary(torch.zeros(1, POSITIONS, width), torch.arange(POSITIONS)[None], **kwargs)
        tq, tk = module.apply_rotary_pos_emb_interleave(
            torch.from_numpy(q)[None, None], torch.from_numpy(k)[None, None], cos.double(), sin.double()
        )
    want = _scores(tq[0, 0].numpy(), tk[0, 0].numpy())

    config = built.to_dict()
    encoding = model_encoding(config, layer_type=layer_type)
    encoding = dict(encoding.layers).get(layer_type, encoding) if encoding.layers else encoding
    assert encoding.params["layout"] == "interleaved"  # before: half
    assert not any("no rotary module" in note for note in encoding.notes)
    spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=POSITIONS, dim=encoding.dim)
    parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
    assert parts["cos"].shape == (POSITIONS, width)
    have = _scores(*(apply_rotary(x, parts["cos"], parts["sin"], layout="interleaved") for x in (q, k)))
    np.testing.assert_allclose(have, want, atol=1e-5)
    # the halves pairing (pecli's old answer) is not what the model applies
    halves = _scores(*(apply_rotary(x, parts["cos"], parts["sin"], layout="half") for x in (q, k)))
    assert np.abs(halves - want).max() > 0.1
    # transformers' own cos/sin (halves) are accepted as its layout of this rotation
    found = transformers_cache_layout(encoding.metadata("config.json"))
    assert found is not None and found[0] == {"layout": "half"} and "apply_rotary_pos_emb_interleave" in found[1]


@pytest.mark.parametrize(
    ("outer", "inner"), [("mistral_large4", "mistral_large4_text"), ("dots3_note", "dots3_note_text")]
)
def test_composite_configs_read_the_text_model_pairing(outer, inner):
    transformers = require_module("transformers")
    config = transformers.AutoConfig.for_model(outer).to_dict()
    encoding = model_encoding(config)
    assert encoding.model_type == f"{outer}/{inner}" and encoding.params["layout"] == "interleaved"
    assert transformers_cache_layout(encoding.metadata("config.json")) is not None
    flat = {"model_type": outer, "head_dim": 16, "max_position_embeddings": 64, "rope_theta": 1000.0}
    flat_encoding = model_encoding(flat)  # before: "no rotary module", halves
    assert flat_encoding.params["layout"] == "interleaved"
    assert not any("no rotary module" in note for note in flat_encoding.notes)
