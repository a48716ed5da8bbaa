"""Names with braces (file names, tensor names, config strings, option values) reach the terminal as they are.

Messages are templates whose ``{rows}`` placeholders the CLI spells as flags (``--rows``); text from
outside enters them through :func:`pecli.text.literal`, so ``{rows}.npy`` is never ``--rows.npy``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

import pecli
from pecli.errors import Message, ParameterError, did_you_mean, name_parameters
from pecli.text import literal, literal_repr, printable

NAMES = ["{rows}", "{key=1}", "{len}", "{{x}}", "}{"]


def _table(base: float = 10000.0) -> np.ndarray:
    return pecli.encode("sinusoidal", length=16, dim=8, base=base).astype(np.float32)


def _one_line_error(result, code: int = 2) -> str:
    assert result.code == code, (result.code, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pecli: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("name", NAMES)
def test_literal_text_reads_as_it_is_beside_real_placeholders(name):
    note = Message(f"{literal(name)}.npy: {{rows}} and {{key={literal_repr(name)}}}")
    assert note.spelled(lambda parameter: "--" + parameter) == f"{name}.npy: --rows and --key {name!r}"
    assert str(note) == f"{name}.npy: rows and key={name!r}"
    error = ParameterError(f"no tensor {literal_repr(name)}", hint=did_you_mean(name + "x", [name, "pe"]))
    assert error.spelled(lambda parameter: "--" + parameter) == (
        f"no tensor {name!r} (did you mean {name!r}? valid: {name}, pe)"
    )
    assert printable(literal(name)) == name


def test_the_stand_in_characters_in_a_name_are_no_braces():
    odd = "\ue07brows\ue07d"  # a name holding the private-use characters literal() writes for braces
    assert name_parameters(literal(odd), lambda parameter: "--" + parameter) == "\\ue07brows\\ue07d"


@pytest.mark.parametrize("name", NAMES)
def test_info_identify_distance_and_missing_files(cli, tmp_path, name):
    path = tmp_path / f"{name}.npy"
    np.save(path, _table())
    found = cli("identify", str(path))
    assert found.code == 0, found.stderr
    assert found.out.splitlines()[0].startswith(f"{path.name}: 16 × 8")
    assert f"{path}: 1 tensor" in cli("info", str(path)).out
    distance = cli("distance", str(path), "--terminal")
    assert distance.code == 0, distance.stderr
    assert str(path.name) in distance.out
    missing = _one_line_error(cli("identify", str(tmp_path / f"{name}-gone.npy")))
    assert f"no such file: '{tmp_path / f'{name}-gone.npy'}'" in missing
    keyed = _one_line_error(cli("identify", str(path), "--key", name))
    assert f"{path} holds one unnamed table, so no tensor is called {name!r}" in keyed


@pytest.mark.parametrize("name", NAMES)
def test_tensor_names_in_listings_notes_and_key_errors(cli, tmp_path, name):
    path = tmp_path / f"{name}.safetensors"
    save_file({f"{name}a": _table(), "zz": _table(500.0)}, str(path))
    info = cli("info", str(path))
    assert info.code == 0 and f"  {name}a " in info.out, info.stderr
    choose = _one_line_error(cli("identify", str(path)))
    assert f"{path} holds 2 tensors; choose one with --key" in choose  # a real placeholder still spelled
    assert f"{name + 'a'!r} [16, 8]" in choose
    plotted = cli("plot", str(path), "--key", name, "--terminal")
    assert plotted.code == 0, plotted.stderr
    assert f"--key {name!r} selects the tensor {name + 'a'!r}" in plotted.stderr
    unknown = _one_line_error(cli("distance", str(path), "--key", name + "q"))
    assert f"has no tensor {name + 'q'!r}" in unknown and f"did you mean {name + 'a'!r}? valid: zz, {name}a" in unknown
    resampled = _one_line_error(cli("resample", str(path), "--len", "32", "-o", str(tmp_path / "r.npy")))
    assert f"{name + 'a'!r} [16, 8]" in resampled
    assert not (tmp_path / "r.npy").exists()


@pytest.mark.parametrize("name", NAMES)
def test_compare_names_both_files(cli, tmp_path, name):
    left, right = tmp_path / f"{name}.npy", tmp_path / f"{name}b.npy"
    np.save(left, _table())
    np.save(right, _table(500.0))
    result = cli("compare", str(left), str(right))
    assert result.code == 1, result.stderr
    assert f"A: {left.name} — 16 × 8 float32" in result.out
    assert f"B: {right.name} — 16 × 8 float32" in result.out


@pytest.mark.parametrize("name", NAMES)
def test_generate_output_paths(cli, tmp_path, name):
    written = cli("generate", "sinusoidal", "--d", "8", "--len", "4", "-o", str(tmp_path / f"{name}.npy"))
    assert written.code == 0 and f"wrote {tmp_path / f'{name}.npy'}: 4 × 8" in written.stderr, written.stderr
    missing = tmp_path / name / "pe.npy"
    error = _one_line_error(cli("generate", "sinusoidal", "--d", "8", "--len", "4", "-o", str(missing)), code=3)
    assert f"directory '{tmp_path / name}' does not exist (create it first: mkdir -p {tmp_path / name})" in error
    (tmp_path / f"{name}dir").mkdir()
    error = _one_line_error(
        cli("generate", "sinusoidal", "--d", "8", "--len", "4", "-o", str(tmp_path / f"{name}dir")), code=3
    )
    assert f"output '{tmp_path / f'{name}dir'}' is a directory" in error


@pytest.mark.parametrize("name", ["{base}", "{rows=1}", "}{"])
def test_config_strings(cli, tmp_path, name):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": name}))
    error = _one_line_error(cli("generate", "--from-config", str(config), "-o", str(tmp_path / "o.safetensors")))
    assert f"(model_type {name!r}) has no position settings" in error
    sizes = {"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32}
    config.write_text(json.dumps({"model_type": "llama", **sizes, "rope_scaling": {"rope_type": name}}))
    error = _one_line_error(cli("generate", "--from-config", str(config), "-o", str(tmp_path / "o.safetensors")))
    assert f"unknown rope_type {name!r}" in error
    config.write_text(json.dumps({"model_type": name, **sizes, "rope_theta": 10000.0}))
    described = cli("info", str(config))
    assert described.code == 0 and f"model_type {name}" in described.out, described.stderr
