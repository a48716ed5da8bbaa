"""Falcon with ``alibi: true`` (tiiuae/falcon-rw-1b): the bias FalconModel gives SDPA, bit for bit (issue 30).

transformers 5.23 ``models/falcon/modeling_falcon.py``: ``build_alibi_tensor`` (line 149) returns
``slopes[..., None].bfloat16() * arange_tensor`` (line 176) cast to the model's dtype, and FalconModel.forward
passes ``alibi / math.sqrt(self.config.hidden_size // self.num_heads)`` (line 775) as the attention mask
SDPA adds to q·k/√head_dim. pecli refused these configs before; it now writes that table.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pecli.dtypes import round_to
from pecli.models.config import model_encoding
from pecli.schemes.alibi import alibi_slopes, alibi_table

torch = pytest.importorskip("torch")
falcon = pytest.importorskip("transformers.models.falcon.modeling_falcon")


def _falcon_bias(heads: int, length: int, hidden: int, dtype: torch.dtype) -> np.ndarray:
    """FalconModel's mask bias (heads, length) over key positions: build_alibi_tensor / √(hidden // heads)."""
    alibi = falcon.build_alibi_tensor(torch.ones(1, length, dtype=torch.long), heads, dtype=dtype)
    return (alibi / math.sqrt(hidden // heads)).reshape(heads, length).to(torch.float64).numpy()


def _config(heads: int, hidden: int, **extra) -> dict:
    return {"model_type": "falcon", "alibi": True, "n_head": heads, "hidden_size": hidden, **extra}


def _cases() -> list[tuple[int, int, int]]:
    rng = np.random.default_rng(30)
    heads = [1, 2, 3, 5, 7, 12, 32, 33, 48, 63, 64, *rng.integers(1, 65, 6).tolist()]
    return [(h, int(rng.integers(1, 300)), int(rng.choice([8, 50, 64, 72, 80, 96, 128]))) for h in heads]


@pytest.mark.parametrize(("heads", "length", "head_dim"), _cases())
@pytest.mark.parametrize(("dtype", "torch_dtype"), [("float32", torch.float32), ("float64", torch.float64)])
def test_falcon_config_gives_falcons_bias_bit_for_bit(heads, length, head_dim, dtype, torch_dtype):
    encoding = model_encoding(_config(heads, heads * head_dim))
    assert encoding.scheme == "alibi"
    assert encoding.params == {"heads": heads, "form": "key", "arithmetic": "bfloat16", "head_dim": head_dim}
    table = alibi_table(length, **encoding.params, dtype=dtype)
    expected = _falcon_bias(heads, length, heads * head_dim, torch_dtype)
    assert table.shape == (heads, length, length)
    # every query row is the key row (build_alibi_tensor broadcasts over queries), bit for bit
    np.testing.assert_array_equal(table.astype(np.float64), np.broadcast_to(expected[:, None, :], table.shape))


def test_falcon_bfloat16_bias_matches_a_bfloat16_model():
    """A bfloat16 model (falcon-rw-1b ships torch_dtype bfloat16): the division is torch's, via float32."""
    for heads, length, head_dim in _cases()[:8]:
        table = alibi_table(length, heads=heads, form="key", arithmetic="bfloat16", head_dim=head_dim, dtype="bfloat16")
        expected = _falcon_bias(heads, length, heads * head_dim, torch.bfloat16)
        np.testing.assert_array_equal(table[:, -1].astype(np.float64), expected)


def test_falcon_rw_1b_config_through_the_cli_and_its_metadata(cli, tmp_path):
    """tiiuae/falcon-rw-1b's settings: 32 heads, hidden 2048 (head_dim 64); exit 0 where pecli refused it."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(_config(32, 2048, max_position_embeddings=2048)))
    out = tmp_path / "falcon.safetensors"
    result = cli("generate", "--from-config", str(config), "--len", "40", "-o", str(out))
    assert result.code == 0, result.stderr
    from safetensors.numpy import load_file

    table = next(iter(load_file(str(out)).values()))
    expected = _falcon_bias(32, 40, 2048, torch.float32)
    np.testing.assert_array_equal(table[:, 7].astype(np.float64), expected)
    assert (
        float(table[0, 0, 39]) == float(np.float32(expected[0, 39])) == 4.09375
    )  # bfloat16(0.83984375 · 39) = 32.75, / 8
    info = cli("info", str(out))
    assert info.code == 0 and "arithmetic=bfloat16" in info.out and "head_dim=64" in info.out
    identify = cli("identify", str(out))
    assert "arithmetic=bfloat16" in identify.out and "head_dim=64" in identify.out


def test_falcon_bias_is_not_blooms_float64_table():
    """What the old path would have written (BLOOM's m·j) differs from Falcon's; the scheme declares both."""
    heads, length = 32, 64
    falcon_table = alibi_table(length, heads=heads, form="key", arithmetic="bfloat16", head_dim=64, dtype="float64")
    bloom_table = alibi_table(length, heads=heads, form="key", dtype="float64")
    assert np.abs(falcon_table * 8 - bloom_table).max() > 0.1  # bfloat16 rounding of m·j, not only the 1/8


def test_bloom_table_unchanged():
    """BLOOM (no bfloat16 in its build_alibi_tensor): float64 m·j rounded once, as before."""
    for heads in (1, 3, 12, 64):
        encoding = model_encoding({"model_type": "bloom", "n_head": heads})
        assert encoding.params == {"heads": heads}
        table = alibi_table(20, heads=heads, form="key")
        expected = round_to(alibi_slopes(heads)[:, None, None] * np.arange(20.0)[None, None, :], "float32")
        np.testing.assert_array_equal(table, np.broadcast_to(expected, table.shape))


@pytest.mark.parametrize("alibi", [False, None])
def test_falcon_without_alibi_is_still_rope(alibi):
    config = {"model_type": "falcon", "n_head": 32, "hidden_size": 2048, "rope_theta": 10000.0}
    if alibi is not None:
        config["alibi"] = alibi
    encoding = model_encoding(config)
    assert encoding.scheme == "rope" and encoding.dim == 64 and encoding.params["base"] == 10000.0


def test_falcon_head_dim_of_zero_is_refused_naming_the_fields():
    from pecli.errors import ParameterError

    with pytest.raises(ParameterError, match="hidden_size: 8 is less than n_head 32"):
        model_encoding(_config(32, 8))


def test_head_names_give_the_slope_the_values_follow():
    # the panel titles of a Falcon bias named the float64 slope, 8× the values' at head_dim 64
    from pecli.schemes.alibi import alibi_head_names, alibi_table

    names = alibi_head_names(heads=32, arithmetic="bfloat16", head_dim=64)
    table = alibi_table(64, heads=32, form="key", arithmetic="bfloat16", head_dim=64, dtype="float64")
    for name, head in zip(names, table, strict=True):
        slope = float(name.rsplit("slope ", 1)[1])
        assert head[0, 63] == pytest.approx(slope * 63, rel=2**-7)  # bfloat16's rounding of the product
