"""``pecli plot``: inputs (files, stdin, schemes, keys, slices), images, the terminal, every bad input."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import pecli
from pecli.render.terminal import LUT_SIZE, RAMP
from tests.conftest import assert_clean_error, require_module, run_pecli
from tests.paths import ROOT

TERMINAL = ("--width", "120", "--height", "100")


def _ramp_rows(text: str) -> list[str]:
    """The heatmap lines of no-colour output, without the axis."""
    return [line.split("┤", 1)[1] if "┤" in line else line.split("│", 1)[1] for line in text.splitlines()
            if "┤" in line or ("│" in line)]  # fmt: skip


def _expected_ramp(table: np.ndarray) -> list[str]:
    """Signed tables: limits ±max|x|; all ≥ 0 or all ≤ 0: min … max (a sequential map)."""
    reach = np.abs(table).max()
    one_sign = table.min() >= 0 or table.max() <= 0
    low, high = (table.min(), table.max()) if one_sign else (-reach, reach)
    index = np.clip(((table - low) / (high - low) * LUT_SIZE).astype(int), 0, LUT_SIZE - 1)
    return ["".join(RAMP[i * len(RAMP) // LUT_SIZE] for i in row) for row in index]


@pytest.fixture
def bert_checkpoint(tmp_path):
    """A safetensors file shaped like a real BERT checkpoint (bert-base layout, small sizes)."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    hidden, positions = 16, 64
    tensors = {
        "embeddings.word_embeddings.weight": rng.normal(0, 0.02, (100, hidden)).astype(np.float32),
        "embeddings.position_embeddings.weight": rng.normal(0, 0.02, (positions, hidden)).astype(np.float32),
        "embeddings.token_type_embeddings.weight": rng.normal(0, 0.02, (2, hidden)).astype(np.float32),
        "embeddings.LayerNorm.weight": np.ones(hidden, dtype=np.float32),
        "embeddings.LayerNorm.bias": np.zeros(hidden, dtype=np.float32),
        "embeddings.position_ids": np.arange(positions, dtype=np.int64)[None, :],
        "encoder.layer.0.attention.self.query.weight": rng.normal(0, 0.02, (hidden, hidden)).astype(np.float32),
        "encoder.layer.0.attention.self.query.bias": np.zeros(hidden, dtype=np.float32),
        "pooler.dense.weight": rng.normal(0, 0.02, (hidden, hidden)).astype(np.float32),
    }
    path = tmp_path / "bert.safetensors"
    save_file(tensors, str(path), metadata={"format": "pt"})
    return path, tensors


# -- inputs ------------------------------------------------------------------------------------


def test_scheme_input_draws_the_formula(cli):
    result = cli("plot", "sinusoidal", "--d", "16", "--len", "12", *TERMINAL)
    assert result.code == 0, result.stderr
    assert _ramp_rows(result.out) == _expected_ramp(pecli.encode("sinusoidal", 12, 16))
    assert result.out.startswith("sinusoidal, 12 × 16\n")  # the defaults (base=10000…) go unsaid


def test_bert_checkpoint_without_key_lists_the_2d_candidates(cli, bert_checkpoint):
    path, _ = bert_checkpoint
    result = cli("plot", str(path))
    assert_clean_error(result, 2, "--key", "'embeddings.position_embeddings.weight' [64, 16]")
    assert "embeddings.LayerNorm.bias" not in result.stderr  # 1-D: not a candidate


@pytest.mark.parametrize("key", ["embeddings.position_embeddings.weight", "position_embeddings"])
def test_bert_checkpoint_key_selects_one_tensor(cli, bert_checkpoint, key):
    """The full name, or a part of it no other tensor's name contains (with a note naming it in full)."""
    path, tensors = bert_checkpoint
    full = "embeddings.position_embeddings.weight"
    result = cli("plot", str(path), "--key", key, *TERMINAL)
    assert result.code == 0, result.stderr
    assert _ramp_rows(result.out) == _expected_ramp(tensors[full])
    assert f"bert.safetensors [{full}]" in result.out
    note = f"--key {key!r} selects the tensor {full!r}"
    assert (note in result.stderr) == (key != full)
    info = cli("info", str(path), "--key", key)
    assert info.code == 0 and f"{full}  [64, 16]" in info.out and (note in info.stderr) == (key != full)


