"""Random-config sweep findings (issue 30, class 1): pecli's ``--from-config`` table against the family's own
transformers rotary module on perturbed configs (scripts/sweep_random_rope.py finds them; these replay them).

Multi-head latent attention families whose config class declares ``head_dim`` and sets it to
``qk_rope_head_dim`` in ``__post_init__``: a config.json whose head_dim differs (an edited or hand-written
one) rotates qk_rope_head_dim columns in transformers; pecli read head_dim (width 16 against the module's 64).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from pecli.models import model_encoding
from pecli.models.class_defaults import HEAD_DIM_IS_QK_ROPE
from pecli.models.transformers_families import ALWAYS_INTERLEAVED
from pecli.schemes.spec import TableSpec

POSITIONS = 24

#: (model type, modeling package, rotary class)
LATENT = [
    ("deepseek_v2", "deepseek_v2", "DeepseekV2RotaryEmbedding"),
    ("deepseek_v32", "deepseek_v32", "DeepseekV32RotaryEmbedding"),
    ("minicpm3", "minicpm3", "MiniCPM3RotaryEmbedding"),
    ("glm_moe_dsa", "glm_moe_dsa", "GlmMoeDsaRotaryEmbedding"),
    ("bailing_hybrid", "bailing_hybrid", "BailingHybridRotaryEmbedding"),
]


def _config_class(model_type):
    pytest.importorskip("torch")
    auto = pytest.importorskip("transformers.models.auto.configuration_auto")
    return auto.CONFIG_MAPPING[model_type]


@pytest.mark.parametrize(("model_type", "package", "class_name"), LATENT)
def test_head_dim_of_a_latent_attention_family_is_qk_rope_head_dim(model_type, package, class_name):
    import importlib

    import torch

    config_cls = _config_class(model_type)
    rotary_cls = getattr(importlib.import_module(f"transformers.models.{package}.modeling_{package}"), class_name)
    rng = random.Random(f"s8/{model_type}")
    for _ in range(2):
        config = config_cls().to_dict()
        config["head_dim"] = rng.choice((16, 48))
        config["rope_parameters"] = {"rope_type": "default", "rope_theta": rng.choice((10000.0, 500000.0))}
        rotary = rotary_cls(config_cls.from_dict(dict(config)))
        with torch.no_grad():
            out = rotary(torch.zeros(1, 1), torch.arange(POSITIONS)[None])
        if torch.is_tensor(out) and out.is_complex():  # DeepSeek V2: freqs_cis, one value per adjacent pair
            out = (out.real.repeat_interleave(2, -1), out.imag.repeat_interleave(2, -1))
        cos, sin = (t[0].double().numpy() for t in out)
        if model_type in ALWAYS_INTERLEAVED:  # its apply_rotary_pos_emb_interleave: adjacent pairs, first half
            cos, sin = (np.repeat(t[:, : t.shape[1] // 2], 2, axis=1) for t in (cos, sin))
        encoding = model_encoding(config)
        spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=POSITIONS, dim=encoding.dim)
        parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
        assert encoding.dim == config["qk_rope_head_dim"] == cos.shape[1]
        np.testing.assert_allclose(parts["cos"], cos, atol=1e-5)
        np.testing.assert_allclose(parts["sin"], sin, atol=1e-5)


def test_the_latent_set_matches_the_installed_config_classes():
    """Every listed type's config class writes a file's head_dim over with qk_rope_head_dim; DeepSeek V3's (no
    head_dim field) keeps the file's, so it is not listed."""
    for model_type in sorted(HEAD_DIM_IS_QK_ROPE):
        config_cls = _config_class(model_type)
        defaults = config_cls().to_dict()
        if "qk_rope_head_dim" not in defaults:  # a composite config: its text sub-config is listed too
            continue
        built = config_cls.from_dict({**defaults, "head_dim": defaults["qk_rope_head_dim"] + 16})
        assert built.head_dim == defaults["qk_rope_head_dim"], model_type
    v3 = _config_class("deepseek_v3")
    built = v3.from_dict({**v3().to_dict(), "head_dim": 16})
    assert built.head_dim == 16 and "deepseek_v3" not in HEAD_DIM_IS_QK_ROPE


def _module_cos_sin(rotary, length=POSITIONS):
    import torch

    with torch.no_grad():
        cos, sin = rotary(torch.zeros(1, 1), torch.arange(length)[None])
    return cos[0].double().numpy(), sin[0].double().numpy()


def _pecli_cos_sin(config, length=POSITIONS):
    encoding = model_encoding(config)
    spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=length, dim=encoding.dim)
    parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
    return encoding, parts["cos"], parts["sin"]


#: (model type, modeling package, rotary class): text configs that write head_dim over with hidden_size // heads
HIDDEN_OVER_HEADS = [
    ("deepseek_ocr2", "deepseek_ocr2", "DeepseekOcr2TextRotaryEmbedding"),
    ("unlimited_ocr", "unlimited_ocr", "UnlimitedOcrTextRotaryEmbedding"),
]


@pytest.mark.parametrize(("model_type", "package", "class_name"), HIDDEN_OVER_HEADS)
def test_head_dim_of_an_ocr_text_config_is_hidden_size_over_heads(model_type, package, class_name):
    """DeepSeek-OCR 2 and Unlimited-OCR: the text config class sets head_dim = hidden_size // heads whatever the
    file says, and the attention and rotary module use that width; pecli read a file's head_dim (32 against 128)."""
    import importlib

    config_cls = _config_class(model_type)
    rotary_cls = getattr(importlib.import_module(f"transformers.models.{package}.modeling_{package}"), class_name)
    rng = random.Random(f"s8/{model_type}")
    config = config_cls().to_dict()
    text = config["text_config"]
    text["head_dim"] = rng.choice((32, 48))
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": rng.choice((10000.0, 500000.0))}
    built = config_cls.from_dict(dict(config)).get_text_config(decoder=True)
    cos, sin = _module_cos_sin(rotary_cls(built))
    encoding, got_cos, got_sin = _pecli_cos_sin(config)
    assert encoding.dim == built.head_dim == text["hidden_size"] // text["num_attention_heads"] == cos.shape[1]
    np.testing.assert_allclose(got_cos, cos, atol=1e-5)
    np.testing.assert_allclose(got_sin, sin, atol=1e-5)


