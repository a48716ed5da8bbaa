"""Per-family facts of transformers' rotary code that ``--from-config`` reads (issue 30, class 1): the pairing
of the families whose ``apply_rotary_pos_emb`` re-interleaves cos/sin, and the families whose default rope init
ignores ``partial_rotary_factor``. Live transformers: pecli's table equals what the family's module computes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from pecli.models import model_encoding
from pecli.models.transformers_families import IGNORES_PARTIAL, REINTERLEAVED, TRANSFORMERS_VERSION, USES_PARTIAL
from pecli.schemes.spec import TableSpec

POSITIONS = 12
BASE = {
    "hidden_size": 64,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "max_position_embeddings": 64,
    "rope_theta": 10000.0,
    "partial_rotary_factor": 0.5,
}


def _pecli(config):
    encoding = model_encoding(config)
    spec = TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=POSITIONS, dim=encoding.dim)
    parts = {part.name: np.asarray(part.array(), dtype=np.float64) for part in spec.parts()}
    return encoding, parts["cos"], parts["sin"]


def _module(tmp_path, config, module_name, class_name, *, reinterleave):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    module = __import__(f"transformers.models.{module_name}.modeling_{module_name}", fromlist=[class_name])
    (tmp_path / "config.json").write_text(json.dumps(config))
    rotary = getattr(module, class_name)(transformers.AutoConfig.from_pretrained(str(tmp_path)))
    positions = torch.arange(POSITIONS)[None]
    with torch.no_grad():
        cos, sin = (t[0].double().numpy() for t in rotary(torch.zeros(1, POSITIONS, 32), positions))
    if reinterleave:  # as the family's apply_rotary_pos_emb does before rotating adjacent pairs
        cos, sin = (np.repeat(t[:, : t.shape[1] // 2], 2, axis=1) for t in (cos, sin))
    return cos, sin


@pytest.mark.parametrize(
    ("model_type", "module_name", "class_name", "width"),
    [
        ("llama", "llama", "LlamaRotaryEmbedding", 32),
        ("mistral", "mistral", "MistralRotaryEmbedding", 32),
        ("qwen2", "qwen2", "Qwen2RotaryEmbedding", 32),
        ("gemma", "gemma", "GemmaRotaryEmbedding", 32),
        ("phi", "phi", "PhiRotaryEmbedding", 16),
        ("stablelm", "stablelm", "StableLmRotaryEmbedding", 16),
        ("persimmon", "persimmon", "PersimmonRotaryEmbedding", 16),
        ("glm4", "glm4", "Glm4RotaryEmbedding", 16),
        ("glm", "glm", "GlmRotaryEmbedding", 16),
        ("helium", "helium", "HeliumRotaryEmbedding", 32),
    ],
)
def test_from_config_equals_the_family_rotary_module(tmp_path, model_type, module_name, class_name, width):
    """partial_rotary_factor 0.5 with default rope: Llama, Mistral, Qwen2, Gemma, Helium rotate the whole head
    (pecli narrowed it to 16 columns); Phi, StableLM, Persimmon, GLM, GLM-4 rotate half. GLM, GLM-4 and Helium
    rotate adjacent pairs (pecli said ``half``)."""
    config = {**BASE, "model_type": model_type}
    encoding, cos, sin = _pecli(config)
    want_cos, want_sin = _module(tmp_path, config, module_name, class_name, reinterleave=model_type in REINTERLEAVED)
    assert encoding.dim == width == want_cos.shape[1]
    assert encoding.params["layout"] == ("interleaved" if model_type in ("glm", "glm4", "helium") else "half")
    np.testing.assert_allclose(cos, want_cos, atol=1e-6)
    np.testing.assert_allclose(sin, want_sin, atol=1e-6)


def test_an_ignored_partial_rotary_factor_is_said():
    encoding = model_encoding({**BASE, "model_type": "llama"})
    assert any("partial_rotary_factor = 0.5 is not read by llama's default rope" in note for note in encoding.notes)
    assert "partial_rotary_factor" not in encoding.provenance


def test_scaled_rope_types_still_read_partial_rotary_factor():
    """ROPE_INIT_FUNCTIONS (linear, dynamic, yarn, llama3, longrope) read it for every family."""
    config = {**BASE, "model_type": "llama", "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    assert model_encoding(config).dim == 16


def test_remote_code_model_types_keep_partial_rotary_factor():
    assert model_encoding({**BASE, "model_type": "some_remote_model"}).dim == 16


def test_the_family_sets_match_the_installed_transformers_source():
    """The committed sets (scripts/rope_families.py) against the modeling modules' text."""
    transformers = pytest.importorskip("transformers")
    if transformers.__version__ != TRANSFORMERS_VERSION:
        pytest.skip(f"sets written for transformers {TRANSFORMERS_VERSION}")
    from pathlib import Path

    pattern = re.compile(r"cos\[\s*\.\.\.\s*,\s*:\s*cos\.shape\[-1\]\s*//\s*2\s*\]\s*\.repeat_interleave\(\s*2")
    found = set()
    for path in (Path(transformers.__file__).parent / "models").glob("*/modeling_*.py"):
        text = path.read_text()
        start = text.find("\ndef apply_rotary_pos_emb(")
        if start >= 0 and pattern.search(text[start : text.find("\ndef ", start + 1)]):
            found.add(path.parent.name)
    assert (
        found
        == REINTERLEAVED
        == {"ernie4_5", "ernie4_5_moe", "glm", "glm4", "helium", "moonshine", "moonshine_streaming"}
    )
    assert not IGNORES_PARTIAL & USES_PARTIAL
    assert {"llama", "mistral", "qwen2", "gemma3_text"} <= IGNORES_PARTIAL
    assert {"glm", "glm4", "phi", "stablelm", "persimmon", "nemotron", "qwen3_next"} <= USES_PARTIAL


def test_remote_code_spellings_and_auto_map_keep_partial_rotary_factor():
    """nomic-bert's rotary_emb_fraction and a config with auto_map run their own code: read as given."""
    assert model_encoding({**BASE, "model_type": "llama", "auto_map": {"AutoModel": "m.M"}}).dim == 16
    config = {key: value for key, value in BASE.items() if key != "partial_rotary_factor"}
    assert model_encoding({**config, "model_type": "nomic_bert", "rotary_emb_fraction": 0.5}).dim == 16