def test_a_part_of_a_key_that_several_names_contain_is_refused(cli, bert_checkpoint):
    path, _ = bert_checkpoint
    assert_clean_error(cli("plot", str(path), "--key", "position"), 2, "tensors whose names contain 'position'")


def test_int64_position_ids_plot_as_one_row(cli, bert_checkpoint):
    path, tensors = bert_checkpoint
    result = cli("plot", str(path), "--key", "embeddings.position_ids", *TERMINAL)
    assert result.code == 0, result.stderr
    assert _ramp_rows(result.out) == _expected_ramp(tensors["embeddings.position_ids"].astype(np.float64))


def test_mistyped_key_suggests_the_nearest(cli, bert_checkpoint):
    path, _ = bert_checkpoint
    result = cli("plot", str(path), "--key", "embeddings.position_embedding.weight")
    assert_clean_error(result, 2, "no tensor", "did you mean 'embeddings.position_embeddings.weight'")


def test_pt_state_dict_key(cli, tmp_path):
    torch = require_module("torch")
    weight = torch.linspace(-1, 1, 24).reshape(4, 6)
    torch.save({"model": {"pos_embed": weight, "step": torch.tensor(3)}}, tmp_path / "ckpt.pt")
    result = cli("plot", str(tmp_path / "ckpt.pt"), "--key", "model.pos_embed", *TERMINAL)
    assert result.code == 0, result.stderr
    assert _ramp_rows(result.out) == _expected_ramp(weight.numpy())


class _RunsCode:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_pt_whose_pickle_would_run_code_is_refused_and_runs_nothing(cli, tmp_path):
    torch = require_module("torch")
    marker = tmp_path / "ran"
    torch.save({"pe": torch.zeros(2, 2), "payload": _RunsCode(str(marker))}, tmp_path / "evil.pt")
    result = cli("plot", str(tmp_path / "evil.pt"), "-o", str(tmp_path / "out.png"))
    assert_clean_error(result, 2, "evil.pt", "weights_only=True")
    assert not marker.exists()
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
def test_generate_pipes_into_plot(fmt):
    generate = subprocess.Popen(
        [sys.executable, "-m", "pecli", "generate", "--d", "32", "--len", "64", "-o", "-", "--format", fmt],
        stdout=subprocess.PIPE,
    )
    plot = subprocess.run(
        [sys.executable, "-m", "pecli", "plot", "-", "--width", "70", "--height", "80"],
        stdin=generate.stdout,
        capture_output=True,
        timeout=120,
    )
    generate.stdout.close()
    assert generate.wait(timeout=60) == 0
    assert plot.returncode == 0, plot.stderr
    text = plot.stdout.decode()
    assert "\x1b[" not in text  # a pipe gets the character ramp
    assert _ramp_rows(text) == _expected_ramp(pecli.encode("sinusoidal", 64, 32))


@pytest.mark.parametrize(("shape", "squeezed"), [((1, 6, 4), True), ((6, 1, 4), True), ((24,), False)])
def test_squeezed_and_1d_inputs(cli, tmp_path, shape, squeezed):
    table = np.linspace(-1, 1, 24).reshape(shape)
    np.save(tmp_path / "t.npy", table)
    result = cli("plot", str(tmp_path / "t.npy"), *TERMINAL)
    assert result.code == 0, result.stderr
    expected = table.reshape(1, 24) if len(shape) == 1 else table.reshape(6, 4)
    assert _ramp_rows(result.out) == _expected_ramp(expected)
    assert ("squeezed shape " + str(shape) in result.stderr) is squeezed


def test_rows_and_cols_slice_and_label_ticks_from_the_slice(cli):
    result = cli("plot", "sinusoidal", "--d", "64", "--len", "200", "--rows", "150:160", "--cols", "40:", *TERMINAL)
    assert result.code == 0, result.stderr
    table = pecli.encode("sinusoidal", 200, 64)[150:160, 40:]
    assert _ramp_rows(result.out) == _expected_ramp(table)
    lines = result.out.splitlines()
    assert lines[2].split()[0] == "40"
    assert lines[4].startswith("150 ┤")


