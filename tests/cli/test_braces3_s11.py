"""Braces in names from outside, third pass (issue 30): model directories and their configs' layer types, a
CSV cell, the Hugging Face cache's directory, probe files, scheme specs and the Python API's values.

Each message names the file, key or value exactly as it is: ``{rows}a`` is never ``--rowsa`` (a message is a
template, :func:`pecli.errors.name_parameters`), and never the private-use stand-ins :func:`pecli.text.literal`
writes (a value made literal twice, or a stand-in left unfilled).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

import pecli
from pecli.errors import ParameterError, PecliError
from pecli.text import CLOSE, OPEN
from tests.braces import NAMES
from tests.braces import one_error_line as _error


def _api_error(call, kind: type[Exception] = PecliError) -> str:
    with pytest.raises(kind) as caught:
        call()
    text = str(caught.value)
    assert OPEN not in text and CLOSE not in text, text
    return text


def _layered_config(folder, name: str, **first) -> None:
    """A config whose rope_parameters are keyed by layer type, one of them ``name + 'a'``."""
    folder.mkdir()
    layer = f"{name}a"
    (folder / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 128,
        "layer_types": [layer, "full_attention"],
        "rope_parameters": {layer: {"rope_type": "default", "rope_theta": 10000.0, **first},
                            "full_attention": {"rope_type": "default", "rope_theta": 1e6}},
    }))  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_a_config_key_under_a_layer_type_is_named_as_it_is(cli, tmp_path, name):
    folder = tmp_path / f"{name}m"
    _layered_config(folder, name, partial_rotary_factor=2)
    out = tmp_path / "o.npy"
    error = _error(cli("generate", "--from-config", str(folder), "-o", str(out)))
    config = folder / "config.json"
    assert f"{config}: rope_parameters.{name}a.partial_rotary_factor: expected a number in (0, 1], got 2.0" in error
    assert not out.exists()
    folder = tmp_path / f"{name}n"
    _layered_config(folder, name, factor="x", rope_type="linear")
    error = _error(cli("generate", "--from-config", str(folder), "-o", str(out)))
    assert f"config.json: rope_parameters.{name}a.factor: expected a finite number, got 'x'" in error


@pytest.mark.parametrize("name", NAMES)
def test_settings_of_layer_types_that_differ_name_them(cli, tmp_path, name):
    folder = tmp_path / f"{name}m"
    _layered_config(folder, name)
    error = _error(cli("info", str(folder), "--as", "hf-v4"))
    config = folder / "config.json"
    assert f"{config}: the layer types {name}a, full_attention have different rope parameters" in error


@pytest.mark.parametrize("name", NAMES)
def test_model_directory_without_a_position_table(cli, tmp_path, name):
    folder = tmp_path / f"{name}d"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 4, "n_positions": 4, "n_head": 1}))
    assert f"{folder} has no weights (model.safetensors or" in _error(cli("identify", str(folder)))
    save_file({f"h.{name}.w": np.zeros((4, 4), np.float32)}, str(folder / "model.safetensors"))
    error = _error(cli("identify", str(folder)))
    assert f"{folder} holds no 2-D position table among its weights" in error
    assert f"pecli generate --from-config {folder})" in error  # the hint's placeholder, filled with the path


@pytest.mark.parametrize("name", NAMES)
def test_csv_cell_that_is_no_number(cli, tmp_path, name):
    path = tmp_path / f"{name}t.csv"
    path.write_text("1,2\n" * 20 + f"3,{name}\n")  # past the bytes sniffed as text
    error = _error(cli("info", str(path)))
    assert f"{path} is not a .npy, .safetensors or .pt file, nor a CSV table: line 21 holds {name!r}" in error


@pytest.mark.parametrize("name", NAMES)
def test_hub_cache_directory(cli, tmp_path, monkeypatch, name):
    cache = tmp_path / f"{name}hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    error = _error(cli("info", "no-org/no-model"))
    assert f"no-org/no-model is not in the local Hugging Face cache ({cache})" in error


def _probe(cli, path, *options) -> str:
    result = cli("generate", "rope", "--d", "16", "--len", "8", *options, "--probe", "-o", str(path))
    assert result.code == 0, result.stderr
    return str(path)


@pytest.mark.parametrize("name", NAMES)
def test_probe_files_and_engine_tensors(cli, tmp_path, name):
    first = _probe(cli, tmp_path / f"{name}a.safetensors")
    longer = _probe(cli, tmp_path / f"{name}b.safetensors", "--len", "12")
    error = _error(cli("compare", first, longer))
    assert f"{name}a.safetensors and {name}b.safetensors are probes of different inputs: their positions" in error
    engine = tmp_path / "engine.safetensors"
    save_file({f"{name}x": np.zeros((2, 8, 16), np.float32), "y": np.zeros(3, np.float32)}, str(engine))
    error = _error(cli("compare", first, str(engine)))
    assert f"the engine's file holds {', '.join(sorted([f'{name}x', 'y']))}; which is the rotated q?" in error


@pytest.mark.parametrize("name", NAMES)
def test_scheme_spec_values(cli, tmp_path, name):
    out = tmp_path / "o.npy"
    error = _error(cli("generate", f"rope:layout={name}", "--len", "4", "--d", "4", "-o", str(out)))
    assert f"in spec {'rope:layout=' + name!r}: layout {name!r} is not a valid layout for scheme 'rope'" in error
    error = _error(cli("generate", "rope", "--layout", name, "--len", "4", "--d", "4", "-o", str(out)))
    assert f"--layout {name!r} is not a valid layout for scheme 'rope'" in error
    error = _error(cli("generate", f"rope:base={name}", "--len", "4", "--d", "4", "-o", str(out)))
    assert f"in spec {'rope:base=' + name!r}: base={name}: {name!r} is not a number" in error
    assert not out.exists()


@pytest.mark.parametrize("name", NAMES)
def test_api_values_named_as_given(name):
    table = np.zeros((2, 2))
    assert f"got {name!r} (pass exact=True" in _api_error(lambda: pecli.compare(table, table, exact=name))
    atol = _api_error(lambda: pecli.compare(table, table, atol=name))
    assert f"atol must be a finite number >= 0, got {name!r}" in atol
    bytes_source = _api_error(lambda: pecli.from_config(name.encode()))
    assert f"source is bytes, not a str path (pass {name!r} (the bytes decoded)" in bytes_source
    layout = _api_error(lambda: pecli.encode("rope", 4, 4, layout=name), ParameterError)
    assert f"layout {name!r} is not a valid layout for scheme 'rope'" in layout
    base = _api_error(lambda: pecli.encode("rope", 4, 4, base=name), ParameterError)
    assert f"base must be a finite number greater than 1, got {name!r}" in base
