"""config.json is untrusted input (issue 30): hostile values, files and nesting give exit 2 naming the field.

The subject is the error printed and the exit code, so pecli runs in process (the real entry point, argv
parsing included), except where reading must not block or fill memory (/dev/zero, a FIFO): those run as real
processes, under a timeout."""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_in_process, run_pecli
from tests.paths import DATA

MODELS = DATA / "models"
CONFIGS = sorted(p.parent.name for p in MODELS.glob("*/config.json") if not p.parent.name.startswith("tiny"))

HOSTILE = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -1, 0, 0.5, 1.0, 2**31, 10**300, True, None, "", "4", [], {}]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.sampled_from(["alibi", "rope_type", "factor"]), st.integers(-2, 2), max_size=2),
    st.text(max_size=5),
)


def _fields(name: str) -> list[tuple[str, ...]]:
    config = json.loads((MODELS / name / "config.json").read_text())
    paths = [(key,) for key in config]
    paths += [(key, inner) for key, value in config.items() if isinstance(value, dict) for inner in value]
    return paths


CASES = [(name, path) for name in CONFIGS for path in _fields(name)]


@pytest.fixture(scope="module")
def generate_command():
    """``generate``'s click command built once for the module's examples, not once per run.

    Typer turns the app into a click command on every run (its signatures read again: 30 ms, most of
    an example's time); the command is the same each time, and what runs under it is the same.
    """
    import typer.main

    built = {}
    real = typer.main.get_command

    def once(app):
        names = tuple(info.name for info in app.registered_commands)
        if names != ("generate",):
            return real(app)
        if names not in built:
            built[names] = real(app)
        return built[names]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(typer.main, "get_command", once)
        yield


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=st.sampled_from(CASES), value=HOSTILE)
def test_any_value_in_any_field_is_exit_0_or_a_one_line_error_naming_it(
    cli, generate_command, case, value, tmp_path_factory
):
    name, path = case
    config = json.loads((MODELS / name / "config.json").read_text())
    holder = config
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    file = tmp_path_factory.mktemp("c") / "config.json"
    file.write_text(json.dumps(config, allow_nan=True))
    result = cli("generate", "--from-config", str(file), "--len", "3", "--json")
    assert result.code in (0, 2), (path, value, result.stderr)
    if result.code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert not any(flag in lines[0] for flag in ("--base", "--d ", "--factor", "--freq-shift", "--mscale"))


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        (
            "llama3",
            '"max_position_embeddings": 1e400',
            "max_position_embeddings: expected a positive integer, got 1e400",
        ),
        ("llama3", '"max_position_embeddings": NaN', "max_position_embeddings: expected a positive integer, got NaN"),
        ("llama3", '"max_position_embeddings": Infinity', "max_position_embeddings: expected a positive integer"),
        ("mpt", '"attn_config": [1]', "attn_config: expected an object, got [1]"),
        ("mpt", '"attn_config": "x"', "attn_config: expected an object, got 'x'"),
        (
            "llama3",
            '"head_dim": 15',
            "config.json: head_dim gives 15 rotary columns, an odd width: transformers computes 8 frequencies over 15"
            " and writes 16 cos/sin columns, but the head has 15",
        ),
    ],
)
def test_hostile_fields_are_named(tmp_path, name, change, expected):
    key = change.split(":")[0].strip('"')
    text = (MODELS / name / "config.json").read_text()
    config = json.loads(text)
    config.pop(key, None)
    body = json.dumps(config)[:-1] + ", " + change + "}"
    (tmp_path / "config.json").write_text(body)
    result = run_in_process("generate", "--from-config", str(tmp_path / "config.json"), "--len", "4", "--json")
    assert result.code == 2, result.stderr
    assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"rope_theta": 1.0}, "/c.json: rope_parameters.rope_theta must be a finite number greater than 1"),
        ({"factor": 0}, "/c.json: rope_parameters.factor must be a finite number greater than 0"),
    ],
)
def test_scheme_errors_name_the_config_field_not_a_flag(cli, tmp_path, change, expected):
    config = json.loads((MODELS / "llama3" / "config.json").read_text())
    config["rope_parameters"].update(change)
    (tmp_path / "c.json").write_text(json.dumps(config))
    result = cli("generate", "--from-config", str(tmp_path / "c.json"), "--len", "4", "--json")
    assert result.code == 2 and expected in result.stderr and "--" not in result.stderr.split("(")[0]
    assert "config.json" not in result.stderr  # the file given is named, not one the user never gave