def test_terminal_flag_forces_colour_into_a_pipe(cli, monkeypatch):
    def draw(*flags: str, **environ: str) -> str:
        # the cli fixture undoes every monkeypatch after a run: set the environment for each one
        monkeypatch.delenv("NO_COLOR", raising=False)
        monkeypatch.delenv("COLORTERM", raising=False)
        for name, value in {"TERM": "xterm-256color", **environ}.items():
            monkeypatch.setenv(name, value)
        return cli("plot", "sinusoidal", "--d", "8", "--len", "8", *flags, *TERMINAL).out

    assert "\x1b[" not in draw(COLORTERM="truecolor")  # stdout is a pipe: the ramp
    assert "\x1b[38;2;" in draw("--terminal", COLORTERM="truecolor")
    assert "\x1b[38;5;" in draw("--terminal")
    for plain in (draw("--terminal", "--no-color"), draw("--terminal", NO_COLOR="1"), draw("--terminal", TERM="dumb")):
        assert "\x1b[" not in plain and "▀" not in plain


def test_nan_and_inf_are_masked_with_a_warning(cli, tmp_path):
    table = np.linspace(-1, 1, 20).reshape(4, 5)
    table[1, 2], table[3, 0] = np.nan, np.inf
    np.save(tmp_path / "t.npy", table)
    result = cli("plot", str(tmp_path / "t.npy"), *TERMINAL)
    assert result.code == 0
    assert "pecli: warning: 2 NaN/inf values drawn as masked cells" in result.stderr
    rows = _ramp_rows(result.out)
    assert rows[1][2] == "?" and rows[3][0] == "?"
    image = cli("plot", str(tmp_path / "t.npy"), "-o", str(tmp_path / "t.png"))
    assert image.code == 0 and (tmp_path / "t.png").stat().st_size > 0


