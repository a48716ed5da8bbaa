"""Relative schemes on the command line: t5 generate, distance/plot/compare of rope, alibi and t5, bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pecli.io import read_table
from pecli.schemes.rope import apply_rotary, rope_table
from tests.conftest import assert_clean_error
from tests.paths import DATA

DATA = DATA
YARN = "rope:scaling=yarn,factor=4,original_max_position=4096"
LLAMA3 = "rope:scaling=llama3,factor=4,original_max_position=4096"


def _t5_reference(config: dict) -> np.ndarray:
    """transformers' buckets for −4096 … 4096 (tests/data/make_t5_references.py) for ``config``."""
    record = json.loads((DATA / "t5_buckets.json").read_text())
    index = record["configs"].index(config)
    return np.load(DATA / "t5_buckets.npy")[index]


def _rotated_scores(cos: np.ndarray, sin: np.ndarray, query: np.ndarray, key: np.ndarray, layout: str) -> np.ndarray:
    """s(m, n) = ⟨R_m q, R_n k⟩ / d, rotating q and k with the tables themselves (apply_rotary)."""
    rotated_q = apply_rotary(np.broadcast_to(query, cos.shape), cos, sin, layout)
    rotated_k = apply_rotary(np.broadcast_to(key, cos.shape), cos, sin, layout)
    return rotated_q @ rotated_k.T / cos.shape[1]


# -- t5 in the registry --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags,config",
    [
        ((), {"bidirectional": True, "num_buckets": 32, "max_distance": 128}),
        (("--causal", "--num-buckets", "8", "--max-distance", "16"),
         {"bidirectional": False, "num_buckets": 8, "max_distance": 16}),
    ],
)  # fmt: skip
def test_generate_t5_writes_transformers_buckets(cli, tmp_path, flags, config):
    path = tmp_path / "b.npy"
    result = cli("generate", "t5", "--len", "64", *flags, "-o", str(path))
    assert result.code == 0, result.stderr
    reference = _t5_reference(config)
    positions = np.arange(64)
    expected = reference[4096 + positions[None, :] - positions[:, None]]  # memory − query
    np.testing.assert_array_equal(np.load(path), expected.astype(np.float32))


@pytest.mark.parametrize(
    "key", [("--bias-key", "relative_attention_bias.weight"), ("--key", "relative_attention_bias.weight"),
            ("--key", "attention_bias")], ids=["bias-key", "key", "part-of-the-name"],
)  # fmt: skip
def test_t5_bias_expands_a_learned_table_from_a_file(cli, tmp_path, key):
    """``--bias-from FILE --key KEY`` (or ``--bias-key``): the (buckets, heads) table a T5 checkpoint holds."""
    from safetensors.numpy import save_file

    weight = np.random.default_rng(4).standard_normal((32, 3)).astype(np.float32)
    save_file({"relative_attention_bias.weight": weight, "other": np.zeros((2, 2), np.float32)},
              str(tmp_path / "t5.safetensors"))  # fmt: skip
    out = tmp_path / "bias.npy"
    bias = ["t5", "--len", "20", "--part", "bias", "--bias-from", str(tmp_path / "t5.safetensors"), *key]
    result = cli("generate", *bias, "-o", str(out))
    assert result.code == 0, result.stderr
    buckets = _t5_reference({"bidirectional": True, "num_buckets": 32, "max_distance": 128})
    relative = np.arange(20)[None, :] - np.arange(20)[:, None]
    expected = np.stack([weight[buckets[4096 + relative], head] for head in range(3)])
    np.testing.assert_array_equal(np.load(out), expected)
    # plot and distance have a --key of their own: for a scheme that reads a file, it names the tensor there
    profile = cli("distance", *bias, "--profile", "-o", str(tmp_path / "profile.npy"))
    assert profile.code == 0, profile.stderr
    offsets = np.arange(-19, 20)  # h = m − n; the bias of query m against key n = m − h
    np.testing.assert_array_equal(np.load(tmp_path / "profile.npy")[:, 1:].T, weight[buckets[4096 - offsets]].T)
    assert cli("plot", *bias, "-o", str(tmp_path / "bias.png")).code == 0


def test_t5_key_and_bias_key_together_or_without_a_bias_file(cli, tmp_path):
    np.save(tmp_path / "w.npy", np.zeros((32, 2)))
    both = ["--bias-from", str(tmp_path / "w.npy"), "--key", "a", "--bias-key", "b"]
    assert_clean_error(cli("plot", "t5", "--part", "bias", "--len", "8", *both), 2, "--key and --bias-key")
    assert_clean_error(cli("plot", "t5", "--len", "8", "--key", "a"), 2, "--key applies to files")


def test_t5_is_listed_with_its_options(cli):
    listing = cli("schemes")
    assert listing.code == 0 and "t5" in listing.out
    help_text = cli("generate", "--help").out
    for flag in ("--num-buckets", "--max-distance", "--bidirectional", "--causal", "--bias-from"):
        assert flag in help_text


