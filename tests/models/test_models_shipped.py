"""``generate --from-config`` on configs as models ship them (issue 29), against transformers' own rotary
modules, live: per-layer ``rope_parameters`` (Gemma 3), adjacent-pair models (Cohere, Llama 4, GPT-J),
NoPE layers (Llama 4), GPT-NeoX's ``rotary_pct``, DeepSeek's YaRN over ``qk_rope_head_dim``, gpt-oss,
composite configs read through ``text_config``; and the spellings transformers does not write (v4
``rope_scaling`` with ``type``, nomic-bert's keys, contradictions), on hand-written configs.

Each config is built with transformers' own config class and ``save_pretrained``; transformers is in
the ``test`` extra, and this module skips without it (fails in CI, as tests/models/test_models_live.py does).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pecli.io import read_table
from tests.conftest import assert_clean_error

pytestmark = pytest.mark.xdist_group("transformers")

POSITIONS = [0, 1, 2, 7, 30, 63]


def _transformers():
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as error:
        if os.environ.get("CI"):
            pytest.fail(str(error))
        pytest.skip(str(error))
    return transformers


def _module_tables(module, dim, **kwargs):
    import torch

    x = torch.zeros(1, len(POSITIONS), dim, dtype=torch.float32)
    with torch.no_grad():
        out = module(x, torch.tensor([POSITIONS]), **kwargs)
    if torch.is_tensor(out) and out.is_complex():  # Llama 4: freqs_cis, one complex value per pair
        cos, sin = out.real, out.imag
        return torch.repeat_interleave(cos, 2, -1)[0].numpy(), torch.repeat_interleave(sin, 2, -1)[0].numpy()
    cos, sin = out
    return cos[0].numpy(), sin[0].numpy()


def _applied_in_adjacent_pairs(cos, sin):
    """What apply_rotary_pos_emb_interleave rotates by (DeepSeek V3's and Mistral 4's rope_interleave, true by
    default): the first half of each, every column twice."""
    return tuple(np.repeat(t[..., : t.shape[-1] // 2], 2, axis=-1) for t in (cos, sin))


def _generate(cli, config, tmp_path, *extra):
    config.save_pretrained(tmp_path / "model")
    output = tmp_path / "rope.safetensors"
    result = cli("generate", "--from-config", str(tmp_path / "model"), "--len", "64", "-o", str(output), *extra)
    assert result.code == 0, result.stderr
    return output, result


def _assert_equal(output, cos, sin):
    for part, expected in (("cos", cos), ("sin", sin)):
        table = read_table(str(output), key=part).array
        assert table.shape[1] == expected.shape[1], part
        np.testing.assert_allclose(table[POSITIONS], expected, rtol=0, atol=2e-6, err_msg=part)


def test_gemma3_per_layer_types_each_equal_the_rotary_module(cli, tmp_path):
    tf = _transformers()
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    config = tf.Gemma3TextConfig(
        hidden_size=64,
        num_attention_heads=4,
        head_dim=16,
        num_hidden_layers=6,
        max_position_embeddings=64,
        rope_parameters={
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    )
    module = Gemma3RotaryEmbedding(config)
    for layer_type in ("full_attention", "sliding_attention"):
        output, _ = _generate(cli, config, tmp_path, "--layer-type", layer_type)
        _assert_equal(output, *_module_tables(module, 16, layer_type=layer_type))
        assert read_table(str(output), key="cos").metadata["layer_type"] == layer_type
    wrong = cli("generate", "--from-config", str(tmp_path / "model"), "--layer-type", "full")
    assert_clean_error(wrong, 2, "config.json has no layer type 'full'", "full_attention")


def test_gemma3_without_layer_type_writes_each_layer_types_tables_in_one_file(cli, tmp_path):
    """No --layer-type: one .safetensors holding TYPE.cos/TYPE.sin per layer type, each equal to the module."""
    tf = _transformers()
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    config = tf.Gemma3TextConfig(
        hidden_size=64,
        num_attention_heads=4,
        head_dim=16,
        num_hidden_layers=6,
        max_position_embeddings=64,
        rope_parameters={
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    )
    module = Gemma3RotaryEmbedding(config)
    output, _ = _generate(cli, config, tmp_path)
    layer_types = ("full_attention", "sliding_attention")
    for layer_type in layer_types:
        cos, sin = _module_tables(module, 16, layer_type=layer_type)
        for part, expected in (("cos", cos), ("sin", sin)):
            table = read_table(str(output), key=f"{layer_type}.{part}")
            assert table.array.shape == (64, 16)
            np.testing.assert_allclose(table.array[POSITIONS], expected, rtol=0, atol=2e-6, err_msg=layer_type)
    metadata = read_table(str(output), key="full_attention.cos").metadata
    recorded = json.loads(metadata["layer_types"])
    assert recorded["full_attention"]["scaling"] == "linear" and recorded["full_attention"]["factor"] == 8.0
    assert recorded["full_attention"]["base"] == 1e6 and recorded["sliding_attention"]["base"] == 1e4
    assert recorded["sliding_attention"]["scaling"] == "none"
    assert metadata["config.rope_parameters.full_attention.factor"] == "8.0"
    assert metadata["tensors"] == "full_attention.cos,full_attention.sin,sliding_attention.cos,sliding_attention.sin"

    info = cli("info", str(output))
    assert info.code == 0, info.stderr
    for name in ("full_attention.cos", "full_attention.sin", "sliding_attention.cos", "sliding_attention.sin"):
        assert name in info.stdout.decode()
    assert "full_attention: scheme=rope len=64 d=16 base=1000000.0" in info.stdout.decode()
    assert "sliding_attention: scheme=rope len=64 d=16 base=10000.0" in info.stdout.decode()
    identified = cli("identify", str(output), "--key", "full_attention.cos")
    assert identified.code == 0, identified.stderr
    assert "base=1000000.0 part=cos scaling=linear factor=8.0" in identified.stdout.decode()
    compared = cli("compare", str(output), "rope:base=1e4,part=sin", "--key", "sliding_attention.sin")
    assert compared.code == 0, compared.stderr

    npy = cli("generate", "--from-config", str(tmp_path / "model"), "-o", str(tmp_path / "x.npy"))
    assert_clean_error(npy, 2, "npy holds one tensor, but rope writes 4", "--layer-type full_attention|sliding")
    assert not (tmp_path / "x.npy").exists()
    summary = cli("generate", "--from-config", str(tmp_path / "model"), "--len", "8", "--json")
    assert summary.code == 0, summary.stderr
    document = json.loads(summary.stdout.decode())
    assert document["parts"]["sliding_attention.sin"] == [8, 16]
    assert document["tables"]["full_attention"]["factor"] == 8.0


def test_gemma3_v4_rope_local_base_freq_gives_the_sliding_layers_their_base(cli, tmp_path):
    """A Gemma 3 config as transformers 4 wrote it: rope_theta + rope_scaling for the global layers."""
    tf = _transformers()
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    v4 = {
        "model_type": "gemma3_text",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "head_dim": 16,
        "num_hidden_layers": 6,
        "max_position_embeddings": 64,
        "rope_theta": 1e6,
        "rope_local_base_freq": 1e4,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    }
    (tmp_path / "v4").mkdir()
    (tmp_path / "v4" / "config.json").write_text(json.dumps(v4))
    module = Gemma3RotaryEmbedding(tf.AutoConfig.from_pretrained(tmp_path / "v4"))
    for layer_type in ("full_attention", "sliding_attention"):
        output = tmp_path / f"{layer_type}.safetensors"
        args = ("generate", "--from-config", str(tmp_path / "v4"), "--len", "64", "-o", str(output))
        result = cli(*args, "--layer-type", layer_type)
        assert result.code == 0, result.stderr
        _assert_equal(output, *_module_tables(module, 16, layer_type=layer_type))


def test_llama4_adjacent_pairs_and_nope_layers(cli, tmp_path):
    tf = _transformers()
    from transformers.models.llama4.modeling_llama4 import Llama4TextRotaryEmbedding

    config = tf.Llama4TextConfig(
        hidden_size=64,
        num_attention_heads=4,
        head_dim=16,
        num_hidden_layers=8,
        max_position_embeddings=64,
        intermediate_size=32,
        intermediate_size_mlp=32,
        rope_parameters={"rope_type": "default", "rope_theta": 5e5},
    )
    output, result = _generate(cli, config, tmp_path)
    _assert_equal(output, *_module_tables(Llama4TextRotaryEmbedding(config), 16))
    metadata = read_table(str(output), key="cos").metadata
    assert metadata["layout"] == "interleaved" and metadata["pairing"] == "adjacent pairs"
    assert json.loads(metadata["nope_layers"]) == [3, 7]  # no_rope_layer_interval 4
    assert "layers 3, 7 use no positional encoding (NoPE)" in result.stderr


def test_cohere_rotates_adjacent_pairs(cli, tmp_path):
    tf = _transformers()
    from transformers.models.cohere.modeling_cohere import CohereRotaryEmbedding

    config = tf.CohereConfig(hidden_size=64, num_attention_heads=4, max_position_embeddings=64)
    output, _ = _generate(cli, config, tmp_path)
    _assert_equal(output, *_module_tables(CohereRotaryEmbedding(config), 16))


def test_gpt_neox_rotary_pct_and_gpt_oss_yarn(cli, tmp_path):
    tf = _transformers()
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssRotaryEmbedding

    neox = tf.GPTNeoXConfig(hidden_size=128, num_attention_heads=4, max_position_embeddings=64)
    output, _ = _generate(cli, neox, tmp_path / "neox")
    _assert_equal(output, *_module_tables(GPTNeoXRotaryEmbedding(neox), 32))
    assert read_table(str(output), key="cos").array.shape == (64, 8)  # rotary_pct 0.25 of 32

    oss = tf.GptOssConfig(
        hidden_size=64,
        num_attention_heads=4,
        head_dim=16,
        num_hidden_layers=2,
        max_position_embeddings=64,
        num_local_experts=2,
    )
    output, _ = _generate(cli, oss, tmp_path / "oss")
    cos, sin = _module_tables(GptOssRotaryEmbedding(oss), 16)  # gpt-oss's module returns one half: chunk(x, 2)
    _assert_equal(output, np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1))


def test_deepseek_v3_yarn_over_qk_rope_head_dim(cli, tmp_path):
    tf = _transformers()
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding

    config = tf.DeepseekV3Config(
        hidden_size=64,
        num_attention_heads=4,
        qk_rope_head_dim=8,
        qk_nope_head_dim=16,
        v_head_dim=16,
        max_position_embeddings=256,
        num_hidden_layers=2,
        rope_parameters={
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 64,
            "rope_theta": 10000.0,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
    )
    output, _ = _generate(cli, config, tmp_path)
    assert config.rope_interleave
    _assert_equal(output, *_applied_in_adjacent_pairs(*_module_tables(DeepseekV3RotaryEmbedding(config), 8)))


def test_gptj_rotary_dim_in_adjacent_pairs(cli, tmp_path):
    tf = _transformers()
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    config = tf.GPTJConfig(n_embd=64, n_head=4, rotary_dim=8, n_positions=64)
    output, _ = _generate(cli, config, tmp_path)
    sincos = create_sinusoidal_positions(64, 8)[POSITIONS].numpy()
    sin, cos = np.repeat(sincos[:, :4], 2, -1), np.repeat(sincos[:, 4:], 2, -1)
    _assert_equal(output, cos, sin)


def test_a_composite_config_reads_its_text_config(cli, tmp_path):
    tf = _transformers()
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    text = tf.LlamaConfig(hidden_size=64, num_attention_heads=4, max_position_embeddings=64, rope_theta=5e5)
    config = tf.LlavaConfig(text_config=text.to_dict())
    output, _ = _generate(cli, config, tmp_path)
    _assert_equal(output, *_module_tables(LlamaRotaryEmbedding(text), 16))
    assert read_table(str(output), key="cos").metadata["config.text_config.rope_parameters.rope_theta"] == "500000.0"


def _write(tmp_path, config, name="my-config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


BASE = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 16}


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        # StableLM's default rope reads partial_rotary_factor (Llama's ignores it: issue 30)
        ({"model_type": "stablelm", "rotary_dim": 8, "partial_rotary_factor": 0.25}, "rotary_dim = 8 contradicts"),
        ({"rope_scaling": {"rope_type": "linear", "type": "dynamic", "factor": 2.0}}, "contradicts rope_scaling.type"),
        ({"rope_theta": 1e4, "rotary_emb_base": 5e5}, "rope_theta = 10000.0 and rotary_emb_base = 500000.0 disagree"),
        (
            {"rope_theta": 1e4, "head_dim": 21},
            "21 rotary columns, an odd width: transformers computes 11 frequencies"
            " over 21 and writes 22 cos/sin columns, but the head has 21, so the model cannot apply them",
        ),
    ],
)
def test_contradictions_are_refused_naming_the_fields_and_the_file(cli, tmp_path, extra, expected):
    path = _write(tmp_path, {**BASE, "rope_theta": 1e4, **extra})
    result = cli("generate", "--from-config", path, "-o", str(tmp_path / "x.npy"), "--part", "cos")
    assert_clean_error(result, 2, expected)
    assert result.stderr.startswith(f"pecli: error: {path}")
    assert not (tmp_path / "x.npy").exists()


def test_nomic_bert_spellings_say_the_convention_assumed(cli, tmp_path):
    config = {
        "model_type": "nomic_bert",
        "n_embd": 64,
        "n_head": 4,
        "n_positions": 16,
        "rotary_emb_base": 1000,
        "rotary_emb_fraction": 0.5,
        "rotary_emb_interleaved": True,
    }
    path = _write(tmp_path, config)
    output = tmp_path / "nomic.safetensors"
    result = cli("generate", "--from-config", path, "-o", str(output))
    assert result.code == 0, result.stderr
    assert "rotary_emb_fraction read as partial_rotary_factor" in result.stderr
    assert "rotary_emb_interleaved = true" in result.stderr
    cos = read_table(str(output), key="cos").array
    assert cos.shape == (16, 8)
    inv_freq = 1000.0 ** (-np.arange(0, 8, 2) / 8)
    np.testing.assert_allclose(cos[5], np.repeat(np.cos(5 * inv_freq), 2), atol=1e-6)


def test_v4_rope_scaling_with_legacy_type_and_max_seq_len(cli, tmp_path):
    config = {
        "model_type": "mistral",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "head_dim": 8,
        "max_seq_len": 32,
        "rope_theta": 500.0,
        "rope_scaling": {"type": "linear", "factor": 2.0},
    }
    output = tmp_path / "v4.safetensors"
    result = cli("generate", "--from-config", _write(tmp_path, config), "-o", str(output))
    assert result.code == 0, result.stderr
    sin = read_table(str(output), key="sin").array
    assert sin.shape == (32, 8)
    np.testing.assert_allclose(sin[9, :4], np.sin(9 * 500.0 ** (-np.arange(0, 8, 2) / 8) / 2), atol=1e-6)


def test_deepseek_v2_and_glm_ocr_rotate_adjacent_pairs(cli, tmp_path):
    """DeepSeek V2's ``apply_rotary_emb`` views (…, d/2, 2) as complex; GLM-OCR's text model rotates
    ``x[..., 0::2]`` against ``x[..., 1::2]``: both adjacent pairs, where pecli wrote halves (max error 2)."""
    tf = _transformers()
    from transformers.models.deepseek_v2.modeling_deepseek_v2 import DeepseekV2RotaryEmbedding
    from transformers.models.glm_ocr.modeling_glm_ocr import GlmOcrTextRotaryEmbedding

    deepseek = tf.DeepseekV2Config(
        hidden_size=64,
        num_attention_heads=4,
        qk_rope_head_dim=8,
        qk_nope_head_dim=16,
        v_head_dim=16,
        max_position_embeddings=64,
        num_hidden_layers=2,
    )
    output, _ = _generate(cli, deepseek, tmp_path / "deepseek")
    _assert_equal(output, *_module_tables(DeepseekV2RotaryEmbedding(deepseek), 8))
    assert read_table(str(output), key="cos").metadata["layout"] == "interleaved"

    import torch

    text = {"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64}
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}
    glm = tf.GlmOcrConfig(text_config=text)
    output, _ = _generate(cli, glm, tmp_path / "glm")
    positions = torch.tensor([POSITIONS]).expand(3, 1, len(POSITIONS))  # M-RoPE: the same text position thrice
    with torch.no_grad():
        cos, sin = GlmOcrTextRotaryEmbedding(glm.text_config)(torch.zeros(1, len(POSITIONS), 16), positions)
    _assert_equal(output, cos[0].numpy(), sin[0].numpy())


def test_gemma4_full_layers_take_their_per_layer_head_dim_and_mistral4_reads_head_dim(cli, tmp_path):
    """Gemma 4's ``global_head_dim`` is saved as a ``per_layer_config`` override of ``head_dim`` for each
    full-attention layer, which the rotary init reads for that layer type; Mistral 4's rotary width is
    ``head_dim`` × ``partial_rotary_factor`` (its ``qk_rope_head_dim`` is that product, not the base)."""
    tf = _transformers()
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
    from transformers.models.mistral4.modeling_mistral4 import Mistral4RotaryEmbedding

    gemma = tf.Gemma4TextConfig(
        hidden_size=64,
        num_attention_heads=4,
        head_dim=16,
        global_head_dim=32,
        num_hidden_layers=6,
        max_position_embeddings=64,
    )
    module = Gemma4TextRotaryEmbedding(gemma)
    for layer_type, width in (("full_attention", 32), ("sliding_attention", 16)):
        output, _ = _generate(cli, gemma, tmp_path / layer_type, "--layer-type", layer_type)
        cos, sin = _module_tables(module, width, layer_type=layer_type)
        assert cos.shape[1] == width
        _assert_equal(output, cos, sin)

    mistral = tf.Mistral4Config(
        hidden_size=64,
        num_attention_heads=4,
        head_dim=16,
        qk_rope_head_dim=8,
        qk_nope_head_dim=8,
        v_head_dim=16,
        num_hidden_layers=2,
        max_position_embeddings=256,
    )
    output, _ = _generate(cli, mistral, tmp_path / "mistral")
    assert mistral.rope_interleave
    cos, sin = _applied_in_adjacent_pairs(*_module_tables(Mistral4RotaryEmbedding(mistral), 16))
    assert cos.shape[1] == 8
    _assert_equal(output, cos, sin)


def test_dbrx_heads_under_n_heads_and_laguna_without_sliding_layers(cli, tmp_path):
    """DBRX spells its heads ``n_heads`` (transformers' attribute_map); Laguna keeps sliding_attention's
    rope settings with every layer full attention, where the module has no sliding table either."""
    tf = _transformers()
    from transformers.models.dbrx.modeling_dbrx import DbrxRotaryEmbedding
    from transformers.models.laguna.modeling_laguna import LagunaRotaryEmbedding

    dbrx = tf.DbrxConfig(d_model=64, n_heads=4, max_seq_len=64, n_layers=2)
    output, _ = _generate(cli, dbrx, tmp_path / "dbrx")
    _assert_equal(output, *_module_tables(DbrxRotaryEmbedding(dbrx), 16))

    laguna = tf.LagunaConfig(hidden_size=64, num_attention_heads=4, head_dim=16, num_hidden_layers=2)
    output, result = _generate(cli, laguna, tmp_path / "laguna")
    _assert_equal(output, *_module_tables(LagunaRotaryEmbedding(laguna), 16, layer_type="full_attention"))
    assert "no layer of that type" in result.stderr


def test_glm4_moe_odd_rotary_width_and_qwen3_omni_refused_as_transformers_cannot_apply_it(cli, tmp_path):
    tf = _transformers()
    import torch
    from transformers.models.glm4_moe.modeling_glm4_moe import Glm4MoeRotaryEmbedding
    from transformers.models.qwen3_omni_moe import modeling_qwen3_omni_moe as omni

    glm = tf.Glm4MoeConfig(max_position_embeddings=64)  # 4096 / 96 = 42 a head, × 0.5 = 21: 11 frequencies over 21
    output, _ = _generate(cli, glm, tmp_path / "glm")
    cos, sin = _module_tables(Glm4MoeRotaryEmbedding(glm), 42)
    assert cos.shape[1] == 22
    _assert_equal(output, cos, sin)
    text = tf.Qwen3OmniMoeConfig().thinker_config.text_config  # 2048 / 28 = 73 a head, no head_dim
    text.max_position_embeddings = 64
    cos, sin = _module_tables(omni.Qwen3OmniMoeThinkerTextRotaryEmbedding(text), 73)
    assert cos.shape[1] == 74
    q = torch.zeros(1, 1, len(POSITIONS), 73)
    with pytest.raises(RuntimeError, match="73"):  # the model itself cannot rotate its 73-column heads
        omni.apply_rotary_pos_emb(q, q, torch.from_numpy(cos)[None], torch.from_numpy(sin)[None])
    text.save_pretrained(tmp_path / "omni")
    result = cli("generate", "--from-config", str(tmp_path / "omni"), "--len", "64", "-o", str(tmp_path / "o.st"))
    assert_clean_error(result, 2, "37 frequencies over 73 and writes 74 cos/sin columns, but the head has 73")
    assert not (tmp_path / "o.st").exists()


def test_an_odd_partial_width_the_head_holds_is_written_as_transformers_computes_it(cli, tmp_path):
    # head_dim 28 × 0.75 = 21: 11 frequencies over 21, turning 22 of the 28 columns (not refused any more)
    # StableLM's default rope reads partial_rotary_factor (Llama's rotates the full head: issue 30)
    config = {**BASE, "model_type": "stablelm", "rope_theta": 1e4, "head_dim": 28, "partial_rotary_factor": 0.75}
    path = _write(tmp_path, config)
    result = cli("generate", "--from-config", path, "-o", str(tmp_path / "x.npy"), "--part", "angle")
    assert result.code == 0, result.stderr
    angle = np.load(tmp_path / "x.npy").astype(np.float64)
    freqs = 1.0 / 1e4 ** (np.arange(0, 21, 2) / 21)
    assert angle.shape == (16, 22)
    np.testing.assert_allclose(angle[3], np.concatenate([3 * freqs, 3 * freqs]), rtol=1e-6)
