"""The one place where pecli talks to the terminal: data on stdout, messages on stderr.

One :class:`Output`, the run's context, is built per run (by :func:`pecli.cli.app.main`, or on
first use for a bare ``CliRunner``) and handed to the command as click's ``ctx.obj``, with the
switches of its command line (:func:`pecli.cli.options.output_options`: ``-q``, ``--no-color``,
``--json``). Results go to
:meth:`Output.data` (stdout) or :meth:`Output.json` (exactly one JSON document on stdout); notes,
warnings and errors go to stderr. ``--quiet`` leaves only the exit code and errors: no report, no
note; an output asked for by name (``-o -``, ``--json``) is still written. Colour follows
``NO_COLOR``, ``TERM=dumb`` and ``--no-color``. Whether a stream is a terminal, and how large the
terminal is, are asked here only (:func:`is_terminal`, :meth:`Output.terminal_size`). Tests build
an ``Output`` over ``io.StringIO`` streams.

>>> import io
>>> out = Output(stdout=io.StringIO(), stderr=io.StringIO())
>>> out.data("0.5"); out.note("wrote pe.npy")
>>> out.stdout.getvalue(), out.stderr.getvalue()
('0.5\\n', 'wrote pe.npy\\n')
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

from pecli.errors import Message, OutputError, PecliError
from pecli.text import json_escaped, printable

if TYPE_CHECKING:
    from pecli.report import Report

__all__ = ["Output", "is_terminal", "note_chosen_key", "printable", "tolerate_narrow_stdout", "write_whole_stdout"]


def _dashed(name: str) -> str:
    """A parameter's flag when no registry is at hand: ``freq_shift`` → ``--freq-shift``."""
    return "--" + name.replace("_", "-")


def is_terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal; False for a closed, missing or in-memory stream.

    >>> import io
    >>> is_terminal(io.StringIO()), is_terminal(None)
    (False, False)
    """
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def write_whole_stdout() -> None:
    """Give an unbuffered stdout (``python -u``, ``PYTHONUNBUFFERED=1``) a buffer that writes every byte.

    Unbuffered, ``sys.stdout.buffer`` is the raw file, whose ``write`` may take only part of the
    data (a full disk, a busy pipe) and say so in a count nobody reads; a buffered writer retries
    until all is written, or raises.
    """
    stdout = sys.stdout
    raw = getattr(stdout, "buffer", None)
    if isinstance(raw, io.RawIOBase):
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(raw), encoding=stdout.encoding, errors=stdout.errors, line_buffering=True
        )


def _finite_or_null(value: Any) -> Any:
    """``value`` with every NaN or infinite float, at any depth, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(item) for item in value]
    return value


def _encodes(text: str, encoding: str) -> bool:
    """Whether ``text`` written in ``encoding`` is valid JSON bytes: UTF-8, with no lone surrogate.

    >>> _encodes("été", "utf-8"), _encodes("\\udcff", "utf-8"), _encodes("été", "latin-1"), _encodes("e", "ascii")
    (True, False, False, True)
    """
    import codecs

    try:
        text.encode("utf-8")
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except (UnicodeEncodeError, LookupError):
        return False
    return utf8 or text.isascii()


def tolerate_narrow_stdout() -> None:
    """Let a stdout whose encoding cannot hold pecli's text (``PYTHONIOENCODING=ascii``) escape it.

    Names, units and the terminal view use non-ASCII characters (é, ×, —, █); a strict ASCII
    stream would fail on the first of them. Escaped (``\xe9``), they still arrive, as stderr does by
    default.
    """
    stdout = sys.stdout
    if isinstance(stdout, io.TextIOWrapper) and stdout.errors == "strict":
        with contextlib.suppress(ValueError, OSError):
            stdout.reconfigure(errors="backslashreplace")


class _ClosedStdout:
    """Stands in for a stdout the process started without (``>&-``): a result written there is an error."""

    def write(self, data: Any) -> int:
        raise OutputError("stdout is closed, so the result has nowhere to go", hint="redirect it to a file or a pipe")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def buffer(self) -> _ClosedStdout:
        return self


def _lost(stream: IO[str]) -> IO[str]:
    """What stands in for ``stream`` once it refused a write: /dev/null, on its descriptor too.

    The bytes it refused are still in its buffer; with its descriptor pointed at /dev/null, the
    flush at interpreter exit succeeds instead of failing again (``Exception ignored …``, exit 120).
    """
    with contextlib.suppress(AttributeError, OSError, ValueError, io.UnsupportedOperation):
        descriptor = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, descriptor)
        os.close(devnull)
    return open(os.devnull, "w")  # the run's stderr from now on, closed at exit


#: an error's text that is about a table's content or shape (not an option's value alone)
_SPEAKS_OF_A_TABLE = re.compile(r"\b(tables?|tensors?)\b")


