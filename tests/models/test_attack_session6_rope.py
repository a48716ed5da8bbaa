"""Session 6 attack on ``generate --from-config`` against transformers' rotary modules (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.models.from_config import config_encoding, config_spec

GPT_NEOX = {"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64}


@pytest.mark.parametrize(
    ("extra", "base", "dim"),
    [
        ({"rope_theta": 5000.0}, 10000.0, 4),  # GPTNeoXConfig ignores a top-level rope_theta
        ({"rope_theta": 5000.0, "rotary_emb_base": 7000.0}, 7000.0, 4),  # rotary_emb_base wins, no conflict
        ({"partial_rotary_factor": 0.5, "rope_scaling": {"type": "linear", "factor": 2.0}}, 10000.0, 4),
        ({"rotary_pct": 0.5, "rotary_emb_base": 500.0}, 500.0, 8),
    ],
)
def test_gpt_neox_reads_only_its_own_spellings_as_transformers_does(tmp_path, extra, base, dim):
    (tmp_path / "config.json").write_text(json.dumps({**GPT_NEOX, **extra}))
    encoding = config_encoding(str(tmp_path)).encoding
    assert encoding.params["base"] == base
    assert encoding.dim == dim
    table = np.asarray(config_spec(config_encoding(str(tmp_path)), length=8, scheme_params={"part": "angle"}).array())
    assert table[1, 1] == pytest.approx(base ** (-2 / dim) / (2.0 if "rope_scaling" in extra else 1.0), rel=1e-6)


def test_gpt_neox_top_level_rope_theta_equals_the_rotary_module(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    (tmp_path / "config.json").write_text(json.dumps({**GPT_NEOX, "rope_theta": 5000.0, "num_hidden_layers": 2}))
    module = GPTNeoXRotaryEmbedding(transformers.AutoConfig.from_pretrained(str(tmp_path)))
    with torch.no_grad():
        cos, sin = module(torch.zeros(1, 64, 4), torch.arange(64)[None])
    model = config_encoding(str(tmp_path))
    for part, expected in (("cos", cos), ("sin", sin)):
        table = np.asarray(config_spec(model, length=64, scheme_params={"part": part}).array())
        np.testing.assert_allclose(table, expected[0].numpy(), rtol=0, atol=2e-5, err_msg=part)
