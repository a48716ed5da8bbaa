"""The one place where pecli talks to the terminal: data on stdout, messages on stderr.

Every command receives an :class:`Output`. Results go to :meth:`Output.data` (stdout) or
:meth:`Output.json` (exactly one JSON document on stdout); notes, warnings and errors go to
stderr, and ``--quiet`` silences all but data and errors. Colour follows ``NO_COLOR``,
``TERM=dumb`` and ``--no-color``. Tests build an ``Output`` over ``io.StringIO`` streams.

>>> import io
>>> out = Output(stdout=io.StringIO(), stderr=io.StringIO())
>>> out.data("0.5"); out.note("wrote pe.npy")
>>> out.stdout.getvalue(), out.stderr.getvalue()
('0.5\\n', 'wrote pe.npy\\n')
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

from pecli.errors import PecliError


class _ClosedStdout:
    """Stands in for a stdout the process started without (``>&-``): a result written there is an error."""

    def write(self, data: Any) -> int:
        from pecli.errors import OutputError

        raise OutputError("stdout is closed, so the result has nowhere to go", hint="redirect it to a file or a pipe")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def buffer(self) -> _ClosedStdout:
        return self


class Output:
    """Streams and switches for one command run."""

    def __init__(
        self,
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        quiet: bool = False,
        color: bool | None = None,
    ) -> None:
        # sys.stdout/stderr are None when the process started with that descriptor closed (>&-)
        self.stdout = stdout if stdout is not None else (sys.stdout or _ClosedStdout())
        self.stderr = stderr if stderr is not None else (sys.stderr or open(os.devnull, "w"))  # noqa: SIM115
        self.quiet = quiet
        self._color = color

    # -- environment -----------------------------------------------------------------------
    @staticmethod
    def _isatty(stream: Any) -> bool:
        try:
            return bool(stream.isatty())
        except (AttributeError, ValueError):
            return False

    @property
    def stdout_is_terminal(self) -> bool:
        return self._isatty(self.stdout)

    @property
    def stderr_is_terminal(self) -> bool:
        return self._isatty(self.stderr)

    @property
    def stdin_is_terminal(self) -> bool:
        """Whether reading stdin would wait for someone typing (then say so before reading)."""
        return self._isatty(sys.stdin)

    @property
    def color(self) -> bool:
        """Whether colour may be used: not with NO_COLOR, TERM=dumb or --no-color."""
        if self._color is not None:
            return self._color
        return "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"

    # -- results ---------------------------------------------------------------------------
    def data(self, text: str) -> None:
        """A result line on stdout."""
        self.stdout.write(text if text.endswith("\n") else text + "\n")

    def json(self, document: Any) -> None:
        """Exactly one JSON document on stdout."""
        self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")

    def binary_stdout(self, what: str) -> IO[bytes]:
        """stdout as bytes, refused when it is a terminal (binary data would garble it)."""
        if self.stdout_is_terminal:
            raise PecliError(
                f"refusing to write binary {what} to a terminal",
                hint="redirect stdout (-o - > file, or | pecli plot -), or use --format csv",
            )
        return self.stdout.buffer  # type: ignore[attr-defined]

    # -- messages --------------------------------------------------------------------------
    def note(self, text: str) -> None:
        """An informational message on stderr (silenced by --quiet)."""
        if not self.quiet:
            self.stderr.write(text + "\n")

    def warn(self, text: str) -> None:
        """A warning on stderr (silenced by --quiet)."""
        if not self.quiet:
            self.stderr.write(f"pecli: warning: {text}\n")

    def error(self, error: PecliError | str) -> None:
        """A one-line error on stderr (never silenced)."""
        self.stderr.write(f"pecli: error: {error}\n")
        with contextlib.suppress(Exception):
            self.stderr.flush()

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
