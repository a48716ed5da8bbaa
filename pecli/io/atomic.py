"""Writing files safely: checks before any work, and atomic replacement of the target.

The bytes go to a recognisable temporary file next to the target (:data:`TEMP_MARKER`), which
replaces the target with ``os.replace`` only when complete; temporaries left by a killed process
are removed on the next write to the same target. An error while writing (a full disk) becomes
one :class:`~pecli.errors.OutputError`, and the target is left as it was.

>>> import os, tempfile
>>> directory = tempfile.mkdtemp()
>>> path = os.path.join(directory, "pe.bin")
>>> with atomic_file(path) as handle:
...     _ = handle.write(b"table")
>>> open(path, "rb").read(), os.listdir(directory)
(b'table', ['pe.bin'])
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from typing import IO

from pecli.errors import OutputError, PecliError
from pecli.text import literal, literal_repr

__all__ = [
    "TEMP_MARKER",
    "atomic_file",
    "check_free_space",
    "check_output_path",
    "completed_writes",
    "reported_os_errors",
]

#: temporary files carry this marker, so stale ones (from a killed process) can be found
TEMP_MARKER = ".pecli-tmp-"

#: targets this process has replaced: once renamed, a write has succeeded whatever comes after
_COMPLETED: list[str] = []


def completed_writes() -> tuple[str, ...]:
    """The paths this process has finished writing (renamed into place), oldest first.

    >>> isinstance(completed_writes(), tuple)
    True
    """
    return tuple(_COMPLETED)


def check_output_path(path: str) -> None:
    """Fail early, before any work, when ``path`` cannot be written."""
    if path == "-":
        return
    if not path:
        raise OutputError("the output path is empty", hint="give a file name, e.g. -o pe.safetensors, or - for stdout")
    if os.path.isdir(path):
        raise OutputError(
            f"output {literal_repr(path)} is a directory", hint="give a file name, e.g. -o pe.safetensors"
        )
    directory = os.path.dirname(path) or "."
    _check_name_length(path)
    if not os.path.isdir(directory):
        raise OutputError(
            f"directory {literal_repr(directory)} does not exist",
            hint=f"create it first: mkdir -p {literal(directory)}",
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"directory {literal_repr(directory)} is not writable", hint="choose another output path")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise OutputError(f"output {literal_repr(path)} is not writable", hint="choose another output path")


def _check_name_length(path: str) -> None:
    """Refuse a path longer than the system takes (ENAMETOOLONG), which would pass for a missing directory.

    >>> try:
    ...     _check_name_length("d/" * 3000 + "pe.npy")
    ... except OutputError as error:
    ...     print(str(error)[:61])
    the output path is too long for the file system (6006 bytes)
    """
    import errno

    try:
        os.stat(path)
    except OSError as error:
        if error.errno != errno.ENAMETOOLONG:
            return
        raise OutputError(
            f"the output path is too long for the file system ({len(os.fsencode(path))} bytes)",
            hint="give a shorter path: at most 4096 bytes in all and 255 bytes per name",
        ) from None


def check_free_space(path: str, nbytes: int) -> None:
    """Refuse, before writing, an output of ``nbytes`` that the disk holding ``path`` has no room for.

    The target's own stale temporaries (left by a killed pecli) are removed first, so they do not
    count against the space. A device or a pipe (``/dev/null``, ``/dev/stdout``, a FIFO) has no
    free space to check: it is written in place.

    >>> check_free_space(os.devnull, 1 << 60)  # an exabyte to /dev/null is fine
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return
    except OSError:  # no file there yet
        pass
    directory, basename = os.path.split(os.path.realpath(path))
    _remove_stale_temporaries(directory, basename)
    try:
        usage = shutil.disk_usage(directory)
    except OSError:
        return
    if usage.total and nbytes > usage.free:  # total 0: a pseudo file system (/proc), whose numbers mean nothing
        from pecli.dtypes import format_bytes

        raise OutputError(
            f"the output would take {format_bytes(nbytes)}, "
            f"more than the {format_bytes(usage.free)} free in {directory}",
            # no flag named: the sizes may be --len and --d, --grid, --heads, --rows or a model's config
            hint="free some space, write elsewhere, or ask for a smaller output",
        )


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_temporaries(directory: str, basename: str) -> None:
    """Delete temporaries of ``basename`` left by pecli processes that no longer run (kill -9)."""
    prefix = f".{basename}{TEMP_MARKER}"
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if not entry.name.startswith(prefix):
                continue
            pid_text = entry.name[len(prefix) :].split("-", 1)[0]
            if pid_text.isdigit() and not _process_alive(int(pid_text)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


@contextlib.contextmanager
def atomic_file(path: str) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` only once it is complete (temp file + ``os.replace``).

    A symlink is followed (its target is replaced, the link stays); an existing device or FIFO
    (``/dev/null``, ``/dev/stdout``, a named pipe) is written in place, never replaced by a file.
    """
    check_output_path(path)
    try:
        existing_mode: int | None = os.stat(path).st_mode  # through symlinks: /dev/stdout may be a pipe
    except OSError:
        existing_mode = None
    if existing_mode is not None and not stat.S_ISREG(existing_mode):
        with reported_os_errors(path), open(path, "wb") as handle:
            yield handle
        return
    real_path = os.path.realpath(path)
    directory, basename = os.path.split(real_path)
    _remove_stale_temporaries(directory, basename)
    try:
        import tempfile  # only when writing: reading a table does not need it (random, hashlib)

        descriptor, temp_path = tempfile.mkstemp(dir=directory, prefix=f".{basename}{TEMP_MARKER}{os.getpid()}-")
    except OSError as error:
        raise OutputError(
            f"cannot create a file in {literal_repr(directory)}: {error.strerror}", hint="choose another output path"
        ) from None
    try:
        with reported_os_errors(path):
            os.fchmod(descriptor, _mode_for(real_path))
            with os.fdopen(descriptor, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            with _signals_deferred():  # renamed and recorded as one step: see completed_writes
                os.replace(temp_path, real_path)
                _COMPLETED.append(path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_path)
        raise


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP back for the block; they arrive when it ends."""
    import signal

    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _mode_for(path: str) -> int:
    """Permission bits for a new file at ``path``: those of the file it replaces, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def reported_os_errors(path: str) -> Iterator[None]:
    """Turn an OSError while writing ``path`` (a full disk, a vanished directory) into an :class:`OutputError`.

    >>> try:
    ...     with reported_os_errors("-"):
    ...         raise OSError(28, "No space left on device")
    ... except OutputError as error:
    ...     print(error)
    cannot write '-': No space left on device (the disk is full: free space or write elsewhere)
    """
    try:
        yield
    except OSError as error:
        if isinstance(error, (PecliError, BrokenPipeError)):  # a closed pipe is main()'s quiet exit
            raise
        raise OutputError(
            f"cannot write {literal_repr(path)}: {error.strerror or error}", hint=_os_hint(error)
        ) from None


def _os_hint(error: OSError) -> str:
    import errno

    if error.errno == errno.ENOSPC:
        return "the disk is full: free space or write elsewhere"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "choose a writable output path"
    return "check the output path"