class Output:
    """The run's context: its streams (stdin, stdout, stderr; whether each is a terminal, the terminal's
    size) and switches (quiet, JSON, colour). One per run, shared by the app (its errors and warnings)
    and the command (its results); the I/O it needs takes its streams from here, never from ``sys``."""

    def __init__(
        self,
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        stdin: IO[str] | None = None,
        quiet: bool = False,
        color: bool | None = None,
        json_output: bool = False,
        spell: Callable[[str], str] | None = None,
    ) -> None:
        # sys.stdout/stderr are None when the process started with that descriptor closed (>&-)
        # typed as sys.stdout is (TextIO, with its .buffer); _ClosedStdout has what pecli calls on it
        self.stdout = cast(TextIO, stdout if stdout is not None else (sys.stdout or _ClosedStdout()))
        self.stderr = stderr if stderr is not None else (sys.stderr or open(os.devnull, "w"))  # noqa: SIM115
        self.stdin = stdin if stdin is not None else sys.stdin
        self.quiet = quiet
        #: ``--json``: the command prints its result as one JSON document
        self.json_output = json_output
        self._color = color
        #: how a parameter named in a result's text (:class:`~pecli.errors.Message`) reads: its flag
        self.spell = spell if spell is not None else _dashed
        #: the bytes of a table read from stdin, kept so that it can be read again (tensor by tensor)
        self.stdin_table: bytes | None = None
        #: the files (``-`` for stdin) this run read a table from: an error about "the table" names its file
        self.input_files: list[str] = []

    def set_switches(self, *, quiet: bool, no_color: bool, json_output: bool) -> None:
        """Apply a command line's ``-q``, ``--no-color`` and ``--json`` to this run's output."""
        self.quiet = quiet
        self.json_output = json_output
        if no_color:
            self._color = False

    # -- environment -----------------------------------------------------------------------
    @property
    def stdout_is_terminal(self) -> bool:
        return is_terminal(self.stdout)

    @property
    def stderr_is_terminal(self) -> bool:
        return is_terminal(self.stderr)

    @property
    def stdin_bytes(self) -> IO[bytes] | None:
        """stdin as bytes (what table readers take); None when the process started without it (``<&-``).

        >>> import io
        >>> piped = io.TextIOWrapper(io.BytesIO(b"0,1\\n"))
        >>> Output(stdin=piped).stdin_bytes.read()
        b'0,1\\n'
        """
        # a text stream's bytes; a stream without .buffer is read as it is (one of bytes)
        return cast("IO[bytes] | None", getattr(self.stdin, "buffer", self.stdin))

    @property
    def stdin_is_terminal(self) -> bool:
        """Whether reading stdin would wait for someone typing (then say so, or refuse, before reading)."""
        return is_terminal(self.stdin)

    @property
    def color(self) -> bool:
        """Whether colour may be used: not with NO_COLOR, TERM=dumb or --no-color."""
        if self._color is not None:
            return self._color
        return "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"

    @staticmethod
    def terminal_size() -> tuple[int, int]:
        """The terminal's (columns, lines); 80 × 24 when there is none (a pipe, a file)."""
        size = shutil.get_terminal_size((80, 24))
        return size.columns, size.lines

    # -- results ---------------------------------------------------------------------------
    def data(self, text: str) -> None:
        """A result line on stdout; none with ``--quiet``, whose answer is the exit code.

        >>> import io
        >>> out = Output(stdout=io.StringIO(), quiet=True)
        >>> out.data("same within 1e-06"); out.stdout.getvalue()
        ''
        """
        if self.quiet:
            return
        self.stdout.write(text if text.endswith("\n") else text + "\n")

    def json(self, document: Any) -> None:
        """Exactly one JSON document on stdout; NaN and ±inf, which JSON cannot hold, are written as null.

        >>> import io
        >>> out = Output(stdout=io.StringIO())
        >>> out.json({"min": float("nan"), "max": [float("inf"), 1.5]})
        >>> out.stdout.getvalue().split()
        ['{', '"min":', 'null,', '"max":', '[', 'null,', '1.5', ']', '}']
        """
        try:
            text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
        except ValueError:  # "Out of range float values": rare, so only then walk the document
            document = _finite_or_null(document)
            text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
        # C1 controls, bidirectional overrides and line separators from a file (a tensor name, a
        # metadata value) as \u escapes: the same document, and nothing raw reaches the terminal
        text = json_escaped(text)
        if not _encodes(text, getattr(self.stdout, "encoding", None) or "utf-8"):
            # a file name that is no UTF-8 (held as \udcff), or an ASCII stdout (PYTHONIOENCODING=ascii):
            # \u escapes keep the document valid JSON in any encoding
            text = json.dumps(document, indent=2, ensure_ascii=True, allow_nan=False)
        self.stdout.write(text + "\n")

    def show(self, report: Report) -> None:
        """A command's result: one JSON document with ``--json``, else its text lines (none with ``-q``)
        and the notes that follow them on stderr (``report.text_notes()``, when the report has them).

        >>> import io
        >>> from pecli.analysis.file_info import describe
        >>> out = Output(stdout=io.StringIO())
        >>> out.show(describe("x.npy", {"": ((3, 2), "float64")}, {})); out.stdout.getvalue()
        'x.npy: 1 tensor\\n  (array)  [3, 2]  float64  48 B\\n'
        """
        if self.json_output:
            self.json(report.to_json())
            return
        for line in report.text_lines():
            self.data(self._spelled(line))
        for note in getattr(report, "text_notes", list)():  # what follows the text on stderr (a hint)
            self.note(self._spelled(note))

    def _spelled(self, text: str) -> str:
        """A result's text, its parameters (:class:`~pecli.errors.Message`) written as flags."""
        return text.spelled(self.spell) if isinstance(text, Message) else text

    def binary_stdout(self, what: str) -> IO[bytes]:
        """stdout as bytes, refused when it is a terminal (binary data would garble it)."""
        if self.stdout_is_terminal:
            raise OutputError(
                f"refusing to write binary {what} to a terminal",
                hint="redirect stdout (-o - > file, or | pecli plot -), or use --format csv",
            )
        return self.stdout.buffer

    # -- messages --------------------------------------------------------------------------
    def say(self, line: str) -> None:
        """``line`` on stderr as it is; a stderr that refuses it is given up for the rest of the run.

        A message is about the result, never the result itself: stderr on a full disk
        (``2>/dev/full``), a descriptor opened read-only, or a reader gone from ``2>&1 | head``
        loses the message, never changes the exit code (a traceback would make a success exit 1).

        >>> full = io.TextIOWrapper(io.BufferedWriter(io.FileIO(os.devnull, "w")))
        >>> full.write = lambda text: (_ for _ in ()).throw(OSError(28, "No space left on device"))
        >>> out = Output(stderr=full)
        >>> out.note("wrote pe.npy"); out.error("the table is empty"); out.stderr is full
        False
        """
        try:
            self.stderr.write(line)
            self.stderr.flush()
        except (OSError, ValueError):  # ValueError: the stream was closed
            self.stderr = _lost(self.stderr)

    def note(self, text: str) -> None:
        """An informational message on stderr (silenced by --quiet)."""
        if not self.quiet:
            self.say(printable(text) + "\n")

    def warn(self, text: str) -> None:
        """A warning on stderr (silenced by --quiet)."""
        if not self.quiet:
            self.say(f"pecli: warning: {printable(text)}\n")

    def read_from(self, source: str) -> None:
        """Record that this run read a table from the file ``source`` (for :meth:`naming_the_input`)."""
        if source not in self.input_files:
            self.input_files.append(source)

    def naming_the_input(self, text: str) -> str:
        """An error's ``text``, led by the file it is about when the run read one and the text speaks of
        "the table" (or a tensor) without naming it: the core, given an array, cannot know its file.

        >>> out = Output()
        >>> out.read_from("runs/pe.npy")
        >>> out.naming_the_input("the table holds NaN or infinite values")
        'runs/pe.npy: the table holds NaN or infinite values'
        >>> out.naming_the_input("runs/pe.npy: tensor 'w' is empty"), out.naming_the_input("--len must be >= 1")
        ("runs/pe.npy: tensor 'w' is empty", '--len must be >= 1')
        """
        if len(self.input_files) != 1 or not _SPEAKS_OF_A_TABLE.search(text):
            return text  # no file, or two (compare A B): which one the core cannot say
        source = self.input_files[0]
        name = "<stdin>" if source == "-" else source  # as the readers name it
        if name in text or os.path.basename(os.path.normpath(name)) in text:
            return text
        return f"{name}: {text}"

    def error(self, error: PecliError | str) -> None:
        """A one-line error on stderr (never silenced)."""
        self.say(f"pecli: error: {printable(str(error))}\n")

    @contextlib.contextmanager
    def progress(
        self, description: str, total_bytes: int, *, threshold: int = 64 << 20
    ) -> Iterator[Callable[[int], None] | None]:
        """A progress bar on stderr for large outputs, only when stderr is a terminal."""
        if self.quiet or total_bytes < threshold or not self.stderr_is_terminal:
            yield None
            return
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

        console = Console(file=self.stderr, no_color=not self.color)
        columns = (description, BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task(description, total=total_bytes)
            yield lambda nbytes: bar.advance(task, nbytes)


def note_chosen_key(out: Output, requested: str | None, chosen: str | None) -> None:
    """Say which tensor a part of its name (``--key position_embeddings``) selected, in full."""
    if requested is not None and chosen is not None and chosen != requested:
        out.note(f"--key {requested!r} selects the tensor {chosen!r}")
