"""Claims of README.md and the --help texts that no console example runs (issue 30)."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from pecli.cli.app import app

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_readme_names_every_package_of_the_test_extra():
    """The README listed the test extra without diffusers and gguf, which pyproject.toml installs."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on Python 3.10
    extra = re.findall(r'"([^"]+)"', re.search(r"^test = \[(.*)\]$", pyproject, re.M).group(1))
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    sentence = readme.split("The second installs the test extra", 1)[1].split(")", 1)[0]
    names = [re.split(r"[<>=!~\[ ]", requirement, maxsplit=1)[0] for requirement in extra]
    missing = [name for name in names if name not in sentence]
    assert names and not missing, missing


def _option_help(command: str, option: str) -> str:
    group = typer.main.get_command(app)
    params = group.commands[command].params  # type: ignore[attr-defined]
    return next(param.help for param in params if option in param.opts)


def test_compare_atol_help_names_the_rounding_of_the_lower_precision_table():
    """--atol's help said the default was 'float32 arithmetic noise of the data', but a float16 table
    is compared within its own rounding (0.0039 at d 64, len 128): far more than float32 noise."""
    text = _option_help("compare", "--atol")
    assert "rounding" in text and "lower-precision" in text and "float32 arithmetic noise" in text
    man = (ROOT / "man" / "pecli.1").read_text(encoding="utf-8").replace("\\-", "-")
    assert text in man


def test_every_test_module_the_docs_name_exists():
    """docs/scripting.md said `python -m tests.test_bad_inputs`, a module moved to tests/cli/."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "CONTRIBUTING.md"]
    named = {module for page in pages for module in re.findall(r"python -m (tests(?:\.\w+)+)", page.read_text())}
    missing = sorted(module for module in named if not (ROOT / (module.replace(".", "/") + ".py")).exists())
    assert named and not missing, missing
