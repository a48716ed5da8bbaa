"""Session 14 attack on messages: an option value, a file name or a spec holding braces is shown as
given, never read as a parameter placeholder (``--dtype '{dim}'`` said "unknown dtype '--d'")."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import pecli

ERRORS = {"PecliError", "ParameterError", "TableFileError", "OutputError", "NoLayerTypes", "GGUFWithoutSettings"}
ROOT = pathlib.Path(__file__).resolve().parents[2]
FACTORIES = {"invalid", "_corrupt"}  # helpers that build a TableFileError from their text


def _run(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PECLI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "pecli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["generate", "sinusoidal", "--d", "8", "--len", "4", "--dtype", "{dim}"], "unknown dtype '{dim}'"),
        (["generate", "--preset", "{dim}", "--d", "8", "--len", "4"], "unknown preset '{dim}'"),
        (["generate", "sinusoidal", "--d", "8", "--len", "4", "--format", "{length=3}", "-o", "x.npy"], "'{length=3}'"),
        (["generate", "sinusoidal", "--d", "8", "--len", "4", "-o", "x.{dim}"], "'x.{dim}' from its extension .{dim}"),
        (["generate", "{dim}", "--d", "8", "--len", "4"], "unknown scheme '{dim}'"),
        (["timestep", "1", "--dim", "8", "--preset", "{dim}"], "unknown preset '{dim}' for timestep"),
        (["timestep", "--range", "{dim}", "--dim", "8"], "--range '{dim}' is not"),
        (["timestep", "{dim}", "--dim", "8"], "'{dim}' (argument 1) is not a number"),
        (["plot", "t.npy", "--cmap", "{dim}"], "unknown colormap '{dim}'"),
        (["plot", "t.npy", "-o", "x.{dim}"], "extension .{dim}: 'x.{dim}'"),
        (["compare", "t.npy", "t.npy", "-o", "x{dim}.npz"], "'x{dim}.npz' is not .png"),
        (["compare", "--properties", "{dim}.npy"], "but '{dim}.npy' is a file"),
    ],
)
def test_braces_in_a_value_are_shown_as_given(tmp_path: pathlib.Path, args: list[str], shown: str) -> None:
    np.save(tmp_path / "t.npy", np.zeros((4, 8), np.float32))
    np.save(tmp_path / "{dim}.npy", np.zeros((4, 8), np.float32))
    result = _run(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pecli: error: "), result.stderr
    assert shown in lines[0], lines[0]
    assert "'--d'" not in lines[0] and "'--dim'" not in lines[0] and "--len 3" not in lines[0]


def _callee(node: ast.Call) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def test_no_error_template_quotes_a_value_with_repr() -> None:
    """An error's text is a template: ``{value!r}`` in it lets a value's braces read as a placeholder.
    ``literal_repr(value)`` quotes it the same way with its braces kept (pecli.text)."""
    root = pathlib.Path(pecli.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee(node) in ERRORS | FACTORIES:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.FormattedValue) and sub.conversion == ord("r"):
                        found.append(f"{path.relative_to(root)}:{sub.lineno}")
    assert not found, f"use literal_repr(...) instead of !r in: {', '.join(found)}"
