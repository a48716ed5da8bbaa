"""Issue 30 (compare names the cause of a difference with its evidence), session 14's third diagnosis attack:
heads in another order named as such, a transposed table said so, DeepSeek's mscale applied alone in an engine
author's words, the kind of each source named, and T5's relative-position bias."""

import json
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_tables
from tests.conftest import assert_clean_error

MSCALE_ALONE = "mscale applied alone, not divided by yarn_get_mscale(factor, mscale_all_dim)"

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def _alibi() -> np.ndarray:
    return np.asarray(pecli.encode("alibi", 64, None, heads=8, dtype="float32"))


@pytest.mark.parametrize("order", [[1, 0, 2, 3, 4, 5, 6, 7], [3, 1, 2, 0, 5, 4, 6, 7]])
def test_alibi_heads_swapped_named_as_a_permutation_first(order: list[int]) -> None:
    a = _alibi()
    result = compare_tables(a, a[order])
    assert not result.agree
    first = result.diagnosis[0]
    assert first.code == "heads_permuted", [found.code for found in result.diagnosis]
    assert first.figures["permutation"] == order
    assert "another order" in first.message


def test_heads_permuted_within_noise_and_reversal_keeps_alibi_name() -> None:
    a = _alibi()
    noisy = a[[1, 0, 2, 3, 4, 5, 6, 7]] * (1 + 1e-7)
    assert compare_tables(a, noisy).diagnosis[0].code == "heads_permuted"
    codes = [found.code for found in compare_tables(a, a[::-1]).diagnosis]
    assert codes[0] == "alibi_heads_reversed" and "heads_permuted" not in codes


def _t5_bias(length: int = 32, heads: int = 4, **buckets: object) -> np.ndarray:
    from pecli.schemes.t5 import t5_bias, t5_bucket_table

    weight = np.random.default_rng(0).normal(size=(32, heads))  # (num_buckets, heads), as T5's learned table
    return np.asarray(t5_bias(t5_bucket_table(length, **buckets), weight, dtype="float32"))  # type: ignore[arg-type]


def test_t5_bias_heads_swapped_named() -> None:
    a = _t5_bias()
    result = compare_tables(a, a[[0, 2, 1, 3]])
    assert [found.code for found in result.diagnosis][:1] == ["heads_permuted"]


def test_transposed_table_said_so(cli, tmp_path: Path) -> None:
    table = np.asarray(pecli.encode("sinusoidal", 128, 64, dtype="float32"))
    np.save(tmp_path / "a.npy", table)
    np.save(tmp_path / "b.npy", np.ascontiguousarray(table.T))
    result = cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert_clean_error(result, 2, "shape mismatch", "B is A transposed", "transpose")
    result = cli("compare", "sinusoidal", str(tmp_path / "b.npy"), "--d", "64", "--len", "128")
    assert_clean_error(result, 2, "B is A transposed", "--len × --d")
    other = np.zeros((64, 128), np.float32)
    np.save(tmp_path / "c.npy", other)
    result = cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "c.npy"))
    assert_clean_error(result, 2, "shape mismatch")
    assert "transposed" not in result.stderr


def test_deepseek_mscale_alone_named_in_an_engine_authors_words(cli, tmp_path: Path) -> None:
    spec = "rope:scaling=yarn,factor=40,mscale=1.0,mscale_all_dim=0.707,original_max_position=4096,part=cos"
    written = cli("generate", spec, "--d", "64", "--len", "256", "--dtype", "float64", "-o", str(tmp_path / "a.npy"))
    assert written.code == 0, written.stderr
    reference = np.load(tmp_path / "a.npy")
    factor = 1 + 0.1 * 0.707 * np.log(40)  # the engine's cos·mscale(f, 1.0) against cos·mscale(f, 1)/mscale(f, 0.707)
    np.save(tmp_path / "engine.npy", reference * factor)
    result = cli("compare", spec, str(tmp_path / "engine.npy"), "--d", "64", "--len", "256", "--json")
    assert result.code == 1, result.stderr
    found = json.loads(result.out)["diagnosis"][0]
    assert found["code"] == "constant_factor"
    assert found["figures"]["matches"] == MSCALE_ALONE
    assert "mscale applied alone, not divided by yarn_get_mscale(factor, mscale_all_dim)" in found["message"]


def test_info_warning_shares_the_words() -> None:
    from pecli.models.info import config_warnings

    warnings = config_warnings({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "max_position_embeddings": 163840,
                                "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                                                 "original_max_position_embeddings": 4096}})  # fmt: skip
    assert any(MSCALE_ALONE in warning for warning in warnings), warnings


def test_model_directory_named_as_such(cli, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((8, 64), np.float32))
    model = str(MODELS / "llama-default")
    result = cli("compare", model, str(tmp_path / "x.npy"), "--d", "64")
    assert_clean_error(result, 2, "A is a model directory, B a file", "--d")
    assert "A and B are files" not in result.stderr
    result = cli("compare", str(tmp_path / "x.npy"), str(MODELS / "llama-default" / "config.json"), "--d", "64")
    assert_clean_error(result, 2, "A is a file, B a model's config")
    result = cli("compare", str(tmp_path / "x.npy"), str(tmp_path / "x.npy"), "--d", "64")
    assert_clean_error(result, 2, "A and B are files")


@pytest.mark.parametrize(
    ("changes", "code"),
    [({"max_distance": 64}, "t5_max_distance"), ({"num_buckets": 16}, "t5_num_buckets"),
     ({"bidirectional": False}, "bidirectional")],
)  # fmt: skip
def test_t5_buckets_with_another_setting_named(cli, tmp_path: Path, changes: dict, code: str) -> None:
    from pecli.schemes.t5 import t5_bucket_table

    np.save(tmp_path / "b.npy", t5_bucket_table(64, **changes).astype(np.float32))
    result = cli("compare", "t5", str(tmp_path / "b.npy"), "--len", "64", "--json")
    assert result.code == 1, result.stderr
    assert json.loads(result.out)["diagnosis"][0]["code"] == code
