"""Small file systems for fault tests: a full disk and a read-only directory, as real mounts.

A process running as root ignores file permissions, so a ``chmod 555`` directory is writable for
it; a read-only tmpfs is not. Mounting needs CAP_SYS_ADMIN: where it is missing, the tests that
need a mount skip locally but fail in CI (``CI`` set), so a lost capability cannot silently turn
a fault test into a no-op.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator

import pytest


def _mount(directory: str, options: str) -> bool:
    completed = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", directory], capture_output=True, check=False
    )
    return completed.returncode == 0


def skip_or_fail(reason: str) -> None:
    """Skip locally; in CI a missing capability is a failure, never a silent skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this must not be skipped)")
    pytest.skip(reason)


@contextlib.contextmanager
def tmpfs(directory: str, *, size: str = "1m", readonly: bool = False) -> Iterator[str]:
    """Mount a fresh tmpfs of ``size`` on ``directory`` for the duration of the block."""
    os.makedirs(directory, exist_ok=True)
    if not _mount(directory, f"size={size},mode=0777" + (",ro" if readonly else "")):
        skip_or_fail(f"cannot mount a tmpfs on {directory} (needs root with CAP_SYS_ADMIN)")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", directory], capture_output=True, check=False)


@contextlib.contextmanager
def unwritable_directory(directory: str) -> Iterator[str]:
    """A directory this user's processes cannot create files in: ``chmod 555``, or a read-only tmpfs for root."""
    os.makedirs(directory, exist_ok=True)
    if os.geteuid() != 0:
        os.chmod(directory, 0o555)
        try:
            yield directory
        finally:
            os.chmod(directory, 0o755)
        return
    with tmpfs(directory, size="64k", readonly=True):
        yield directory
