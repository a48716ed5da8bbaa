"""The drawing options shared by plot and distance: declared once, checked before any work, one-line errors."""

from __future__ import annotations

import struct

import pytest

from tests.conftest import assert_clean_error


def _png_size(path) -> tuple[int, int]:
    with open(path, "rb") as handle:
        header = handle.read(24)
    return struct.unpack(">II", header[16:24])


@pytest.mark.parametrize("command", ["plot", "distance"])
def test_both_commands_take_the_same_drawing_options(cli, tmp_path, command):
    path = tmp_path / "figure.png"
    result = cli(
        command, "sinusoidal", "--d", "32", "--len", "64", "-o", str(path),
        "--cmap", "magma", "--vmin", "-2", "--vmax", "2", "--title", "Mine", "--xlabel", "x", "--ylabel", "y",
        "--dpi", "50", "--figsize", "5,4",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert _png_size(path) == (250, 200)


def test_distance_draws_euclidean_distances_in_a_sequential_map(cli, monkeypatch, tmp_path):
    import pecli.render.image as image

    scales = []
    real = image.save_heatmap
    monkeypatch.setattr(image, "save_heatmap", lambda *a, **kw: scales.append(kw["scale"]) or real(*a, **kw))
    path = str(tmp_path / "e.png")
    result = cli("distance", "sinusoidal", "--d", "32", "--len", "40", "--metric", "euclidean", "-o", path)
    assert result.code == 0, result.stderr
    (scale,) = scales
    assert (scale.cmap, scale.diverging, scale.low) == ("viridis", False, 0.0)


def test_distance_terminal_takes_width_height_and_cmap(cli):
    result = cli("distance", "sinusoidal", "--d", "16", "--len", "40", "--width", "50", "--height", "14", "--no-color")
    assert result.code == 0, result.stderr
    assert len(result.out.splitlines()) <= 14
    assert max(len(line) for line in result.out.splitlines()) <= 50


BAD = [
    (["--vmin", "1", "--vmax", "1"], "vmin"),
    (["--vmin", "2", "--vmax", "-1"], "vmin"),
    (["--cmap", "virdis"], "viridis"),
    (["--figsize", "0,3"], "--figsize"),
    (["--figsize", "8"], "--figsize"),
    (["--dpi", "0"], "--dpi"),
    (["--dpi", "-5"], "--dpi"),
]


@pytest.mark.parametrize("command", ["plot", "distance"])
@pytest.mark.parametrize(("args", "word"), BAD)
def test_bad_drawing_options_fail_in_one_line_and_write_nothing(cli, tmp_path, command, args, word):
    path = tmp_path / "figure.png"
    result = cli(command, "sinusoidal", "--d", "16", "--len", "32", "-o", str(path), *args)
    assert_clean_error(result, 2, word)
    assert not path.exists()


def test_an_existing_image_is_not_clobbered_by_a_bad_option(cli, tmp_path):
    path = tmp_path / "figure.png"
    path.write_bytes(b"old")
    assert_clean_error(cli("plot", "sinusoidal", "--d", "16", "--len", "32", "-o", str(path), "--dpi", "0"), 2, "--dpi")
    assert path.read_bytes() == b"old"


def test_relative_distance_images_take_the_drawing_options(cli, tmp_path, monkeypatch):
    """distance alibi/rope ignored --figsize, --dpi and --title, and drew ALiBi's ≤ 0 biases in a half-used RdBu."""
    from matplotlib.image import imread

    import pecli.render.panels as panels

    calls = []
    real = panels.save_panels
    monkeypatch.setattr(panels, "save_panels", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    heads = tmp_path / "heads.png"
    result = cli("distance", "alibi", "--heads", "4", "--len", "32", "-o", str(heads), "--figsize", "5,3.6",
                 "--dpi", "50", "--title", "ALiBi")  # fmt: skip
    assert result.code == 0, result.stderr
    assert imread(str(heads)).shape[:2] == (180, 250)
    [kw] = calls
    assert kw["title"] == "ALiBi" and kw["scale"].cmap == "viridis" and kw["scale"].high == 0.0
    profile = tmp_path / "profile.png"
    result = cli("distance", "rope", "--d", "32", "--len", "64", "--profile", "-o", str(profile),
                 "--figsize", "4,3", "--dpi", "50")  # fmt: skip
    assert result.code == 0 and imread(str(profile)).shape[:2] == (150, 200)


def test_relative_titles_name_only_parameters_that_differ(cli):
    result = cli("distance", "rope", "--d", "32", "--len", "64", "--profile", "--no-color", "--width", "80")
    assert result.code == 0, result.stderr
    first = result.out.splitlines()[0]
    assert first == "rotary score s(h), qk=ones — rope", first
