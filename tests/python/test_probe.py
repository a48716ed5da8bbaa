"""Probes: the expected rotation equals transformers' own apply_rotary_pos_emb with the model's rotary module,
and the diagnosis names each mistake an engine's rotation makes (issue 31, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.probe import diagnose_rotated, head_dim_of, make_probe, rotary_spec, rotate
from pecli.schemes.rope_scaling import SCALING_PARAMETERS
from tests.conftest import require_module

torch = require_module("torch")
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


def _engine_rotation(name: str, q: np.ndarray, k: np.ndarray, positions: np.ndarray, bug: str):
    """An engine built on transformers' rotary module, carrying one bug: ``adjacent`` pairs (rotate every
    two instead of rotate_half) or ``no_attention_factor`` (cos and sin left unscaled)."""
    from transformers import AutoConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    values = {**CONFIGS[name], "hidden_size": DIM * 8, "num_attention_heads": 8}
    config = AutoConfig.for_model(values.pop("model_type"), **values)
    rotary = LlamaRotaryEmbedding(config)
    if bug == "no_attention_factor":
        rotary.attention_scaling = 1.0
    qt, kt = torch.from_numpy(q)[None], torch.from_numpy(k)[None]
    cos, sin = rotary(qt, torch.from_numpy(positions)[None])
    if bug != "adjacent":
        q_rot, k_rot = apply_rotary_pos_emb(qt, kt, cos, sin)
        return q_rot[0].numpy(), k_rot[0].numpy()
    half = cos.shape[-1] // 2
    cos, sin = (t[..., :half].repeat_interleave(2, dim=-1)[:, None] for t in (cos, sin))

    def every_two(x):
        return torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)

    return (qt * cos + every_two(qt) * sin)[0].numpy(), (kt * cos + every_two(kt) * sin)[0].numpy()


@pytest.mark.parametrize(("bug", "code"), [("adjacent", "pairing"), ("no_attention_factor", "constant_factor")])
def test_compare_of_an_engine_output_with_the_probe_names_the_bug(cli, tmp_path, bug, code):
    from safetensors.numpy import save_file

    config = _config(tmp_path, "yarn")
    probe_path = tmp_path / "probe.safetensors"
    made = cli("generate", "--from-config", config, "--probe", "--heads", "2", "--seed", "4", "-o", str(probe_path))
    assert made.code == 0, made.stderr
    tensors, metadata = _read(probe_path)
    assert metadata["probe"] == "rotary" and metadata["probe.seed"] == "4"
    assert tensors["q"].shape == (2, len(tensors["positions"]), DIM)
    q_rot, k_rot = _engine_rotation("yarn", tensors["q"], tensors["k"], tensors["positions"], bug)
    engine = tmp_path / "engine.safetensors"
    save_file({"q_rotated": q_rot, "k_rotated": k_rot}, str(engine))
    result = cli("compare", str(engine), str(probe_path), "--json")
    assert result.code == 1, result.stderr
    document = json.loads(result.out)
    assert document["agree"] is False and set(document["tensors"]) == {"q_rotated", "k_rotated"}
    for check in document["tensors"].values():
        assert [found["code"] for found in check["diagnosis"]] == [code]
    text = cli("compare", str(probe_path), str(engine)).stdout.decode()
    assert "differs" in text and ("pairing differs" if code == "pairing" else "attention factor") in text


def test_compare_passes_transformers_own_rotation_of_the_probe(cli, tmp_path):
    from safetensors.numpy import save_file

    config = _config(tmp_path, "llama3")
    probe_path = tmp_path / "probe.safetensors"
    assert cli("generate", "--from-config", config, "--probe", "-o", str(probe_path)).code == 0
    from pecli.probe_check import read_probe

    probe = read_probe(*_read(probe_path))
    q_hf, k_hf = _transformers_rotation("llama3", probe.q, probe.k, probe.positions)
    engine = tmp_path / "engine.safetensors"  # tokens × heads × head_dim, as vLLM keeps them
    save_file({"q": q_hf.transpose(1, 0, 2).astype(np.float32).copy(), "k": k_hf.astype(np.float32)}, str(engine))
    result = cli("compare", str(engine), str(probe_path))
    assert result.code == 0, result.stdout + result.stderr
    assert b"q_rotated: agrees" in result.stdout and b"k_rotated: agrees" in result.stdout
    drawn = cli("compare", str(engine), str(probe_path), "-o", str(tmp_path / "diff.png"))
    assert drawn.code == 2 and "drop -o" in drawn.stderr and not (tmp_path / "diff.png").exists()


def test_a_probe_is_written_as_safetensors_only(cli, tmp_path):
    for target in ("probe.npy", "probe.csv"):
        result = cli("generate", "rope", "--d", "8", "--len", "16", "--probe", "-o", str(tmp_path / target))
        assert result.code == 2 and "safetensors" in result.stderr and result.stderr.count("\n") == 1
        assert not (tmp_path / target).exists()


def _read(path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """A safetensors file's tensors and header, as numpy (read by safetensors itself)."""
    from safetensors import safe_open

    with safe_open(str(path), "np") as opened:
        return {name: opened.get_tensor(name) for name in opened.keys()}, opened.metadata()  # noqa: SIM118


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (("--seed", "-1"), ("--seed must be a non-negative integer, got -1",)),  # was an internal error, exit 3
        (("--heads", "0"), ("--heads must be a positive integer, got 0",)),  # was taken for the default, 2 heads
        (("--heads", "1000000000"), ("the probe would take", "TiB", "use fewer --heads")),
    ],
)
def test_probe_counts_are_checked(cli, tmp_path, monkeypatch, option, words):
    monkeypatch.chdir(tmp_path)
    result = cli("generate", "rope", "--d", "8", "--len", "64", "--probe", *option, "-o", "p.safetensors")
    assert result.code == 2, result.stderr
    assert all(word in result.stderr for word in words) and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "p.safetensors").exists()
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        make_probe(rotary_spec("rope", dim=8, length=64), seed=-3)
