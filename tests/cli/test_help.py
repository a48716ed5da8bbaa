"""``--help`` reads well: whole command summaries, plain metavars, one placeholder style, options by scheme.

Help is rendered in process at an explicit width (click's ``terminal_width``), so these tests do
not depend on the terminal they run in; one real process checks ``COLUMNS`` as a user's shell sets it.
"""

from __future__ import annotations

import re

import pytest
import typer

from pecli.cli._typer_compat import Context
from pecli.cli.app import COMMANDS, app
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.params import PARAMS
from tests.conftest import run_pecli
from tests.paths import ROOT

WIDTHS = (80, 200)


def _help(*names: str, width: int) -> str:
    """The help text of ``pecli NAMES…`` rendered ``width`` columns wide."""
    command = typer.main.get_command(app)
    ctx = Context(command, info_name="pecli", terminal_width=width, **command.context_settings)
    for name in names:
        command = command.commands[name]
        ctx = Context(command, info_name=name, parent=ctx, terminal_width=width)
    return command.get_help(ctx)


def _sections(text: str) -> dict[str, str]:
    """Heading -> body of each section (a line ``Heading:`` at column 0) of a help text."""
    parts = re.split(r"^(\S[^\n]*):\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _flags(body: str) -> set[str]:
    """The flags in the option column of a section (not those quoted in wrapped help text)."""
    flags: set[str] = set()
    for line in body.splitlines():
        column = re.match(r"^  (-\S.*?)(?:\s{2,}|$)", line)
        if column:
            flags.update(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", column.group(1)))
    return flags


def _summary(name: str) -> str:
    """The command's own one-line summary: its ``short_help``, else its help's first line."""
    command = typer.main.get_command(app).commands[name]
    return command.short_help or (command.help or "").strip().splitlines()[0]


@pytest.mark.parametrize("width", WIDTHS)
def test_command_listing_shows_every_summary_whole_on_one_line(width):
    listing = _sections(_help(width=width))["Commands"].split("\n\n")[0]  # the epilog follows a blank line
    rows = listing.splitlines()
    assert [row.split()[0] for row in rows] == list(COMMANDS)  # no summary wraps onto a line of its own
    for row in rows:
        name, summary = row.split(maxsplit=1)
        assert len(row) <= width and "..." not in summary
        assert summary == _summary(name), name  # whole, as the command states it
        assert summary.endswith((".", ")"))


def test_command_listing_at_80_columns_in_a_real_process():
    result = run_pecli("--help", env={"COLUMNS": "80"})
    assert result.code == 0, result.stderr
    text = result.out
    assert "  plot      Draw a table as a heatmap, in the terminal or as an image (-o).\n" in text
    assert "..." not in text.split("Commands:")[1].split("\n\n")[0]
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("name", COMMANDS)
def test_usage_line_shows_arguments_without_braces(name):
    usage = _help(name, width=80).splitlines()[0]
    assert "{" not in usage and "}" not in usage
    expected = {
        "plot": "INPUT",
        "distance": "INPUT",
        "identify": "INPUT",
        "resample": "INPUT",
        "info": "FILE",
        "compare": "A B",
        "generate": "[SCHEME]",
        "schemes": "[NAME]",
        "timestep": "[T ...]",
    }
    assert usage == f"Usage: pecli {name} [OPTIONS] {expected[name]}"


@pytest.mark.parametrize("name", COMMANDS)
def test_placeholders_use_one_uppercase_style(name):
    text = _help(name, width=200)
    assert not re.search(r"<[a-z]+>", text), re.findall(r".*<[a-z]+>.*", text)


def test_number_options_without_own_metavar_read_float_and_int():
    lines = _help("plot", width=200).splitlines()
    assert any(re.match(r"^  --vmin FLOAT\s", line) for line in lines)
    assert any(re.match(r"^  --width INT\s", line) for line in lines)


def _expected_heading(param: str) -> str:
    schemes = [scheme.name for scheme in SCHEMES.values() if param in scheme.defaults]
    return f"{schemes[0]} options" if len(schemes) == 1 else "Scheme options"


@pytest.mark.parametrize("name", ["generate", "plot", "distance"])
def test_scheme_options_stand_under_their_scheme_heading(name):
    sections = _sections(_help(name, width=100))
    flags = {heading: _flags(body) for heading, body in sections.items()}
    for param in PARAMS.values():
        holders = [heading for heading, found in flags.items() if param.flag in found]
        # plot's and distance's --scale is the panels' colour scale first (a number: timestep's angle scale)
        drawing = name != "generate" and param.flag == "--scale"
        assert holders == ["Drawing options" if drawing else _expected_heading(param.name)], (param.flag, holders)
    assert {"--heads", "--form", "--total-heads", "--head"} <= flags["alibi options"]
    assert {"--scaling", "--factor", "--beta-fast", "--partial-rotary-factor"} <= flags["rope options"]
    assert {"--preset", "--base", "--layout", "--grid"} <= flags["Scheme options"]
    assert {"--d", "--len", "--help"} <= flags["Options"] and "--base" not in flags["Options"]
    assert len(flags["Options"]) < 30  # the common options, no longer drowned among ~60 scheme flags


def test_shared_scheme_options_name_their_schemes():
    body = _sections(_help("generate", width=200))["Scheme options"]
    assert "Schemes: sinusoidal, rope, rope2d, sincos2d." in body  # --base


def test_timestep_shows_its_own_options_under_its_heading():
    sections = _sections(_help("timestep", width=100))
    assert {"--max-period", "--freq-shift", "--scale", "--repeat-only"} <= _flags(sections["timestep options"])
    assert "--base" not in _help("timestep", width=100)


def test_man_page_groups_options_under_the_same_headings():

    man = (ROOT / "man" / "pecli.1").read_text(encoding="utf-8")
    generate = man.split('.SS "pecli generate', 1)[1].split(".SS ", 1)[0]
    headings = re.findall(r"^\.PP\n(\S[^\n]*):$", generate, flags=re.MULTILINE)
    assert headings[:4] == ["Arguments", "Options", "Scheme options", "sinusoidal options"]
    assert "rope options" in headings and "t5 options" in headings


@pytest.mark.parametrize("name", COMMANDS)
def test_examples_keep_one_command_a_line(name):
    # resample's examples had lost click's no-rewrap marker and ran together into one wrapped paragraph
    text = _help(name, width=80)
    block = text.split("Examples:\n", 1)[1].lstrip("\n").split("\n\n")[0]  # the lines under the heading
    lines = block.splitlines()
    assert lines and all(line.startswith("    ") for line in lines), block
    assert all(line.split()[0] in ("pecli", "seq") for line in lines), block
    assert all(line.count("pecli ") == 1 or "|" in line for line in lines), block
