"""Results render themselves (issue 27, item 3): a command computes a report in the core and hands it to
the run's one output, which shows it as text, as one JSON document or not at all (-q); no command
module decides how a result looks."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.analysis.file_info import describe
from pecli.analysis.identify import IdentifyReport, identify_table
from pecli.cli.options import flag_for
from pecli.cli.output import Output
from pecli.errors import Message
from pecli.report import Deferred, Listing, Report, render_text

CLI = Path(pecli.__file__).parent / "cli"


def _show(report, **switches):
    out = Output(stdout=io.StringIO(), stderr=io.StringIO(), spell=flag_for, **switches)
    out.show(report)
    return out.stdout.getvalue(), out.stderr.getvalue()


def test_the_output_shows_a_report_as_text_json_or_nothing():
    listing = Listing({"rows": [1, 2]}, ["rows: 1, 2"])
    assert _show(listing) == ("rows: 1, 2\n", "")
    assert json.loads(_show(listing, json_output=True)[0]) == {"rows": [1, 2]}
    assert _show(listing, quiet=True) == ("", "")


def test_only_the_rendering_asked_for_is_computed():
    asked = []
    report = Deferred(lambda: asked.append("json") or {}, lambda: asked.append("text") or ["drawn"])
    _show(report)
    assert asked == ["text"]
    _show(report, json_output=True)
    assert asked == ["text", "json"]


def test_a_parameter_in_a_reports_text_reads_as_its_flag_on_the_command_line():
    tensors = {f"t{i}": ((2,), "float32") for i in range(1001)}
    report = describe("big.safetensors", tensors, {})
    last = report.text_lines()[-1]
    assert isinstance(last, Message)
    assert str(last) == "  … and 1 more (json_output lists them all, key shows one)"  # the library's text
    assert _show(report)[0].splitlines()[-1] == "  … and 1 more (--json lists them all, --key shows one)"


def test_a_library_user_prints_what_the_cli_prints(cli, tmp_path):
    table = pecli.encode(None, 64, 32, preset="fairseq").astype(np.float32)
    np.save(tmp_path / "pe.npy", table)
    shown = cli("identify", str(tmp_path / "pe.npy"))
    assert shown.code == 0
    report = IdentifyReport(identify_table(table), "pe.npy")  # the CLI labels a file by its name
    assert isinstance(report, Report)
    text = render_text(report)
    # the same lines, the recipe written as a Python call where the CLI writes its command line
    for printed, library in zip(shown.out.splitlines(), text.splitlines(), strict=True):
        if "reproduce:" in printed:
            assert printed.startswith("  reproduce: pecli generate") and library.startswith("  reproduce: sinusoidal(")
        else:
            assert printed == library


def _json_output_branches(path: Path) -> list[str]:
    """`if` statements of a command module that test json_output and do more than refuse (raise)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If | ast.IfExp) and "json_output" in ast.unparse(node.test):
            refuses = isinstance(node, ast.If) and all(isinstance(statement, ast.Raise) for statement in node.body)
            if not refuses or node.orelse:
                found.append(f"{path.name}:{node.lineno}")
    return found


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda path: path.name)
def test_no_command_module_branches_on_json_output(path):
    if path.name in ("output.py", "options.py"):  # the output itself, and the option that sets the switch
        return
    assert not _json_output_branches(path), "hand a report to out.show() instead"
    calls = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "json"
    ]
    assert not calls, f"{path.name} prints JSON itself at lines {calls}: hand a report to out.show()"
