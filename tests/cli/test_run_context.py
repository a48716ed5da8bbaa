"""One run context per run (issue 27, item 2): the app builds one :class:`Output` (streams, switches),
hands it to the command and to the I/O it needs, and restores what it patched process-wide."""

from __future__ import annotations

import io
import signal
import sys
import warnings

import numpy as np
import pytest

import pecli.cli.schemes
from pecli.cli._typer_compat import FloatParamType, IntParamType
from pecli.cli.app import main
from pecli.cli.output import Output
from tests.conftest import run_in_process


class _Text(io.TextIOWrapper):
    """A text stream over bytes that is not a terminal (as a pipe)."""

    def isatty(self) -> bool:
        return False


def fake_run(stdin: bytes = b"") -> tuple[Output, io.BytesIO, io.StringIO]:
    """A run context over in-memory streams: (output, stdout's bytes, stderr)."""
    raw = io.BytesIO()
    stderr = io.StringIO()
    out = Output(
        stdout=_Text(raw, encoding="utf-8", write_through=True),
        stderr=stderr,
        stdin=_Text(io.BytesIO(stdin), encoding="utf-8"),
    )
    return out, raw, stderr


def _warning_catalog(original):
    def catalog_document():
        warnings.warn("overflow encountered in multiply", RuntimeWarning, stacklevel=1)
        return original()

    return catalog_document


def test_a_warning_inside_a_command_is_one_line_and_quiet_silences_it(monkeypatch):
    monkeypatch.setattr(pecli.cli.schemes, "catalog_document", _warning_catalog(pecli.cli.schemes.catalog_document))
    loud = run_in_process("schemes")
    assert loud.code == 0
    assert loud.stderr == "pecli: warning: overflow encountered in multiply\n"
    quiet = run_in_process("schemes", "-q")
    assert (quiet.code, quiet.stdout, quiet.stderr) == (0, b"", "")


def test_the_command_writes_through_the_run_context_it_is_given(monkeypatch):
    """A fake context with in-memory streams receives everything: sys.stdout/stderr stay untouched."""
    monkeypatch.setattr(sys, "stdout", None)  # anything written to the process's streams would fail
    monkeypatch.setattr(sys, "stderr", None)
    monkeypatch.setattr(sys, "stdin", None)
    out, raw, stderr = fake_run()
    assert main(["generate", "--d", "4", "--len", "3", "--format", "csv", "-o", "-"], output=out) == 0
    np.testing.assert_allclose(
        np.loadtxt(io.StringIO(raw.getvalue().decode()), delimiter=","),
        [
            [0.0, 1.0, 0.0, 1.0],
            [np.sin(1.0), np.cos(1.0), np.sin(0.01), np.cos(0.01)],
            [np.sin(2.0), np.cos(2.0), np.sin(0.02), np.cos(0.02)],
        ],
        atol=1e-7,
    )
    assert stderr.getvalue() == ""


def test_a_table_is_read_from_the_context_stdin_not_the_process(monkeypatch):
    table = io.BytesIO()
    np.save(table, np.arange(6.0).reshape(2, 3))
    monkeypatch.setattr(sys, "stdin", None)  # closed: only the context's stdin holds the table
    out, raw, stderr = fake_run(stdin=table.getvalue())
    assert main(["info", "-", "--stats", "--json"], output=out) == 0, stderr.getvalue()
    import json

    document = json.loads(raw.getvalue())
    assert document["file"] == "<stdin>"
    (tensor,) = document["tensors"]
    assert (tensor["shape"], tensor["stats"]["max"]) == ([2, 3], 5.0)


def _globals():
    return (
        warnings.showwarning,
        IntParamType._number_class,
        FloatParamType._number_class,
        signal.getsignal(signal.SIGTERM),
        signal.getsignal(signal.SIGHUP),
    )


@pytest.mark.parametrize("args", [["schemes", "-q"], ["generate", "--d", "٨"], ["--help"], ["no-such-command"]])
def test_the_process_is_as_before_after_a_run(args):
    before = _globals()
    out, _, _ = fake_run()
    main(args, output=out)
    assert _globals() == before


def test_version_goes_to_the_context_stdout(monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    out, raw, _ = fake_run()
    assert main(["--version"], output=out) == 0
    assert raw.getvalue().decode().startswith("pecli ")
