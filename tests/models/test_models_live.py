"""``generate --from-config`` against transformers itself, live: configs built with the library's own
config classes, ``save_pretrained`` to a temporary directory, and compared with the model's rotary
module; a tiny sharded BertModel directory for info, plot and identify.

tests/models/test_models.py runs the same comparisons on committed fixtures (no transformers needed); this
module catches a transformers release that changes a rotary module or a config's serialisation.
transformers is in the ``test`` extra; where it is missing this module skips, and fails in CI (CI set),
as a missing tool does (tests/conftest.py, require_tool). The cases are
tests/data/make_model_fixtures.py's (one definition for fixtures and live tests); transformers is
imported once, by the first test that needs it, in this one process.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from pecli.io import read_table
from tests.conftest import assert_clean_error

pytestmark = pytest.mark.xdist_group("transformers")  # one worker imports transformers for the whole module

#: the rotary cases this module runs: one per rope_type (and the partial-rotary ones)
LIVE_ROTARY = (
    "llama-default",
    "llama-linear",
    "llama-dynamic",
    "llama-yarn",
    "deepseek-yarn",
    "yarn-no-truncate",
    "phi3-longrope",
    "llama3",
    "qwen2",
    "gpt-neox-partial",
    "proportional",
)


@functools.cache
def _fixtures():
    """tests/data/make_model_fixtures.py as a module (it imports torch and transformers)."""
    for name in ("torch", "transformers"):
        try:
            importlib.import_module(name)
        except ImportError:
            message = f"{name} is not installed (the test extra has it: pip install -e '.[test]')"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
    return importlib.import_module("tests.data.make_model_fixtures")


def _rotary_outputs(fixtures, config, positions: list[int]) -> tuple[np.ndarray, np.ndarray, float]:
    import torch

    module = fixtures.load(fixtures.ROTARY_MODULES[type(config)])(config)
    x = torch.zeros(1, len(positions), 16, dtype=torch.float32)
    with torch.no_grad():
        cos, sin = module(x, torch.tensor([positions]))
    return cos[0].numpy(), sin[0].numpy(), float(module.attention_scaling)


@pytest.mark.parametrize("name", LIVE_ROTARY)
def test_from_config_equals_the_rotary_module(cli, tmp_path, name):
    fixtures = _fixtures()
    config_class, kwargs, *length = fixtures.ROTARY[name]
    config = config_class(**kwargs)
    config.save_pretrained(tmp_path / "model")
    table_length = length[0] if length else config.max_position_embeddings
    positions = fixtures.spread(table_length)
    cos, sin, attention_scaling = _rotary_outputs(fixtures, config, positions)

    output = tmp_path / "rope.safetensors"
    args = ["generate", "--from-config", str(tmp_path / "model"), "-o", str(output)]
    result = cli(*args, *(["--len", str(length[0])] if length else []))
    assert result.code == 0, result.stderr
    # float32 noise: transformers rounds inv_freq and p·inv_freq to float32, pecli rounds once at the end
    tolerance = 4 * 2.0**-23 * max(positions) + 2.0**-22
    for part, expected in (("cos", cos), ("sin", sin)):
        table = read_table(str(output), key=part).array
        assert table.shape == (table_length, expected.shape[1])
        np.testing.assert_allclose(table[positions], expected, rtol=0, atol=tolerance, err_msg=part)
    assert read_table(str(output), key="cos").array[0, 0] == pytest.approx(attention_scaling, rel=1e-6)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """A random BertModel saved in 8 KB shards, and its position embedding."""
    fixtures = _fixtures()
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(**fixtures.CONFIGS["bert"][1]))
    directory = tmp_path_factory.mktemp("tiny-bert")
    model.save_pretrained(directory, max_shard_size="8KB")
    return directory, model.embeddings.position_embeddings.weight.detach().numpy()


def test_a_sharded_bert_directory_in_info_plot_and_identify(cli, tiny_bert, tmp_path):
    directory, weight = tiny_bert
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    assert len(set(index["weight_map"].values())) > 1  # really sharded
    info = cli("info", str(directory))
    assert info.code == 0, info.stderr
    assert "embeddings.position_embeddings.weight  [64, 16]  float32" in info.out
    assert "position settings: learned" in info.out

    plot = cli("plot", str(directory), "-o", str(tmp_path / "bert.png"))
    assert plot.code == 0, plot.stderr
    assert (tmp_path / "bert.png").stat().st_size > 0

    identify = cli("identify", str(directory))
    assert identify.code == 1, identify.out  # a learned table: no convention, and it says so
    assert "random table: consistent with N(0, σ²), σ = " in identify.out
    sigma = float(identify.out.split("σ = ")[1].split()[0])
    assert sigma == pytest.approx(float(weight.std()), rel=1e-3)

    learned = cli("generate", "--from-config", str(directory))
    assert_clean_error(learned, 2, "learns its positions", "'embeddings.position_embeddings.weight'")
