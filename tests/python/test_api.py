"""The inspecting half as Python (issue 27, item 7): pecli.identify, compare, from_config and figure give
what the CLI gives — the same figures, diagnosis, tables and pixels — and print as the CLI prints."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

import pecli
from pecli.report import Report


@pytest.fixture
def engine_table(tmp_path):
    """An engine's cos table that forgot its linear scaling (B), and the spec it should have followed (A)."""
    table = pecli.encode("rope", 256, 64, part="cos", base=500000.0)
    np.save(tmp_path / "engine.npy", table)
    return table, "rope:part=cos,base=500000,scaling=linear,factor=4"


def test_the_public_api_is_listed_and_lazy():
    for name in ("identify", "compare", "from_config", "figure"):
        assert name in pecli.__all__ and callable(getattr(pecli, name))


def test_compare_gives_the_clis_json(cli, tmp_path, engine_table):
    table, spec = engine_table
    shown = cli("compare", spec, str(tmp_path / "engine.npy"), "--json")
    assert shown.code == 1
    printed = json.loads(shown.out)
    result = pecli.compare(spec, table)
    assert isinstance(result, Report) and not result.agree
    ours = result.to_json()
    for side in ("a", "b"):  # the labels differ (an array has no file name); the rest is the same
        printed[side].pop("source"), ours[side].pop("source")
    assert ours == printed
    assert [finding["code"] for finding in ours["diagnosis"]] == ["unscaled"]
    assert "diagnosis: B is the same RoPE without its frequency scaling" in str(result)


def test_compare_reads_files_and_configs_as_the_cli_does(tmp_path, engine_table):
    table, _ = engine_table
    config = tmp_path / "config.json"
    scaling = {"rope_type": "linear", "factor": 4.0}
    config.write_text(json.dumps({"model_type": "llama", "head_dim": 64, "max_position_embeddings": 256,
                                  "rope_theta": 500000.0, "rope_scaling": scaling}))  # fmt: skip
    by_file = pecli.compare(str(config), str(tmp_path / "engine.npy"), key="cos")
    by_array = pecli.compare(str(config), table, key="cos")
    assert by_file.result == by_array.result and by_file.result.diagnosis[0].code == "unscaled"
    right = pecli.from_config(str(config))["cos"]
    assert pecli.compare(str(config), right, key="cos").agree


def test_from_config_gives_generates_tables(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "head_dim": 16, "max_position_embeddings": 64,
                                  "rope_theta": 10000.0}))  # fmt: skip
    assert cli("generate", "--from-config", str(config), "-o", str(tmp_path / "pe.safetensors")).code == 0
    written = load_file(str(tmp_path / "pe.safetensors"))
    tables = pecli.from_config(str(config))
    assert set(tables) == set(written)
    for name, array in tables.items():
        assert np.array_equal(array, written[name])


def test_identify_reproduces_the_table(tmp_path):
    table = pecli.encode("rope", 64, 32, base=500000.0, part="sin")
    found = pecli.identify(table)
    assert found.found.level == "exact" and found.found.best.params["base"] == 500000.0
    recipe = found.found.recipe()
    again = pecli.encode(recipe.scheme, recipe.length, recipe.dim, preset=recipe.preset, **recipe.params)
    assert np.allclose(again, table, atol=1e-6, rtol=0)
    assert str(found).startswith("table: 64 × 32") and found._repr_html_().startswith("<pre>")


def test_figure_is_the_image_plot_saves(cli, tmp_path):
    import matplotlib.image

    table = pecli.encode("sinusoidal", 128, 64)
    np.save(tmp_path / "pe.npy", table)
    assert cli("plot", str(tmp_path / "pe.npy"), "-o", str(tmp_path / "cli.png"), "--title", "T").code == 0
    pecli.figure(table, title="T").savefig(tmp_path / "api.png", dpi=100)
    ours, theirs = (matplotlib.image.imread(tmp_path / name) for name in ("api.png", "cli.png"))
    assert ours.shape == theirs.shape and np.array_equal(ours, theirs)


def test_bad_calls_name_parameters_not_flags():
    with pytest.raises(pecli.ParameterError) as error:
        pecli.compare("rope", "sinusoidal")
    assert "--" not in str(error.value)
    with pytest.raises(pecli.ParameterError, match="2-D"):
        pecli.figure(np.zeros((2, 3, 4)))
