"""Probes: the expected rotation equals transformers' own apply_rotary_pos_emb with the model's rotary module,
and the diagnosis names each mistake an engine's rotation makes (issue 31, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.probe import diagnose_rotated, head_dim_of, make_probe, rotary_spec, rotate
from pecli.schemes.rope_scaling import SCALING_PARAMETERS

torch = pytest.importorskip("torch")
HEADS, DIM = 2, 64
LLAMA3 = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}  # fmt: skip
YARN = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048}
CONFIGS = {
    "default": {"model_type": "llama", "max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
    "llama3": {"model_type": "llama", "max_position_embeddings": 131072, "rope_parameters": LLAMA3},
    "yarn": {"model_type": "llama", "max_position_embeddings": 8192, "rope_parameters": YARN},
    "longrope": {"model_type": "llama", "max_position_embeddings": 8192,
                 "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0, "factor": 4.0,
                                     "original_max_position_embeddings": 2048,
                                     "short_factor": [1.0 + 0.01 * i for i in range(DIM // 2)],
                                     "long_factor": [1.0 + 0.1 * i for i in range(DIM // 2)]}},
    "partial": {"model_type": "phi", "max_position_embeddings": 2048, "partial_rotary_factor": 0.5,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}},
}  # fmt: skip


def _config(tmp_path, name: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({**CONFIGS[name], "hidden_size": DIM * 8, "num_attention_heads": 8}))
    return str(path)


def _transformers_rotation(name: str, q: np.ndarray, k: np.ndarray, positions: np.ndarray):
    """q and k rotated by transformers' rotary module for the config and its apply_rotary_pos_emb (as Phi
    does for a partial rotary: the first rotary columns turn, the rest pass)."""
    from transformers import AutoConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    values = {**CONFIGS[name], "hidden_size": DIM * 8, "num_attention_heads": 8}
    config = AutoConfig.for_model(values.pop("model_type"), **values)
    if name == "partial":
        from transformers.models.phi.modeling_phi import PhiRotaryEmbedding as Rotary
    else:
        Rotary = LlamaRotaryEmbedding
    qt, kt = torch.from_numpy(q)[None], torch.from_numpy(k)[None]
    cos, sin = Rotary(config)(qt, torch.from_numpy(positions)[None])
    turned = cos.shape[-1]
    q_rot, k_rot = apply_rotary_pos_emb(qt[..., :turned], kt[..., :turned], cos, sin)
    q_out = torch.cat([q_rot, qt[..., turned:]], dim=-1)
    k_out = torch.cat([k_rot, kt[..., turned:]], dim=-1)
    return q_out[0].double().numpy(), k_out[0].double().numpy()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_probe_is_transformers_rotation_of_its_vectors(tmp_path, name):
    config = _config(tmp_path, name)
    spec = rotary_spec(config)
    probe = make_probe(spec, heads=HEADS, seed=3, head_dim=head_dim_of(config, spec))
    assert probe.q.shape == (HEADS, len(probe.positions), DIM) and probe.q.dtype == np.float32
    original = CONFIGS[name]["rope_parameters"].get("original_max_position_embeddings")
    original = original or CONFIGS[name]["max_position_embeddings"]
    assert {0, original - 1, original, original + 1, CONFIGS[name]["max_position_embeddings"] - 1} <= set(
        probe.positions.tolist()
    )
    q_hf, k_hf = _transformers_rotation(name, probe.q, probe.k, probe.positions)
    # transformers turns in float32: its angle p·θ is off by up to a few float32 steps of p
    atol = (1e-5 + 8 * probe.positions * 2.0**-24 * np.abs(probe.q).max())[None, :, None]
    assert (np.abs(probe.q_rotated - q_hf) <= atol).all()
    assert (np.abs(probe.k_rotated - k_hf) <= atol).all()
    scores = np.einsum("hpd,hsd->hps", q_hf, k_hf) / np.sqrt(DIM)
    np.testing.assert_allclose(probe.scores, scores, atol=0.05)
    assert diagnose_rotated(probe, q_hf, tolerance=float(atol.max())) == []


def test_the_positions_include_zero_the_original_context_and_the_longest(tmp_path):
    positions = make_probe(rotary_spec(_config(tmp_path, "llama3"))).positions.tolist()
    assert positions[0] == 0 and positions[-1] == 131071 and {8191, 8192, 8193} <= set(positions)


def _codes(probe, rotated) -> list[str]:
    return [found.code for found in diagnose_rotated(probe, rotated)]


def test_the_diagnosis_names_each_mistake_of_a_rotation(tmp_path):
    yarn = make_probe(rotary_spec(_config(tmp_path, "yarn")), heads=HEADS)
    q = yarn.q.astype(np.float64)
    assert _codes(yarn, rotate(yarn.spec, q, yarn.positions, layout="interleaved")) == ["pairing"]
    (found,) = diagnose_rotated(yarn, rotate(yarn.spec, q, yarn.positions, apply_attention_factor=False))
    assert found.code == "constant_factor" and "attention factor" in found.message
    assert found.figures["attention_factor"] == "not applied"
    twice = 1.0 + 0.1 * np.log(4.0)
    (found,) = diagnose_rotated(yarn, yarn.q_rotated * twice)
    assert found.code == "constant_factor" and "applied twice" in found.message
    assert found.figures["factor"] == pytest.approx(twice, rel=1e-5)
    assert _codes(yarn, rotate(yarn.spec, q, yarn.positions + 1)) == ["positions_shifted"]
    llama3 = make_probe(rotary_spec(_config(tmp_path, "llama3")), heads=HEADS)
    unscaled = rotate(llama3.spec, llama3.q.astype(np.float64), llama3.positions,
                      **{**dict.fromkeys(SCALING_PARAMETERS), "scaling": "none"})
    assert _codes(llama3, unscaled) == ["unscaled"]
    wrong_base = rotate(llama3.spec, llama3.q.astype(np.float64), llama3.positions, base=10000.0)
    assert "base_differs" in _codes(llama3, wrong_base)


def test_a_partial_rotary_partner_across_the_whole_head_is_named(tmp_path):
    config = _config(tmp_path, "partial")
    spec = rotary_spec(config)
    probe = make_probe(spec, heads=HEADS, head_dim=head_dim_of(config, spec))
    wrong = rotate(probe.spec, probe.q.astype(np.float64), probe.positions, partner_over_head=True)
    (found,) = diagnose_rotated(probe, wrong)  # labscommunity/cascadia#69
    assert found.code == "partial_rotary_partner" and found.figures["rotary_columns"] == DIM // 2


def test_an_unmodelled_difference_gets_no_explanation(tmp_path):
    probe = make_probe(rotary_spec(_config(tmp_path, "yarn")), heads=HEADS)
    noise = np.random.default_rng(5).normal(scale=1e-2, size=probe.q_rotated.shape)
    assert diagnose_rotated(probe, probe.q_rotated + noise) == []