def test_absurd_sizes_are_said_in_human_units(cli, tmp_path):
    config = json.loads((MODELS / "llama3" / "config.json").read_text())
    config.update(max_position_embeddings=2**31 - 1, head_dim=2**20)
    (tmp_path / "c.json").write_text(json.dumps(config))
    result = cli("generate", "--from-config", str(tmp_path / "c.json"))
    assert result.code == 2
    assert "/c.json asks for a table of 16.0 PiB (max_position_embeddings 2147483647, head_dim 1048576)" in (
        result.stderr
    )


def test_deep_nesting_is_refused(tmp_path):
    (tmp_path / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "shallow.json").write_text('{"a":' * 100 + "1" + "}" * 100)
    for file, expected in (("config.json", "nests too deeply"), ("shallow.json", "nests deeper than 64 levels")):
        result = run_in_process("generate", "--from-config", str(tmp_path / file), "-o", str(tmp_path / "x.npy"))
        assert result.code == 2 and expected in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.npy").exists()


@pytest.mark.skipif(not os.path.exists("/dev/zero") or not hasattr(os, "mkfifo"), reason="POSIX only")
def test_dev_zero_fifo_and_links_are_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").symlink_to("/dev/zero")
    cases = [
        (["generate", "--from-config", "/dev/zero"], "/dev/zero is a character device, not a regular file"),
        (["generate", "--from-config", str(tmp_path / "fifo.json")], "fifo.json is a FIFO, not a regular file"),
        (["generate", "--from-config", str(model)], "config.json is a character device, not a regular file"),
        (["info", str(model)], "config.json is a character device, not a regular file"),
    ]
    for args, expected in cases:
        result = run_pecli(*args, timeout=30)
        assert result.code == 2 and expected in result.stderr, result.stderr


def test_oversized_config_is_refused(tmp_path):
    file = tmp_path / "config.json"
    file.write_text('{"model_type": "bloom", "n_head": 4, "pad": "' + "x" * (17 << 20) + '"}')
    result = run_in_process("generate", "--from-config", str(file), "--len", "4")
    assert result.code == 2 and "larger than 16 MiB" in result.stderr


_PER_LAYER = {
    "model_type": "gemma3_text",
    "head_dim": 16,
    "max_position_embeddings": 128,
    "layer_types": ["sliding_attention", "full_attention"],
    "rope_parameters": {
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000},
    },
}


@pytest.mark.parametrize("layer_types", ["full_attention", ["full_attention", 3], {"0": "full_attention"}])
@pytest.mark.parametrize("picked", [[], ["--layer-type", "full_attention"]])
def test_layer_types_of_the_wrong_json_type_are_named(cli, tmp_path, layer_types, picked):
    """layer_types as a string, with a number in it, or as an object: was ignored (a table written)."""
    (tmp_path / "c.json").write_text(json.dumps(dict(_PER_LAYER, layer_types=layer_types)))
    result = cli(
        "generate",
        "--from-config",
        str(tmp_path / "c.json"),
        "--len",
        "4",
        *picked,
        "-o",
        str(tmp_path / "t.safetensors"),
    )
    assert result.code == 2, result.stderr
    assert "c.json: layer_types: expected a list of layer-type names" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "t.safetensors").exists()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_PER_LAYER))
    assert cli("generate", "--from-config", str(good), "--len", "4", *picked, "--json").code == 0


def test_a_longrope_context_of_one_is_named_not_a_division_by_zero(cli, tmp_path):
    """Found by the property test above: LongRoPE's attention factor √(1 + ln f / ln original context)
    divided by ln 1 = 0 for original_max_position_embeddings 1 (internal error, exit 3)."""
    config = json.loads((MODELS / "phi3-longrope" / "config.json").read_text())
    config["original_max_position_embeddings"] = 1
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = cli("generate", "--from-config", str(tmp_path / "config.json"), "--len", "3", "--json")
    assert result.code == 2, result.stderr
    assert "original_max_position_embeddings must be at least 2 for longrope, got 1" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_dynamic_factor_too_large_for_its_base_is_named(cli, tmp_path):
    """A sweep of every field with boundary values: factor 10**300 made dynamic NTK's recomputed base
    round to 0 (factor·L/L0 − (factor − 1)), then 'math domain error', exit 3."""
    config = json.loads((MODELS / "llama-dynamic" / "config.json").read_text())
    config["rope_parameters"]["factor"] = 10**300
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = cli("generate", "--from-config", str(tmp_path / "config.json"), "--len", "3", "--json")
    assert result.code == 2, result.stderr
    # session 9: refused earlier by the one bound on scaling factors (factor × context ≤ 2^31 − 1)
    assert "rope_parameters.factor = 1e+300 stretches the max_position_embeddings of" in result.stderr
