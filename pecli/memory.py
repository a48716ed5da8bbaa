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
    """Bytes of memory available now (``MemAvailable`` in ``/proc/meminfo``), or None where unknown.

    >>> available = available_memory()
    >>> available is None or available > 0
    True
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


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
