"""float32 arithmetic and a base past float32's range (issue 30): a numpy overflow warning, then a vague error."""

from __future__ import annotations

from pathlib import Path

import pytest

from pecli.errors import ParameterError
from pecli.schemes.arithmetic import inverse_power_frequencies32
from tests.conftest import run_in_process


def test_a_base_float32_cannot_hold_is_named_with_its_fix(tmp_path: Path) -> None:
    out = tmp_path / "x.npy"
    for args in (
        ("rope:base=1e300,part=cos,arithmetic=float32",),
        ("rope", "--base", "1e300", "--part", "cos", "--arithmetic", "bfloat16"),
    ):
        result = run_in_process("generate", *args, "--d", "8", "--len", "4", "-o", str(out))
        assert result.code == 2 and not out.exists()
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "warning" not in result.stderr, result.stderr
        assert "float32 arithmetic cannot hold" in lines[0] and "base" in lines[0] and "float64" in lines[0]


def test_the_largest_base_float32_holds_still_computes() -> None:
    frequencies = inverse_power_frequencies32(4, 3.0e38)
    assert frequencies[0] == 1.0 and 0.0 < frequencies[1] < 1e-18
    with pytest.raises(ParameterError, match="cannot hold"):
        inverse_power_frequencies32(4, 3.5e38)


def test_info_does_not_say_transformers_never_reads_mrope_section(tmp_path: Path) -> None:
    """Qwen2VLRotaryEmbedding splits its frequencies by rope_parameters.mrope_section (transformers exempts it from
    rope validation for that reason): info warned that transformers never reads it."""
    import json

    import transformers.models.qwen2_vl.modeling_qwen2_vl as qwen2_vl

    assert "mrope_section" in Path(qwen2_vl.__file__).read_text()
    text = {"model_type": "qwen2_vl_text", "hidden_size": 256, "num_attention_heads": 2, "max_position_embeddings": 256,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]}}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2_vl", "text_config": text}))
    result = run_in_process("info", str(tmp_path))
    assert result.code == 0, result.stderr
    assert "never reads" not in result.out + result.stderr
    text["rope_parameters"]["bogus_key"] = 1  # a key nothing reads is still named
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2_vl", "text_config": text}))
    assert "bogus_key: transformers' default RoPE never reads it" in run_in_process("info", str(tmp_path)).out


def test_dynamic_ntk_past_the_float_range_does_not_suggest_the_factor_given(tmp_path: Path) -> None:
    out = tmp_path / "d.npy"
    args = ("generate", "rope", "--part", "cos", "--scaling", "dynamic", "--factor", "4", "--base", "1.7e308")
    result = run_in_process(*args, "--d", "8", "--len", "64", "--original-max-position", "16", "-o", str(out))
    assert result.code == 2 and not out.exists()
    assert "e.g. --factor 4" not in result.stderr and "smaller --base" in result.stderr, result.stderr