def test_terminal_path_imports_neither_matplotlib_nor_torch(tmp_path):
    np.save(tmp_path / "pe.npy", pecli.encode("sinusoidal", 256, 64))
    code = (
        "import sys\n"
        "from pecli.cli.app import main\n"
        f"code = main(['plot', {str(tmp_path / 'pe.npy')!r}, '--terminal', '--width', '80', '--height', '30'])\n"
        "loaded = sorted(m for m in ('matplotlib', 'torch') if m in sys.modules)\n"
        "print(code, loaded, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stderr.strip().splitlines()[-1] == "0 []", result.stderr


# -- images ------------------------------------------------------------------------------------


def _png_size(path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def test_image_output_with_size_title_and_note(cli, tmp_path, monkeypatch):
    import pecli.render.image as image

    titles = []
    real = image.save_heatmap
    monkeypatch.setattr(image, "save_heatmap", lambda *a, **kw: titles.append(kw["title"]) or real(*a, **kw))
    path = tmp_path / "pe.png"
    result = cli("plot", "sinusoidal", "--d", "64", "--len", "3000", "-o", str(path), "--figsize", "5,4", "--dpi", "50")
    assert result.code == 0, result.stderr
    assert _png_size(path) == (250, 200)
    assert titles == ["sinusoidal, 3000 × 64"]  # the parameters left at their defaults go unsaid
    assert "rows low-pass filtered to " in result.stderr and "(3000 rows;" in result.stderr
    assert result.stdout == b""  # no terminal heatmap without --terminal


def test_image_title_from_file_metadata_or_title_option(cli, tmp_path, monkeypatch):
    import pecli.render.image as image

    titles = []
    real = image.save_heatmap

    def plot(*args: str) -> None:
        # the cli fixture undoes every monkeypatch after a run: patch before each one
        monkeypatch.setattr(image, "save_heatmap", lambda *a, **kw: titles.append(kw["title"]) or real(*a, **kw))
        assert cli("plot", *args).code == 0

    assert (
        cli("generate", "--preset", "fairseq", "--d", "16", "--len", "20", "-o", str(tmp_path / "f.safetensors")).code
        == 0
    )
    np.save(tmp_path / "plain.npy", np.eye(3))
    plot(str(tmp_path / "f.safetensors"), "-o", str(tmp_path / "a.png"))
    plot(str(tmp_path / "plain.npy"), "-o", str(tmp_path / "b.svg"))
    plot(str(tmp_path / "plain.npy"), "-o", str(tmp_path / "c.pdf"), "--title", "Mine")
    assert titles[0] == "sinusoidal (fairseq), 20 × 16: layout=split, freq_shift=1.0, offset=2 — f.safetensors [pe]"
    assert titles[1:] == ["plain.npy", "Mine"]
    assert (tmp_path / "b.svg").read_bytes().startswith(b"<?xml")
    assert (tmp_path / "c.pdf").read_bytes().startswith(b"%PDF")


def test_lines_image(cli, tmp_path):
    path = tmp_path / "lines.png"
    result = cli("plot", "sinusoidal", "--d", "16", "--len", "100", "-o", str(path), "--lines", "0,1,4,8")
    assert result.code == 0, result.stderr
    assert _png_size(path) == (800, 600)


def test_cmap_and_limits(cli, tmp_path):
    path = tmp_path / "v.png"
    result = cli("plot", "count", "--d", "4", "--len", "10", "-o", str(path), "--cmap", "viridis", "--vmin", "0")
    assert result.code == 0, result.stderr
    assert path.exists()


# -- bad input ---------------------------------------------------------------------------------


def _npy_bytes(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("empty.npy", b"", ["empty"]),
        ("cut.npy", _npy_bytes(np.zeros((10, 10)))[:-40], ["truncated"]),
        ("junk.npy", b"\x93NUMPY\x01\x00garbage" + b"x" * 40, ["not a valid .npy"]),
        ("bad.safetensors", b"\x10\x00\x00\x00\x00\x00\x00\x00{not json!!!!!!!", ["corrupt safetensors header"]),
        ("cut.safetensors", None, ["ends at byte"]),
        ("text.npy", b"hello, this is not a table at all", ["unrecognised content"]),
        ("4d.npy", _npy_bytes(np.zeros((2, 3, 4, 5))), ["shape (2, 3, 4, 5)", "2-d slice"]),  # 3-D draws as panels
        ("complex.npy", _npy_bytes(np.zeros((2, 2), dtype=np.complex64)), ["complex64", "not a real number"]),
        ("strings.npy", _npy_bytes(np.array([["a", "b"]])), ["not a real number"]),
        ("void.npy", _npy_bytes(np.zeros((0, 4))), ["empty"]),
    ],
)
def test_bad_files(cli, tmp_path, name, content, words):
    path = tmp_path / name
    if content is None:  # a valid safetensors file cut short
        from safetensors.numpy import save

        content = save({"pe": np.zeros((8, 8), dtype=np.float32)})[:-16]
    path.write_bytes(content)
    output = tmp_path / "out.png"
    result = cli("plot", str(path), "-o", str(output))
    assert_clean_error(result, 2, *words)
    assert not output.exists()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["missing.npy"], 2, ["no such file"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.jpg"], 2, ["extension .jpg", ".png, .svg or .pdf"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--cmap", "virdis"], 2, ["'virdis'", "'viridis'"]),
        (["sinusoidal", "--d", "8", "--len", "8", "--rows", "5:5"], 2, ["--rows 5:5 selects no rows"]),
        (["sinusoidal", "--d", "8", "--len", "8", "--cols", "9:"], 2, ["--cols 9: selects no columns"]),
        (["sinusoidal", "--d", "8", "--len", "8", "--rows", "a-b"], 2, ["--rows takes A:B"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "no/such/dir/pe.png"], 3, ["does not exist"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "."], 3, ["directory"]),
        (["sinusoidal", "--d", "8", "--len", "8", "--dpi", "50"], 2, ["--dpi applies only to image output"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--figsize", "8x6"], 2, ["--figsize takes W,H"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--lines", "0,9"], 2, ["dimension 9 is outside"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--lines", "x"], 2, ["--lines takes"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--vmin", "1", "--vmax", "0"], 2, ["--vmin 1"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--dpi", "0"], 2, ["--dpi must be a positive"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "pe.png", "--width", "50"], 2, ["--width/--height"]),
        (["sinusoidal", "--d", "8", "--len", "8", "--width", "5"], 2, ["--width must be at least"]),
        (["sinusoidal", "--d", "8", "--len", "8", "-o", "-"], 2, ["not stdout"]),
        (["sinusoidal", "--len", "8"], 2, ["missing --d"]),
        (["sinusiodal", "--d", "8", "--len", "8"], 2, ["sinusoidal"]),
    ],
)
def test_bad_options(cli, tmp_path, monkeypatch, args, code, words):
    monkeypatch.chdir(tmp_path)
    result = cli("plot", *args)
    assert_clean_error(result, code, *words)
    assert [p for p in os.listdir(tmp_path) if p.endswith((".png", ".jpg"))] == []


