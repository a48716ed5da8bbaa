"""The Python API at its edges, round two: refusals that name the argument, no numpy warning (issue 30)."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

import pecli
from tests.conftest import assert_clean_error


def _refused(call, *words: str) -> pecli.PecliError:
    """``call()`` raises a pecli error naming ``words``, and numpy warns nothing on the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(pecli.PecliError) as caught:
            call()
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))
    return caught.value


# --- complex arrays: refused by dtype, never cast with a ComplexWarning ---------------------------


@pytest.mark.parametrize(
    "timesteps", [np.array([1 + 2j, 3]), [np.complex64(1)], np.zeros(3, dtype=np.complex64)], ids=repr
)
def test_complex_timesteps_are_refused_by_dtype(timesteps):
    error = _refused(lambda: pecli.timestep_embedding(timesteps, 8), "timesteps", "complex")
    assert isinstance(error, pecli.ParameterError)


def test_real_timesteps_of_any_real_dtype_still_embed():
    for timesteps in (np.array([0, 250], dtype=np.int16), [0.5, 999.0], np.array([1.0], dtype=np.float16)):
        assert pecli.timestep_embedding(timesteps, 4, dtype="float64").shape == (len(timesteps), 4)


@pytest.mark.parametrize("function", ["identify", "figure"])
def test_complex_arrays_are_refused_by_the_inspecting_api(function):
    table = (np.arange(32).reshape(8, 4) + 1j).astype(np.complex64)
    _refused(lambda: getattr(pecli, function)(table), "complex64", "not a real number type")


def test_identify_table_refuses_a_complex_table():
    from pecli.analysis.identify import identify_table

    _refused(lambda: identify_table(np.ones((8, 4), dtype=np.complex128)), "complex128")


def test_identify_cli_refuses_a_complex_npy_without_a_warning(tmp_path, cli):
    path = tmp_path / "c.npy"
    np.save(path, (np.arange(32).reshape(8, 4) + 1j).astype(np.complex64))
    result = cli("identify", str(path))
    assert_clean_error(result, 2, "complex64")
    assert "ComplexWarning" not in result.stderr


# --- figure: a bad keyword names figure() and the valid ones ------------------------------------


def test_figure_names_itself_and_the_valid_keywords():
    error = _refused(lambda: pecli.figure(np.zeros((4, 4)), nope=1), "figure()", "'nope'")
    assert "heatmap_figure" not in str(error)
    assert "cmap" in error.hint and "title" in error.hint


def test_figure_style_options_are_all_accepted_by_the_heatmap():
    from pecli.api import _FIGURE_STYLE
    from pecli.render.image import heatmap_figure

    assert set(_FIGURE_STYLE) <= set(inspect.signature(heatmap_figure).parameters)
    drawn = pecli.figure(np.eye(4), cmap="viridis", figsize=(3, 2), dpi=50, x_label="x", y_label="y")
    assert drawn.get_axes()[0].get_xlabel() == "x"


# --- apply_rotary: the shapes it expects, not numpy's broadcast error -----------------------------


def _parts(length: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    return pecli.rope_table(length, dim, part="cos", dtype="float64"), pecli.rope_table(
        length, dim, part="sin", dtype="float64"
    )


def test_apply_rotary_names_a_sequence_axis_that_does_not_match():
    cos, sin = _parts(8, 16)
    _refused(lambda: pecli.apply_rotary(np.zeros((2, 5, 16)), cos, sin), "sequence axis is 5", "8 positions")


def test_apply_rotary_names_a_width_that_does_not_match():
    cos, sin = _parts(8, 16)
    _refused(lambda: pecli.apply_rotary(np.zeros((2, 8, 12)), cos, sin), "last axis is 12", "d is 16")


def test_apply_rotary_names_cos_and_sin_of_different_shapes():
    cos, _ = _parts(8, 16)
    _, sin = _parts(7, 16)
    _refused(lambda: pecli.apply_rotary(np.zeros((8, 16)), cos, sin), "(8, 16)", "(7, 16)")


def test_apply_rotary_still_broadcasts_over_batch_and_one_position():
    cos, sin = _parts(8, 16)
    x = np.random.default_rng(0).normal(size=(3, 8, 16))
    rotated = pecli.apply_rotary(x, cos, sin)
    assert rotated.shape == (3, 8, 16)
    # a rotation keeps each pair's norm: x_i² + x_{i+d/2}² is unchanged
    pairs = x[..., :8] ** 2 + x[..., 8:] ** 2
    assert np.allclose(rotated[..., :8] ** 2 + rotated[..., 8:] ** 2, pairs)
    assert pecli.apply_rotary(x, cos[:1], sin[:1]).shape == (3, 8, 16)


# --- iter_row_chunks: chunk_bytes checked at the call ---------------------------------------------


@pytest.mark.parametrize("chunk_bytes", [0, -1, math.nan, True, 1.5])
def test_iter_row_chunks_refuses_a_chunk_size_that_is_not_a_positive_integer(chunk_bytes):
    # refused at the call itself, not at the first next()
    error = _refused(lambda: pecli.iter_row_chunks("sinusoidal", 16, 8, chunk_bytes=chunk_bytes), "chunk_bytes")
    assert isinstance(error, pecli.ParameterError)


def test_iter_row_chunks_still_streams_the_table():
    chunks = list(pecli.iter_row_chunks("sinusoidal", 10, 4, chunk_bytes=64))
    assert [len(c) for c in chunks] == [4, 4, 2]
    assert np.array_equal(np.concatenate(chunks), pecli.encode(None, 10, 4))
