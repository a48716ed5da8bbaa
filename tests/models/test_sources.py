"""The one source resolver (pecli.sources): each kind of source read directly, and only it reads sources."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError
from pecli.sources import SOURCE_KINDS, kind_of_source, resolve, source_tensors
from tests.paths import DATA

MODELS = DATA / "models"
PACKAGE = Path(pecli.__file__).parent


def _written(tmp_path, *args, name="pe.npy"):
    from pecli.cli.app import main

    path = tmp_path / name
    assert main(["generate", *args, "-o", str(path)]) == 0
    return path


def test_a_npy_file_pecli_wrote_resolves_to_its_values(tmp_path):
    path = _written(tmp_path, "sinusoidal", "--d", "8", "--len", "5")
    table = resolve(str(path))
    assert (table.kind, table.label, table.source, table.scheme) == ("file", "pe.npy", str(path), None)
    np.testing.assert_allclose(table.array, pecli.encode("sinusoidal", length=5, dim=8), rtol=1e-6)


def test_a_safetensors_file_resolves_to_its_values_its_scheme_and_the_key_a_part_chose(tmp_path):
    path = _written(tmp_path, "rope", "--d", "8", "--len", "5", name="r.safetensors")
    table = resolve(str(path), key="co")
    assert table.kind == "file" and table.scheme == "rope" and (table.key, table.requested_key) == ("cos", "co")
    np.testing.assert_allclose(table.array, pecli.encode("rope", length=5, dim=8, part="cos"), rtol=1e-6)
    assert table.label == "rope — r.safetensors [cos]" and table.metadata["scheme"] == "rope"
    assert table.key_note.spelled(lambda name: "--" + name) == "--key 'co' selects the tensor 'cos'"


def test_a_scheme_spec_resolves_to_the_computed_table_with_its_parameters():
    table = resolve("rope", scheme_params={"base": 500000.0, "part": "sin"}, dim=8, length=6, dtype="float64")
    expected = pecli.encode("rope", length=6, dim=8, base=500000, part="sin")
    assert table.kind == "scheme" and table.scheme == "rope" and table.params["base"] == 500000
    np.testing.assert_allclose(table.array, expected)
    assert table.array.dtype == np.float64 and table.dtype_name == "float64"


def test_stdin_bytes_and_a_stream_resolve_alike():
    buffer = io.BytesIO()
    np.save(buffer, pecli.encode("sinusoidal", length=3, dim=4))
    for stdin in (buffer.getvalue(), io.BytesIO(buffer.getvalue()), buffer.getvalue):
        table = resolve("-", stdin=stdin)
        assert (table.kind, table.label, table.source) == ("stdin", "<stdin>", "-")
        np.testing.assert_allclose(table.array, pecli.encode("sinusoidal", length=3, dim=4))


def test_a_model_directory_resolves_to_its_position_table_and_says_which_key():
    table = resolve(str(MODELS / "tiny-gpt2"), key="wpe")
    from safetensors.numpy import load_file

    weights = {}
    for shard in sorted((MODELS / "tiny-gpt2").glob("*.safetensors")):
        weights.update(load_file(str(shard)))
    assert table.kind == "model-directory" and table.key.endswith("wpe.weight")
    np.testing.assert_array_equal(table.array, weights[table.key])
    assert table.label == f"tiny-gpt2 [{table.key}]"
    assert table.key_note is not None and table.key_note.spelled(lambda n: "--" + n) == (
        f"--key 'wpe' selects the tensor {table.key!r}"
    )


def test_scheme_options_on_a_file_and_a_key_on_a_scheme_are_refused_by_parameter_name(tmp_path):
    path = _written(tmp_path, "sinusoidal", "--d", "4", "--len", "2")
    with pytest.raises(ParameterError) as error:
        resolve(str(path), dim=4, scheme_params={"base": 10.0})
    assert error.value.message == f"dim, base apply to a scheme, but {str(path)!r} is a file"
    with pytest.raises(ParameterError) as error:
        resolve("sinusoidal", key="pe", dim=4, length=2)
    assert error.value.message == "key applies to files, but 'sinusoidal' is a scheme"


def test_the_kinds_are_tried_in_order_and_only_files_list_tensors(tmp_path):
    path = _written(tmp_path, "sinusoidal", "--d", "4", "--len", "2")
    assert [kind.name for kind in SOURCE_KINDS] == ["stdin", "model-directory", "config", "model-id", "file", "scheme"]
    assert kind_of_source(str(MODELS / "tiny-gpt2")).name == "model-directory"
    assert source_tensors(str(path)) == {"": ((2, 4), "float32")}
    assert source_tensors(str(MODELS / "tiny-gpt2")) is None and source_tensors("sinusoidal") is None


#: modules in pecli/cli/ that may still import a per-kind reader, and why
READERS_ALLOWED = {
    "info.py": "info describes a file's headers and a model directory's listing, not one table",
    "model_inputs.py": "generate --from-config builds a TableSpec to stream, not a table (not yet a source kind)",
    "relative_input.py": "reads only a file's header metadata to learn a relative scheme's parameters",
    "reproduce.py": "reproduce reads a file's metadata to rebuild its command",
    "wavelength.py": "reads only a file's header metadata to learn RoPE's parameters",
    "compare_stream.py": "counts a large file's tensors: one streams, a cos and sin pair is compared side by side",
    "resample.py": "--in-checkpoint rewrites the shard holding the tensor: it needs the stored tensor, not a table",
}
_READERS = ("pecli.models.directory", "pecli.models.config", "pecli.models", "pecli.io")
_READER_NAMES = {"read_table", "read_tensors", "open_tensors", "open_model_directory", "read_config", "model_encoding"}


def _imported(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)


def test_only_the_resolver_calls_the_per_kind_readers():
    """No CLI module reads a table its own way: models.directory, models.config and io's readers are the resolver's."""
    offenders = {}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        if path.name in READERS_ALLOWED:
            continue
        found = [
            f"{module}:{','.join(names)}"
            for module, names in _imported(path)
            if (module in _READERS and _READER_NAMES & set(names))
            or module in ("pecli.models.directory", "pecli.models.config")
        ]
        if found:
            offenders[path.name] = found
    assert offenders == {}
    assert all(path.endswith(".py") and (PACKAGE / "cli" / path).exists() for path in READERS_ALLOWED)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--scaling", "linear"), "--scaling applies to a scheme, but 't.npy' is a file (drop it, or give"),
        (("--scaling", "linear", "--base", "5"), "apply to a scheme, but 't.npy' is a file (drop them, or give"),
    ],
)
def test_scheme_options_on_a_file_are_named_in_number(tmp_path, args, line):
    # found by the CLI fuzz: "--scaling apply to a scheme … (drop them …)" for one option
    from tests.conftest import run_in_process

    np.save(tmp_path / "t.npy", np.zeros((4, 4), np.float32))
    result = run_in_process("plot", "t.npy", *args, "--width", "40", "--height", "10", cwd=str(tmp_path))
    assert result.code == 2
    assert line in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_scheme_options_on_stdin_say_stdin_holds_a_table():
    from tests.conftest import run_in_process

    piped = io.BytesIO()
    np.save(piped, np.zeros((4, 4), np.float32))
    result = run_in_process("plot", "-", "--scaling", "linear", "--width", "40", stdin=piped.getvalue())
    assert result.code == 2
    assert "--scaling applies to a scheme, but stdin ('-') holds a table" in result.stderr
