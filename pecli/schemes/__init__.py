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

from pecli.memory import check_fits_in_memory
from pecli.schemes.catalog import SCHEMES, Scheme, get_scheme, resolve
from pecli.schemes.params import PARAMS
from pecli.schemes.presets import PRESETS, Preset, get_preset

__all__ = [
    "PARAMS",
    "PRESETS",
    "SCHEMES",
    "Preset",
    "Scheme",
    "encode",
    "get_preset",
    "get_scheme",
    "iter_row_chunks",
    "resolve",
]


def encode(
    scheme: str | None,
    length: int | None,
    dim: int | None,
    *,
    preset: str | None = None,
    dtype: str = "float32",
    rows: range | None = None,
    **params: Any,
):
    """The table of ``scheme`` (default ``sinusoidal``) or of a ``preset``: usually ``(length, dim)``.

    Args:
        scheme: a registered scheme name (``pecli schemes`` lists them), or None for the preset's.
        length: number of positions (None for a grid scheme, whose ``grid`` sets it).
        dim: embedding dimension (None for ALiBi).
        preset: a named convention (``vaswani``, ``fairseq``, ``guided-diffusion``, ``mae``…).
        dtype: ``float32`` (default), ``float64``, ``float16`` or ``bfloat16``.
        rows: compute only this contiguous range of rows (axis 0).
        **params: the scheme's parameters; one it does not take is an error.

    Returns:
        The table; for a scheme of several parts without ``part=`` (RoPE), a dict part -> table.

    Example:
        >>> encode("count", 3, 2, dtype="float64")[:, 0]
        array([0., 1., 2.])
        >>> sorted(encode("rope", 8, 4))
        ['cos', 'sin']
    """
    from pecli.schemes.spec import TableSpec

    spec = TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype=dtype)
    tables = {}
    for part in spec.parts():
        count = len(rows) if rows is not None else part.shape[0]
        check_fits_in_memory(count * (part.nbytes // max(1, part.shape[0])))
        tables[part.name] = part.rows(rows if rows is not None else range(part.shape[0]))
    return tables if len(tables) > 1 else next(iter(tables.values()))


def iter_row_chunks(
    scheme: str | None,
    length: int | None,
    dim: int | None,
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
    from pecli.schemes.spec import TableSpec

    yield from TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype=dtype).chunks(chunk_bytes)
