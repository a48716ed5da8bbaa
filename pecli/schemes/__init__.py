"""The encoding core: every scheme as a pure numpy function, behind one registry.

>>> import pecli
>>> pecli.encode("sinusoidal", 2, 4, dtype="float64")[1].round(6)
array([0.841471, 0.540302, 0.01    , 0.99995 ])
>>> pecli.encode("sinusoidal", 3, 4, preset="fairseq").shape
(3, 4)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pecli.dtypes import check_dtype, itemsize
from pecli.errors import ParameterError
from pecli.schemes.catalog import PARAMS, PRESETS, SCHEMES, Preset, Scheme, get_preset, get_scheme, resolve

__all__ = [
    "PARAMS",
    "PRESETS",
    "SCHEMES",
    "Preset",
    "Scheme",
    "check_fits_in_memory",
    "encode",
    "get_preset",
    "get_scheme",
    "iter_row_chunks",
    "resolve",
    "table_nbytes",
]


def table_nbytes(length: int, dim: int, dtype: str) -> int:
    """Bytes of a ``(length, dim)`` table of ``dtype``."""
    return length * dim * itemsize(dtype)


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_fits_in_memory(nbytes: int, *, what: str = "table", hint: str | None = None) -> None:
    """Refuse to allocate ``nbytes`` when that is more than the memory available now."""
    available = _available_memory()
    if available is not None and nbytes > available:
        raise ParameterError(
            f"the {what} would take {_human_bytes(nbytes)}, more than the {_human_bytes(available)} "
            "of memory available",
            hint=hint or "use a smaller --len or --d, or write it to a .npy/.safetensors file, which streams",
        )


def _human_bytes(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1024
    raise AssertionError("unreachable")


def encode(
    scheme: str | None,
    length: int,
    dim: int,
    *,
    preset: str | None = None,
    dtype: str = "float32",
    rows: range | None = None,
    **params: Any,
):
    """The ``(length, dim)`` table of ``scheme`` (default ``sinusoidal``) or of a ``preset``.

    Args:
        scheme: a registered scheme name (``pecli schemes`` lists them), or None for the preset's.
        length: number of positions.
        dim: embedding dimension.
        preset: a named convention (``vaswani``, ``fairseq``, ``guided-diffusion``…).
        dtype: ``float32`` (default), ``float64``, ``float16`` or ``bfloat16``.
        rows: compute only this contiguous range of rows.
        **params: the scheme's parameters; one it does not take is an error.

    Example:
        >>> encode("count", 3, 2, dtype="float64")[:, 0]
        array([0., 1., 2.])
    """
    resolved, full = resolve(scheme, preset, params)
    check_dtype(dtype)
    if isinstance(length, int) and isinstance(dim, int) and length > 0 and dim > 0:
        count = len(rows) if rows is not None else length
        check_fits_in_memory(table_nbytes(count, dim, dtype))
    return resolved.function(length, dim, dtype=dtype, rows=rows, **full)


def iter_row_chunks(
    scheme: str | None,
    length: int,
    dim: int,
    *,
    preset: str | None = None,
    dtype: str = "float32",
    chunk_bytes: int = 64 << 20,
    **params: Any,
) -> Iterator:
    """Yield the table in consecutive row chunks of about ``chunk_bytes``, for streaming writes.

    Example:
        >>> import numpy as np
        >>> chunks = list(iter_row_chunks("sinusoidal", 10, 4, chunk_bytes=64))
        >>> [len(c) for c in chunks], bool(np.array_equal(np.concatenate(chunks), encode(None, 10, 4)))
        ([4, 4, 2], True)
    """
    resolved, full = resolve(scheme, preset, params)
    check_dtype(dtype)
    function = resolved.function
    step = max(1, chunk_bytes // max(1, dim * itemsize(dtype)))
    for start in range(0, length, step):
        yield function(length, dim, dtype=dtype, rows=range(start, min(start + step, length)), **full)
