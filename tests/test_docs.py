"""The generated docs (man page, completion scripts) are up to date and cover every command and option."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from pecli.cli.app import COMMANDS, app
from pecli.errors import ExitCode
from tests.conftest import require_tool, run_in_process

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def man_text() -> str:
    return (ROOT / "man" / "pecli.1").read_text(encoding="utf-8")


def _plain(roff_text: str) -> str:
    """The roff source with dash escapes undone, for searching option names."""
    return roff_text.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")


def test_committed_docs_are_what_the_generator_writes():
    stale = [path for path, content in _generator().generated_files().items() if (ROOT / path).read_text() != content]
    assert not stale, f"regenerate with: python scripts/generate_docs.py (stale: {stale})"


def test_generator_check_mode_is_one_command():
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_docs.py"), "--check"], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr


def _help_options(*command: str) -> set[str]:
    """The options ``pecli COMMAND --help`` lists (run in process: its subject is the printed help)."""
    result = run_in_process(*command, "--help")
    assert result.code == 0, result.stderr
    options: set[str] = set()
    for line in result.out.split("Options:", 1)[1].splitlines():
        column = re.match(r"^\s+(-\S.*?)(?:\s{2,}|$)", line)  # the option column, not wrapped help text
        if column:
            options.update(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", column.group(1)))
    return options


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_in_help_is_in_its_man_section(man_text, command):
    section = _plain(man_text).split(f'.SS "pecli {command} ', 1)[1].split("\n.SS ", 1)[0].split("\n.SH ", 1)[0]
    options = _help_options(command)
    assert "--help" in options and len(options) > 2
    missing = sorted(option for option in options if not re.search(rf"(?<![\w-]){option}(?![\w-])", section))
    assert not missing, f"{command}: {missing} missing from man/pecli.1 (python scripts/generate_docs.py)"


def test_man_page_has_root_options_exit_codes_and_examples(man_text):
    plain = _plain(man_text)
    assert _help_options() <= set(re.findall(r"--?[a-z][a-z0-9-]*", plain.split(".SH COMMANDS")[0]))
    exit_section = plain.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    assert [int(code) for code in re.findall(r"^(\d+)$", exit_section, re.M)] == [int(c) for c in ExitCode]
    examples = plain.split(".SH EXAMPLES", 1)[1].split(".SH ", 1)[0]
    assert "pecli generate --d 512 --len 2048 -o pe.safetensors" in examples
    assert "pecli info" in examples and "pecli schemes --json" in examples


def test_documented_exit_codes_match_the_enum():
    page = (ROOT / "docs" / "scripting.md").read_text()
    table = page.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert [int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)] == [int(c) for c in ExitCode]


def test_groff_reports_no_warnings():
    require_tool("groff")
    completed = subprocess.run(
        ["groff", "-man", "-ww", "-z", str(ROOT / "man" / "pecli.1")], capture_output=True, text=True
    )
    assert completed.returncode == 0 and completed.stderr == "", completed.stderr


def test_man_page_renders_every_help_text_literally():
    """Rendered, the page holds every option's help as written: unicode, brackets, dashes."""
    require_tool("groff")
    completed = subprocess.run(
        ["groff", "-man", "-Tutf8", "-P-cbou", str(ROOT / "man" / "pecli.1")], capture_output=True, text=True
    )
    # compare without whitespace and groff's hyphenation marks (U+2010) at line ends
    rendered = "".join(completed.stdout.split()).replace("\u2010", "")
    root = typer.main.get_command(app)
    helps = {"".join(p.help.split()) for name in COMMANDS for p in root.commands[name].params if getattr(p, "help", "")}
    assert any(not text.isascii() for text in helps) and any("[" in text for text in helps)
    missing = sorted(text for text in helps if text not in rendered)
    assert not missing, missing
    assert "pecligenerate--d512--len2048-ope.safetensors" in rendered


DOC_PAGES = ["README.md", *sorted(str(path.relative_to(ROOT)) for path in (ROOT / "docs").glob("*.md"))]


