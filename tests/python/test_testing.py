"""pecli.testing: an engine's rotary code against a model's own convention (issue 31, item 4).

The passing cases are transformers' own rotary modules (configs saved with transformers' config
classes); each failing case carries one bug of the diagnosis's classes, and the message names it."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.testing import assert_rotary_matches, assert_table_matches
from tests.conftest import require_module

torch = require_module("torch")
transformers = require_module("transformers")
pytestmark = pytest.mark.xdist_group("transformers")  # one worker imports transformers and saves the models once
DIM = 64
LLAMA3 = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}  # fmt: skip
YARN = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048}
LENGTHS = {"llama3": 131072, "yarn": 8192}


def _config(name: str, **rope: float):
    from transformers import LlamaConfig

    parameters = {**(LLAMA3 if name == "llama3" else YARN), **rope}
    return LlamaConfig(hidden_size=DIM * 4, num_attention_heads=4, max_position_embeddings=LENGTHS[name],
                       rope_parameters=parameters)  # fmt: skip


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Model directories (config.json written by transformers' save_pretrained), by rope type."""
    directories = {}
    for name in LENGTHS:
        directory = tmp_path_factory.mktemp(name)
        _config(name).save_pretrained(directory)
        directories[name] = str(directory)
    return directories


def _transformers_apply(config, *, shift: int = 0, attention_factor: bool = True, pairing: str = "half"):
    """An engine's rotary function on transformers' modules: LlamaRotaryEmbedding and apply_rotary_pos_emb
    (with one bug when asked: positions shifted, the attention factor left out, adjacent pairs)."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    rotary = LlamaRotaryEmbedding(config)
    if not attention_factor:
        rotary.attention_scaling = 1.0

    def apply(q, k, positions):
        cos, sin = rotary(q[None], (positions + shift)[None])
        if pairing == "half":
            q_out, k_out = apply_rotary_pos_emb(q[None], k[None], cos, sin)
            return q_out[0], k_out[0]
        half = cos.shape[-1] // 2
        cos, sin = (t[..., :half].repeat_interleave(2, dim=-1) for t in (cos, sin))

        def every_two(x):
            return torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)

        return q * cos + every_two(q) * sin, k * cos + every_two(k) * sin

    return apply


@pytest.mark.parametrize("name", list(LENGTHS))
def test_transformers_own_rotation_passes(models, name):
    assert_rotary_matches(_transformers_apply(_config(name)), models[name], device="cpu")


@pytest.mark.parametrize(
    ("name", "bug", "code", "phrase"),
    [
        ("yarn", {"pairing": "adjacent"}, "pairing", "the pairing differs"),
        ("yarn", {"attention_factor": False}, "constant_factor", "the attention factor is not applied"),
        ("llama3", {"shift": 1}, "positions_shifted", "positions off by one"),
    ],
)
def test_a_bug_in_the_rotation_is_named(models, name, bug, code, phrase):
    with pytest.raises(AssertionError) as raised:
        assert_rotary_matches(_transformers_apply(_config(name), **bug), models[name], device="cpu")
    message = str(raised.value)
    assert phrase in message and "q_rotated: differs" in message and "k_rotated: differs" in message
    assert "max |Δ|" in message and "at head" in message and message.endswith(f"named cause: {code}")


def test_an_unscaled_llama3_rotation_and_a_wrong_base_are_named(models):
    unscaled = _transformers_apply(_config("llama3", rope_type="default"))  # the engine skipped llama3's scaling
    with pytest.raises(AssertionError, match=r"frequency scaling \(llama3\) is not applied"):
        assert_rotary_matches(unscaled, models["llama3"], device="cpu")
    wrong_base = _transformers_apply(_config("llama3", rope_theta=10000.0))
    with pytest.raises(AssertionError, match="the base differs: the reference's is 500000, the rotation's 10000"):
        assert_rotary_matches(wrong_base, models["llama3"], device="cpu")


def test_numpy_in_and_out_and_a_scheme_spec():
    from pecli.probe import rotary_spec, rotate

    spec = rotary_spec("rope:base=500000", dim=32, length=256)

    def apply(q, k, positions):
        assert isinstance(q, np.ndarray) and q.shape[-1] == 32 and positions.dtype == np.int64
        return rotate(spec, q, positions), rotate(spec, k, positions)

    assert_rotary_matches(apply, "rope:base=500000", dim=32, length=256)
    with pytest.raises(AssertionError, match="the base differs"):
        assert_rotary_matches(apply, "rope", dim=32, length=256)


def _transformers_table(name: str, length: int):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rotary = LlamaRotaryEmbedding(_config(name))
    positions = torch.arange(length)[None]
    cos, sin = rotary(torch.zeros(1, 1, DIM), positions)
    return rotary, cos, sin


@pytest.mark.parametrize("name", list(LENGTHS))
def test_a_transformers_cos_sin_pair_matches(models, name):
    _, cos, sin = _transformers_table(name, 4096)
    assert_table_matches((cos, sin), models[name])


def test_a_cos_sin_pair_without_yarns_attention_factor_is_named(models):
    rotary, cos, sin = _transformers_table("yarn", 4096)
    with pytest.raises(AssertionError, match="named cause: constant_factor"):
        assert_table_matches((cos / rotary.attention_scaling, sin / rotary.attention_scaling), models["yarn"])


def _vllm_cache(inv_freq, length: int, scale: float = 1.0):
    """vLLM's cos_sin_cache (RotaryEmbedding._compute_cos_sin_cache): positions × rotary_dim, the cos of the
    rotary_dim/2 frequencies then their sin (YaRN's multiplied by its mscale)."""
    t = torch.arange(length, dtype=torch.float)
    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    return torch.cat((freqs.cos() * scale, freqs.sin() * scale), dim=-1)


def test_a_vllm_cos_sin_cache_matches_and_an_unscaled_one_is_named(models):
    rotary, _, _ = _transformers_table("llama3", 1)
    assert_table_matches(_vllm_cache(rotary.inv_freq, 8192 + 64), models["llama3"])
    plain = 1.0 / 500000.0 ** (torch.arange(0, DIM, 2, dtype=torch.float) / DIM)
    with pytest.raises(AssertionError) as raised:
        assert_table_matches(_vllm_cache(plain, 16384), models["llama3"])
    message = str(raised.value)
    assert "cos_sin_cache" in message and "max |A − B|" in message and "position" in message
    assert "without its frequency scaling (scaling=llama3" in message and "named cause: unscaled" in message


def test_llama_freqs_cis_matches_and_a_wrong_base_is_named():
    def freqs_cis(base: float, length: int = 2048):  # Llama's precompute_freqs_cis
        freqs = 1.0 / (base ** (torch.arange(0, DIM, 2)[: DIM // 2].float() / DIM))
        return torch.polar(torch.ones(length, DIM // 2), torch.outer(torch.arange(length).float(), freqs))

    assert_table_matches(freqs_cis(500000.0), "rope:base=500000")
    assert_table_matches(freqs_cis(500000.0).numpy(), "rope:base=500000", part="sin")
    with pytest.raises(AssertionError, match="the base differs"):
        assert_table_matches(freqs_cis(10000.0), "rope:base=500000")


def test_pecli_testing_is_reachable_from_pecli():
    import pecli

    assert pecli.testing.assert_rotary_matches is assert_rotary_matches


def test_numpy_tables_need_no_torch():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, pecli.testing\n"
        "p = np.arange(64)[:, None] * 10000.0 ** -(np.arange(0, 16, 2) / 16)\n"
        "pecli.testing.assert_table_matches(np.hstack([np.cos(p), np.sin(p)]), 'rope')\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
