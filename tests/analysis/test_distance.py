"""``pecli distance`` and pecli.analysis.distance: hand-checked matrices, offset profiles, long tables."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pecli
from pecli.analysis.distance import METRICS, block_mean_matrix, distance_blocks, distance_matrix, offset_profile
from pecli.io import read_table
from pecli.render.downsample import block_edges
from tests.conftest import assert_clean_error, run_pecli

ROW, COL = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")


def _count(length, dim):
    return pecli.encode("count", length, dim, dtype="float64")


def test_count_table_matrices_by_hand():
    table = _count(6, 4)  # PE[p, :] = p
    np.testing.assert_array_equal(distance_matrix(table, "euclidean"), np.abs(ROW - COL) * 2.0)  # |i − j| · sqrt(4)
    np.testing.assert_array_equal(distance_matrix(table, "dot"), ROW * COL * 4.0)
    # every non-zero row points the same way; row 0 is the zero vector, whose cosine is 0
    expected_cosine = ((ROW > 0) & (COL > 0)).astype(float)
    np.testing.assert_array_equal(distance_matrix(table, "cosine"), expected_cosine)


def test_binary_table_by_hand():
    table = pecli.encode("binary", 4, 2, dtype="float64")  # rows 00, 10, 01, 11 (least significant first)
    assert distance_matrix(table, "dot").tolist() == [[0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 1], [0, 1, 1, 2]]
    np.testing.assert_allclose(distance_matrix(table, "euclidean")[1], [1, 0, np.sqrt(2), 1])


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 6)), elements=st.floats(-100, 100)))
def test_blocks_and_profile_equal_the_brute_force_matrix(table):
    for metric in ("dot", "cosine", "euclidean"):
        brute = {
            "dot": table @ table.T,
            "euclidean": np.sqrt(((table[:, None, :] - table[None, :, :]) ** 2).sum(-1)),
        }.get(metric)
        blocks = np.vstack(list(distance_blocks(table, metric, dtype="float64", block_bytes=8 * len(table) * 3)))
        full = distance_matrix(table, metric)
        # BLAS may round a product differently in another block shape: compare to float64 precision
        scale = 1e-12 * max(1.0, np.abs(table).max() ** 2 * table.shape[1])
        if metric == "euclidean":  # the square root amplifies the rounding of near-zero squared distances
            scale = 1e-7 * max(1.0, np.abs(table).max()) * np.sqrt(table.shape[1])
        np.testing.assert_allclose(blocks, full, rtol=1e-12, atol=scale)
        if brute is not None:
            np.testing.assert_allclose(full, brute, atol=1e-6 * max(1.0, np.abs(table).max() ** 2))
        profile = offset_profile(table, metric, tile_bytes=8 * 4 * (len(table) + 64))  # several tiles
        for h in range(len(table)):
            diagonal = np.diagonal(full, offset=h)
            assert profile.count[h] == len(diagonal)
            np.testing.assert_allclose(
                [profile.min[h], profile.max[h], profile.mean[h]],
                [diagonal.min(), diagonal.max(), diagonal.mean()],
                rtol=1e-12,
                atol=scale,
            )


def test_sinusoidal_dot_profile_is_symmetric_and_decays():
    length, dim = 256, 64
    table = pecli.encode("sinusoidal", length, dim, dtype="float64")
    matrix = distance_matrix(table, "dot")
    # symmetric around each position: PE[i]·PE[i+h] = PE[i]·PE[i−h]
    for h in (1, 5, 40, 100):
        np.testing.assert_allclose(
            matrix[h:-h, 2 * h :].diagonal(), matrix[h:-h, : length - 2 * h].diagonal(), atol=1e-9
        )
    profile = offset_profile(table, "dot")
    freqs = 10000.0 ** (-2 * np.arange(dim // 2) / dim)
    np.testing.assert_allclose(profile.mean, np.cos(np.outer(np.arange(length), freqs)).sum(1), atol=1e-9)
    assert profile.spread.max() < 1e-9  # a function of h only
    assert profile.mean[0] == pytest.approx(dim / 2) and (profile.mean[1:] < dim / 2).all()
    assert (np.diff(profile.mean[:4]) < 0).all()  # decays from the diagonal
    assert profile.mean[128:].mean() < profile.mean[1:9].mean() / 2


def test_translation_invariance_of_the_sinusoidal_distance():
    table = pecli.encode("sinusoidal", 300, 32, dtype="float64")
    profile = offset_profile(table, "euclidean", max_offset=50)
    freqs = 10000.0 ** (-2 * np.arange(16) / 32)
    expected = np.sqrt((2 - 2 * np.cos(np.outer(np.arange(51), freqs))).sum(1))
    np.testing.assert_allclose(profile.min, expected, atol=1e-9)
    np.testing.assert_allclose(profile.max, expected, atol=1e-9)
    binary = offset_profile(pecli.encode("binary", 300, 10, dtype="float64"), "euclidean", max_offset=4)
    assert binary.spread[1] > 1  # binary indexing is not translation-invariant: 0→1 is 1 apart, 1→2 is √2


def test_profile_of_hundreds_of_thousands_of_positions():
    length = 200_000
    table = pecli.encode("sinusoidal", length, 8, dtype="float64")
    profile = offset_profile(table, "dot", max_offset=64)
    freqs = 10000.0 ** (-2 * np.arange(4) / 8)
    np.testing.assert_allclose(profile.mean, np.cos(np.outer(np.arange(65), freqs)).sum(1), atol=1e-8)
    assert profile.count[0] == length and profile.count[64] == length - 64
    assert profile.spread.max() < 1e-8


def test_cli_json_matrix_and_rows(cli):
    result = cli("distance", "count", "--d", "4", "--len", "6", "--metric", "euclidean", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    assert document["matrix"] == (np.abs(ROW - COL) * 2.0).tolist()
    result = cli("distance", "count", "--d", "4", "--len", "6", "--rows", "2:5", "--json")
    assert json.loads(result.out)["matrix"] == (np.outer([2, 3, 4], [2, 3, 4]) * 4.0).tolist()
    assert json.loads(result.out)["positions"] == [2, 5]
    tail = cli("distance", "count", "--d", "4", "--len", "6", "--rows", "-2:", "--json")  # Python slice rules
    assert json.loads(tail.out)["matrix"] == (np.outer([4, 5], [4, 5]) * 4.0).tolist()


def test_cli_profile_json(cli):
    result = cli("distance", "sinusoidal", "--d", "16", "--len", "64", "--profile", "--max-offset", "3", "--json")
    document = json.loads(result.out)
    assert document["offsets"] == [0, 1, 2, 3] and document["count"] == [64, 63, 62, 61]
    freqs = 10000.0 ** (-2 * np.arange(8) / 16)
    np.testing.assert_allclose(document["mean"], np.cos(np.outer(np.arange(4), freqs)).sum(1), atol=1e-5)


def test_cli_long_profile_stops_at_the_default_offset(cli, monkeypatch):
    monkeypatch.setattr("pecli.cli.distance.LONG_TABLE", 100)
    monkeypatch.setattr("pecli.cli.distance.DEFAULT_MAX_OFFSET", 16)
    result = cli("distance", "sinusoidal", "--d", "4", "--len", "101", "--profile", "--metric", "euclidean", "--json")
    assert result.code == 0, result.stderr
    assert len(json.loads(result.out)["offsets"]) == 17
    assert "--max-offset" in result.stderr


@pytest.mark.parametrize("suffix", ["npy", "safetensors", "csv"])
def test_cli_writes_the_matrix(cli, tmp_path, suffix):
    target = tmp_path / f"dist.{suffix}"
    result = cli("distance", "sinusoidal", "--d", "8", "--len", "20", "--metric", "cosine", "-o", str(target))
    assert result.code == 0, result.stderr
    written = np.loadtxt(target, delimiter=",") if suffix == "csv" else read_table(str(target)).array
    expected = distance_matrix(pecli.encode("sinusoidal", 20, 8), "cosine", dtype="float32")
    np.testing.assert_allclose(written, expected, atol=1e-7)
    if suffix == "safetensors":
        assert read_table(str(target)).metadata["metric"] == "cosine"


def test_cli_profile_columns_to_a_file(cli, tmp_path):
    target = tmp_path / "profile.npy"
    assert (
        cli("distance", "count", "--d", "1", "--len", "5", "--profile", "--metric", "euclidean", "-o", str(target)).code
        == 0
    )
    columns = np.load(target)
    np.testing.assert_array_equal(columns, [[h, h, h, h] for h in range(5)])  # offset, mean, min, max


def test_pipe_from_generate_to_distance(tmp_path):
    generated = run_pecli("generate", "count", "--d", "1", "--len", "4", "-o", "-")
    result = run_pecli("distance", "-", "--metric", "euclidean", "-o", "-", stdin=generated.stdout)
    assert result.code == 0, result.stderr
    target = tmp_path / "m.npy"
    target.write_bytes(result.stdout)
    np.testing.assert_array_equal(np.load(target), np.abs(np.subtract.outer(np.arange(4), np.arange(4))))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--metric", "manhattan"], ["unknown metric", "valid: dot, cosine, euclidean"]),
        (["--metric", "cosin"], ["did you mean 'cosine'"]),
        (["--rows", "5"], ["--rows", "A:B"]),
        (["--rows", "9:3"], ["--rows 9:3 selects no rows"]),
        (["--max-offset", "3"], ["--max-offset", "--profile"]),
        (["--profile", "--max-offset", "-1"], ["--max-offset", ">= 0"]),
        (["--format", "npy"], ["--format needs an output"]),
        (["-o", "dist.txt"], ["cannot tell the format"]),
    ],
)
def test_bad_input(cli, args, words):
    result = cli("distance", "count", "--d", "2", "--len", "10", *args)
    assert_clean_error(result, 2, *words)


def test_a_matrix_too_large_is_refused_before_any_work(cli):
    # --json prints every entry; the terminal and image views draw block means instead (below)
    result = cli("distance", "count", "--d", "1", "--len", "3000000", "--json")
    assert_clean_error(result, 2, "distance matrix", "1.3 PiB", "--rows", "--profile")


def test_terminal_heatmap_and_profile_chart(cli):
    result = cli("distance", "count", "--d", "2", "--len", "30", "--metric", "euclidean", "--no-color")
    assert result.code == 0, result.stderr
    lines = result.out.splitlines()
    assert lines[0].startswith("euclidean — count") and "Position ↓  Position →" in lines[1]
    assert max(len(line) for line in lines) <= 80 and len(lines) <= 24
    assert "\x1b[" not in result.out
    chart = cli("distance", "binary", "--d", "6", "--len", "64", "--profile", "--metric", "euclidean").out
    assert "│" in chart and "•" in chart  # binary: distance(x, x+h) varies with x
    flat = cli("distance", "sinusoidal", "--d", "16", "--len", "64", "--profile").out
    assert "•" in flat and "│" not in flat.split("\n", 1)[1].replace("┤", "")  # sinusoidal: it does not


@pytest.mark.parametrize("profile", [False, True])
@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_figures(cli, tmp_path, profile, suffix):
    target = tmp_path / f"figure.{suffix}"
    args = ["distance", "sinusoidal", "--d", "16", "--len", "40", "-o", str(target)] + (
        ["--profile"] if profile else []
    )
    result = cli(*args)
    assert result.code == 0, result.stderr
    head = target.read_bytes()[:64]
    assert head.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in target.read_bytes()[:2000]


def _full_block_means(matrix: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    return np.array(
        [
            [matrix[r0:r1, c0:c1].mean() for c0, c1 in itertools.pairwise(col_edges)]
            for r0, r1 in itertools.pairwise(row_edges)
        ]
    )


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(1, 90),
    dim=st.integers(1, 12),
    row_blocks=st.integers(1, 12),
    col_blocks=st.integers(1, 12),
    metric=st.sampled_from(METRICS),
    zero_row=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_block_mean_matrix_equals_the_block_means_of_the_full_matrix(
    length, dim, row_blocks, col_blocks, metric, zero_row, seed
):
    table = np.random.default_rng(seed).normal(size=(length, dim)).astype(np.float32)
    if zero_row:
        table[length // 2] = 0.0
    row_edges = block_edges(length, row_blocks, uniform=True)
    col_edges = block_edges(length, col_blocks)
    full = distance_matrix(table, metric)
    got = block_mean_matrix(table, row_edges, col_edges, metric)
    if metric == "euclidean":  # the root of each block's mean squared distance, compared squared:
        # the root amplifies the rounding of near-zero squared distances
        expected, got = _full_block_means(full**2, row_edges, col_edges), got**2
    else:
        expected = _full_block_means(full, row_edges, col_edges)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * (1 + np.abs(expected).max()))


def test_block_mean_matrix_of_the_sinusoidal_table_matches_its_full_matrix():
    table = pecli.encode("sinusoidal", 1000, 64)
    edges = block_edges(1000, 37, uniform=True)
    for metric in ("dot", "cosine"):
        np.testing.assert_allclose(
            block_mean_matrix(table, edges, edges, metric),
            _full_block_means(distance_matrix(table, metric), edges, edges),
            atol=1e-10,
        )


def test_cli_views_of_a_long_table_draw_block_means_without_the_matrix(cli, monkeypatch, tmp_path):
    import pecli.analysis.distance as distance

    def refuse(*args, **kwargs):
        raise AssertionError("the full matrix was built")

    monkeypatch.setattr(distance, "distance_blocks", refuse)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("LINES", "20")
    result = cli("distance", "sinusoidal", "--d", "16", "--len", "200000", "--no-color")
    assert result.code == 0, result.stderr
    assert "200000 × 200000 →" in result.out
    figure = tmp_path / "dist.png"
    result = cli("distance", "sinusoidal", "--d", "16", "--len", "200000", "--metric", "euclidean", "-o", str(figure))
    assert result.code == 0, result.stderr
    assert figure.stat().st_size > 0 and "rows averaged to " in result.stderr
    assert "(200000 rows), columns averaged to " in result.stderr
