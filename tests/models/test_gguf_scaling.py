"""GGUF rope scaling keys against llama.cpp's own arithmetic (issue 30).

Files are written with the ``gguf`` package carrying seeded random rope metadata per scaling type and
architecture; the expected cos/sin are a transcription of what llama.cpp computes from them:

- src/llama-model.cpp, ``llama_model::load_hparams``: rope.scaling.type defaults to "linear";
  rope.scaling.factor (else the old rope.scale_linear) gives freq_scale = 1/factor; n_ctx_orig_yarn is
  rope.scaling.original_context_length, else context_length; yarn_log_multiplier is divided by 0.1
  (TAG_DEEPSEEK2_YARN_LOG_MUL_FIX); Gemma 3 sets rope_freq_base_train_swa = 10000, scale 1.
- src/llama-context.cpp, ``llama_context::llama_context``: scaling "none" forces freq_scale 1; ext_factor 1
  for yarn, else 0; yarn_attn_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
  (mscale = mscale_all_dim for deepseek2 only, else 1) or get_mscale(factor, 1), times
  1 / (1 + 0.1·ln factor), times rope.scaling.attn_factor.
- ggml/src/ggml.c, ``ggml_rope_yarn_corr_dims`` (floor / ceil, clamped to [0, n_dims - 1]) and
  ggml/src/ggml-cpu/ops.cpp, ``rope_yarn`` / ``rope_yarn_ramp``: theta_interp = freq_scale·theta_extrap,
  the ramp mix, and mscale = attn_factor·(1 + 0.1·ln(1/freq_scale)) where ext_factor != 0; theta_extrap =
  p·base^(-2i/n_dims) / freq_factors[i].
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pecli.io import read_table
from tests.conftest import assert_clean_error, require_module
from tests.io.test_gguf import finish_gguf

HIDDEN, HEADS, ROT = 64, 4, 16


def _write(path, arch, kv, tensors=None, *, context=128):
    gguf = require_module("gguf")
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_context_length(context)
    writer.add_embedding_length(HIDDEN)
    writer.add_head_count(HEADS)
    writer.add_rope_dimension_count(ROT)
    for key, value in kv.items():
        if isinstance(value, str):
            writer.add_string(f"{arch}.{key}", value)
        elif isinstance(value, int):
            writer.add_uint32(f"{arch}.{key}", value)
        else:
            writer.add_float32(f"{arch}.{key}", value)
    return finish_gguf(writer, tensors, path)


def _get_mscale(scale: float, mscale: float) -> float:  # llama-context.cpp's get_mscale
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def llama_cpp_rope(arch, kv, context, freq_factors=None, *, n_ctx=None):
    """(theta per pair [context, ROT/2], magnitude) as llama.cpp computes them (module docstring)."""
    f32 = np.float32
    base = float(f32(kv.get("rope.freq_base", 10000.0)))
    scaling = kv.get("rope.scaling.type", "linear")
    factor = kv.get("rope.scaling.factor", kv.get("rope.scale_linear", 0.0))
    factor = float(f32(factor))
    freq_scale = 1.0 if factor == 0 else 1.0 / factor
    if scaling == "none":
        freq_scale = 1.0
    ext_factor = 1.0 if scaling == "yarn" else 0.0
    attn_factor = 1.0
    log_mul = float(f32(kv.get("rope.scaling.yarn_log_multiplier", 0.0))) / 0.1
    if ext_factor != 0:
        scale = 1.0 / freq_scale
        if log_mul != 0:
            mscale = log_mul if arch == "deepseek2" and log_mul != 1 else 1.0
            attn_factor = _get_mscale(scale, mscale) / _get_mscale(scale, log_mul)
        else:
            attn_factor = _get_mscale(scale, 1.0)
        attn_factor *= 1.0 / (1.0 + 0.1 * math.log(scale))
    attn_factor *= float(f32(kv.get("rope.scaling.attn_factor", 1.0)))
    n_ctx_orig = kv.get("rope.scaling.original_context_length", context)
    beta_fast = float(f32(kv.get("rope.scaling.yarn_beta_fast", 32.0)))
    beta_slow = float(f32(kv.get("rope.scaling.yarn_beta_slow", 1.0)))

    def corr_dim(n_rot):  # ggml_rope_yarn_corr_dim
        return ROT * math.log(n_ctx_orig / (n_rot * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(0.0, math.floor(corr_dim(beta_fast))), min(ROT - 1.0, math.ceil(corr_dim(beta_slow)))
    i = np.arange(ROT // 2, dtype=np.float64)
    theta_extrap = np.arange(context, dtype=np.float64)[:, None] * base ** (-2 * i / ROT)
    if freq_factors is not None:
        theta_extrap = theta_extrap / np.asarray(freq_factors, np.float64)
    theta = freq_scale * theta_extrap
    mscale = attn_factor
    if ext_factor != 0:
        ramp_mix = (1 - np.clip((i - low) / max(0.001, high - low), 0, 1)) * ext_factor  # rope_yarn_ramp
        theta = theta * (1 - ramp_mix) + theta_extrap * ramp_mix
        mscale *= 1.0 + 0.1 * math.log(1.0 / freq_scale)
    return theta, mscale


def _tables(cli, model, tmp_path, key=""):
    out = tmp_path / "out.safetensors"
    result = cli("generate", "--from-config", str(model), "-o", str(out))
    assert result.code == 0, result.stderr
    return read_table(str(out), key=f"{key}cos").array, read_table(str(out), key=f"{key}sin").array


def _compare(cos, sin, theta, mscale, *, interleaved=False):
    expand = (lambda a: np.repeat(a, 2, axis=1)) if interleaved else (lambda a: np.concatenate([a, a], axis=1))
    tolerance = 4 * 2.0**-23 * theta.shape[0] + 2.0**-20  # float32 noise
    np.testing.assert_allclose(cos, expand(np.cos(theta) * mscale), rtol=0, atol=tolerance)
    np.testing.assert_allclose(sin, expand(np.sin(theta) * mscale), rtol=0, atol=tolerance)


def _random_kv(rng, scaling, **extra):
    kv = {"rope.freq_base": float(rng.choice([10000.0, 500000.0, 1e6]))}
    if scaling is not None:
        kv["rope.scaling.type"] = scaling
    if scaling in ("linear", "yarn", None):
        kv["rope.scaling.factor"] = float(rng.uniform(1.5, 16.0))
    if scaling == "yarn":
        kv["rope.scaling.original_context_length"] = int(rng.integers(16, 64))
        kv["rope.scaling.yarn_beta_fast"] = float(rng.uniform(8, 64))
        kv["rope.scaling.yarn_beta_slow"] = float(rng.uniform(0.5, 2))
    kv.update(extra)
    return kv


@pytest.mark.parametrize(
    "arch, scaling, extra",
    [
        ("llama", "none", {}),
        ("llama", "linear", {}),
        # llama.cpp's default type is linear: a factor without a type scales (pecli read it as none)
        ("llama", None, {}),
        ("qwen2", "yarn", {}),
        # the file's attn_factor multiplies YaRN's 1 + 0.1·ln(factor) (pecli replaced it)
        ("qwen2", "yarn", {"rope.scaling.attn_factor": 0.75}),
        ("gpt-oss", "yarn", {}),
        ("deepseek2", "yarn", {"rope.scaling.yarn_log_multiplier": 0.0707}),
        # another architecture with a log multiplier: llama.cpp takes mscale = 1 (pecli took mscale_all_dim)
        ("qwen2", "yarn", {"rope.scaling.yarn_log_multiplier": 0.0707}),
    ],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_scaling_equals_llama_cpp(cli, tmp_path, arch, scaling, extra, seed):
    rng = np.random.default_rng(seed)
    kv = _random_kv(rng, scaling, **extra)
    model = _write(tmp_path / "m.gguf", arch, kv, context=128)
    theta, mscale = llama_cpp_rope(arch, kv, 128)
    cos, sin = _tables(cli, model, tmp_path)
    _compare(cos, sin, theta, mscale, interleaved=arch == "deepseek2")


def test_the_old_scale_linear_key_is_read(cli, tmp_path):
    # load_hparams: "try the old key name" LLM_KV_ROPE_SCALE_LINEAR when rope.scaling.factor is absent
    kv = {"rope.freq_base": 10000.0, "rope.scale_linear": 4.0}
    theta, mscale = llama_cpp_rope("llama", kv, 128)
    _compare(*_tables(cli, _write(tmp_path / "m.gguf", "llama", kv), tmp_path), theta, mscale)


def test_phi3_longrope_factor_tensors(cli, tmp_path):
    rng = np.random.default_rng(3)
    long, short = rng.uniform(1, 8, ROT // 2).astype(np.float32), rng.uniform(1, 2, ROT // 2).astype(np.float32)
    # the Phi-3 converter writes no scaling type; attn_factor scales cos and sin as given (ext_factor 0)
    kv = {"rope.freq_base": 10000.0, "rope.scaling.original_context_length": 32, "rope.scaling.attn_factor": 1.19}
    model = _write(tmp_path / "m.gguf", "phi3", kv, {"rope_factors_long.weight": long,
                                                     "rope_factors_short.weight": short})  # fmt: skip
    # llama.cpp picks long factors where the context exceeds n_ctx_orig_yarn (llama_model::get_rope_factors);
    # transformers' LongRoPE picks by length the same way: 128 > 32
    theta, mscale = llama_cpp_rope("phi3", kv, 128, long)
    _compare(*_tables(cli, model, tmp_path), theta, mscale)


@pytest.mark.parametrize("swa_base", [None, 50000.0])
def test_gemma3_sliding_layers_use_base_10000_unscaled(cli, tmp_path, swa_base):
    # llama.cpp's LLM_ARCH_GEMMA3 loader: rope_freq_base_train_swa = 10000, rope_freq_scale_train_swa = 1;
    # the global layers keep rope.freq_base and the linear factor (Gemma 3 4B+: 8)
    kv = {"rope.freq_base": 1e6, "rope.scaling.type": "linear", "rope.scaling.factor": 8.0}
    if swa_base is not None:
        kv["rope.freq_base_swa"] = swa_base
    model = _write(tmp_path / "m.gguf", "gemma3", kv)
    theta, mscale = llama_cpp_rope("gemma3", kv, 128)
    _compare(*_tables(cli, model, tmp_path, "full_attention."), theta, mscale)
    local = {"rope.freq_base": swa_base or 10000.0, "rope.scaling.type": "none"}
    theta, mscale = llama_cpp_rope("gemma3", local, 128)
    _compare(*_tables(cli, model, tmp_path, "sliding_attention."), theta, mscale)


def test_unread_keys_that_change_the_rotation_are_refused_by_name(cli, tmp_path):
    # an SWA base on another architecture: its sliding layers keep the global scaling with their own base
    model = _write(tmp_path / "a.gguf", "gpt-oss", {"rope.freq_base": 150000.0, "rope.freq_base_swa": 10000.0})
    assert_clean_error(cli("generate", "--from-config", str(model), "-o", str(tmp_path / "a.npy")),
                       2, "rope.freq_base_swa")  # fmt: skip
    # attn_factor with linear scaling: ggml's rope multiplies cos and sin by it, transformers' linear does not
    model = _write(tmp_path / "b.gguf", "llama", {"rope.scaling.type": "linear", "rope.scaling.attn_factor": 0.5})
    assert_clean_error(cli("generate", "--from-config", str(model), "-o", str(tmp_path / "b.npy")),
                       2, "rope.scaling.attn_factor")  # fmt: skip


@pytest.mark.parametrize(
    "model_type, extra",
    [
        ("qwen2", {"attention_factor": 0.8}),
        ("deepseek_v3", {"mscale": 0.707, "mscale_all_dim": 0.707}),
        ("qwen2", {"mscale": 1.0, "mscale_all_dim": 0.5}),
    ],
)
def test_the_gguf_view_of_a_yarn_config_reads_back_as_the_config(cli, tmp_path, model_type, extra):
    # info --as gguf writes the keys llama.cpp would need; read back with llama.cpp's arithmetic they give the
    # config's own table (the attn_factor key multiplies YaRN's 1 + 0.1·ln(factor), llama-context.cpp)
    import json

    config = {"model_type": model_type, "hidden_size": HIDDEN, "num_attention_heads": HEADS, "head_dim": ROT,
              "max_position_embeddings": 128, "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0,
              "factor": 4.0, "original_max_position_embeddings": 32, **extra}}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    view = cli("info", str(tmp_path / "config.json"), "--as", "gguf")
    assert view.code == 0, view.stderr
    (tmp_path / "view.json").write_bytes(view.stdout)
    tables = []
    for source in ("config.json", "view.json"):
        out = tmp_path / f"{source}.npy"
        result = cli("generate", "--from-config", str(tmp_path / source), "-o", str(out), "--part", "cos")
        assert result.code == 0, result.stderr
        tables.append(np.load(out))
    np.testing.assert_allclose(tables[1], tables[0], rtol=0, atol=2.0**-20)
