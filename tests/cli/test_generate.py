"""``pecli generate`` end to end: in-process through the real entry point, and real pipes."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest
from typer.testing import CliRunner

import pecli
from pecli.cli.app import app
from pecli.io import read_table, read_tensors
from tests.conftest import assert_clean_error, run_in_terminal, run_pecli


def test_readme_command_writes_the_vaswani_table(cli, tmp_path):
    target = tmp_path / "pe.safetensors"
    result = cli("generate", "--d", "512", "--len", "2048", "-o", str(target))
    assert result.code == 0, result.stderr
    assert result.stdout == b""
    table = read_table(str(target))
    assert table.array.shape == (2048, 512) and table.array.dtype == np.float32
    p, k = np.arange(2048)[:, None], np.arange(256)[None, :]
    angles = p / 10000.0 ** (2 * k / 512)
    assert np.abs(table.array[:, 0::2] - np.sin(angles)).max() < 1e-6
    assert np.abs(table.array[:, 1::2] - np.cos(angles)).max() < 1e-6
    assert table.metadata["scheme"] == "sinusoidal"


def test_clirunner_summary_and_aliases():
    result = CliRunner().invoke(app, ["generate", "--dim", "8", "--length", "5"])
    assert result.exit_code == 0, result.output
    assert "sinusoidal: 5 × 8 float32" in result.stdout
    assert "base=10000.0" in result.stdout


def test_summary_json_is_one_document(cli):
    result = cli("generate", "count", "--d", "3", "--len", "4", "--json")
    document = json.loads(result.out)
    assert document["shape"] == [4, 3] and document["scheme"] == "count"
    assert document["min"] == 0 and document["max"] == 3
    assert result.stderr == ""


def test_list_presets_names_sources(cli):
    result = cli("generate", "--list-presets")
    for name in (
        "vaswani",
        "pytorch-tutorial",
        "distilbert",
        "tensor2tensor",
        "fairseq",
        "marian",
        "guided-diffusion",
        "diffusers",
    ):
        assert name in result.out
    assert "fairseq/modules/sinusoidal_positional_embedding.py" in result.out
    assert "guided_diffusion/nn.py" in result.out


def test_list_presets_of_one_scheme(cli):
    """``generate SCHEME --list-presets`` ignored SCHEME (an unknown one too, exit 0): now it lists that scheme's."""
    import json

    from pecli.schemes.presets import presets_of

    listed = json.loads(cli("generate", "timestep", "--list-presets", "--json").out)
    assert [entry["name"] for entry in listed] == presets_of("timestep") and listed
    assert {entry["scheme"] for entry in listed} == {"timestep"}
    none = cli("generate", "kerple", "--list-presets")
    assert none.code == 0 and none.out == "" and "kerple has no presets" in none.stderr
    unknown = cli("generate", "nosuch", "--list-presets")
    assert unknown.code == 2 and "unknown scheme 'nosuch'" in unknown.stderr


@pytest.mark.parametrize("fmt", ["npy", "safetensors", "pt", "csv", "tsv"])
def test_every_format_by_extension(cli, tmp_path, fmt):
    target = tmp_path / f"t.{fmt}"
    assert cli("generate", "--preset", "marian", "--d", "6", "--len", "7", "-o", str(target)).code == 0
    expected = pecli.encode(None, 7, 6, preset="marian")
    if fmt in ("csv", "tsv"):
        loaded = np.loadtxt(target, delimiter="," if fmt == "csv" else "\t", dtype=np.float32)
    else:
        loaded = read_table(str(target)).array
    np.testing.assert_array_equal(loaded, expected)


def test_format_flag_overrides_extension_and_name_sets_key(cli, tmp_path):
    target = tmp_path / "table.bin"
    assert (
        cli("generate", "--d", "4", "--len", "3", "-o", str(target), "--format", "safetensors", "--name", "pos").code
        == 0
    )
    tensors, metadata = read_tensors(str(target))
    assert list(tensors) == ["pos"] and metadata["tensor"] == "pos"


def test_scheme_options_and_dtype(cli, tmp_path):
    target = tmp_path / "t.safetensors"
    args = [
        "generate",
        "--layout",
        "split",
        "--freq-shift",
        "0",
        "--cos-first",
        "--d",
        "4",
        "--len",
        "2",
        "--dtype",
        "float64",
        "-o",
        str(target),
    ]
    assert cli(*args).code == 0
    np.testing.assert_allclose(
        read_table(str(target)).array[1], [0.5403023059, 0.9999500004, 0.8414709848, 0.0099998333], atol=1e-10
    )


def test_stdout_csv(cli):
    result = cli("generate", "--d", "2", "--len", "3", "-o", "-", "--format", "csv")
    assert result.code == 0
    np.testing.assert_allclose(np.loadtxt(io.StringIO(result.out), delimiter=","), pecli.encode(None, 3, 2), atol=1e-8)


def test_npy_through_a_real_pipe(tmp_path):
    result = run_pecli("generate", "--d", "16", "--len", "10", "-o", "-")
    assert result.code == 0, result.stderr
    np.testing.assert_array_equal(np.load(io.BytesIO(result.stdout)), pecli.encode(None, 10, 16))
    assert result.stderr == ""


