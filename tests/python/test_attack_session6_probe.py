"""Attack on the probe check with real engines' outputs (issue 30 class 1: a false verdict).

transformers' DeepSeek V3 (``rope_interleave``, true by default) rotates ADJACENT pairs but returns the rotated
columns de-interleaved (evens, then odds), for q and k alike: the attention's scores are those of the in-place
rotation. ``pecli compare engine probe`` said "differs: no known mistake explains it", exit 1, for that correct
engine. It now agrees when q and k share the order, naming it with the scores' max |Δ|, and names it as the cause
when only one of them comes so. GLM-4 (re-interleaving, in place), Llama (halves) and GPT-J (adjacent) pass as they
did; DeepSeek V3 rotated by halves fails with the pairing named.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.probe import column_orders, make_probe, rotary_spec, rotate
from pecli.probe_check import compare_rotated, read_probe
from tests.conftest import require_module

torch = require_module("torch")
require_module("transformers")
require_module("safetensors")

CONFIGS = {
    "deepseek_v3": {"model_type": "deepseek_v3", "hidden_size": 64, "num_attention_heads": 2, "qk_rope_head_dim": 16,
                    "qk_nope_head_dim": 8, "v_head_dim": 8, "kv_lora_rank": 16, "max_position_embeddings": 256,
                    "rope_theta": 10000.0},
    "glm4": {"model_type": "glm4", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2,
             "head_dim": 32, "partial_rotary_factor": 0.5, "max_position_embeddings": 256, "rope_theta": 10000.0},
    "llama": {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2,
              "max_position_embeddings": 256, "rope_theta": 500000.0},
    "gptj": {"model_type": "gptj", "n_embd": 64, "n_head": 2, "rotary_dim": 16, "n_positions": 256},
}  # fmt: skip
DEINTERLEAVED = np.r_[0:16:2, 1:16:2]


def _probe(cli, tmp_path, name):
    from safetensors import safe_open
    from safetensors.numpy import load_file

    config = tmp_path / f"{name}.json"
    config.write_text(json.dumps(CONFIGS[name]))
    path = tmp_path / f"{name}_probe.safetensors"
    made = cli("generate", "--probe", "--from-config", str(config), "-o", str(path))
    assert made.code == 0, made.stderr
    with safe_open(str(path), "np") as opened:
        metadata = opened.metadata()
    return path, read_probe(load_file(str(path)), metadata)


def _cos_sin(module, rotary, name, positions):
    from transformers import AutoConfig

    values = dict(CONFIGS[name])
    config = AutoConfig.for_model(values.pop("model_type"), **values)
    return getattr(module, rotary)(config)(torch.zeros(1, 1, len(positions), 1), torch.from_numpy(positions)[None])


def _engine(name, probe, *, engine_pairing=None):
    """The probe's q and k (heads × positions × head_dim) rotated by transformers' own functions for ``name``."""
    q, k, positions = torch.from_numpy(probe.q)[None], torch.from_numpy(probe.k)[None], probe.positions
    if name == "deepseek_v3":
        from transformers.models.deepseek_v3 import modeling_deepseek_v3 as module

        cos, sin = _cos_sin(module, "DeepseekV3RotaryEmbedding", name, positions)
        apply = module.apply_rotary_pos_emb if engine_pairing == "half" else module.apply_rotary_pos_emb_interleave
        q_rot, k_rot = apply(q, k, cos, sin)
    elif name in ("glm4", "llama"):
        from transformers.models.glm4 import modeling_glm4
        from transformers.models.llama import modeling_llama

        module = modeling_glm4 if name == "glm4" else modeling_llama
        rotary = "Glm4RotaryEmbedding" if name == "glm4" else "LlamaRotaryEmbedding"
        cos, sin = _cos_sin(module, rotary, name, positions)
        q_rot, k_rot = module.apply_rotary_pos_emb(q, k, cos, sin)
    else:  # GPT-J: batch × positions × heads × head_dim, the first rotary_dim columns turn
        from transformers.models.gptj import modeling_gptj as module

        turned = CONFIGS[name]["rotary_dim"]
        sin, cos = torch.split(module.create_sinusoidal_positions(int(positions.max()) + 1, turned)[positions],
                               turned // 2, dim=-1)  # fmt: skip

        def apply(x):
            x = x[0].permute(1, 0, 2)[None]
            x = torch.cat([module.apply_rotary_pos_emb(x[..., :turned], sin[None], cos[None]), x[..., turned:]], -1)
            return x[0].permute(1, 0, 2)[None]

        q_rot, k_rot = apply(q), apply(k)
    return q_rot[0].float().numpy(), k_rot[0].float().numpy()


def _write(tmp_path, tensors):
    from safetensors.numpy import save_file

    path = tmp_path / "engine.safetensors"
    save_file({name: np.ascontiguousarray(value, dtype=np.float32) for name, value in tensors.items()}, str(path))
    return str(path)


def _scores_difference(probe, q_rot, k_rot):
    scores = np.einsum("hpd,hsd->hps", q_rot.astype(np.float64), k_rot.astype(np.float64)) / np.sqrt(q_rot.shape[-1])
    return float(np.abs(scores - probe.scores).max())


def test_transformers_deepseek_v3_agrees_with_its_de_interleaved_columns_named(cli, tmp_path):
    path, probe = _probe(cli, tmp_path, "deepseek_v3")
    q_rot, k_rot = _engine("deepseek_v3", probe)
    assert np.abs(q_rot - probe.q_rotated).max() > 1.0  # the columns as returned are not the probe's
    np.testing.assert_allclose(q_rot, probe.q_rotated[..., DEINTERLEAVED], atol=1e-4)
    engine = _write(tmp_path, {"q_rotated": q_rot, "k_rotated": k_rot})
    result = cli("compare", engine, str(path), "--json")
    assert result.code == 0, result.out
    document = json.loads(result.out)
    assert document["agree"] is True
    assert document["scores"]["agree"] is True
    assert document["scores"]["max_abs_diff"] == pytest.approx(_scores_difference(probe, q_rot, k_rot), abs=1e-9)
    assert document["scores"]["max_abs_diff"] < 1e-4
    for check in document["tensors"].values():
        assert check["agree"] is True and check["max_abs_diff"] < 1e-4 and check["diagnosis"] == []
        assert check["column_order"]["figures"]["order"] == "deinterleaved"
        assert check["column_order"]["figures"]["columns"] == DEINTERLEAVED.tolist()
    text = cli("compare", engine, str(path)).stdout.decode()
    assert "q_rotated: agrees with its rotated columns reordered (deinterleaved)" in text
    assert "de-interleaved (evens, then odds), as transformers' apply_rotary_pos_emb_interleave does" in text
    assert "scores q·k are unchanged (max |Δ scores|" in text


def test_deepseek_v3_rotated_by_halves_fails_with_the_pairing_named(cli, tmp_path):
    path, probe = _probe(cli, tmp_path, "deepseek_v3")
    q_rot, k_rot = _engine("deepseek_v3", probe, engine_pairing="half")
    assert _scores_difference(probe, q_rot, k_rot) > 0.5  # the wrong pairing changes the attention
    result = cli("compare", _write(tmp_path, {"q_rotated": q_rot, "k_rotated": k_rot}), str(path), "--json")
    assert result.code == 1, result.out
    document = json.loads(result.out)
    assert document["scores"]["agree"] is False and document["scores"]["max_abs_diff"] > 0.5
    for check in document["tensors"].values():
        assert check["agree"] is False and check["column_order"] is None
        assert [found["code"] for found in check["diagnosis"]] == ["pairing"]
        assert check["diagnosis"][0]["figures"] == {"reference_pairing": "interleaved", "pairing": "half",
                                                    "residual": pytest.approx(0.0, abs=1e-4)}  # fmt: skip


@pytest.mark.parametrize("name", ["glm4", "llama", "gptj"])
def test_engines_rotating_in_place_pass_without_a_column_order(cli, tmp_path, name):
    path, probe = _probe(cli, tmp_path, name)
    q_rot, k_rot = _engine(name, probe)
    assert _scores_difference(probe, q_rot, k_rot) < 1e-4
    result = cli("compare", _write(tmp_path, {"q_rotated": q_rot, "k_rotated": k_rot}), str(path), "--json")
    assert result.code == 0, result.out
    document = json.loads(result.out)
    assert document["scores"]["agree"] is True
    assert all(check["agree"] and check["column_order"] is None for check in document["tensors"].values())
    assert probe.spec.params["layout"] == ("half" if name == "llama" else "interleaved")


def test_one_tensor_alone_de_interleaved_differs_with_the_order_and_the_scores_named(cli, tmp_path):
    path, probe = _probe(cli, tmp_path, "deepseek_v3")
    q_rot, _ = _engine("deepseek_v3", probe)
    result = cli("compare", _write(tmp_path, {"q_rotated": q_rot, "k_rotated": probe.k_rotated}), str(path), "--json")
    assert result.code == 1, result.out
    document = json.loads(result.out)
    q_check = document["tensors"]["q_rotated"]
    assert q_check["agree"] is False and q_check["max_abs_diff"] > 1.0  # the difference as given, not reordered
    assert [found["code"] for found in q_check["diagnosis"]] == ["column_order"]
    message = q_check["diagnosis"][0]["message"]
    assert "k_rotated comes in the probe's column order, so the scores q·k differ" in message
    assert q_check["diagnosis"][0]["figures"]["scores_max_abs_diff"] > 0.5
    assert document["tensors"]["k_rotated"]["agree"] is True and document["scores"]["agree"] is False
    alone = compare_rotated(probe, {"q_rotated": q_rot})
    assert not alone.agree and alone.scores is None
    assert "k_rotated is not given, so the scores q·k cannot be checked" in alone.checks[0].diagnosis[0].message


def test_a_mistake_under_the_de_interleaved_order_is_named_with_it(cli, tmp_path):
    _, probe = _probe(cli, tmp_path, "deepseek_v3")
    wrong = {f"{which}_rotated": rotate(probe.spec, getattr(probe, which), probe.positions, base=500000.0)
             [..., DEINTERLEAVED] for which in ("q", "k")}  # fmt: skip
    report = compare_rotated(probe, wrong)
    assert not report.agree
    for check in report.checks:
        assert [found.code for found in check.diagnosis] == ["column_order", "base_differs"]
        assert check.diagnosis[1].figures["base"] == 500000.0


def test_halves_with_each_column_beside_its_partner_agree_for_q_and_k_alike():
    probe = make_probe(rotary_spec("rope", dim=16, length=64), heads=2)
    (order,) = column_orders(probe.spec, 16)
    assert order.code == "partners_adjacent" and order.order.tolist()[:4] == [0, 8, 1, 9]
    given = {name: getattr(probe, name)[..., order.order] for name in ("q_rotated", "k_rotated")}
    report = compare_rotated(probe, given)
    assert report.agree and report.scores is not None and report.scores["max_abs_diff"] < 1e-5
    assert all(check.column_order is not None and check.max_abs_diff == 0.0 for check in report.checks)
    only_q = compare_rotated(probe, {"q_rotated": given["q_rotated"], "k_rotated": probe.k_rotated})
    assert [check.agree for check in only_q.checks] == [False, True]


def test_two_rotated_columns_have_no_other_order():
    assert column_orders(rotary_spec("rope:layout=interleaved", dim=2, length=4), 2) == []


def test_assert_rotary_matches_passes_transformers_deepseek_v3_and_names_its_halves(tmp_path):
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as module

    from pecli.testing import assert_rotary_matches

    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIGS["deepseek_v3"]))

    def engine(apply):
        def rotate_qk(q, k, positions):
            cos, sin = _cos_sin(module, "DeepseekV3RotaryEmbedding", "deepseek_v3", positions)
            q_rot, k_rot = apply(torch.from_numpy(q)[None], torch.from_numpy(k)[None], cos, sin)
            return q_rot[0], k_rot[0]

        return rotate_qk

    assert_rotary_matches(engine(module.apply_rotary_pos_emb_interleave), str(config))
    with pytest.raises(AssertionError, match=r"named cause: pairing$"):
        assert_rotary_matches(engine(module.apply_rotary_pos_emb), str(config))
