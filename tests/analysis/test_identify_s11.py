"""identify, session 11 (issue 30): a Qwen2-VL video's M-RoPE, a pair's own tensor names, GPT-NeoX's 4-D caches,
and the d = 4 half-type reading that a plain base writes as well."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import pecli


def _mrope_reference(grid: tuple[int, int, int], sections: tuple[int, int, int], dim: int, base: float) -> np.ndarray:
    """Qwen2-VL's M-RoPE angles (modeling_qwen2_vl.py): frequency k = base^(−2k/d) turns with its section's
    coordinate of the token (t, h, w, row-major), placed as cat(freqs, freqs)."""
    frames, height, width = grid
    coords = np.stack(np.meshgrid(np.arange(frames), np.arange(height), np.arange(width), indexing="ij"), -1)
    coords = coords.reshape(-1, 3).astype(np.float64)
    freqs = base ** (-np.arange(0, dim, 2) / dim)
    axes = np.repeat(np.arange(3), sections)
    angles = coords[:, axes] * freqs
    return np.concatenate([angles, angles], axis=1)


def _identified(cli, path) -> dict:
    result = cli("identify", str(path), "--json")
    assert result.code == 0, result.out + result.stderr
    return json.loads(result.out)


def _regenerated(cli, command: str, tmp_path) -> dict:
    argv = shlex.split(command)
    again = tmp_path / ("again" + argv[argv.index("-o") + 1][2:])
    argv[argv.index("-o") + 1] = str(again)
    assert cli(*argv[1:]).code == 0
    return load_file(str(again)) if again.suffix == ".safetensors" else {"pe": np.load(again)}


VIDEOS = [
    ("2,6,6", "4,6,6", 32, 10000.0, ""),
    ("3,4,5", "4,6,6", 32, 10000.0, "--layout interleaved"),
    ("4,8,8", "16,24,24", 128, 1e6, "--base 1000000"),  # Qwen2-VL's head and rope_theta
]


@pytest.mark.parametrize(("grid", "sections", "dim", "base", "more"), VIDEOS)
def test_a_video_mrope_pair_is_named_with_its_grid_and_sections(grid, sections, dim, base, more, cli, tmp_path):
    written = tmp_path / "video.safetensors"
    options = f"--grid {grid} --sections {sections} --d {dim} {more}"
    assert cli("generate", "rope2d", *shlex.split(options), "-o", str(written)).code == 0
    given = load_file(str(written))
    if "interleaved" not in more:  # the file is Qwen2-VL's table, so naming it names Qwen2-VL's video
        angles = _mrope_reference(tuple(map(int, grid.split(","))), tuple(map(int, sections.split(","))), dim, base)
        np.testing.assert_allclose(given["cos"], np.cos(angles), atol=1e-6)
        np.testing.assert_allclose(given["sin"], np.sin(angles), atol=1e-6)
    found = _identified(cli, written)
    assert found["match"] == "exact"
    assert (found["best"]["scheme"], found["best"]["params"]["grid"]) == ("rope2d", grid)
    assert found["best"]["params"]["sections"] == sections
    regenerated = _regenerated(cli, found["command"], tmp_path)
    for part in ("cos", "sin"):
        np.testing.assert_array_equal(regenerated[part], given[part])


def test_an_image_table_is_not_read_as_a_video(cli, tmp_path):
    # 72 tokens are 2 frames of 6 × 6 too: an image's t = 0 throughout says one frame of 6 × 12
    written = tmp_path / "image.safetensors"
    assert cli("generate", "rope2d", "--grid", "6,12", "--sections", "4,6,6", "--d", "32", "-o", str(written)).code == 0
    assert _identified(cli, written)["best"]["params"]["grid"] == "6,12"


def _pair_file(path, cos_name: str, sin_name: str, lead: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    cos = pecli.encode("rope", 64, 32, part="cos")
    sin = pecli.encode("rope", 64, 32, part="sin")
    tensors = {cos_name: cos, sin_name: sin}
    save_file(
        {name: np.broadcast_to(table, (*lead, *table.shape)).copy() for name, table in tensors.items()}, str(path)
    )
    return cos, sin


def test_a_pair_note_names_the_files_own_tensors(cli, tmp_path):
    path = tmp_path / "cache.safetensors"
    _pair_file(path, "cos_cached", "sin_cached")
    found = _identified(cli, path)
    assert found["parts"] == ["cos_cached", "sin_cached"]
    text = cli("identify", str(path)).out
    assert "its tensors 'cos_cached' and 'sin_cached' (pass --key to take one)" in text
    assert "'cos'" not in text


def test_a_pair_note_escapes_the_names(cli, tmp_path):
    path = tmp_path / "odd.safetensors"
    _pair_file(path, "rope.\x1b[2J{rows}.cos", "rope.\x1b[2J{rows}.sin")
    result = cli("identify", str(path))
    assert result.code == 0, result.stderr
    note = next(line for line in result.out.splitlines() if "read as one table" in line)
    assert "\x1b" not in result.out and "\\x1b[2J" in note
    assert "--rows" not in note and "'rope.\\x1b[2J{rows}.cos'" in note  # braces from a file: as they are


def test_a_gpt_neox_4d_cache_pair_is_read_as_its_table(cli, tmp_path):
    path = tmp_path / "neox.safetensors"
    _pair_file(path, "cos_cached", "sin_cached", lead=(1, 1))
    result = cli("identify", str(path), "--json")
    assert result.code == 0, result.stderr
    found = json.loads(result.out)
    assert (found["match"], found["best"]["scheme"], found["shape"]) == ("exact", "rope", [64, 32])
    assert "squeezed shape (1, 1, 64, 32) to 64 × 32" in result.stderr
    flat = tmp_path / "flat.safetensors"
    _pair_file(flat, "cos_cached", "sin_cached")
    compared = cli("compare", str(path), str(flat), "--json")
    assert compared.code == 0, compared.stderr
    assert json.loads(compared.out)["max_abs"] == 0.0
    one = cli("identify", str(path), "--key", "cos_cached", "--json")  # one tensor of it alike
    assert one.code == 0 and json.loads(one.out)["best"]["params"]["part"] == "cos"


def test_a_real_4d_cache_stays_refused_in_one_line(cli, tmp_path):
    path = tmp_path / "heads.safetensors"
    _pair_file(path, "cos_cached", "sin_cached", lead=(2, 1))
    for extra in ((), ("--key", "cos_cached")):
        result = cli("identify", str(path), *extra)
        assert result.code == 2
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "has shape (2, 1, 64, 32)" in result.stderr


@pytest.mark.parametrize("freqs_dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("part", [None, "cos", "sin"])
def test_d4_half_type_frequencies_name_the_plain_base_too(freqs_dtype, part, cli, tmp_path):
    # d = 4 has one frequency besides 1: held in a half type at base 10000, it is an exact one at another base
    path = tmp_path / "rope.safetensors"
    options = ["--d", "4", "--len", "64", "--freqs-dtype", freqs_dtype, *(["--part", part] if part else [])]
    assert cli("generate", "rope", *options, "-o", str(path)).code == 0
    given = load_file(str(path))
    found = _identified(cli, path)
    assert found["match"] == "exact"
    best, also = found["best"]["params"], found["also"]["params"]
    assert (best["freqs_dtype"], best["base"]) == (freqs_dtype, 10000.0)
    assert also["freqs_dtype"] is None
    held = float(np.array(10000.0**-0.5, dtype=getattr(np, freqs_dtype, None) or np.float32))
    if freqs_dtype == "bfloat16":  # bfloat16: float32's top 16 bits, rounded to nearest even
        bits = np.array(10000.0**-0.5, dtype=np.float32).view(np.uint32)
        held = float(((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32))
    assert also["base"] == pytest.approx(held**-2, rel=1e-5)  # the base whose exact frequency is the held one
    regenerated = _regenerated(cli, found["also"]["command"], tmp_path)
    for name, values in given.items():
        np.testing.assert_allclose(regenerated[name if part is None else "pe"], values, rtol=0, atol=found["tolerance"])
    if part == "cos":  # as text: the other reading named once, not again as the next best
        text = cli("identify", str(path)).out
        assert "also within rounding: rope: base=" in text
        assert text.count(f"base={also['base']:g}") == 1


def test_a_wide_half_type_table_has_one_reading(cli, tmp_path):
    path = tmp_path / "rope.npy"
    assert (
        cli(
            "generate",
            "rope",
            "--d",
            "64",
            "--len",
            "256",
            "--freqs-dtype",
            "float16",
            "--part",
            "cos",
            "-o",
            str(path),
        ).code
        == 0
    )
    found = _identified(cli, path)
    assert found["best"]["params"]["freqs_dtype"] == "float16" and "also" not in found
