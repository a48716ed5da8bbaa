"""Attack on the probe check with transformers' own rotary modules (issue 30 class 1: a wrong answer).

An engine that swapped cos and sin, left k unrotated, held the positions in bfloat16 or turned a partial rotary's
whole head was told "differs: no known mistake explains it": the cause the mission names (bfloat16 positions, …)
went unnamed. Each is now named with its evidence; the correct engine still agrees.
"""

from __future__ import annotations

import pytest

from pecli.probe import head_dim_of, make_probe, rotary_spec, rounded_positions
from pecli.probe_check import compare_rotated
from tests.conftest import require_module

torch = require_module("torch")
require_module("transformers")


def _probe(tmp_path, model_type, **values):
    from transformers import AutoConfig

    AutoConfig.for_model(model_type, **values).save_pretrained(tmp_path)
    spec = rotary_spec(str(tmp_path))
    return make_probe(spec, heads=2, seed=3, head_dim=head_dim_of(str(tmp_path), spec))


def _llama(tmp_path):
    from transformers.models.llama import modeling_llama as module

    values = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "max_position_embeddings": 1024,
              "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}  # fmt: skip
    return module, _probe(tmp_path, "llama", **values), values


def _causes(probe, q, k):
    report = compare_rotated(probe, {"q_rotated": q[0].numpy(), "k_rotated": k[0].numpy()})
    return report.agree, {check.name: [found.code for found in check.diagnosis] for check in report.checks}


def _rotate(module, values, probe, *, positions=None, swap=False):
    from transformers import LlamaConfig

    rotary = module.LlamaRotaryEmbedding(LlamaConfig(**values))
    at = torch.from_numpy(probe.positions)[None] if positions is None else positions
    cos, sin = rotary(torch.zeros(1, 1, len(probe.positions), 1), at)
    if swap:
        cos, sin = sin, cos
    return module.apply_rotary_pos_emb(torch.from_numpy(probe.q)[None], torch.from_numpy(probe.k)[None], cos, sin)


def test_llama_engine_agrees_and_its_slips_are_named(tmp_path):
    module, probe, values = _llama(tmp_path)
    q, k = _rotate(module, values, probe)
    assert _causes(probe, q, k) == (True, {"q_rotated": [], "k_rotated": []})
    q, k = _rotate(module, values, probe, swap=True)
    assert _causes(probe, q, k) == (False, {"q_rotated": ["cos_sin_swapped"], "k_rotated": ["cos_sin_swapped"]})
    q, _ = _rotate(module, values, probe)
    assert _causes(probe, q, torch.from_numpy(probe.k)[None]) == (
        False,
        {"q_rotated": [], "k_rotated": ["not_rotated"]},
    )


def test_bfloat16_positions_are_named_with_the_rounded_position(tmp_path):
    module, probe, values = _llama(tmp_path)
    at = torch.from_numpy(probe.positions)[None].to(torch.bfloat16)
    assert rounded_positions(probe.positions, 8).tolist() == at[0].long().tolist()  # torch rounds as pecli does
    q, k = _rotate(module, values, probe, positions=at)
    report = compare_rotated(probe, {"q_rotated": q[0].numpy(), "k_rotated": k[0].numpy()})
    assert not report.agree
    found = report.checks[0].diagnosis
    assert [f.code for f in found] == ["positions_dtype"]
    assert found[0].figures["dtype"] == "bfloat16"
    assert found[0].figures["rounded"] != found[0].figures["position"]
    assert found[0].figures["residual"] < 1e-4


