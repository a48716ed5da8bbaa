"""Attack round on model sources outside compare (issue 30): each test failed on the code before its fix.

A model whose layer types differ (Gemma 3's sliding_attention and full_attention) gives one table per
layer type; ``--layer-type`` picks one, and the title of a figure drawn from it must say which, or a
plot of the full-attention layers reads as the model's one table. A config whose ``layer_types`` does
not list one type per layer is one transformers refuses (``PreTrainedConfig.validate_layer_type``):
which layers are of which type is unknown, so no table is the model's.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_clean_error

GEMMA3 = {
    "model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
    "max_position_embeddings": 64, "num_hidden_layers": 3,
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
    "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}},
}  # fmt: skip


def _model(tmp_path, raw, name="gemma3"):
    directory = tmp_path / name
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(raw))
    return directory


def _titles(monkeypatch):
    """Every title of each figure saved (the figure's and its axes'), recorded as it is saved."""
    from matplotlib.figure import Figure

    seen: list[str] = []
    real = Figure.savefig

    def recording(figure, *args, **kwargs):
        seen.extend(text.get_text() for text in figure.texts)
        seen.extend(axes.get_title() for axes in figure.axes if axes.get_title())
        return real(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", recording)
    return seen


@pytest.mark.parametrize("suffix", ["", "/"])
@pytest.mark.parametrize("layer_type", ["full_attention", "sliding_attention"])
def test_plot_of_a_layer_type_names_the_model_and_the_layer_type(cli, tmp_path, monkeypatch, layer_type, suffix):
    """The figure's title named the directory only ("… — gemma3"), and with a trailing slash not even that."""
    directory = _model(tmp_path, GEMMA3)
    seen = _titles(monkeypatch)
    out = tmp_path / "f.png"
    result = cli("plot", str(directory) + suffix, "--layer-type", layer_type, "-o", str(out))
    assert result.code == 0, result.stderr
    assert out.exists()
    assert seen and all(f"gemma3 ({layer_type})" in title for title in seen if "gemma3" in title), seen
    assert len([title for title in seen if "gemma3" in title]) == 3, seen  # the figure's and two panels'


def test_identify_and_distance_of_a_layer_type_name_it(cli, tmp_path, monkeypatch):
    directory = _model(tmp_path, GEMMA3)
    result = cli("identify", str(directory), "--layer-type", "full_attention")
    assert result.code == 0, result.stderr
    assert "gemma3 (full_attention)" in result.out.splitlines()[0]
    seen = _titles(monkeypatch)
    out = tmp_path / "d.png"
    result = cli("distance", str(directory), "--layer-type", "full_attention", "-o", str(out))
    assert result.code == 0, result.stderr
    assert any("gemma3 (full_attention)" in title for title in seen), seen


@pytest.mark.parametrize("types", [["sliding_attention"], ["sliding_attention", "full_attention"] * 3])
@pytest.mark.parametrize("command", ["plot", "identify", "distance", "generate"])
def test_layer_types_not_one_per_layer_is_refused(cli, tmp_path, types, command):
    """A list shorter or longer than num_hidden_layers was read as is: a short one of sliding layers only gave
    the sliding table as the model's, exit 0 (transformers refuses the config)."""
    directory = _model(tmp_path, {**GEMMA3, "layer_types": types})
    out = tmp_path / ("t.safetensors" if command == "generate" else "f.png")
    args = {"plot": ("plot", str(directory), "-o", str(out)), "identify": ("identify", str(directory)),
            "distance": ("distance", str(directory), "-o", str(out)),
            "generate": ("generate", "--from-config", str(directory), "-o", str(out))}[command]  # fmt: skip
    result = cli(*args)
    assert_clean_error(result, 2, "layer_types", "num_hidden_layers")
    assert not out.exists()
    info = cli("info", str(directory))
    assert info.code == 0, info.stderr
    assert "num_hidden_layers" in info.out


def test_a_config_on_standard_input_is_refused_naming_it(cli, tmp_path):
    """``--from-config -`` said "no such config: '-'", as if a file named '-' were missing."""
    out = tmp_path / "t.npy"
    result = cli("generate", "--from-config", "-", "-o", str(out))
    assert_clean_error(result, 2, "standard input", "config.json")
    assert not out.exists()
