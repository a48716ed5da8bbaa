"""The shape of the house: registry defaults match the code, no import cycles, the core names no flags."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError, PecliError
from pecli.schemes.catalog import SCHEMES

PACKAGE = Path(pecli.__file__).parent
MODULES = sorted(
    ".".join(("pecli", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py")
)


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


def _imports(module: str) -> set[str]:
    """The pecli modules ``module`` imports, at top level or inside functions."""
    path = PACKAGE.joinpath(*module.split(".")[1:])
    source = (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in MODULES and name != module)
    return found


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


@pytest.mark.parametrize("module", [m for m in MODULES if m not in ("pecli.torch", "pecli.torch_backend")])
def test_every_module_imports_alone_in_a_fresh_interpreter(module):
    completed = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120, cwd=PACKAGE.parent
    )
    assert completed.returncode == 0, completed.stderr


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
    for node in ast.walk(ast.parse(source)):
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
        for found in _name_comparisons(path.read_text(), str(path.relative_to(PACKAGE.parent)))
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
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            where = path.relative_to(PACKAGE.parent)
            offenders += [f"{where}: {name}" for name in names if name.split(".")[0] == "click"]
    assert not offenders, offenders
