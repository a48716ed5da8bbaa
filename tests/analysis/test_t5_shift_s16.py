"""Issue 30 (compare names the cause of a difference), session 16: T5's relative-position bias taken of j − i ± 1
instead of j − i (an engine's off-by-one) is named "the relative position off by one" with its evidence, file against
file and with no learned weights; the sign flip (bucket(i − j)) is named a transposition. Each mistake is built with
transformers' own ``T5Attention._relative_position_bucket`` and a weight matrix."""

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.analysis.compare import compare_tables

torch = pytest.importorskip("torch")
modeling_t5 = pytest.importorskip("transformers.models.t5.modeling_t5")

LENGTH, HEADS = 40, 4
WEIGHT = np.random.default_rng(16).normal(size=(32, HEADS)).astype(np.float32)  # (num_buckets, heads): nn.Embedding


def _buckets(*, shift: int = 0, sign: int = 1, bidirectional: bool = True) -> np.ndarray:
    """transformers' buckets of sign·(key − query) + shift (compute_bias: memory_position − context_position)."""
    query, key = torch.arange(LENGTH)[:, None], torch.arange(LENGTH)[None, :]
    relative = sign * (key - query) + shift
    return modeling_t5.T5Attention._relative_position_bucket(relative, bidirectional=bidirectional).numpy()


def _bias(buckets: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(WEIGHT[buckets], -1, 0))  # (heads, L, L), as compute_bias permutes


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bidirectional", "causal"])
@pytest.mark.parametrize("shift", [1, -1])
def test_relative_position_off_by_one_named_with_its_evidence(bidirectional: bool, shift: int) -> None:
    a = _bias(_buckets(bidirectional=bidirectional))
    b = _bias(_buckets(shift=shift, bidirectional=bidirectional))
    keys = slice(max(shift, 0), LENGTH + min(shift, 0))  # the keys j + shift that exist
    shown = slice(max(-shift, 0), LENGTH + min(-shift, 0))
    assert np.array_equal(b[:, :, shown], a[:, :, keys])  # the claim itself, on transformers' tables
    assert not np.array_equal(a, b)
    result = compare_tables(a, b)
    assert not result.agree
    first = result.diagnosis[0]
    assert first.code == "t5_relative_position_shifted", [found.code for found in result.diagnosis]
    assert first.figures["shift"] == shift
    assert first.figures["cells_checked"] == LENGTH * (LENGTH - 1)
    assert first.figures["residual"] == 0.0
    direction = "bidirectional" if bidirectional else "causal"
    assert first.figures["a_settings"][0] == f"{direction}, num_buckets 32, max_distance 128"
    sign = "+" if shift > 0 else "−"
    assert f"B[:, i, j] = A[:, i, j {sign} 1] in all {HEADS} heads" in first.message
    assert f"j − i {sign} 1" in first.message


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bidirectional", "causal"])
def test_sign_flip_named_a_transposition_not_a_shift(bidirectional: bool) -> None:
    a = _bias(_buckets(bidirectional=bidirectional))
    b = _bias(_buckets(sign=-1, bidirectional=bidirectional))  # bucket(i − j)
    assert np.array_equal(b, np.swapaxes(a, 1, 2))
    codes = [found.code for found in compare_tables(a, b).diagnosis]
    assert codes[:1] == ["transposed"], codes
    assert "t5_relative_position_shifted" not in codes


def test_other_mistakes_are_not_called_a_shift() -> None:
    a = _bias(_buckets())
    by_two = compare_tables(a, _bias(_buckets(shift=2))).diagnosis  # two diagonals over: not the ±1 named
    assert "t5_relative_position_shifted" not in [found.code for found in by_two]
    index_off = compare_tables(a, _bias(_buckets() + 1)).diagnosis  # the bucket index off by one, not the position
    assert [found.code for found in index_off][:1] == ["t5_bucket_off_by_one"]
    noisy = _bias(_buckets(shift=1)) + np.random.default_rng(3).normal(size=a.shape).astype(np.float32) * 1e-2
    assert "t5_relative_position_shifted" not in [found.code for found in compare_tables(a, noisy).diagnosis]


@pytest.mark.parametrize("direction", ["--bidirectional", "--causal"])
def test_files_on_the_command_line_from_pecli_generate(cli, tmp_path: Path, direction: str) -> None:
    np.save(tmp_path / "w.npy", WEIGHT)
    a = tmp_path / "a.npy"
    made = cli("generate", "t5", "--part", "bias", "--bias-from", str(tmp_path / "w.npy"), "--len", str(LENGTH),
               direction, "-o", str(a))  # fmt: skip
    assert made.code == 0, made.stderr
    bidirectional = direction == "--bidirectional"
    assert np.array_equal(np.load(a), _bias(_buckets(bidirectional=bidirectional)))  # pecli's table is transformers'
    np.save(tmp_path / "b.npy", _bias(_buckets(shift=-1, bidirectional=bidirectional)))
    result = cli("compare", str(a), str(tmp_path / "b.npy"), "--json")
    assert result.code == 1, result.stderr
    found = json.loads(result.out)["diagnosis"][0]
    assert (found["code"], found["figures"]["shift"]) == ("t5_relative_position_shifted", -1)
    text = cli("compare", str(a), str(tmp_path / "b.npy"))
    assert "the relative position off by one" in text.out and "no known cause" not in text.out + text.stderr


def test_reference_on_the_b_side_states_it_of_the_letters(cli, tmp_path: Path) -> None:
    np.save(tmp_path / "w.npy", WEIGHT)
    np.save(tmp_path / "shifted.npy", _bias(_buckets(shift=1)))
    spec = f"t5:part=bias,bias_from={tmp_path / 'w.npy'}"
    result = cli("compare", str(tmp_path / "shifted.npy"), spec, "--json")
    assert result.code == 1, result.stderr
    found = json.loads(result.out)["diagnosis"][0]
    # A (the file) is B (the spec) taken of j − i + 1: B[:, i, j] = A[:, i, j − 1]
    assert (found["code"], found["figures"]["shift"]) == ("t5_relative_position_shifted", -1)
    assert "A[:, i, j] = B[:, i, j + 1]" in found["message"] and "shifted by -1" in found["message"]


def test_bucket_tables_without_weights_name_the_row_shift(cli, tmp_path: Path) -> None:
    """The (L, L) bucket tables themselves: bucket(j − (i − 1)) is A's row i − 1, said as positions shifted."""
    a = tmp_path / "a.npy"
    assert cli("generate", "t5", "--len", str(LENGTH), "--causal", "-o", str(a)).code == 0
    assert np.array_equal(np.load(a), _buckets(bidirectional=False))
    np.save(tmp_path / "b.npy", _buckets(shift=1, bidirectional=False).astype(np.float32))
    result = cli("compare", str(a), str(tmp_path / "b.npy"), "--json")
    assert result.code == 1, result.stderr
    found = json.loads(result.out)["diagnosis"][0]
    assert (found["code"], found["figures"]["shift"]) == ("positions_shifted", -1)
