"""plot --view pca: a trained table's positions on their first principal components (all-MiniLM-L6-v2's table)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.analysis.pca import position_pca
from tests.conftest import assert_clean_error
from tests.paths import DATA

MINILM = DATA / "minilm_position_embeddings.npy"


@pytest.fixture(scope="module")
def minilm() -> np.ndarray:
    return np.load(MINILM).astype(np.float64)


def test_explained_variance_equals_numpy_svd(minilm):
    result = position_pca(minilm, components=8)
    singular = np.linalg.svd(minilm - minilm.mean(axis=0), compute_uv=False)
    np.testing.assert_allclose(result.explained_variance_ratio, singular[:8] ** 2 / (singular**2).sum(), rtol=1e-12)
    np.testing.assert_allclose(result.explained_variance_ratio[:2], [0.1235, 0.1217], atol=5e-4)  # the figure's axes
    # the coordinates are the centred table projected on the components
    _, _, components = np.linalg.svd(minilm - minilm.mean(axis=0), full_matrices=False)
    projected = (minilm - minilm.mean(axis=0)) @ components[:8].T
    np.testing.assert_allclose(np.abs(result.coordinates), np.abs(projected), atol=1e-10)


def test_trained_table_is_ordered_in_its_principal_components(minilm):
    result = position_pca(minilm, components=8)
    points = result.coordinates
    consecutive = np.median(np.linalg.norm(np.diff(points, axis=0), axis=1))
    i, j = np.random.default_rng(0).integers(0, len(points), (2, 20000))
    random_pairs = np.median(np.linalg.norm(points[i] - points[j], axis=1))
    assert consecutive < 0.5 * random_pairs  # 0.24 against 0.55: neighbours are near
    # in the first two, MiniLM's positions turn round a ring at a steady ~1.08 rad per position
    angle = np.unwrap(np.arctan2(points[:, 1], points[:, 0]))
    steps = np.abs(np.diff(angle))
    assert np.percentile(steps, 10) > 0.9 and np.percentile(steps, 90) < 1.25
    shuffled = np.random.default_rng(1).permutation(minilm)
    noise = position_pca(shuffled).coordinates
    noise_steps = np.abs(np.diff(np.unwrap(np.arctan2(noise[:, 1], noise[:, 0]))))
    assert np.percentile(noise_steps, 90) - np.percentile(noise_steps, 10) > 1.5  # no order once shuffled


def test_grid_leaves_prefix_tokens_out_and_signs_follow_position():
    rows, cols = np.meshgrid(np.arange(6.0), np.arange(5.0), indexing="ij")
    grid = np.stack([rows.ravel(), 0.5 * cols.ravel(), np.zeros(30)], axis=1)
    table = np.concatenate([np.full((1, 3), 100.0), grid])[None]  # (1, 1 + 30, 3): a class token first
    result = position_pca(table, grid=(6, 5))
    assert result.prefix_tokens == 1 and result.coordinates.shape == (30, 2)
    np.testing.assert_allclose(result.coordinates[:, 0], rows.ravel() - 2.5, atol=1e-12)  # rows on PC1, growing
    np.testing.assert_allclose(result.explained_variance_ratio, [2.9167 / (2.9167 + 0.5), 0.5 / 3.4167], atol=1e-4)


def test_cli_json_and_image(cli, tmp_path):
    result = cli("plot", str(MINILM), "--view", "pca", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    assert document["positions"] == 512 and len(document["coordinates"]) == 512
    assert document["explained_variance_ratio"][:2] == pytest.approx([0.1235, 0.1217], abs=5e-4)
    image = tmp_path / "pca.png"
    result = cli("plot", str(MINILM), "--view", "pca", "-o", str(image), "--json")
    assert result.code == 0 and image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(result.out)["explained_variance_ratio"] == document["explained_variance_ratio"]
    text = cli("plot", str(MINILM), "--view", "pca")
    assert "12.3%, 12.2%" in text.out and "-o pca.png" in text.out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["sinusoidal", "--d", "8", "--len", "16"], ["scheme"]),
        ([str(MINILM), "--grid", "30x30"], ["900 positions"]),
        ([str(MINILM), "--grid", "3"], ["not a grid"]),
        ([str(MINILM), "--rows", "0:10"], ["--rows"]),
    ],
)
def test_bad_input(cli, args, words):
    assert_clean_error(cli("plot", *args, "--view", "pca"), 2, *words)


def test_grid_is_a_scheme_option_without_the_pca_view(cli):
    assert_clean_error(cli("plot", str(MINILM), "--grid", "16x32"), 2, "--grid", "file")
