"""Causes the session-12 sweep of ``compare ENGINE config.json`` (issue 30) named wrongly or not at all, on families and
mistakes earlier sweeps did not cover: an engine's cos and sin built from transformers' own inverse frequencies
(``ROPE_INIT_FUNCTIONS``, the rotary modules) with one mistake. Each asserted cause failed before; the right tables
are guarded against a false alarm."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.analysis.test_diagnosis_s11 import GEMMA3
from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LLAMA31 = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 4,
           "max_position_embeddings": 131072, "rope_theta": 500000.0,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}  # fmt: skip
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
               "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "kv_lora_rank": 512,
               "q_lora_rank": 1536, "max_position_embeddings": 163840, "rope_theta": 10000.0,
               "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                                "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}}  # fmt: skip
PHI3 = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0 + 0.2 * i / 47 for i in range(48)],
                         "long_factor": [1.0 + 40.0 * (i / 47) ** 2 for i in range(48)]}}  # fmt: skip
GEMMA2 = {"model_type": "gemma2", "hidden_size": 1024, "num_attention_heads": 4, "num_key_value_heads": 2,
          "head_dim": 256, "max_position_embeddings": 8192, "rope_theta": 10000.0}  # fmt: skip
QWEN2_VL = {"model_type": "qwen2_vl_text", "hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 32768, "rope_theta": 1000000.0,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}  # fmt: skip


def _transformers_config(config: dict, class_name: str) -> object:
    # a deep copy: transformers writes its own keys into the rope_scaling dict it is given
    return getattr(transformers, class_name)(**copy.deepcopy({k: v for k, v in config.items() if k != "model_type"}))


def _default_inv_freq(base: float, dim: int) -> np.ndarray:
    """transformers' default inverse frequencies (float32, as float64) of ``base`` over ``dim`` columns."""
    return (1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))).double().numpy()


def _init(config: dict, class_name: str, length: int) -> tuple[np.ndarray, float]:
    """transformers' inv_freq and attention factor for ``config`` at a sequence of ``length`` positions."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    built = _transformers_config(config, class_name)
    rope_type = built.rope_parameters["rope_type"]  # type: ignore[attr-defined]
    inv_freq, attention = ROPE_INIT_FUNCTIONS[rope_type](built, "cpu", seq_len=length)
    return inv_freq.double().numpy(), float(attention)


def compare_engine_pair(tmp_path: Path, config: dict, cos: np.ndarray, sin: np.ndarray, dtype: str,
             layer_type: str | None = None) -> tuple[int, list[dict]]:  # fmt: skip
    """``compare`` of an engine's cos and sin pair (held in ``dtype``) with the config, engine first."""
    cos, sin = (torch.tensor(t).to(getattr(torch, dtype)).float().numpy() for t in (cos, sin))
    engine, path = tmp_path / "engine.safetensors", tmp_path / "config.json"
    save_file({"cos": cos, "sin": sin}, str(engine))
    path.write_text(json.dumps(config))
    extra = ["--layer-type", layer_type] if layer_type else []
    result = run_in_process("compare", str(engine), str(path), "--json", *extra)
    assert result.code in (0, 1), result.stderr
    return result.code, json.loads(result.out)["diagnosis"]


def _halves(inv_freq: np.ndarray, length: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """transformers' rotate_half cos and sin (cat(freqs, freqs)) times ``scale``."""
    angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
    return scale * np.hstack([np.cos(angles)] * 2), scale * np.hstack([np.sin(angles)] * 2)


@pytest.mark.parametrize(
    ("config", "layer_type", "base", "dim", "dtype"),
    [(LLAMA31, None, 500000.0 / 8, 128, "bfloat16"), (GEMMA3, "full_attention", 1e6 / 8, 256, "float32"),
     (DEEPSEEK_V3, None, 10000.0 / 40, 64, "float32")],
    ids=["llama3", "gemma3-linear", "deepseek-yarn"],
)  # fmt: skip
def test_the_factor_applied_to_the_base_is_named(
    tmp_path: Path, config: dict, layer_type: str | None, base: float, dim: int, dtype: str
) -> None:
    # the engine divides the base by the scaling factor and scales nothing else: was "no known cause"; DeepSeek's
    # table (attention factor 1: mscale = mscale_all_dim) must not be said to keep a factor on cos and sin
    code, found = compare_engine_pair(tmp_path, config, *_halves(_default_inv_freq(base, dim), 256), dtype, layer_type)
    assert code == 1 and [item["code"] for item in found][:1] == ["unscaled"]
    figures = found[0]["figures"]
    assert figures["a_base"] == pytest.approx(base) and "factor" not in figures
    factor = config["rope_scaling"]["factor"]
    assert figures["base_relation"] == f"divided by the factor {factor:g}"
    assert f"(B's base divided by the factor {factor:g}: the factor applied to the base instead" in found[0]["message"]
    assert "kept" not in found[0]["message"]


def test_a_long_bfloat16_pair_with_cos_and_sin_swapped_is_named(tmp_path: Path) -> None:
    # Gemma 2 (head_dim 256) at 1024 positions in bfloat16: the column matching gave up (its slow columns alike
    # beyond its tries) and the diagnosis was empty
    cos, sin = _halves(_default_inv_freq(10000.0, 256), 1024)
    code, found = compare_engine_pair(tmp_path, GEMMA2, sin, cos, "bfloat16")
    assert code == 1 and [item["code"] for item in found][:1] == ["parts_swapped"]
    assert found[0]["figures"]["permutation"][:2] == [256, 257] and found[0]["figures"]["shift"] == 0


def test_longrope_with_its_original_context_ignored_is_named_with_the_attention_factor(tmp_path: Path) -> None:
    # past original_max_position_embeddings (4100 > 4096) an engine that ignores it keeps the short factors and,
    # max / original being 1 to it, no attention factor: two changes at once, "no known cause" before
    short, _ = _init(PHI3, "Phi3Config", 100)
    _, attention = _init(PHI3, "Phi3Config", 4100)
    code, found = compare_engine_pair(tmp_path, PHI3, *_halves(short, 4100), "bfloat16")
    assert code == 1 and [item["code"] for item in found][:1] == ["longrope_short_factor"]
    figures = found[0]["figures"]
    assert figures["factor"] == pytest.approx(1.0 / attention, rel=1e-9)
    assert figures["matches"] == "1 / the attention factor (not applied)"
    assert "the short factor set where the long one applies, and its cos and sin times 0.84" in found[0]["message"]


@pytest.mark.parametrize("length", [4096, 4100])
def test_longrope_right_tables_on_either_side_of_the_original_context_raise_no_alarm(
    tmp_path: Path, length: int
) -> None:
    inv_freq, attention = _init(PHI3, "Phi3Config", length)  # the short set up to 4096, the long one past it
    assert compare_engine_pair(tmp_path, PHI3, *_halves(inv_freq, length, attention), "bfloat16") == (0, [])


def test_qwen2_vl_text_positions_raise_no_alarm(tmp_path: Path) -> None:
    # M-RoPE's three sections at one text position each: transformers' own cos and sin are plain RoPE's
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding

    rotary = Qwen2VLRotaryEmbedding(_transformers_config(QWEN2_VL, "Qwen2VLTextConfig"))
    positions = torch.arange(512)[None, None, :].expand(3, 1, -1)
    cos, sin = (t[0].double().numpy() for t in rotary(torch.zeros(1, dtype=torch.float32), positions))
    assert compare_engine_pair(tmp_path, QWEN2_VL, cos, sin, "float32") == (0, [])
