"""Memory checks: refuse, before allocating, an array larger than the memory available now.

Shared by the encoding core (whole tables), the readers (a tensor from a file) and the commands
(a distance matrix, statistics). ``/proc/meminfo`` is read each time: what is free changes.

>>> check_fits_in_memory(1024)  # a kilobyte always fits
>>> try:
...     check_fits_in_memory(1 << 62, what="test array", hint="ask for less")
... except ValueError as error:
...     print(error.message.split(",")[0])
the test array would take 4.0 EiB
"""

from __future__ import annotations

from pecli.dtypes import format_bytes
from pecli.errors import ParameterError

__all__ = ["available_memory", "check_fits_in_memory"]


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


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


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


def _cgroup_left() -> int | None:
    """A cgroup v2 ``memory.max`` less ``memory.current``, or None where there is none."""
    try:
        with open("/proc/self/cgroup") as cgroups:
            paths = [line[3:].strip() for line in cgroups if line.startswith("0::")]
    except OSError:
        return None
    if not paths:
        return None
    base = "/sys/fs/cgroup" + paths[0].rstrip("/")
    try:
        with open(f"{base}/memory.stat") as stat:
            cache = next((line.split()[1] for line in stat if line.startswith("file ")), "0")
    except (OSError, IndexError):
        cache = "0"
    return _cgroup_room(_read_first_line(f"{base}/memory.max"), _read_first_line(f"{base}/memory.current"), cache)


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
    writing to a file, or have none to write (a view, a comparison).
    """
    available = available_memory()
    if available is not None and nbytes > available:
        raise ParameterError(
            f"the {what} would take {format_bytes(nbytes)}, more than the {format_bytes(available)} "
            "of memory available",
            hint=hint or "use a smaller {length} or {dim}",
        )
