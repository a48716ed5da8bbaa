"""A model id resolves to its snapshot in the local Hugging Face cache (issue 29, item 6), offline, with
huggingface_hub importable and with it hidden (the documented layout is read then)."""

from __future__ import annotations

import json
import sys

import pytest

from pecli.errors import TableFileError
from pecli.models.config import read_config
from pecli.models.hub_cache import resolve_model_id

CONFIG = {"model_type": "llama", "head_dim": 8, "max_position_embeddings": 16, "rope_theta": 500000.0}


def _fake_cache(root, repo="org/tiny", commit="a" * 40, ref="main"):
    base = root / ("models--" + repo.replace("/", "--"))
    (base / "refs").mkdir(parents=True)
    (base / "refs" / ref).write_text(commit)
    snapshot = base / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(CONFIG))
    return snapshot


@pytest.fixture(params=["huggingface_hub", "layout"])
def cache(request, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if request.param == "layout":
        monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails: the fallback reads the layout
    return tmp_path / "hub"


def test_model_id_reads_the_cached_snapshot(cache):
    snapshot = _fake_cache(cache)
    assert resolve_model_id("org/tiny") == str(snapshot)
    assert read_config("org/tiny")["rope_theta"] == 500000.0
    assert read_config("org/tiny@main") == CONFIG


def test_revision_by_ref(cache):
    snapshot = _fake_cache(cache, commit="b" * 40, ref="v1")
    assert resolve_model_id("org/tiny@v1") == str(snapshot)


def test_uncached_id_says_how_to_fetch_it(cache):
    with pytest.raises(TableFileError) as error:
        read_config("org/missing")
    assert "org/missing is not in the local Hugging Face cache" in str(error.value)
    assert "hf download org/missing config.json" in str(error.value)


def test_generate_from_a_model_id(cli, cache):
    _fake_cache(cache)
    result = cli("generate", "--from-config", "org/tiny", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["params"]["base"] == 500000.0
    missing = cli("generate", "--from-config", "org/none")
    assert missing.code == 2 and "hf download org/none config.json" in missing.stderr
