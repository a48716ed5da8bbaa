"""An engine's cos and sin in the layout transformers' own DeepseekV3RotaryEmbedding returns (issue 30, class 1).

DeepSeek V3 (``rope_interleave`` true) rotates adjacent pairs of q's and k's columns, but transformers' rotary
module returns ``cat(freqs, freqs)``: halves, its ``apply_rotary_pos_emb_interleave`` de-interleaving q and k
first. A cos/sin table does not carry which columns of q it multiplies, so both layouts are real engine layouts
of one rotation. Before: ``pecli compare`` said "different" (the pairing) for the mistake-free pair, and hid a
real mistake (no known cause for the pair with the scaling left out); ``assert_table_matches`` alike.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import require_module, run_in_process

CONFIG = {
    "model_type": "deepseek_v3",
    "hidden_size": 64,
    "num_attention_heads": 2,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "kv_lora_rank": 16,
    "max_position_embeddings": 64,
    "rope_theta": 10000.0,
    "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16, "beta_fast": 32,
                     "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0},
}  # fmt: skip
POSITIONS = 32


def _transformers_pair(tmp_path, config):
    """cos and sin (positions × 8) as transformers' own DeepseekV3RotaryEmbedding returns them for ``config``."""
    torch = require_module("torch")
    transformers = require_module("transformers")
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as module

    folder = tmp_path / f"hf{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    rotary = module.DeepseekV3RotaryEmbedding(transformers.AutoConfig.from_pretrained(str(folder)))
    with torch.no_grad():
        cos, sin = rotary(torch.zeros(1, 1, POSITIONS, 8), torch.arange(POSITIONS)[None])
    return cos[0].numpy(), sin[0].numpy()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The config, transformers' pair for it and transformers' pair with the scaling left out."""
    from safetensors.numpy import save_file

    tmp_path = tmp_path_factory.mktemp("deepseek")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    paths = {"config": str(config)}
    unscaled = {key: value for key, value in CONFIG.items() if key != "rope_scaling"}
    for name, settings in (("engine", CONFIG), ("unscaled", unscaled)):
        cos, sin = _transformers_pair(tmp_path, settings)
        assert np.array_equal(cos[:, :4], cos[:, 4:])  # halves: cat(freqs, freqs)
        paths[name] = str(tmp_path / f"{name}.safetensors")
        save_file({"cos": cos, "sin": sin}, paths[name])
    return paths


def _compare(*args, code=0):
    result = run_in_process("compare", *args, "--json")
    assert result.code == code, result.stderr  # 1: the tables differ
    return json.loads(result.out), result.stderr


def test_transformers_pair_agrees_with_a_note(files):
    report, notes = _compare(files["engine"], files["config"])
    assert report["agree"] is True and report["max_abs"] < 1e-6  # before: agree false, diagnosis "pairing"
    assert "transformers' layout" in notes and "apply_rotary_pos_emb_interleave" in notes
    assert f"pecli generate --from-config {files['config']} --probe" in notes


def test_transformers_pair_without_scaling_is_named_unscaled(files):
    report, _ = _compare(files["unscaled"], files["config"], code=1)
    assert report["agree"] is False  # before: no known cause explained the difference
    assert [found["code"] for found in report["diagnosis"]] == ["unscaled"]


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_one_part_of_transformers_pair(files, part):
    keys = ("--key-a", part, "--key-b", part)
    report, notes = _compare(files["engine"], files["config"], *keys)
    assert report["agree"] is True and "transformers' layout" in notes  # before: different (pairing)
    report, _ = _compare(files["config"], files["unscaled"], *keys, code=1)
    assert [found["code"] for found in report["diagnosis"]] == ["unscaled"]


def test_deepseek_own_adjacent_pairs_still_agree_without_the_note(files, tmp_path):
    out = tmp_path / "pecli.safetensors"
    made = run_in_process("generate", "--from-config", files["config"], "--len", str(POSITIONS), "-o", str(out))
    assert made.code == 0, made.stderr
    report, notes = _compare(str(out), files["config"])
    assert report["agree"] is True and "transformers' layout" not in notes
    # a halves pair is still a pairing mistake against a model whose module is not in that layout
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({**CONFIG, "model_type": "deepseek_v2"}))
    report, notes = _compare(files["engine"], str(plain), code=1)
    assert report["agree"] is False and [found["code"] for found in report["diagnosis"]] == ["pairing"]


def test_assert_table_matches_reads_transformers_pair(files):
    from safetensors.numpy import load_file

    from pecli.testing import assert_table_matches

    engine = load_file(files["engine"])
    assert_table_matches((engine["cos"], engine["sin"]), files["config"])  # before: AssertionError (pairing)
    unscaled = load_file(files["unscaled"])
    with pytest.raises(AssertionError, match=r"named cause: unscaled$"):
        assert_table_matches((unscaled["cos"], unscaled["sin"]), files["config"])