def test_the_hidden_over_heads_set_matches_the_installed_config_classes():
    from pecli.models.class_defaults import HEAD_DIM_IS_HIDDEN_OVER_HEADS

    for model_type in sorted(t for t in HEAD_DIM_IS_HIDDEN_OVER_HEADS if t.endswith("_text")):
        config_cls = _config_class(model_type)
        defaults = config_cls().to_dict()
        built = config_cls.from_dict({**defaults, "head_dim": defaults["head_dim"] + 16})
        assert built.head_dim == defaults["hidden_size"] // defaults["num_attention_heads"], model_type
    pixtral = _config_class("pixtral")  # sets head_dim too, but undeclared: the file's is set after and wins
    assert pixtral.from_dict({**pixtral().to_dict(), "head_dim": 80}).head_dim == 80
    assert "pixtral" not in HEAD_DIM_IS_HIDDEN_OVER_HEADS


def test_an_absolute_esm_config_is_learned_though_to_dict_writes_rope_theta():
    """EsmConfig's to_dict writes rope_theta even for position_embedding_type 'absolute' (ESM-1b), whose model
    adds a learned table and applies no rotary; pecli read the rope_theta as rope (a wrong answer, exit 0)."""
    torch = pytest.importorskip("torch")
    from transformers.models.esm.modeling_esm import EsmEmbeddings

    config_cls = _config_class("esm")
    config = config_cls(
        vocab_size=33, pad_token_id=1, hidden_size=64, num_attention_heads=4, max_position_embeddings=40
    )
    config = config.to_dict()
    assert config["position_embedding_type"] == "absolute" and config["rope_theta"] == 10000.0
    encoding = model_encoding(config)
    weight = EsmEmbeddings(config_cls.from_dict(config)).position_embeddings.weight
    assert encoding.scheme is None and encoding.learned_weight == "embeddings.position_embeddings.weight"
    assert (encoding.length, encoding.dim) == tuple(weight.shape) == (40, 64)
    del config["position_embedding_type"]  # the class default: absolute too
    assert model_encoding(config).scheme is None
    assert torch.is_tensor(weight)


def test_a_rotary_esm_config_rotates_with_its_rope_theta():
    import importlib

    esm = importlib.import_module("transformers.models.esm.modeling_esm")
    config_cls = _config_class("esm")
    rng = random.Random("s8/esm")
    for _ in range(2):
        heads = rng.choice((4, 8))
        config = config_cls(
            hidden_size=heads * rng.choice((16, 48)),
            num_attention_heads=heads,
            position_embedding_type="rotary",
            rope_theta=rng.choice((10000.0, 12345.6)),
        ).to_dict()
        cos, sin = _module_cos_sin(esm.EsmRotaryEmbedding(config_cls.from_dict(config)))
        encoding, got_cos, got_sin = _pecli_cos_sin(config)
        assert encoding.dim == cos.shape[1]
        np.testing.assert_allclose(got_cos, cos, atol=1e-5)
        np.testing.assert_allclose(got_sin, sin, atol=1e-5)


def test_granite_4_hybrid_without_rope_position_type_is_refused():
    """GraniteMoeHybridModel builds its rotary module only for position_embedding_type 'rope' (Granite 4.0-H ships
    'nope'; the class default is None); pecli gave the rope of the rope_parameters the file still holds."""
    from pecli.errors import ParameterError

    config_cls = _config_class("granitemoehybrid")
    config = config_cls().to_dict()
    assert config["position_embedding_type"] is None and config["rope_parameters"]["rope_type"] == "default"
    for kind in (None, "nope"):
        with pytest.raises(ParameterError, match="applies no rotary embedding"):
            model_encoding({**config, "position_embedding_type": kind})
    assert model_encoding({**config, "position_embedding_type": "rope"}).scheme == "rope"


def test_glm4v_text_rotates_adjacent_pairs():
    """Glm4vTextRotaryEmbedding repeats each frequency twice and the attention's rotate_half_llm pairs x[0::2] with
    x[1::2] (as GLM-OCR's); pecli gave the half layout (max diff 2 on the sweep's configs)."""
    from transformers.models.glm4v.modeling_glm4v import Glm4vTextRotaryEmbedding

    config_cls = _config_class("glm4v_text")
    rng = random.Random("s8/glm4v")
    for _ in range(2):
        config = config_cls().to_dict()
        config["hidden_size"] = config["num_attention_heads"] * 128
        config["rope_parameters"] = {
            "rope_type": rng.choice(("default", "linear")),
            "rope_theta": rng.choice((10000.0, 12345.6)),
            "factor": 2.0,
            "partial_rotary_factor": 0.5,
            "mrope_section": [8, 12, 12],
        }
        cos, sin = _module_cos_sin(Glm4vTextRotaryEmbedding(config_cls.from_dict(dict(config))))
        encoding, got_cos, got_sin = _pecli_cos_sin(config)
        assert encoding.params["layout"] == "interleaved" and cos.shape[1] == 64
        np.testing.assert_allclose(got_cos, cos, atol=1e-5)
        np.testing.assert_allclose(got_sin, sin, atol=1e-5)