def test_failed_render_keeps_the_old_image(cli, tmp_path):
    path = tmp_path / "pe.png"
    path.write_bytes(b"old image")
    result = cli("plot", "sinusoidal", "--d", "8", "--len", "8", "-o", str(path), "--figsize", "500,500")
    assert_clean_error(result, 2, "too large")
    assert path.read_bytes() == b"old image"


def test_real_process_exit_codes(tmp_path):
    result = run_pecli("plot", str(tmp_path / "missing.safetensors"))
    assert_clean_error(result, 2, "no such file")


def test_readme_terminal_example_is_real_output(cli):
    import re
    import shlex

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```console\n\$ (pecli plot sinusoidal [^\n]*)\n(.*?)```", readme, re.S)
    assert match is not None
    result = cli(*shlex.split(match.group(1))[1:])
    assert result.code == 0 and result.out == match.group(2)


# -- colours that show the data ----------------------------------------------------------------


def test_outlier_gets_robust_limits_with_a_note_and_no_robust_gives_the_full_range(cli, tmp_path):
    table = np.random.default_rng(1).normal(0, 0.025, (64, 32)).astype(np.float32)
    table[0, 9] = 1.87
    path = tmp_path / "trained.npy"
    np.save(path, table)
    result = cli("plot", str(path), *TERMINAL, "--no-color")
    assert result.code == 0, result.stderr
    reach = np.percentile(np.abs(table.astype(np.float64)), 99)
    assert f"colour limits ±{reach:.3g} (99th percentile of |x|" in result.stderr
    assert "--no-robust" in result.stderr and "up to ±1.87" in result.stderr
    assert f"[{RAMP}] {-reach:.4g} … {reach:.4g}" in result.out
    full = cli("plot", str(path), *TERMINAL, "--no-color", "--no-robust")
    assert "percentile" not in full.stderr and f"[{RAMP}] -1.87 … 1.87" in full.out
    image = cli("plot", str(path), "-o", str(tmp_path / "t.png"))
    assert image.code == 0 and "99th percentile" in image.stderr


# -- axes from what the table is ---------------------------------------------------------------


def test_timestep_table_shows_its_timesteps_and_labels_override(cli, tmp_path):
    path = tmp_path / "t.safetensors"
    assert cli("timestep", "--d", "16", "--range", "0:1000:10", "-o", str(path)).code == 0
    result = cli("plot", str(path), "--no-color", "--width", "60", "--height", "40")
    assert result.code == 0, result.stderr
    assert "Timestep t ↓  Embedding Dimension →" in result.out
    ticks = [line.split("┤")[0].strip() for line in result.out.splitlines() if "┤" in line]
    assert ticks[0] == "0" and ticks[1:] and all(int(t) % 100 == 0 and int(t) >= 100 for t in ticks[1:])
    assert max(int(t) for t in ticks) <= 990
    custom = cli("plot", str(path), "--no-color", "--width", "60", "--height", "20", "--xlabel", "k", "--ylabel", "t")
    assert "t ↓  k →" in custom.out


def test_alibi_head_axes_are_query_and_key_positions(cli):
    result = cli("plot", "alibi", "--heads", "4", "--head", "1", "--len", "16", "--no-color", *TERMINAL)
    assert result.code == 0, result.stderr
    assert "Query position i ↓  Key position j →" in result.out


