"""identify on ALiBi tables as models ship them (issue 30): transformers' own BLOOM ``build_alibi_tensor``
(the key form m·j, alike on every query row) and Falcon's (bfloat16 slopes × positions, divided by
√head_dim as FalconModel does), as (H, 1, L) and broadcast (H, L, L), float32 and bfloat16-valued float32.

Each is named (form, heads, and Falcon's arithmetic and head_dim), and the command identify prints
writes a table that ``pecli compare`` accepts (exit 0); plain relative ALiBi is still named, noise is not.
"""

from __future__ import annotations

import json
import math
import shlex

import numpy as np
import pytest

import pecli
from pecli.io import read_table

torch = pytest.importorskip("torch")
bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
falcon = pytest.importorskip("transformers.models.falcon.modeling_falcon")


def _bloom(heads: int, length: int, dtype: torch.dtype) -> np.ndarray:
    """BLOOM's (H, 1, L) biases for one unpadded sequence, as float32 values."""
    mask = torch.ones(1, length, dtype=torch.long)
    return bloom.build_alibi_tensor(mask, heads, dtype).float().numpy()


def _falcon(heads: int, length: int, head_dim: int, dtype: torch.dtype) -> np.ndarray:
    """Falcon's (H, 1, L) biases over √head_dim (FalconModel: ``alibi / math.sqrt(hidden_size // num_heads)``)."""
    mask = torch.ones(1, length, dtype=torch.long)
    return (falcon.build_alibi_tensor(mask, heads, dtype) / math.sqrt(head_dim)).float().numpy()


def _identified(cli, tmp_path, table: np.ndarray) -> tuple[dict, np.ndarray]:
    """identify --json of ``table`` (saved as .npy), and the table its printed command writes."""
    path = tmp_path / "table.npy"
    np.save(path, table)
    result = cli("identify", str(path), "--json")
    assert result.code == 0, result.out + result.stderr
    report = json.loads(result.out)
    argv = shlex.split(report["command"])
    assert argv[:3] == ["pecli", "generate", "alibi"], report["command"]
    output = tmp_path / argv[argv.index("-o") + 1]
    argv[argv.index("-o") + 1] = str(output)
    written = cli(*argv[1:])
    assert written.code == 0, written.stderr
    return report, np.asarray(read_table(str(output)).array)


def _compares(cli, tmp_path, table: np.ndarray, regenerated: np.ndarray, report: dict) -> None:
    """``pecli compare`` of the table and the regenerated one (its query row, for an (H, 1, L) table) exits 0."""
    if table.shape[1] == 1:
        row = report["query_row"]
        regenerated = regenerated[:, row : row + 1]
    mine, theirs = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(mine, table)
    np.save(theirs, regenerated)
    result = cli("compare", str(mine), str(theirs))
    assert result.code == 0, result.out + result.stderr


BLOOM_CASES = [(8, 16), (12, 40), (5, 33), (71, 24), (16, 300)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("broadcast", [False, True], ids=["H1L", "HLL"])
@pytest.mark.parametrize(("heads", "length"), BLOOM_CASES)
def test_bloom_build_alibi_tensor(heads, length, broadcast, dtype, cli, tmp_path):
    table = _bloom(heads, length, getattr(torch, dtype))
    if broadcast:
        table = np.broadcast_to(table, (heads, length, length)).copy()
    report, regenerated = _identified(cli, tmp_path, table)
    assert report["match"] in ("exact", "approximate")
    params = report["best"]["params"]
    assert (params["heads"], params["form"]) == (heads, "key")
    assert params.get("head_dim") is None and params.get("arithmetic") is None
    assert regenerated.shape == (heads, length, length)
    _compares(cli, tmp_path, table, regenerated, report)


FALCON_CASES = [(8, 16, 64), (71, 40, 64), (12, 24, 128), (5, 300, 64), (32, 20, 80)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("broadcast", [False, True], ids=["H1L", "HLL"])
@pytest.mark.parametrize(("heads", "length", "head_dim"), FALCON_CASES)
def test_falcon_build_alibi_tensor(heads, length, head_dim, broadcast, dtype, cli, tmp_path):
    table = _falcon(heads, length, head_dim, getattr(torch, dtype))
    if broadcast:
        table = np.broadcast_to(table, (heads, length, length)).copy()
    report, regenerated = _identified(cli, tmp_path, table)
    assert report["match"] in ("exact", "approximate")
    params = report["best"]["params"]
    assert (params["heads"], params["form"], params["head_dim"]) == (heads, "key", head_dim)
    # bfloat16's arithmetic is named wherever it writes other values than float64's (8 heads' slopes are
    # powers of two, exact in bfloat16: the two are the same table, the simpler named)
    sizes = {"heads": heads, "form": "key", "head_dim": head_dim}
    held = pecli.encode("alibi", length, None, arithmetic="bfloat16", dtype=dtype, **sizes)
    same = np.array_equal(held, pecli.encode("alibi", length, None, dtype=dtype, **sizes))
    assert params["arithmetic"] == "bfloat16" or (same and params["arithmetic"] is None)
    _compares(cli, tmp_path, table, regenerated, report)


def test_pecli_key_and_falcon_tables_round_trip(cli, tmp_path):
    """The tables pecli itself writes (the issue's own commands) are named by identify, exit 0."""
    for extra, expected in [
        (("--heads", "8"), "alibi: heads=8 form=key\n"),
        (
            ("--heads", "32", "--arithmetic", "bfloat16", "--head-dim", "64"),
            "alibi: heads=32 form=key arithmetic=bfloat16 head_dim=64",
        ),
    ]:
        path = tmp_path / "b.safetensors"
        written = cli("generate", "alibi", "--len", "64", "--form", "key", *extra, "-o", str(path))
        assert written.code == 0, written.stderr
        result = cli("identify", str(path))
        assert result.code == 0 and f"match: {expected}" in result.out, result.out


@pytest.mark.parametrize(("heads", "length"), [(8, 16), (12, 40)])
def test_relative_alibi_still_identified(heads, length, cli, tmp_path):
    table = pecli.encode("alibi", length, None, heads=heads)
    report, regenerated = _identified(cli, tmp_path, table)
    assert report["match"] == "exact" and report["best"]["params"]["form"] == "distance"
    assert report["best"]["params"].get("head_dim") is None
    np.testing.assert_array_equal(regenerated, table)


@pytest.mark.parametrize("shape", [(8, 1, 16), (12, 40, 40), (71, 1, 24)])
def test_noise_of_the_same_shape_matches_nothing(shape, cli, tmp_path):
    table = np.random.default_rng(0).normal(0, 1, shape).astype(np.float32)
    # even rising from 0 at key 0 as BLOOM's rows do
    table[..., 0] = 0.0
    table[..., 1] = np.abs(table[..., 1])
    path = tmp_path / "noise.npy"
    np.save(path, table)
    result = cli("identify", str(path))
    assert result.code == 1 and "match:" not in result.out and "closest:" in result.out, result.out