@pytest.mark.parametrize("factor", [0.25, 0.5])
def test_partial_rotary_whole_head_turned_is_named(tmp_path, factor):
    from transformers import PhiConfig
    from transformers.models.phi import modeling_phi as module

    rope = {"rope_type": "default", "rope_theta": 10000.0}
    values = {"hidden_size": 128, "num_attention_heads": 2, "max_position_embeddings": 512,
              "partial_rotary_factor": factor, "rope_parameters": rope}  # fmt: skip
    probe = _probe(tmp_path, "phi", **values)
    whole = PhiConfig(**{**values, "partial_rotary_factor": 1.0,
                         "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                             "partial_rotary_factor": 1.0}})  # fmt: skip
    cos, sin = module.PhiRotaryEmbedding(whole)(torch.zeros(1, 1, 1, 1), torch.from_numpy(probe.positions)[None])
    assert cos.shape[-1] == 64
    q, k = module.apply_rotary_pos_emb(torch.from_numpy(probe.q)[None], torch.from_numpy(probe.k)[None], cos, sin)
    agree, causes = _causes(probe, q, k)
    assert not agree
    assert causes == {"q_rotated": ["partial_rotary_ignored"], "k_rotated": ["partial_rotary_ignored"]}


def test_longrope_attention_factor_twice_on_a_partial_rotary_is_named(tmp_path):
    """Phi-3 LongRoPE with partial_rotary_factor 0.5: the factor applied twice scales only the rotary columns
    (cos and sin), so the whole vector is no constant multiple of the reference; it was left unnamed."""
    from transformers import Phi3Config
    from transformers.models.phi3 import modeling_phi3 as module

    short, long = [1.0 + 0.05 * i for i in range(8)], [1.0 + 0.3 * i for i in range(8)]
    rope = {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": short, "long_factor": long,
            "original_max_position_embeddings": 64}  # fmt: skip
    values = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "partial_rotary_factor": 0.5,
              "max_position_embeddings": 256, "original_max_position_embeddings": 64,
              "rope_parameters": rope}  # fmt: skip
    probe = _probe(tmp_path, "phi3", **values)
    rotary = module.Phi3RotaryEmbedding(Phi3Config(**values))
    factor = rotary.attention_scaling
    assert abs(factor - 1.0) > 0.1
    rotary.attention_scaling = factor * factor
    cos, sin = rotary(torch.zeros(1, 1, 1, 1), torch.from_numpy(probe.positions)[None])
    q, k = module.apply_rotary_pos_emb(torch.from_numpy(probe.q)[None], torch.from_numpy(probe.k)[None], cos, sin)
    report = compare_rotated(probe, {"q_rotated": q[0].numpy(), "k_rotated": k[0].numpy()})
    assert not report.agree
    for check in report.checks:
        assert [found.code for found in check.diagnosis] == ["constant_factor"]
        figures = check.diagnosis[0].figures
        assert figures["columns"] == 16 and figures["factor"] == pytest.approx(factor, rel=1e-4)
        assert "applied twice" in check.diagnosis[0].message


def test_another_partial_width_turned_is_named(tmp_path):
    """GPT-NeoX turning the first 16 of 32 columns where its config (rotary_pct 0.25) turns 8: was unnamed."""
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox import modeling_gpt_neox as module

    rope = {"rope_type": "default", "rope_theta": 10000.0}
    values = {"hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 256, "rope_parameters": rope}
    probe = _probe(tmp_path, "gpt_neox", **{**values, "rope_parameters": {**rope, "partial_rotary_factor": 0.25}})
    wrong = GPTNeoXConfig(**{**values, "rope_parameters": {**rope, "partial_rotary_factor": 0.5}})
    cos, sin = module.GPTNeoXRotaryEmbedding(wrong)(torch.zeros(1, 1, 1, 1), torch.from_numpy(probe.positions)[None])
    assert cos.shape[-1] == 16
    q, k = module.apply_rotary_pos_emb(torch.from_numpy(probe.q)[None], torch.from_numpy(probe.k)[None], cos, sin)
    report = compare_rotated(probe, {"q_rotated": q[0].numpy(), "k_rotated": k[0].numpy()})
    assert not report.agree
    for check in report.checks:
        assert [found.code for found in check.diagnosis] == ["partial_rotary_differs"]
        assert check.diagnosis[0].figures | {"residual": 0} == {"rotary_columns": 8, "turned_columns": 16,
                                                                "head_dim": 32, "residual": 0}  # fmt: skip


def test_bfloat16_positions_under_dynamic_ntk_are_named_with_the_batch_length(tmp_path):
    """Dynamic NTK chooses its base by max(position_ids) + 1: in bfloat16, 1025 + 1 rounds to 1024, inside the
    trained length, so transformers leaves the frequencies unscaled; the rounded positions alone did not explain it."""
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as module

    values = {"hidden_size": 64, "num_attention_heads": 1, "num_key_value_heads": 1, "max_position_embeddings": 1024,
              "rope_parameters": {"rope_type": "dynamic", "rope_theta": 500000.0, "factor": 8.0}}  # fmt: skip
    probe = _probe(tmp_path, "llama", **values)
    assert int(probe.positions.max()) == 1025
    rotary = module.LlamaRotaryEmbedding(LlamaConfig(**values))
    cos, sin = rotary(torch.zeros(1, 1, 1, 1), torch.from_numpy(probe.positions)[None].to(torch.bfloat16))
    q, k = module.apply_rotary_pos_emb(torch.from_numpy(probe.q)[None], torch.from_numpy(probe.k)[None], cos, sin)
    report = compare_rotated(probe, {"q_rotated": q[0].numpy(), "k_rotated": k[0].numpy()})
    assert not report.agree
    for check in report.checks:
        assert [found.code for found in check.diagnosis] == ["positions_dtype"]
        assert check.diagnosis[0].figures["length"] == 1024
        assert "the batch's length 1026 became 1024" in check.diagnosis[0].message


def test_an_unexplained_difference_lists_the_mistakes_tried():
    """The 'no known mistake explains it' line listed a stale hand-kept set (no swap, dtype, partial width)."""
    import numpy as np

    from pecli.probe import tried_mistakes

    probe = make_probe(rotary_spec("rope", dim=16, length=64, scheme_params={"partial_rotary_factor": 0.5}), heads=1)
    noise = np.random.default_rng(0).standard_normal(probe.q_rotated.shape)
    check = compare_rotated(probe, {"q_rotated": probe.q_rotated + noise}).checks[0]
    assert not check.agree and check.diagnosis == []
    tried = tried_mistakes(probe)
    assert {"pairing", "partial_rotary_partner", "not_rotated", "cos_sin_swapped", "partial_rotary_ignored",
            "constant_factor", "positions_shifted"} <= set(tried)  # fmt: skip
    assert check.text_lines()[-1] == f"  cause: no known mistake explains it (tried: {', '.join(tried)})"
