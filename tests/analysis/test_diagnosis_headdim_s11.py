"""Two engine mistakes the session-11 sweep of ``compare ENGINE config.json`` named wrongly or not at all (issue 30):
the head width taken as hidden_size / num_attention_heads where the config sets head_dim (was named a partial rotary
the config does not have), and a Gemma 3 layer type computed with the other layer type's rope settings (was "no
known cause"). Engines' cos and sin are built from transformers' own inv_freq."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.analysis.diagnosis import ConfigFacts, Reference, diagnose_difference
from pecli.models.from_config import config_facts
from tests.analysis.test_diagnosis_s11 import GEMMA3
from tests.analysis.test_diagnosis_sweep_s12 import compare_engine_pair

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

QWEN3 = {"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
         "head_dim": 128, "max_position_embeddings": 40960, "rope_theta": 1e6}  # fmt: skip
PARTIAL = ("partial_rotary_ignored", "partial_rotary_assumed")


def _gemma_inv_freq(layer_type: str, **changes: object) -> np.ndarray:
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    config = {k: v for k, v in {**GEMMA3, **changes}.items() if k != "model_type"}
    return getattr(Gemma3RotaryEmbedding(Gemma3TextConfig(**config)), f"{layer_type}_inv_freq").double().numpy()


def _qwen_inv_freq(**changes: object) -> np.ndarray:
    from transformers import Qwen3Config
    from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding

    config = {k: v for k, v in {**QWEN3, **changes}.items() if k != "model_type"}
    return Qwen3RotaryEmbedding(Qwen3Config(**config)).inv_freq.double().numpy()


def _compare(tmp_path: Path, config: dict, inv_freq: np.ndarray, layer_type: str | None = None,
             length: int = 256, dtype: str = "float32") -> tuple[int, list[dict]]:  # fmt: skip
    """``compare`` of an engine's rotate_half cos and sin pair (``dtype``) with the config (and layer type)."""
    angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
    cos, sin = (np.hstack([f(angles)] * 2) for f in (np.cos, np.sin))
    return compare_engine_pair(tmp_path, config, cos, sin, dtype, layer_type)


def test_gemma3_head_dim_from_hidden_size_is_named_not_a_partial_rotary(tmp_path: Path) -> None:
    # hidden_size / num_attention_heads = 1152 / 4 = 288 where the config sets head_dim 256: was
    # "partial rotary 0.889 ignored", though the config has no partial rotary (either layer type: the sweep)
    layer_type = "sliding_attention"
    wrong = _gemma_inv_freq(layer_type, head_dim=1152 // 4)
    assert len(wrong) == 144  # transformers at head_dim 288: 144 frequencies
    code, found = _compare(tmp_path, GEMMA3, wrong, layer_type, length=64)
    codes = [item["code"] for item in found]
    assert code == 1 and codes[0] == "head_dim_from_hidden_size" and not set(codes) & set(PARTIAL)
    figures = found[0]["figures"]
    assert (figures["config_head_dim"], figures["engine_head_dim"]) == (256, 288)
    assert figures["derived_from"] == "hidden_size/num_attention_heads = 1152/4"
    assert "A's head_dim is hidden_size / num_attention_heads = 1152 / 4 = 288" in found[0]["message"]
    assert "head_dim 256" in found[0]["message"]


def test_qwen3_head_dim_from_hidden_size_narrower_is_named_not_a_partial_rotary(tmp_path: Path) -> None:
    # 1024 / 16 = 64 where head_dim is 128: was "partial rotary 0.5 assumed" (bfloat16, as engines hold it)
    wrong = _qwen_inv_freq(head_dim=64)
    code, found = _compare(tmp_path, QWEN3, wrong, length=64, dtype="bfloat16")
    codes = [item["code"] for item in found]
    assert code == 1 and codes[0] == "head_dim_from_hidden_size" and not set(codes) & set(PARTIAL)
    assert (found[0]["figures"]["config_head_dim"], found[0]["figures"]["engine_head_dim"]) == (128, 64)


def test_a_config_without_head_dim_still_names_a_partial_rotary(tmp_path: Path) -> None:
    # Llama without head_dim: the head width is hidden_size / num_attention_heads (512 / 8 = 64), so an engine's
    # 128-column table is no head_dim mistake; the partial-rotary reading stands
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 4096,
              "rope_theta": 500000.0}  # fmt: skip
    wide = LlamaConfig(**{k: v for k, v in config.items() if k != "model_type"}, head_dim=128)
    code, found = _compare(tmp_path, config, LlamaRotaryEmbedding(wide).inv_freq.double().numpy(), length=64)
    assert code == 1 and found[0]["code"] == "partial_rotary_ignored"