def test_binary_to_a_terminal_is_refused():
    code, output = run_in_terminal("generate", "--d", "4", "--len", "2", "-o", "-")
    assert code == 3
    assert b"refusing to write binary" in output and b"\x93NUMPY" not in output


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--d", "0", "--len", "4"], 2, ["--d", "positive"]),
        (["--d", "-3", "--len", "4"], 2, ["--d"]),
        (["--d", "4", "--len", "0"], 2, ["--len"]),
        (["--d", "4"], 2, ["missing", "--len"]),
        (["--d", "4", "--len", "4", "--base", "1"], 2, ["base"]),
        (["--d", "4", "--len", "4", "--base", "nan"], 2, ["base"]),
        (["--d", "4", "--len", "4", "--base", "inf"], 2, ["base"]),
        (["learned", "--d", "4", "--len", "4", "--std", "0"], 2, ["std"]),
        (["sinusodal", "--d", "4", "--len", "4"], 2, ["unknown scheme", "sinusoidal"]),
        (["--preset", "fairsec", "--d", "4", "--len", "4"], 2, ["unknown preset", "fairseq"]),
        (["--d", "4", "--len", "4", "--dtype", "int8"], 2, ["dtype"]),
        (["learned", "--d", "4", "--len", "4", "--base", "100"], 2, ["does not take", "--base"]),
        (["--d", "4", "--len", "4", "--layout", "zigzag"], 2, ["layout"]),
        (["--d", "4", "--len", "4", "--format", "xls", "-o", "x.xls"], 2, ["format"]),
        (["--d", "4", "--len", "4", "-o", "x.docx"], 2, ["extension"]),
        (["--d", "4", "--len", "4", "--dtype", "bfloat16", "-o", "x.npy"], 2, ["bfloat16"]),
        (["--d", "4", "--len", "4", "-o", "nowhere/x.npy"], 3, ["does not exist"]),
        (["--d", "4", "--len", "4", "-o", "."], 3, ["directory"]),
        (["--d", "100000000", "--len", "100000000", "-o", "x.npy"], 3, ["would take"]),
        (["--d", "1000000", "--len", "100000000"], 2, []),
        (["--d", "x", "--len", "4"], 2, ["--d"]),
        (["--d", "4", "--len", "4", "--nope"], 2, ["--nope"]),
    ],
)
def test_bad_input_one_line_error_no_file(cli, tmp_path, monkeypatch, args, code, words):
    monkeypatch.chdir(tmp_path)
    result = cli("generate", *args)
    assert_clean_error(result, code, *words)
    assert os.listdir(tmp_path) == []


def test_existing_output_survives_a_bad_invocation(cli, tmp_path):
    target = tmp_path / "pe.npy"
    target.write_bytes(b"keep me")
    assert_clean_error(cli("generate", "--d", "4", "--len", "4", "--base", "0.5", "-o", str(target)), 2, "base")
    assert target.read_bytes() == b"keep me"


def test_subprocess_bad_input_has_no_traceback():
    result = run_pecli("generate", "--d", "0", "--len", "5")
    assert_clean_error(result, 2, "--d")


def test_version_and_module_entry():
    result = run_pecli("--version")
    assert result.code == 0 and result.out.startswith(f"pecli {pecli.__version__} (numpy ")


def test_generate_path_imports_no_torch_or_matplotlib(tmp_path):
    code = (
        "import sys; from pecli.cli.app import main; "
        f"rc = main(['generate', '--d', '8', '--len', '4', '-o', {str(tmp_path / 'x.safetensors')!r}]); "
        "print(rc, 'torch' in sys.modules, 'matplotlib' in sys.modules)"
    )
    import subprocess
    import sys

    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == ["0", "False", "False"]


@pytest.mark.parametrize(
    "command",
    [["generate", "--d", "8", "--len", "4"], ["timestep", "0", "250", "--dim", "8"]],
    ids=["generate", "timestep"],
)
def test_writing_pt_without_torch_is_a_clean_usage_error_before_any_work(cli, tmp_path, monkeypatch, command):
    """As reading a .pt says: exit 2 naming the extra, not "internal error: ModuleNotFoundError" (exit 3)."""
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # importing torch now fails, as where it is not installed
    target = tmp_path / "x.pt"
    result = cli(*command, "-o", str(target))
    assert_clean_error(result, 2, "writing a .pt file needs torch", "pip install 'pecli[torch]'")
    assert list(tmp_path.iterdir()) == []  # no file, no temporary left behind


def test_generate_without_output_previews_the_first_and_last_rows(cli):
    """Without -o, generate showed only min and max: now the values, numpy-style, ends of a long table."""
    import numpy as np

    result = cli("generate", "--d", "16", "--len", "20")
    assert result.code == 0, result.stderr
    lines = result.out.splitlines()
    header = lines.index("") + 1
    assert lines[header].split() == ["[0]", "[1]", "[2]", "[3]", "…", "[14]", "[15]"]
    table = pecli.encode("sinusoidal", 20, 16).astype(np.float64)
    rows = [line.split() for line in lines[header + 1 :]]
    assert [row[0] for row in rows] == ["0", "1", "2", "3", "…", "16", "17", "18", "19"]
    for row in rows:
        if row[0] != "…":
            shown = [float(v) for v in row[1:5] + row[6:]]
            expected = table[int(row[0])][[0, 1, 2, 3, 14, 15]]
            np.testing.assert_allclose(shown, expected, rtol=1e-5, atol=1e-6)  # six significant digits
    assert "hint: save it with -o" in result.stderr  # the hint stays on stderr: stdout holds the summary only


def test_generate_preview_of_a_short_table_shows_every_row_and_each_part(cli):
    result = cli("generate", "rope", "--d", "4", "--len", "3")
    assert result.code == 0, result.stderr
    text = result.out
    assert "\ncos:\n" in text and "\nsin:\n" in text
    sin = text.split("\nsin:\n")[1].splitlines()
    assert sin[0].split() == ["[0]", "[1]", "[2]", "[3]"] and len(sin) == 4
    assert [float(v) for v in sin[2].split()[1:]] == pytest.approx([0.841471, 0.00999983, 0.841471, 0.00999983])