def console_examples(page: str) -> list[tuple[str, str]]:
    """The (command, expected output) pairs of a page's ```console blocks, in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n(.*?)```", text, re.S)
    return [pair for block in blocks for pair in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M)]


@pytest.mark.parametrize("page", DOC_PAGES)
def test_console_examples_show_real_output(shell_env, tmp_path, page):
    """Every ```console block of the README and docs/, run in order in one folder per page.

    A command that exits non-zero shows its status in the example (``; echo "exit $?"``).
    """
    env = {**shell_env, "PYTHONUNBUFFERED": "1"}  # stdout and stderr in the order a terminal shows them
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # as in a checkout's root: examples read tests/data/
    for command, expected in console_examples(page):
        completed = subprocess.run(
            ["bash", "-c", command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )
        assert completed.returncode == 0, (command, completed.stdout)
        assert same_output(completed.stdout, expected), (command, completed.stdout, expected)


_NUMBER = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)")
NOISE = 1e-12  # figures below this are float64 rounding noise: their digits depend on BLAS threads and CPU kernels


def same_output(actual: str, expected: str) -> bool:
    """The output a doc shows, line for line, with rounding noise compared as numbers.

    Text must match exactly up to the run of spaces between columns (a noise figure of another
    width shifts a column); numbers must match as written, or both be below ``NOISE`` in magnitude.
    """
    if actual == expected:
        return True
    actual_lines, expected_lines = actual.splitlines(), expected.splitlines()
    if len(actual_lines) != len(expected_lines):
        return False
    for line, wanted in zip(actual_lines, expected_lines, strict=True):
        if line == wanted:
            continue
        got, want = _NUMBER.split(line), _NUMBER.split(wanted)
        if len(got) != len(want):
            return False
        for index, (part, wanted_part) in enumerate(zip(got, want, strict=True)):
            if index % 2 == 0:  # text between numbers
                if " ".join(part.split()) != " ".join(wanted_part.split()):
                    return False
            elif part != wanted_part and not (abs(float(part)) < NOISE and abs(float(wanted_part)) < NOISE):
                return False
    return True


@pytest.mark.parametrize(
    ("actual", "expected", "same"),
    [
        ("a ✓ 4.68e-14  ✓ 7.96e-15\n", "a ✓ 4.51e-14  ✓ 8e-15\n", True),  # noise, columns shifted
        ("a ✓ 4.68e-14\n", "a ✓ 4.51e-13\n", True),
        ("max 0.0267\n", "max 0.0268\n", False),  # a real figure
        ("max 2e-12\n", "max 1e-13\n", False),  # one side above the noise
        ("a b\n", "a  c\n", False),
        ("float32\n", "float64\n", False),
        ("x\n", "x\ny\n", False),
    ],
)
def test_same_output_tolerates_only_rounding_noise(actual, expected, same):
    assert same_output(actual, expected) is same


def test_every_doc_page_has_console_or_doctest_examples():
    pages_without = [
        page for page in DOC_PAGES if not console_examples(page) and ">>> " not in (ROOT / page).read_text()
    ]
    assert pages_without == ["docs/index.md", "docs/install.md", "docs/performance.md"]


def test_relative_links_resolve_and_every_page_is_linked():
    linked: set[Path] = set()
    for page in DOC_PAGES:
        for target in re.findall(r"\]\(([^)#]+)\)", (ROOT / page).read_text()):
            if "://" not in target:
                path = ((ROOT / page).parent / target).resolve()
                assert path.exists(), f"{page} links to {target}, which does not exist"
                linked.add(path)
    assert {(ROOT / page).resolve() for page in DOC_PAGES[1:]} <= linked


def test_readme_is_a_front_door():
    assert len((ROOT / "README.md").read_text().splitlines()) < 150


def test_no_page_repeats_a_heading():
    """docs/install.md had "Shell completion and the man page" twice, one of them empty."""
    for page in DOC_PAGES:
        headings = [line for line in (ROOT / page).read_text().splitlines() if re.match(r"#{1,6} ", line)]
        repeated = sorted({heading for heading in headings if headings.count(heading) > 1})
        assert not repeated, f"{page} repeats {repeated}"


def test_readme_says_which_files_record_how_they_were_made(tmp_path):
    """Only .safetensors carries pecli's metadata; the README said "every file records how it was made"."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "every file records" not in readme
    assert "a `.safetensors` file records how it was made" in readme
    assert "`.npy`, `.pt` and CSV/TSV hold the values only" in readme
    formats = ["safetensors", "npy"] + (["pt"] if importlib.util.find_spec("torch") else [])
    for fmt in formats:
        path = tmp_path / f"pe.{fmt}"
        assert run_in_process("generate", "--preset", "fairseq", "--d", "8", "--len", "4", "-o", str(path)).code == 0
        info = run_in_process("info", str(path)).out
        recorded = "written by pecli" in info and "preset fairseq" in info and "offset=2" in info
        assert recorded == (fmt == "safetensors"), (fmt, info)


def test_the_readme_says_how_to_reach_the_man_page_after_its_own_install():
    """``pip install -e .`` installs no data files, so ``man pecli`` alone finds nothing after it."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert readme.count("pip install -e .") >= 2  # the first command, and the sentence about it
    assert "`man ./man/pecli.1` (from the checkout)" in readme and (ROOT / "man" / "pecli.1").is_file()
    assert "installs no man page or completions" in readme
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"share/man/man1" = ["man/pecli.1"]' in pyproject  # what `pip install .` puts under share/


def test_the_man_page_files_section_points_where_completions_are_documented(man_text):
    files = _plain(man_text).split(".SH FILES", 1)[1].split(".SH", 1)[0]
    assert "docs/install.md" in files and "see README.md" not in files
    section = (ROOT / "docs" / "install.md").read_text().split("## Shell completion and the man page", 1)[1]
    for path in ("completions/pecli.bash", "completions/_pecli", "completions/pecli.fish"):
        assert path in files
        assert path.split("/")[1] in section  # docs/install.md tells how to load each script
