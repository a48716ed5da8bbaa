"""Memory checks: refuse, before allocating, an array larger than the memory available now.

Shared by the encoding core (whole tables), the readers (a tensor from a file) and the commands
(a distance matrix, statistics). What is free changes, so ``/proc/meminfo`` (and a cgroup's usage) is
read at each check; the limits (a cgroup's ``memory.max``, where the process's cgroup lies) do not, and
are read once per process: a check costs tens of microseconds, and identify makes hundreds. An
allocation of at most :data:`ALWAYS_FITS` is not checked (a few rows of a candidate, hundreds per identify).

>>> check_fits_in_memory(1024)  # a kilobyte always fits
>>> try:
...     check_fits_in_memory(1 << 62, what="test array", hint="ask for less")
... except ValueError as error:
...     print(error.message.split(",")[0])
the test array would take 4.0 EiB
"""

from __future__ import annotations

import functools
import os

from pecli.dtypes import format_bytes
from pecli.errors import ParameterError

__all__ = ["ALWAYS_FITS", "available_memory", "check_fits_in_memory"]

#: allocations this small are not checked: a process with less memory than this left fails in Python itself
#: before any check could help, and reading /proc per row range cost identify of a small table 7 %
ALWAYS_FITS = 1 << 20


def available_memory() -> int | None:
    """Bytes this process can still allocate now, or None where unknown.

    The smaller of the machine's ``MemAvailable`` (``/proc/meminfo``) and what the process's own
    caps leave: an address-space limit (``RLIMIT_AS``, as ``ulimit -v`` sets it) less the address
    space in use (``VmSize``), and a cgroup ``memory.max`` less the cgroup's ``memory.current``.
    Without the caps a size check passes under ``ulimit -v`` and the allocation then fails.

    >>> available = available_memory()
    >>> available is None or available >= 0
    True
    """
    limits = [limit for limit in (_meminfo_available(), _address_space_left(), _cgroup_left()) if limit is not None]
    return min(limits) if limits else None


def _read_first_line(path: str) -> str | None:
    try:
        with open(path) as file:
            return file.readline().strip()
    except OSError:
        return None


def _read_bytes(path: str) -> bytes | None:
    """A small /proc or /sys file's whole text in one read (no text layer: these are read per check)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(descriptor, 1 << 16)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _field(text: bytes | None, name: bytes) -> int | None:
    """The number after ``name`` at a line's start in ``text`` (``MemAvailable:``, ``file ``), or None.

    >>> _field(b"MemTotal: 9 kB\\nMemAvailable: 5 kB\\n", b"MemAvailable:"), _field(b"anon 1\\nfile 7\\n", b"file ")
    (5, 7)
    """
    if text is None:
        return None
    start = 0 if text.startswith(name) else text.find(b"\n" + name) + 1
    if start == 0 and not text.startswith(name):  # not found: find gave -1
        return None
    try:
        return int(text[start + len(name) :].split(None, 1)[0])
    except (ValueError, IndexError):
        return None


def _meminfo_available() -> int | None:
    kib = _field(_read_bytes("/proc/meminfo"), b"MemAvailable:")
    return None if kib is None else kib * 1024


def _address_space_left() -> int | None:
    """``RLIMIT_AS`` less the virtual memory in use (``VmSize``), or None without a limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = 0
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - used)


@functools.cache
def _cgroup_limit() -> tuple[str, str] | None:
    """(directory, ``memory.max``) of this process's cgroup v2, or None without a limit: read once per
    process (a limit does not change while it runs; what is in use, read per check, does)."""
    try:
        with open("/proc/self/cgroup") as cgroups:
            paths = [line[3:].strip() for line in cgroups if line.startswith("0::")]
    except OSError:
        return None
    if not paths:
        return None
    base = "/sys/fs/cgroup" + paths[0].rstrip("/")
    limit = _read_first_line(f"{base}/memory.max")
    if limit is None or not limit.isdigit():
        return None
    return base, limit


def _cgroup_left() -> int | None:
    """A cgroup v2 ``memory.max`` less ``memory.current``, or None where there is none."""
    found = _cgroup_limit()
    if found is None:
        return None
    base, limit = found
    cache = _field(_read_bytes(f"{base}/memory.stat"), b"file ")
    return _cgroup_room(limit, _read_first_line(f"{base}/memory.current"), str(cache or 0))


def _cgroup_room(limit: str | None, current: str | None, cache: str) -> int | None:
    """What a cgroup v2 leaves: ``memory.max`` less ``memory.current``, whose page cache (``memory.stat``'s
    ``file``) the kernel reclaims before it refuses (as ``MemAvailable`` counts it); None without a limit.

    >>> _cgroup_room("max", "100", "0"), _cgroup_room("1000", "900", "0"), _cgroup_room("1000", "900", "800")
    (None, 100, 900)
    """
    if limit is None or current is None or not limit.isdigit() or not current.isdigit():
        return None
    in_use = int(current) - (int(cache) if cache.isdigit() else 0)
    return max(0, int(limit) - max(0, in_use))


def check_fits_in_memory(nbytes: int, *, what: str = "table", hint: str | None = None) -> None:
    """Refuse to allocate ``nbytes`` when that is more than the memory available now.

    Without a ``hint`` the fix named is a smaller size, never an output: the caller may already be
    writing to a file, or have none to write (a view, a comparison). At most :data:`ALWAYS_FITS` bytes
    pass without a read (they could only be refused with less than that available).
    """
    if nbytes <= ALWAYS_FITS:
        return
    available = available_memory()
    if available is not None and nbytes > available:
        raise ParameterError(
            f"the {what} would take {format_bytes(nbytes)}, more than the {format_bytes(available)} "
            "of memory available",
            hint=hint or "use a smaller {length} or {dim}",
        )
