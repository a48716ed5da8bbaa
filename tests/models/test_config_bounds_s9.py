"""Absurd rope scaling values in a config.json or a rope spec are refused naming the field (issue 30, session 9).

GGUF files gained the bound first (factor × original context ≤ 2^31 − 1, llama.cpp's 32-bit ``llama_pos``);
config.json and specs now share the one rule, :func:`pecli.schemes.rope_scaling.stretches_past_last_position`.
Each test fails on the code before it: exit 0 with cos of ±71.9 or 1e308, or a run of numpy warnings.
"""

from __future__ import annotations

import json

import pytest

from pecli.schemes.rope_scaling import LAST_POSITION, stretches_past_last_position
from tests.conftest import run_in_process

BASE = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_attention_heads": 2,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}
LONGROPE = {
    "rope_type": "longrope",
    "factor": 4.0,
    "original_max_position_embeddings": 1024,
    "short_factor": [1.0] * 16,
    "long_factor": [2.0] * 16,
}

CASES = [
    # (rope_scaling, the field named, what the message says); before: exit 0 with the value shown
    ({**YARN, "factor": 1e308}, "rope_scaling.factor = 1e+308", "of 1,024 positions 1e+308-fold"),  # cos ±71.9
    ({**YARN, "factor": 1e10}, "rope_scaling.factor = 1e+10", "past the last position"),  # cos ±3.3
    ({"rope_type": "linear", "factor": 1e308}, "rope_scaling.factor = 1e+308", "positions 1e+308-fold"),
    ({"rope_type": "dynamic", "factor": 1e10}, "rope_scaling.factor = 1e+10", "max_position_embeddings of 4,096"),
    ({**LONGROPE, "factor": 1e308}, "rope_scaling.factor = 1e+308", "past the last position"),  # cos ±10.2
    ({**YARN, "factor": 1e-308}, "rope_scaling.factor = 1e-308", "multiplies the frequencies by 1e+308"),
    ({**YARN, "attention_factor": 1e308}, "rope_scaling.attention_factor gives", "past float32's largest"),
    ({**LONGROPE, "attention_factor": 1e308}, "rope_scaling.attention_factor gives", "so its table is infinite"),
    ({**YARN, "mscale": 1e308, "mscale_all_dim": 1.0}, "rope_scaling.mscale/rope_scaling.mscale_all_dim", "1.2175"),
    ({**LONGROPE, "short_factor": [1e308] * 16}, "rope_scaling.short_factor = 1e+308", "1,024 positions"),
    # before: exit 2 with a dozen "pecli: warning: overflow encountered in multiply" lines and no field named
    ({**LONGROPE, "short_factor": [1e-308] * 16}, "rope_scaling.short_factor = 1e-308", "by 1e+308"),
    ({"rope_type": "linear", "factor": 1e-308}, "rope_scaling.factor = 1e-308", "by 1e+308"),
]


@pytest.mark.parametrize(
    ("scaling", "field", "said"), CASES, ids=[f"{c[0]['rope_type']}-{i}" for i, c in enumerate(CASES)]
)
@pytest.mark.parametrize("command", ["generate", "compare", "plot"])
def test_an_absurd_scaling_value_in_a_config_is_refused_naming_its_field(tmp_path, scaling, field, said, command):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**BASE, "rope_scaling": scaling}))
    out = tmp_path / "x.safetensors"
    if command == "generate":
        result = run_in_process("generate", "--from-config", str(config), "--len", "8", "-o", str(out))
    elif command == "compare":
        result = run_in_process("compare", str(config), "rope", "--len", "8")
    else:
        result = run_in_process("plot", str(config), "--len", "8", "--width", "40", "--height", "10")
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"config.json: {field}" in result.stderr
    assert said in result.stderr
    assert "warning" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--scaling", "yarn", "--factor", "1e308", "--original-max-position", "4096"], "--factor = 1e+308 stretches"),
        (["--scaling", "linear", "--factor", "1e-308"], "--factor = 1e-308 multiplies the frequencies by 1e+308"),
        (
            ["--scaling", "yarn", "--factor", "4", "--original-max-position", "4096", "--attention-factor", "1e308"],
            "--attention-factor gives an attention factor of 1e+308",
        ),
    ],
    ids=["yarn-factor", "linear-tiny-factor", "attention-factor"],
)
def test_an_absurd_scaling_value_on_the_command_line_is_refused(tmp_path, args, said):
    out = tmp_path / "x.npy"
    result = run_in_process("generate", "rope", *args, "--d", "64", "--len", "8", "--part", "cos", "-o", str(out))
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert said in result.stderr
    assert not out.exists()


def test_a_spec_names_the_spec_parameter():
    result = run_in_process("compare", "rope:scaling=yarn,factor=1e308,original_max_position=4096", "rope", "--d", "8")
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert "factor = 1e+308 stretches the original_max_position of 4,096 positions" in result.stderr


def test_real_models_factors_stay_inside_the_bound(tmp_path):
    """Llama 3.1's 8 over 8192, DeepSeek-V3's YaRN 40 over 4096, and a compression by 0.5, are tables."""
    assert not stretches_past_last_position(8.0, 8192)
    assert not stretches_past_last_position(40.0, 4096)
    assert not stretches_past_last_position(0.5, 4096)
    assert stretches_past_last_position(LAST_POSITION / 4096 * 1.001, 4096)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**BASE, "rope_scaling": {**YARN, "factor": 40.0, "attention_factor": 1.0}}))
    result = run_in_process(
        "generate", "--from-config", str(config), "--len", "8", "-o", str(tmp_path / "x.safetensors")
    )
    assert result.code == 0, result.stderr


@pytest.mark.parametrize(
    ("scaling", "said"),
    [
        ({**YARN, "factor": 1e308}, "rope_scaling.factor = 1e+308 stretches the rope_scaling.original_max_position"),
        ({**YARN, "attention_factor": 1e308}, "rope_scaling.attention_factor gives an attention factor of 1e+308"),
    ],
    ids=["factor", "attention-factor"],
)
def test_info_describes_the_config_and_warns_that_its_table_is_refused(tmp_path, scaling, said):
    """info said "attention factor 1e+308 (cos and sin are multiplied by it)" with no word that generate refuses."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**BASE, "rope_scaling": scaling}))
    result = run_in_process("info", str(config), "--json")
    assert result.code == 0, result.stderr
    warnings = json.loads(result.stdout)["warnings"]
    assert [w for w in warnings if w.startswith(said) and w.endswith("generate, compare and plot refuse this table")]
