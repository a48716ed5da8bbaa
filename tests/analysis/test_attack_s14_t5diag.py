"""Issue 30 (compare names the cause of a difference with its evidence): two T5 relative-position bias tables, file
against file (heads × L × L, no learned weights given), told apart by their bucket structure, their transposition
or the heads that differ; transformers' ``T5Attention._relative_position_bucket`` builds each mistake."""

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.analysis.compare import compare_tables

torch = pytest.importorskip("torch")
modeling_t5 = pytest.importorskip("transformers.models.t5.modeling_t5")

LENGTH, HEADS = 48, 6
WEIGHT = np.random.default_rng(1).normal(size=(64, HEADS)).astype(np.float32)  # rows: buckets, as an nn.Embedding


def _buckets(*, transpose: bool = False, **settings: object) -> np.ndarray:
    query, key = torch.arange(LENGTH)[:, None], torch.arange(LENGTH)[None, :]
    relative = query - key if transpose else key - query  # compute_bias: memory_position − context_position
    return modeling_t5.T5Attention._relative_position_bucket(relative, **settings).numpy()


def _bias(buckets: np.ndarray, weight: np.ndarray = WEIGHT) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(weight[buckets], -1, 0))


A = _bias(_buckets())


def _other_head() -> np.ndarray:
    weight = WEIGHT.copy()
    weight[:, 2] = np.random.default_rng(2).normal(size=len(weight))
    return _bias(_buckets(), weight)


@pytest.mark.parametrize(
    ("b", "code", "b_settings"),
    [
        (_bias(_buckets(bidirectional=False)), "bidirectional", "causal, num_buckets 32, max_distance 128"),
        (_bias(_buckets(max_distance=64)), "t5_max_distance", "bidirectional, num_buckets 32, max_distance 64"),
        (_bias(_buckets(num_buckets=16)), "t5_num_buckets", "bidirectional, num_buckets 16, max_distance 128"),
        (_bias(_buckets() + 1), "t5_bucket_off_by_one", "bidirectional, num_buckets 32, max_distance 128"),
    ],
    ids=["causal", "max_distance", "num_buckets", "off_by_one"],
)
def test_bucket_structure_names_the_settings(b: np.ndarray, code: str, b_settings: str) -> None:
    result = compare_tables(A, b)
    assert not result.agree
    first = result.diagnosis[0]
    assert first.code == code, [found.code for found in result.diagnosis]
    assert first.figures["a_settings"][0] == "bidirectional, num_buckets 32, max_distance 128"
    assert first.figures["b_settings"][0] == b_settings


def test_off_by_one_names_the_shift() -> None:
    first = compare_tables(A, _bias(_buckets() + 1)).diagnosis[0]
    assert first.figures["shift"] == 1 and "A's bucket k + 1" in first.message


@pytest.mark.parametrize("bidirectional", [True, False])
def test_transposed_bias_named(bidirectional: bool) -> None:
    a = _bias(_buckets(bidirectional=bidirectional))
    b = _bias(_buckets(bidirectional=bidirectional, transpose=True))
    codes = [found.code for found in compare_tables(a, b).diagnosis]
    assert codes[:1] == ["transposed"], codes
    assert "relative position i − j" in compare_tables(a, b).diagnosis[0].message
    assert not {"bidirectional", "t5_bucket_settings"} & set(codes)


def test_one_head_wrong_named_and_no_setting() -> None:
    result = compare_tables(A, _other_head())
    assert [(found.code, found.figures["heads"]) for found in result.diagnosis] == [("only_heads_differ", [2])]
    assert "only head 2 differs" in result.diagnosis[0].message


def test_noise_gets_no_bucket_cause() -> None:
    noise = np.random.default_rng(3).normal(size=A.shape).astype(np.float32)
    assert compare_tables(A, A + 1e-3 * noise).diagnosis == []
    one_head = A + 1e-2 * noise * (np.arange(HEADS) == 3)[:, None, None].astype(np.float32)
    assert [found.code for found in compare_tables(A, one_head).diagnosis] == ["only_heads_differ"]


def test_no_structure_no_cause() -> None:
    b = np.random.default_rng(4).normal(size=A.shape).astype(np.float32)
    assert compare_tables(A, b).diagnosis == []


def test_files_compared_on_the_command_line(cli, tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", A)
    np.save(tmp_path / "same.npy", A.copy())
    np.save(tmp_path / "causal.npy", _bias(_buckets(bidirectional=False)))
    assert cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "same.npy")).code == 0
    result = cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "causal.npy"), "--json")
    assert result.code == 1, result.stderr
    found = json.loads(result.out)["diagnosis"][0]
    assert found["code"] == "bidirectional"
    assert found["figures"]["b_settings"] == ["causal, num_buckets 32, max_distance 128"]