def test_a_distance_matrix_piped_without_metadata_has_position_axes(cli):
    """`pecli distance … -o - | pecli plot -`: a .npy carries no metadata, but a square table equal to its
    transpose is a distance or similarity matrix; a (len, d) table, even a square one, keeps its axes."""
    matrix = cli("distance", "sinusoidal", "--d", "16", "--len", "24", "-o", "-").stdout
    piped = cli("plot", "-", "--no-color", *TERMINAL, stdin=matrix)
    assert piped.code == 0, piped.stderr
    assert "Position i ↓  Position j →" in piped.out
    square = cli("plot", "learned", "--d", "24", "--len", "24", "--no-color", *TERMINAL)
    assert "Position ↓  Embedding Dimension →" in square.out
    rows = cli("plot", "-", "--rows", "0:12", "--no-color", *TERMINAL, stdin=matrix)  # a slice: not judged
    assert "Position ↓  Embedding Dimension →" in rows.out


# -- small multiples ---------------------------------------------------------------------------


def test_alibi_heads_are_drawn_as_panels_in_one_colour_scale(cli, tmp_path, monkeypatch):
    import pecli.render.panels as panels

    calls = []
    real = panels.save_panels
    monkeypatch.setattr(panels, "save_panels", lambda *a, **kw: calls.append((a, kw)) or real(*a, **kw))
    path = tmp_path / "heads.png"
    result = cli("plot", "alibi", "--heads", "4", "--len", "32", "-o", str(path))
    assert result.code == 0, result.stderr
    [((matrices, _), kw)] = calls
    heads = pecli.encode("alibi", 32, None, heads=4)
    slopes = [0.25, 0.0625, 0.015625, 0.00390625]  # 2^(−8h/H), h = 1…4
    assert kw["titles"] == [f"head {h}, slope {slope:.4g}" for h, slope in enumerate(slopes)]
    for matrix, head in zip(matrices, heads, strict=True):
        np.testing.assert_array_equal(matrix, head)
    # one sequential scale for all (the biases are ≤ 0): the steepest head sets its low end
    assert (kw["scale"].low, kw["scale"].high, kw["scale"].cmap) == (float(heads.min()), 0.0, "viridis")
    assert path.stat().st_size > 0 and "4 panels in one colour scale" in result.stderr


def test_rope_draws_cos_and_sin_side_by_side_and_key_picks_one(cli, tmp_path):
    result = cli("plot", "rope", "--d", "16", "--len", "24", "--no-color", *TERMINAL)
    assert result.code == 0, result.stderr
    assert result.out.startswith("cos  (rope, 24 × 16)") and "\nsin  (rope, 24 × 16)" in result.out
    file = tmp_path / "rope.safetensors"
    assert cli("generate", "rope", "--d", "16", "--len", "24", "-o", str(file)).code == 0
    both = cli("plot", str(file), "-o", str(tmp_path / "both.png"))
    assert both.code == 0 and "2 panels" in both.stderr
    one = cli("plot", str(file), "--key", "sin", "-o", str(tmp_path / "one.png"))
    assert one.code == 0 and "panels" not in one.stderr


def test_slice_picks_one_slice_and_out_of_range_is_a_one_line_error(cli, tmp_path):
    file = tmp_path / "heads.npy"
    heads = pecli.encode("alibi", 16, None, heads=3)
    np.save(file, heads)
    result = cli("plot", str(file), "--slice", "1", "--no-color", *TERMINAL)
    assert result.code == 0, result.stderr
    assert _ramp_rows(result.out) == _expected_ramp(heads[1].astype(np.float64))
    path = tmp_path / "x.png"
    assert_clean_error(cli("plot", str(file), "--slice", "3", "-o", str(path)), 2, "--slice 3", "0…2")
    assert not path.exists()
    assert_clean_error(cli("plot", "sinusoidal", "--d", "8", "--len", "8", "--slice", "0"), 2, "--slice")


def test_lines_auto_spreads_dimensions_from_the_fastest_to_the_slowest(cli, tmp_path, monkeypatch):
    import pecli.render.lines as lines

    dims = []
    real = lines.save_lines
    monkeypatch.setattr(lines, "save_lines", lambda *a, **kw: dims.append(kw["dims"]) or real(*a, **kw))
    result = cli("plot", "sinusoidal", "--d", "512", "--len", "200", "--lines", "auto", "-o", str(tmp_path / "l.png"))
    assert result.code == 0, result.stderr
    assert dims == [(0, 128, 256, 382, 510)]
    inv_freq = 10000.0 ** (-np.array(dims[0]) / 512)  # sin dimension 2k turns at 10000^(-2k/d)
    assert np.all(np.diff(np.log(1 / inv_freq)) > 2)  # each period over 7 times the one before


