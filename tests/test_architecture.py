"""The shape of the house: registry defaults match the code, no import cycles, the core names no flags."""

from __future__ import annotations

import ast
import functools
import inspect
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pecli
import pecli.io
from pecli.analysis.identify import identify_table
from pecli.errors import ParameterError, PecliError
from pecli.io.atomic import check_free_space
from pecli.io.safetensors import safetensors_header
from pecli.io.source import read_stdin
from pecli.io.tensor import Tensor
from pecli.models.directory import open_model_directory
from pecli.render.lines import save_lines
from pecli.schemes.catalog import SCHEMES

PACKAGE = Path(pecli.__file__).parent
MODULES = sorted(
    ".".join(("pecli", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py")
)


@functools.cache
def _nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of a module's tree, in ``ast.walk`` order: each source is parsed once per session."""
    return tuple(ast.walk(ast.parse(source)))


@functools.cache
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_registry_defaults_equal_the_scheme_function_defaults(name):
    scheme = SCHEMES[name]
    signature = inspect.signature(scheme.function)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    for param, default in scheme.defaults.items():
        if param not in signature.parameters:  # through **kwargs (RoPE's scaling options): unset by default
            assert takes_any and default is None, (name, param)
            continue
        declared = signature.parameters[param].default
        if param == "part" and scheme.parts:  # unset in the registry: write the default parts
            assert default is None and declared in (inspect.Parameter.empty, None, *scheme.default_parts), name
        elif declared is inspect.Parameter.empty:  # required by the function: the registry leaves it unset
            assert default is None, (name, param)
        else:
            assert default == declared, (name, param, default, declared)
    keywords = {p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    engine = {"dtype", "rows", "out"}  # how the table is made, not what it is: no registry entry
    assert keywords - engine <= set(scheme.defaults), name
    assert takes_any or keywords - engine == set(scheme.defaults), name


@functools.cache
def _imports(module: str) -> frozenset[str]:
    """The pecli modules ``module`` imports, at top level or inside functions."""
    path = PACKAGE.joinpath(*module.split(".")[1:])
    source = (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in _nodes(_source(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in MODULES and name != module)
    return frozenset(found)


def test_no_import_cycle_counting_imports_inside_functions():
    graph = {module: _imports(module) for module in MODULES}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join((*path[path.index(module) :], module)))
        if module in done:
            return
        for imported in graph[module]:
            visit(imported, (*path, module))
        done.add(module)

    for module in MODULES:
        visit(module, ())


def test_the_core_never_imports_the_cli_or_torch():
    core = [m for m in MODULES if m.startswith(("pecli.schemes", "pecli.analysis", "pecli.render"))]
    assert "pecli.schemes.catalog" in core
    for module in core:
        assert not {m for m in _imports(module) if m.startswith("pecli.cli")}, module
        assert not _imports(module) & {"pecli.torch", "pecli.torch_backend"}, module


def test_nothing_outside_the_schemes_package_imports_its_private_modules():
    private = {m for m in MODULES if m.startswith("pecli.schemes._")}
    for module in MODULES:
        if not module.startswith("pecli.schemes"):
            assert not _imports(module) & private, module


#: a fork server: a fresh interpreter (started as ``python -c``, like the one-process-per-module check it replaces,
#: and importing nothing beyond what every interpreter starts with) forks one child per module; each child
#: imports that module alone, as ``python -c "import MODULE"`` would, under a 120 s alarm, with its stderr
#: captured. Forking skips a start-up per module, not the import: a child sees no pecli module loaded.
_FORK_SERVER = """
import os, sys
while True:
    line = sys.stdin.readline()
    if not line:
        break
    module = line.strip()
    err = "%s/%s.stderr" % (sys.argv[1], module)
    pid = os.fork()
    if pid == 0:
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        os.dup2(fd, 1)  # what the import prints stays out of the answers on the server's stdout
        sys.stdin = None
        import signal
        signal.alarm(120)
        try:
            exec("import " + module, {"__name__": "__main__"})
            code = 0
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        try:
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write("%d\\n" % os.waitstatus_to_exitcode(status))
    sys.stdout.flush()
"""


@pytest.fixture(scope="module")
def fresh_import(tmp_path_factory):
    """``fresh_import(module)`` -> (exit code, stderr) of importing ``module`` alone in a fresh interpreter."""
    if not hasattr(os, "fork"):  # no fork (Windows): one interpreter per module

        def alone(module: str) -> tuple[int, str]:
            completed = subprocess.run(
                [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120,
                cwd=PACKAGE.parent,
            )  # fmt: skip
            return completed.returncode, completed.stderr

        yield alone
        return
    folder = tmp_path_factory.mktemp("imports")
    server = subprocess.Popen(
        [sys.executable, "-c", _FORK_SERVER, str(folder)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=PACKAGE.parent,
    )  # fmt: skip

    def run(module: str) -> tuple[int, str]:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(module + "\n")
        server.stdin.flush()
        code = int(server.stdout.readline())
        return code, (folder / f"{module}.stderr").read_text()

    yield run
    server.communicate(timeout=60)


@pytest.mark.parametrize("module", [m for m in MODULES if m not in ("pecli.torch", "pecli.torch_backend")])
def test_every_module_imports_alone_in_a_fresh_interpreter(module, fresh_import):
    returncode, stderr = fresh_import(module)
    assert returncode == 0, stderr


#: library calls with bad arguments: the message must name Python parameters, never a flag
BAD_CALLS = [
    lambda: pecli.encode("sinusoidal", 4, 0),
    lambda: pecli.encode("sinusoidal", 0, 4),
    lambda: pecli.encode("sinusoidal", None, 4),
    lambda: pecli.encode("sinusoidal", 4, 4, base=1.0),
    lambda: pecli.encode("sinusoidal", 4, 4, layout="zigzag"),
    lambda: pecli.encode("sinusoidal", 4, 4, freq_shift=2.0),
    lambda: pecli.encode("sinusoidal", 4, 4, offset=2**60),
    lambda: pecli.encode("learned", 4, 4, std=0.0),
    lambda: pecli.encode("learned", 4, 4, seed=-1),
    lambda: pecli.encode("learned", 4, 4, base=2.0),
    lambda: pecli.encode("binary", 4, 4, bit_order="x"),
    lambda: pecli.encode("rope", 4, 5),
    lambda: pecli.encode("rope", 4, 8, scaling="linear"),
    lambda: pecli.encode("rope", 4, 8, scaling="linear", factor=2.0, beta_fast=3.0),
    lambda: pecli.encode("rope", 4, 8, scaling="llama3", factor=8.0, original_max_position=4, high_freq_factor=0.5),
    lambda: pecli.encode("alibi", 4, None),
    lambda: pecli.encode("alibi", 4, 8, heads=4),
    lambda: pecli.encode("alibi", 4, None, heads=4, head=9),
    lambda: pecli.encode("alibi", None, None, heads=4, head=1, part="slopes"),
    lambda: pecli.encode("sincos2d", None, 8),
    lambda: pecli.encode("sincos2d", 5, 8, grid="2,3"),
    lambda: pecli.encode("sincos2d", None, 6, grid="2,3"),
    lambda: pecli.encode("coordconv", None, 4, grid="2,3"),
    lambda: pecli.encode("fourier", 4, None),
    lambda: pecli.encode("fourier", 4, 8, num_freqs=3),
    lambda: pecli.encode("gaussian", 4, 5),
    lambda: pecli.encode("timestep", 4, 2, freq_shift=1.0),
    lambda: pecli.timestep_embedding([1.0], 4, max_period=1.0),
    lambda: pecli.encode("count", 70000, 2, dtype="float16"),
]


@pytest.mark.parametrize("call", BAD_CALLS)
def test_a_library_user_never_sees_a_flag(call):
    with pytest.raises(PecliError) as caught:
        call()
    text = str(caught.value)
    assert "--" not in text and "{" not in text, text


def _two_tensors(tmp_path: Path) -> str:
    from pecli.io import write_tensors

    path = str(tmp_path / "two.safetensors")
    write_tensors(path, {name: Tensor.from_array(np.zeros((2, 3), np.float32)) for name in "ab"}, fmt="safetensors")
    return path


def _model(tmp_path: Path, names: tuple[str, ...]) -> str:
    import json

    from pecli.io import write_tensors

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    tensors = {name: Tensor.from_array(np.zeros((4, 2), np.float32)) for name in names}
    write_tensors(str(tmp_path / "model.safetensors"), tensors, fmt="safetensors")
    return str(tmp_path)


class _Terminal(io.BytesIO):
    def isatty(self) -> bool:
        return True


#: io, models, analysis and render calls with bad arguments (tmp_path -> a call that raises): no flag either
LIBRARY_BAD_CALLS = {
    "format_for": lambda tmp: pecli.io.format_for("pe.txt", None),
    "empty name": lambda tmp: pecli.io.check_format_holds("safetensors", {"": "float32"}),
    "metadata name": lambda tmp: pecli.io.check_format_holds("safetensors", {"__metadata__": "float32"}),
    "bfloat16 npy": lambda tmp: pecli.io.check_format_holds("npy", {"pe": "bfloat16"}),
    "unknown format": lambda tmp: pecli.io.check_format_holds("xls", {"pe": "float32"}),
    "read_table two tensors": lambda tmp: pecli.io.read_table(_two_tensors(tmp)),
    "read_table missing key": lambda tmp: pecli.io.read_table(_two_tensors(tmp), key="c"),
    "read_table no file": lambda tmp: pecli.io.read_table(str(tmp / "none.npy")),
    "free space": lambda tmp: check_free_space(str(tmp / "pe.npy"), 1 << 62),
    "header size": lambda tmp: safetensors_header({}, {"x": "y" * 100_000_000}),
    "stdin closed": lambda tmp: read_stdin(None),
    "stdin terminal": lambda tmp: read_stdin(_Terminal()),
    "model two tables": lambda tmp: open_model_directory(
        _model(tmp, ("a.position_embeddings.weight", "b.position_embeddings.weight"))
    ).position_table(),
    "model no table": lambda tmp: open_model_directory(_model(tmp, ("wte.weight",))).position_table(),
    "model no config": lambda tmp: open_model_directory(str(tmp)),
    "identify 3-D": lambda tmp: identify_table(np.zeros((2, 4, 3))),  # more query rows than keys
    "identify NaN": lambda tmp: identify_table(np.full((4, 4), np.nan)),
    "save_lines no dims": lambda tmp: save_lines(np.zeros((4, 4)), str(tmp / "l.png"), dims=[], title="t"),
    "save_lines bad dim": lambda tmp: save_lines(np.zeros((4, 4)), str(tmp / "l.png"), dims=[9], title="t"),
}


@pytest.mark.parametrize("call", LIBRARY_BAD_CALLS.values(), ids=LIBRARY_BAD_CALLS.keys())
def test_io_models_analysis_and_render_never_name_a_flag(call, tmp_path):
    """read_table on a two-tensor file said "choose one with --key" to a Python caller."""
    with pytest.raises(PecliError) as caught:
        call(tmp_path)
    text = str(caught.value)
    assert not FLAG.search(text) and "{" not in text, text
    assert "cannot hold dtype" not in text, text  # the call fails where it means to, not in its setup


def test_the_cli_spells_the_core_s_key_and_output_placeholders(tmp_path):
    from pecli.cli.options import flag_for

    with pytest.raises(PecliError) as caught:
        pecli.io.read_table(_two_tensors(tmp_path))
    assert str(caught.value).startswith(f"{tmp_path / 'two.safetensors'} holds 2 tensors; choose one with key (")
    assert "choose one with --key (" in caught.value.spelled(flag_for)
    with pytest.raises(PecliError) as caught:
        open_model_directory(_model(tmp_path, ("a.position_embeddings.weight", "b.wpe.weight"))).position_table()
    assert "2-D position tensors; choose one with key (" in str(caught.value)
    assert "2-D position tensors; choose one with --key (" in caught.value.spelled(flag_for)
    with pytest.raises(PecliError) as caught:
        read_stdin(_Terminal())
    assert caught.value.hint == "pipe one in: pecli generate dim=64 length=32 output=- | …"
    assert caught.value.spelled(flag_for).endswith("(pipe one in: pecli generate --d 64 --len 32 -o - | …)")


def test_a_render_note_names_rows_and_the_cli_spells_its_flag(tmp_path):
    from pecli.cli.options import flag_for

    note = save_lines(pecli.encode("sinusoidal", 2048, 16), str(tmp_path / "l.png"), dims=[0, 8], title="t")
    assert note.endswith("as a solid band: rows=0:200 shows the shape"), note
    assert note.spelled(flag_for).endswith("as a solid band: --rows 0:200 shows the shape")


#: a CLI flag at a word's start: --key, --rows (not "--" alone, a linestyle; not a---b)
FLAG = re.compile(r"(?<![\w-])--[a-z]")
#: modules outside pecli/cli/ whose string literals may still spell flags, and why
FLAG_TABLES = {
    "pecli/schemes/params.py": "the registry's table of each scheme parameter's flag (flag_for reads it)",
    "pecli/schemes/catalog.py": "scheme descriptions shown by 'pecli schemes' (a later change: placeholders)",
    "pecli/schemes/presets.py": "preset descriptions shown by 'pecli schemes' (a later change: placeholders)",
}


def _flag_literals(source: str, where: str) -> list[str]:
    """String literals (docstrings aside) in one module's source that spell a CLI flag."""
    nodes = _nodes(source)
    docstrings = set()
    for node in nodes:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        f"{where}:{node.lineno}: {node.value!r}"
        for node in nodes
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings and FLAG.search(node.value)
    ]  # fmt: skip


def test_the_flag_finder_finds_literals_and_skips_docstrings_comments_and_linestyles():
    source = (
        '"""Use --key."""\n'
        'def f():\n    """--rows A:B."""\n    plot(linestyle="--")  # --comment\n'
        '    raise E(f"pick {x} with --key", hint="--name pe")\n'
    )
    assert [found.split(": ", 1)[1] for found in _flag_literals(source, "m.py")] == [
        "' with --key'",
        "'--name pe'",
    ]


def test_only_the_cli_spells_flags():
    """Every string outside pecli/cli/ names parameters ({key}, {rows=0:200}); the CLI spells them as flags."""
    root = Path(pecli.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent).as_posix()
        if path.relative_to(root).parts[0] == "cli" or where in FLAG_TABLES:
            continue
        found += _flag_literals(_source(path), where)
    assert found == []


def test_the_cli_spells_the_same_error_with_flags():
    from pecli.cli.options import flag_for

    with pytest.raises(ParameterError) as caught:
        pecli.encode("sinusoidal", 4, 0)
    assert str(caught.value) == "dim must be a positive integer, got 0 (pass e.g. dim=64)"
    assert caught.value.spelled(flag_for) == "--d must be a positive integer, got 0 (pass e.g. --d 64)"


def _string_literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [text for element in node.elts for text in _string_literals(element)]
    return []


def _name_comparisons(source: str, where: str) -> list[str]:
    """``x == "rope"``, ``x != "alibi"``, ``x in ("alibi", "t5")``… in one module: a scheme known by its name."""
    found = []
    for node in _nodes(source):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(text in SCHEMES for operand in operands for text in _string_literals(operand)):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_name_comparison_finder_finds_every_form():
    source = 'if s == "rope" or "alibi" != s or s in ("t5", "x") or s not in ["sincos2d"] or s == "half":\n    pass\n'
    assert [found.split(": ", 1)[1] for found in _name_comparisons(source, "m.py")] == [
        "s == 'rope'",
        "'alibi' != s",
        "s in ('t5', 'x')",
        "s not in ['sincos2d']",
    ]


def test_no_module_outside_the_schemes_package_compares_a_scheme_name():
    offenders = [
        found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "schemes"
        for found in _name_comparisons(_source(path), str(path.relative_to(PACKAGE.parent)))
    ]
    assert not offenders, "describe it with a Scheme field instead:\n" + "\n".join(offenders)


def _small_table(scheme) -> dict[str, np.ndarray]:
    """Each default part of a small table of ``scheme``, from its own description."""
    params = {name: 4 for name in ("heads",) if name in scheme.defaults}
    if "grid" in scheme.defaults:
        params["grid"] = "3,4"
    length = None if "grid" in params else 8
    dims = [None] if scheme.axes == "query-key" else [12, 3, 13]
    for dim in dims:
        try:
            found = pecli.encode(scheme.name, length, dim, dtype="float64", **params)
        except ParameterError:
            continue
        return found if isinstance(found, dict) else {scheme.default_parts[0] if scheme.default_parts else "": found}
    raise AssertionError(f"{scheme.name}: no small table")


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_every_scheme_matches_its_own_description(name):
    scheme = SCHEMES[name]
    assert scheme.kind in ("table", "bias", "rotary"), name
    assert scheme.axes in ("positions", "timesteps", "query-key", "patches", "pixels", "grid"), name
    assert scheme.search in ("sinusoids", "rotary", "biases", "grid", "fourier", "choices", "none"), name
    assert scheme.relative in (None, "score", "bias", "buckets"), name
    # a bias view names the functions distance, plot and compare call: no command knows the scheme
    assert (scheme.relative in ("bias", "buckets")) == (scheme.bias is not None) == (scheme.bias_heads is not None)
    assert scheme.relative is None or scheme.kind in ("bias", "rotary"), name
    assert (scheme.kind == "bias") == (scheme.axes == "query-key"), name
    if scheme.search == "choices":  # tried at every choice: a plain table no random draw makes
        assert scheme.is_sequence and "seed" not in scheme.defaults, name
    parts = _small_table(scheme)
    assert set(parts) == set(scheme.default_parts or parts), name
    for part, table in parts.items():
        if scheme.kind == "bias":  # (L, L) or (heads, L, L): query × key, no embedding dimension
            assert table.ndim in (2, 3) and table.shape[-1] == table.shape[-2] == 8, (name, part, table.shape)
            with pytest.raises(ParameterError):
                pecli.encode(name, 8, 16, **({"heads": 4} if "heads" in scheme.defaults else {}))
        else:
            assert table.ndim == 2 and table.shape[1] % scheme.column_segments == 0, (name, part, table.shape)
            expected_rows = 12 if scheme.axes in ("patches", "pixels", "grid") else 8
            assert table.shape[0] == expected_rows, (name, part, table.shape)
        if scheme.bounds is not None:
            low, high = scheme.bounds
            assert np.isfinite(table).all() and low <= table.min() and table.max() <= high, (name, part)
    if scheme.kind == "rotary":  # cos and sin of the same angles
        assert {"cos", "sin"} <= set(scheme.default_parts), name
        np.testing.assert_allclose(parts["cos"] ** 2 + parts["sin"] ** 2, 1.0, atol=1e-12)


def test_no_module_imports_the_click_package():
    """Typer vendors click as ``typer._click``; the separate ``click`` package is not a dependency of pecli
    (only the test extra pulls it in, through transformers), so importing it broke a user's install."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE.parent)
        for node in _nodes(_source(path)):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offenders += [f"{where}: {name}" for name in names if name.split(".")[0] == "click"]
    assert not offenders, offenders


#: the test folders, one per part of the package (issue 27, item 8); whole-project checks stay at the top
TEST_FOLDERS = {
    "schemes": "the encodings: formulas, conventions, arithmetic, properties (pecli.schemes)",
    "io": "table files: formats, untrusted input, streaming, GGUF, stdin (pecli.io)",
    "models": "model configs and directories, the source resolver, the sweep (pecli.models, pecli.sources)",
    "analysis": "compare, diagnosis, identify, distance, relative views, resample, precision (pecli.analysis)",
    "render": "figures and terminal views (pecli.render)",
    "cli": "each command end to end, help, completion, exit codes, faults (pecli.cli)",
    "python": "the public Python API, pecli.testing and the torch modules (pecli.api, pecli.testing, pecli.torch)",
}
WHOLE_PROJECT = {"test_architecture.py", "test_docs.py", "test_packaging.py"}


def test_tests_are_laid_out_by_feature_mirroring_the_package():
    tests = PACKAGE.parent / "tests"
    folders = {path.name for path in tests.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    assert folders == set(TEST_FOLDERS)
    assert {path.name for path in tests.glob("test_*.py")} == WHOLE_PROJECT
    for folder in TEST_FOLDERS:
        assert list((tests / folder).glob("test_*.py")), folder