# -- distance of rope -----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_distance_rope_file_profile_is_the_rotated_dot_product(cli, tmp_path, layout):
    path = tmp_path / "rope.safetensors"
    options = ("--layout", layout, "--scaling", "yarn", "--factor", "4", "--original-max-position", "32")
    generated = cli("generate", "rope", "--d", "32", "--len", "96", *options, "--dtype", "float64", "-o", str(path))
    assert generated.code == 0, generated.stderr
    result = cli("distance", str(path), "--profile", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    cos, sin = (read_table(str(path), key=name).array for name in ("cos", "sin"))
    direct = _rotated_scores(cos, sin, np.ones(32), np.ones(32), layout)
    np.testing.assert_allclose(document["score"], direct[:, 0], rtol=0, atol=1e-12)
    assert np.all(np.array(document["bound"]) >= np.abs(document["score"]))


def test_distance_rope_random_matrix_matches_rotation(cli):
    result = cli("distance", "rope", "--d", "16", "--len", "12", "--qk", "random", "--seed", "5", "--json")
    assert result.code == 0, result.stderr
    matrix = np.array(json.loads(result.out)["matrix"])
    rng = np.random.default_rng(5)
    query, key = rng.standard_normal(16), rng.standard_normal(16)
    cos, sin = rope_table(12, 16, part="cos", dtype="float64"), rope_table(12, 16, part="sin", dtype="float64")
    np.testing.assert_allclose(matrix, _rotated_scores(cos, sin, query, key, "half"), rtol=0, atol=1e-12)
    spreads = [np.ptp(np.diagonal(matrix, offset)) for offset in range(-11, 12)]
    assert max(spreads) < 1e-12  # a function of m − n only


def test_distance_rope_profile_streams_offset_score_bound_columns(cli, tmp_path):
    path = tmp_path / "profile.npy"
    result = cli("distance", "rope", "--d", "8", "--len", "40", "--profile", "-o", str(path))
    assert result.code == 0, result.stderr
    columns = np.load(path)
    theta = 10000.0 ** (-np.arange(4) / 4)
    expected = np.cos(np.outer(np.arange(40), theta)).sum(axis=1) / 4  # RoFormer's Σ cos(hθ) / (d/2)
    np.testing.assert_allclose(columns[:, 1], expected, atol=1e-12)
    np.testing.assert_array_equal(columns[:, 0], np.arange(40))


def test_distance_rope_terminal_view_draws_block_means_of_a_long_context(cli):
    result = cli("distance", "rope", "--d", "64", "--len", "100000", "--no-color")
    assert result.code == 0, result.stderr
    assert result.out.startswith("rotary score s(m, n), qk=ones")
    assert "100000 × 100000 →" in result.out and "block means" in result.out


# -- distance of alibi and t5 ----------------------------------------------------------------------


def test_distance_alibi_profile_per_head(cli):
    result = cli("distance", "alibi", "--heads", "4", "--len", "10", "--profile", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    slopes = 2.0 ** (-8 * np.arange(1, 5) / 4)  # Press et al.: 2^(−8(h+1)/H)
    np.testing.assert_array_equal(document["bias"], -np.outer(slopes, np.arange(10)))
    assert document["heads"][0] == "head 0, slope 0.25"


def test_distance_t5_profile_is_the_bucket_of_minus_the_offset(cli):
    result = cli("distance", "t5", "--len", "50", "--profile", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    reference = _t5_reference({"bidirectional": True, "num_buckets": 32, "max_distance": 128})
    offsets = np.array(document["offsets"])
    np.testing.assert_array_equal(offsets, np.arange(-49, 50))
    np.testing.assert_array_equal(document["bucket"][0], reference[4096 - offsets])  # key − query = −h


# -- plot --view wavelength -------------------------------------------------------------------------


def test_plot_wavelength_json_gives_each_pairs_numbers(cli):
    result = cli("plot", "rope", "--d", "16", "--view", "wavelength", "--scaling", "linear", "--factor", "4", "--json")
    assert result.code == 0, result.stderr
    pairs = json.loads(result.out)["pairs"]
    theta = 10000.0 ** (-2 * np.arange(8) / 16)
    np.testing.assert_allclose([p["wavelength_original"] for p in pairs], 2 * math.pi / theta, rtol=1e-15)
    np.testing.assert_allclose([p["wavelength"] for p in pairs], 4 * 2 * math.pi / theta, rtol=1e-15)
    assert {p["factor"] for p in pairs} == {4.0}


def test_plot_wavelength_terminal_shows_the_llama3_bands(cli):
    result = cli("plot", "rope", "--d", "128", "--base", "500000", "--view", "wavelength", "--scaling", "llama3",
                 "--factor", "8", "--original-max-position", "8192")  # fmt: skip
    assert result.code == 0, result.stderr
    assert "context 8192" in result.out and "h high frequency" in result.out and "l low frequency" in result.out


# -- compare ---------------------------------------------------------------------------------------------


def test_compare_yarn_and_llama3_names_the_pairs_that_differ(cli):
    result = cli("compare", YARN, LLAMA3, "--d", "128", "--json")
    assert result.code == 1, result.stderr
    document = json.loads(result.out)
    differing = document["differing_pairs"]
    # both leave the fast pairs alone and divide the slow ones by 4: they differ in between only
    assert differing[0]["start"] > 0 and differing[-1]["stop"] < 64
    ratio = np.array(document["ratio"])
    assert np.all(ratio[: differing[0]["start"]] == 1.0) and np.all(ratio[differing[-1]["stop"] :] == 1.0)
    assert document["profile"]["parted_at"] is not None


def test_compare_equal_rope_specs_agrees(cli):
    result = cli("compare", "rope", "rope:base=10000", "--d", "32", "--len", "256")
    assert result.code == 0, result.stderr
    assert "every pair the same" in result.out and result.out.rstrip().endswith("same encoding")


def test_compare_properties_of_rope_and_alibi(cli):
    result = cli("compare", "--properties", "rope", "alibi:heads=8", "rope:scaling=dynamic,factor=4,"
                 "original_max_position=64", "--d", "32", "--len", "128", "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    verdicts = [{c["name"]: c["holds"] for c in s["checks"]} for s in json.loads(result.out)["schemes"]]
    assert verdicts[0] == {"deterministic": True, "length-independent": True, "translation-invariant": True,
                           "bounded": True, "decay": True}  # fmt: skip
    assert verdicts[1]["bounded"] is False and verdicts[1]["translation-invariant"] is True
    assert verdicts[2]["length-independent"] is False  # dynamic NTK rescales with the length


# -- bad input --------------------------------------------------------------------------------------------


def test_qk_for_a_scheme_without_query_and_key(cli):
    assert_clean_error(cli("distance", "alibi", "--heads", "4", "--len", "8", "--qk", "ones"), 2, "--qk")
    assert_clean_error(cli("distance", "sinusoidal", "--d", "8", "--len", "8", "--qk", "random"), 2, "--qk")
    assert_clean_error(cli("distance", "rope", "--d", "8", "--len", "8", "--seed", "3"), 2, "--qk random")
    assert_clean_error(cli("distance", "rope", "--d", "8", "--len", "8", "--qk", "both"), 2, "qk")


def test_view_wavelength_of_a_non_rope_table(cli, tmp_path):
    assert_clean_error(cli("plot", "sinusoidal", "--d", "8", "--len", "8", "--view", "wavelength"), 2, "rope")
    path = tmp_path / "pe.npy"
    assert cli("generate", "--d", "8", "--len", "8", "-o", str(path)).code == 0
    assert_clean_error(cli("plot", str(path), "--view", "wavelength"), 2, "rope")
    assert_clean_error(cli("plot", "rope", "--d", "8", "--view", "spectrum"), 2, "view")


@pytest.mark.parametrize("shape", [(16, 2), (32, 2, 2), (32,)])
def test_bias_file_whose_shape_is_not_buckets_by_heads(cli, tmp_path, shape):
    weights, out = tmp_path / "w.npy", tmp_path / "bias.npy"
    np.save(weights, np.zeros(shape))
    result = cli("generate", "t5", "--len", "8", "--part", "bias", "--bias-from", str(weights), "-o", str(out))
    assert_clean_error(result, 2, "num_buckets")
    assert not out.exists()


def test_plot_alibi_draws_one_panel_per_head(cli, tmp_path):
    path = tmp_path / "alibi.png"
    result = cli("plot", "alibi", "--heads", "4", "--len", "64", "-o", str(path))
    assert result.code == 0, result.stderr
    assert path.read_bytes().startswith(b"\x89PNG")
    terminal = cli("plot", "alibi", "--heads", "2", "--len", "16", "--no-color")
    assert terminal.code == 0 and "head 0, slope 0.0625" in terminal.out and "head 1, slope 0.003906" in terminal.out


def test_table_options_on_a_relative_scheme_are_refused(cli):
    assert_clean_error(cli("distance", "rope", "--d", "8", "--len", "16", "--rows", "0:4"), 2, "--rows")
    assert_clean_error(cli("distance", "alibi", "--heads", "2", "--len", "8", "--metric", "cosine"), 2, "--metric")


def test_wavelength_and_profile_charts_fit_an_80_column_screen(cli, monkeypatch):
    """At 80 × 24 the context label and axis caption wrapped, and the profile's note pushed its title off."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    result = cli("plot", "rope", "--d", "128", "--view", "wavelength", "--scaling", "yarn", "--factor", "8",
                 "--original-max-position", "2048")  # fmt: skip
    assert result.code == 0, result.stderr
    assert max(len(line) for line in result.out.splitlines()) <= 80 and "context 2048" in result.out
    profile = cli("distance", "rope", "--d", "64", "--len", "256", "--profile")
    assert max(len(line) for line in profile.out.splitlines()) <= 80 and len(profile.out.splitlines()) <= 23
