"""Names with braces for the tests of outside text in message templates (tests/cli/test_braces*_s11.py)."""

from __future__ import annotations

from pecli.text import CLOSE, OPEN

#: names a template would read as placeholders, and braces that are not one
NAMES = ["{rows}", "{key=1}", "{len}", "}{"]


def one_error_line(result, code: int = 2) -> str:
    """The one ``pecli: error:`` line of ``result`` (exit ``code``), its braces shown once (no stand-ins)."""
    assert result.code == code, (result.code, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pecli: error: "), result.stderr
    assert OPEN not in lines[0] and CLOSE not in lines[0], lines[0]  # literal() applied once, undone once
    return lines[0]
