"""-q leaves only the exit code on every command; a RoPE file's cos and sin are one table to identify,
compare and plot, from a path or stdin alike; a bfloat16 file is called bfloat16 (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pecli.cli.app import app


@pytest.fixture
def files(cli, tmp_path):
    made = {
        "pe": tmp_path / "pe.npy",
        "rope": tmp_path / "rope.safetensors",
        "bf16": tmp_path / "bf16.safetensors",
        "rope_bf16": tmp_path / "rope_bf16.safetensors",
    }
    for args in (
        ("generate", "--d", "16", "--len", "32", "-o", str(made["pe"])),
        ("generate", "rope", "--base", "500000", "--d", "16", "--len", "32", "-o", str(made["rope"])),
        ("generate", "--d", "16", "--len", "32", "--dtype", "bfloat16", "-o", str(made["bf16"])),
        ("generate", "rope", "--d", "16", "--len", "32", "--dtype", "bfloat16", "-o", str(made["rope_bf16"])),
    ):
        assert cli(*args).code == 0
    return {name: str(path) for name, path in made.items()}


def _quiet_runs(files, tmp_path):
    """(command line, expected exit code) for each command, each run with -q and no -o."""
    return {
        "generate": (["generate", "--d", "8", "--len", "4"], 0),
        "timestep": (["timestep", "1", "2", "--dim", "8"], 0),
        "info": (["info", files["pe"]], 0),
        "schemes": (["schemes"], 0),
        "identify": (["identify", files["pe"]], 0),
        "compare": (["compare", files["pe"], "sinusoidal:base=500"], 1),
        "plot": (["plot", files["pe"], "--width", "60", "--height", "12"], 0),
        "distance": (["distance", files["pe"], "--width", "60", "--height", "12"], 0),
        "resample": (["resample", files["pe"], "--len", "40", "-o", str(tmp_path / "resampled.npy")], 0),
    }


def test_quiet_prints_nothing_on_every_command(cli, files, tmp_path):
    from typer.main import get_command

    runs = _quiet_runs(files, tmp_path)
    assert set(runs) == set(get_command(app).commands)  # a new command must be added here
    for command, (args, code) in runs.items():
        loud = cli(*args)
        # a report to silence: on stdout, or (a command whose result is a file) its note on stderr
        assert loud.code == code and (loud.out or loud.stderr.startswith("wrote ")), (command, loud.stderr)
        quiet = cli(*args, "-q")
        assert (quiet.code, quiet.out, quiet.stderr) == (code, "", ""), command


def test_quiet_keeps_errors_and_asked_for_outputs(cli, files):
    failed = cli("identify", "missing.npy", "-q")
    assert failed.code == 2 and failed.out == "" and failed.stderr.startswith("pecli: error: ")
    assert json.loads(cli("identify", files["pe"], "--json", "-q").out)["match"] == "exact"
    assert cli("generate", "--d", "8", "--len", "4", "-o", "-", "--format", "csv", "-q").out.count("\n") == 4


def test_identify_reads_a_rope_files_cos_and_sin_as_one_table(cli, files):
    for args, stdin in (([files["rope"]], b""), (["-"], Path(files["rope"]).read_bytes())):
        result = cli("identify", *args, "--json", stdin=stdin)
        assert result.code == 0, result.stderr
        found = json.loads(result.out)
        assert found["parts"] == ["cos", "sin"] and found["match"] == "exact"
        assert found["best"]["params"]["base"] == 500000.0 and found["best"]["params"]["part"] is None
        assert found["command"] == "pecli generate rope --base 500000 --d 16 --len 32 -o pe.safetensors"
    text = cli("identify", files["rope"]).out
    assert "[cos, sin]: 32 × 16, dtype float32" in text and "match: rope: base=500000.0\n" in text
    assert "'cos' and 'sin'" in text


def test_identify_of_a_pair_whose_sin_does_not_follow_matches_nothing(cli, files, tmp_path):
    import numpy as np

    from pecli.io import Tensor, read_table, write_tensors

    cos = read_table(files["rope"], key="cos").array
    mixed = tmp_path / "mixed.safetensors"
    with open(mixed, "wb") as handle:
        tensors = {"cos": Tensor.from_array(cos), "sin": Tensor.from_array(np.flip(cos, axis=0).copy())}
        write_tensors(handle, tensors, fmt="safetensors")
    result = cli("identify", str(mixed), "--json")
    assert result.code == 1 and json.loads(result.out)["match"] == "none"


def test_compare_a_rope_file_with_a_rope_spec_needs_no_key(cli, files):
    same = cli("compare", files["rope"], "rope:base=500000")
    assert same.code == 0, same.stderr
    assert "A: rope: base=500000.0 — rope.safetensors [cos, sin] — 32 × 32 float32" in same.out
    assert "B: rope:base=500000 [cos, sin] — 32 × 32 float32" in same.out
    assert "columns 0–15 cos, 16–31 sin" in same.stderr
    assert cli("compare", files["rope"], "rope").code == 1  # base 10000: different
    one_part = cli("compare", "rope:base=500000,part=sin", files["rope"])
    assert one_part.code == 0 and "rope.safetensors [sin] — 32 × 16" in one_part.out
    stdin = cli("compare", "-", "rope:base=500000", stdin=Path(files["rope"]).read_bytes())
    assert stdin.code == 0 and "<stdin> [cos, sin]" in stdin.out


def test_a_bfloat16_file_is_called_bfloat16(cli, files):
    for first, second, file_line in (
        (files["bf16"], "sinusoidal", "A"),
        ("sinusoidal", files["bf16"], "B"),
    ):
        lines = cli("compare", first, second).out.splitlines()
        assert lines[0].endswith("32 × 16 bfloat16") and lines[1].endswith("32 × 16 bfloat16"), lines
        assert "bf16.safetensors" in lines[0 if file_line == "A" else 1]
    assert "dtype bfloat16, value precision bfloat16" in cli("identify", files["bf16"]).out
    assert json.loads(cli("identify", files["rope_bf16"], "--json").out)["dtype"] == "bfloat16"


def test_plot_of_a_rope_stream_draws_both_panels_as_a_path_does(cli, files):
    size = ("--width", "60", "--height", "24")
    by_path = cli("plot", files["rope"], *size)
    by_stdin = cli("plot", "-", *size, stdin=Path(files["rope"]).read_bytes())
    assert by_path.code == by_stdin.code == 0, by_stdin.stderr
    def drawn(text):  # the panels without their titles (a title is cut to the width at its name)
        return [line for line in text.splitlines() if not line.startswith(("cos ", "sin "))]

    assert drawn(by_stdin.out) == drawn(by_path.out) and len(by_path.out.splitlines()) <= 24
    titles = [line for line in by_stdin.out.splitlines() if line.startswith(("cos ", "sin "))]
    assert [title.split()[0] for title in titles] == ["cos", "sin"] and all("<stdin>" in t for t in titles), titles