def test_gemma3_sliding_layer_with_the_full_layers_settings_is_named(tmp_path: Path) -> None:
    # the sliding layer computed with base 1e6 and linear factor 8: was "no known cause"
    code, found = _compare(tmp_path, GEMMA3, _gemma_inv_freq("full_attention"), "sliding_attention")
    assert code == 1 and found[0]["code"] == "layer_type_settings"
    figures = found[0]["figures"]
    assert (figures["layer_type"], figures["settings_of"]) == ("sliding_attention", "full_attention")
    assert figures["settings"] == {"base": 1e6, "scaling": "linear", "factor": 8.0}
    assert figures["layer_settings"] == {"base": 10000.0, "scaling": None, "factor": None}
    assert figures["residual"] < 1e-5  # the full layers' settings reproduce the engine to float32 rounding
    assert found[0]["message"].startswith("A was computed with full_attention's rope settings (base 1e+06")


def test_gemma3_full_layer_with_the_sliding_layers_settings_names_the_layer_type_first(tmp_path: Path) -> None:
    code, found = _compare(tmp_path, GEMMA3, _gemma_inv_freq("sliding_attention"), "full_attention")
    codes = [item["code"] for item in found]
    assert code == 1 and codes[:2] == ["layer_type_settings", "unscaled"]  # the same table, both true
    assert found[0]["figures"]["settings_of"] == "sliding_attention"
    assert found[0]["figures"]["residual"] == found[1]["figures"]["residual"]


@pytest.mark.parametrize(("config", "layer_type"), [(GEMMA3, "full_attention"), (GEMMA3, "sliding_attention"),
                                                    (QWEN3, None)])  # fmt: skip
def test_the_right_tables_raise_no_alarm(tmp_path: Path, config: dict, layer_type: str | None) -> None:
    inv_freq = _gemma_inv_freq(layer_type) if layer_type else _qwen_inv_freq()
    assert _compare(tmp_path, config, inv_freq, layer_type, dtype="bfloat16") == (0, [])


def test_config_facts_read_through_a_text_config_and_only_where_the_widths_differ(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gemma3", "text_config": GEMMA3}))
    facts = config_facts(str(path), layer_type="sliding_attention")
    assert facts is not None and facts.head_dim == ("text_config.head_dim", 256)
    assert facts.hidden_over_heads == ("text_config.hidden_size/text_config.num_attention_heads", "1152/4", 288)
    assert [name for name, _ in facts.layers] == ["full_attention", "sliding_attention"]
    path.write_text(json.dumps({**QWEN3, "head_dim": 64}))  # head_dim = hidden / heads: nothing to tell apart
    agreeing = config_facts(str(path))
    assert agreeing is not None and (agreeing.head_dim, agreeing.hidden_over_heads) == (None, None)


def test_the_diagnosis_tries_no_other_layer_type_without_the_config_facts() -> None:
    import pecli

    a = np.hstack([pecli.encode("rope", 64, 16, part=part, base=10000.0, dtype="float64") for part in ("cos", "sin")])
    b = np.hstack([pecli.encode("rope", 64, 16, part=part, base=1e6, scaling="linear", factor=8.0, dtype="float64")
                   for part in ("cos", "sin")])  # fmt: skip
    layers = (("full", {"base": 1e6, "scaling": "linear", "factor": 8.0}), ("local", {"base": 10000.0}))
    reference = Reference("rope", {"base": 10000.0}, parts=("cos", "sin"))
    assert "layer_type_settings" not in [f.code for f in diagnose_difference(a, b, tolerance=1e-9, reference=reference)]
    facts = ConfigFacts(layer_type="local", layers=layers)
    found = diagnose_difference(
        a, b, tolerance=1e-9, reference=Reference("rope", {"base": 10000.0}, parts=("cos", "sin"), config=facts)
    )
    assert [f.code for f in found][:1] == ["layer_type_settings"] and found[0].figures["residual"] < 1e-12