def test_wavelength_view_draws_at_the_figsize_and_dpi_given(cli, tmp_path):
    """--figsize/--dpi were ignored by --view wavelength (always 800 × 500 px)."""
    path = tmp_path / "waves.png"
    result = cli("plot", "rope", "--d", "64", "--view", "wavelength", "--scaling", "yarn", "--factor", "4",
                 "--original-max-position", "256", "-o", str(path), "--figsize", "4,3", "--dpi", "50")  # fmt: skip
    assert result.code == 0, result.stderr
    from matplotlib.image import imread

    assert imread(str(path)).shape[:2] == (150, 200) and "(200 × 150 px)" in result.stderr
    # the title names what differs from RoPE's defaults, not every parameter
    chart = cli("plot", "rope", "--d", "64", "--view", "wavelength", "--scaling", "linear", "--factor", "4")
    assert chart.out.startswith("rope, d=64: scaling=linear, factor=4.0 — wavelength"), chart.out
    assert cli("plot", "rope", "--d", "64", "--view", "wavelength", "--no-robust").code == 2


def test_lines_faster_than_the_pixels_are_named_with_the_rows_that_show_them(cli, tmp_path):
    """--lines 0,1,4,8 of a 2048-row table drew one solid block of colour with no word why."""
    path = tmp_path / "lines.png"
    result = cli("plot", "sinusoidal", "--d", "512", "--len", "2048", "--lines", "0,1,4,8", "-o", str(path),
                 "--figsize", "4,3", "--dpi", "72")  # fmt: skip
    assert result.code == 0, result.stderr
    assert "dims 0, 1, 4, 8 repeat faster than the image's pixels" in result.stderr
    assert "--rows 0:50 shows the shape" in result.stderr
    calm = cli("plot", "sinusoidal", "--d", "512", "--len", "2048", "--lines", "0,1,4,8", "--rows", "0:50",
               "-o", str(path), "--figsize", "4,3", "--dpi", "72")  # fmt: skip
    assert calm.code == 0 and "solid band" not in calm.stderr


def test_rope_file_panels_are_titled_by_what_differs_first(cli, tmp_path, monkeypatch):
    # issue 26 item 9: both terminal panels read "rope: base=…, … h…" (the [cos]/[sin] cut off), and
    # each image panel repeated the six-line parameter list the figure title gives
    from pecli.render import panels

    path = tmp_path / "llama31.safetensors"
    config = "tests/data/models/llama3/config.json"
    assert cli("generate", "--from-config", config, "--len", "256", "-o", str(path)).code == 0
    result = cli("plot", str(path), "--width", "100", "--height", "30", "--no-color")
    assert result.code == 0, result.stderr
    titles = [line for line in result.out.splitlines() if line.startswith(("cos", "sin"))]
    assert [line[:6] for line in titles] == ["cos  (", "sin  ("] and "base=500000.0" in titles[0]
    seen = {}
    real = panels.save_panels
    monkeypatch.setattr(panels, "save_panels", lambda *a, **kw: seen.update(kw) or real(*a, **kw))
    assert cli("plot", str(path), "-o", str(tmp_path / "rope.png")).code == 0
    assert seen["titles"] == ["cos", "sin"]
    assert seen["title"].startswith("rope, 256 × 16: base=500000.0") and seen["title"].endswith("— llama31.safetensors")


@pytest.mark.parametrize("source", [("rope", "--d", "64", "--len", "64"), ("rope", "--d", "8", "--len", "40")])
def test_rope_parts_are_not_counted_as_slices(cli, source):
    """RoPE's cos and sin (two 2-D parts) were noted as "drawing the first 16 of 64 slices": the part's rows
    were taken for the heads of a 3-D table."""
    result = cli("plot", *source, "--terminal", "--width", "60", "--height", "12")
    assert result.code == 0, result.stderr
    assert "slices" not in result.stderr
    assert "2 panels in one colour scale" in result.out
    heads = cli("plot", "alibi", "--heads", "20", "--len", "16", "--terminal", "--width", "60", "--height", "12")
    assert "drawing the first 16 of 20 slices" in heads.stderr
