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

from pecli.errors import ParameterError
from pecli.memory import check_fits_in_memory
from pecli.schemes.catalog import SCHEMES, Scheme, get_scheme, resolve
from pecli.schemes.params import PARAMS
from pecli.schemes.presets import PRESETS, Preset, get_preset
from pecli.text import literal_repr

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
    out: Any = None,
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
        out: a C-contiguous, writeable numpy array of the table's shape and ``dtype`` to fill
            instead of allocating the table (a torch CPU tensor: pass ``tensor.numpy()``).
        **params: the scheme's parameters; one it does not take is an error.

    Returns:
        The table (``out`` itself when given); for a scheme of several parts without ``part=``
        (RoPE), a dict part -> table.

    Example:
        >>> encode("count", 3, 2, dtype="float64")[:, 0]
        array([0., 1., 2.])
        >>> sorted(encode("rope", 8, 4))
        ['cos', 'sin']
        >>> import numpy as np
        >>> buffer = np.zeros((2, 4), np.float32)
        >>> encode("sinusoidal", 2, 4, out=buffer) is buffer, float(buffer[1, 0].round(4))
        (True, 0.8415)
    """
    from pecli.schemes.spec import TableSpec

    if isinstance(scheme, str) and scheme not in SCHEMES and ":" in scheme:
        _refuse_spec(scheme, length, dim)
    spec = TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype=dtype)
    if out is not None:
        return _fill(spec.single(), rows, out)
    if rows is not None:  # a slice or a list: named as the range it must be, not len()'s TypeError
        from pecli.schemes.checks import row_range

        rows = row_range(rows, spec.shape[0])
    tables = {}
    for part in spec.parts():
        count = len(rows) if rows is not None else part.shape[0]
        sizes = [name for name, given in (("length", length), ("dim", dim)) if given is not None]
        sizes += [name for name in ("heads", "grid") if name in spec.params]  # what sets the size, as given
        hint = f"use a smaller {' or '.join(f'{{{name}}}' for name in sizes)}" if sizes else None
        check_fits_in_memory(count * (part.nbytes // max(1, part.shape[0])), hint=hint)
        tables[part.name] = part.rows(rows if rows is not None else range(part.shape[0]))
    return tables if len(tables) > 1 else next(iter(tables.values()))


def _refuse_spec(text: str, length: int | None, dim: int | None) -> None:
    """A spec (``"rope:base=0"``) given to :func:`encode`, which takes a name and keyword parameters:
    the call it means, spelled out (a spec is for :func:`pecli.compare` and the command line).

    >>> try:
    ...     _refuse_spec("rope:part=cos,base=0", 16, 8)
    ... except ParameterError as error:
    ...     print(error.args[0])
    encode takes a scheme name and keyword parameters, not a spec: encode('rope', 16, 8, part='cos', base=0)
    """
    name, _, rest = text.partition(":")
    if name.strip() not in SCHEMES:
        return  # not a spec of a scheme: the unknown name is reported as such
    keywords = []
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, _, value = item.partition("=")
        try:
            float(value)
            shown = value.strip()
        except ValueError:
            shown = repr(value.strip())
        keywords.append(f"{key.strip()}={shown}")
    call = ", ".join([repr(name.strip()), repr(length), repr(dim), *keywords])
    raise ParameterError(
        f"encode takes a scheme name and keyword parameters, not a spec: encode({call})",
        hint=f"a spec such as {literal_repr(text)} is for pecli.compare, pecli.identify and the command line",
    )


#: rows are computed into temporaries of about this size for schemes that cannot fill ``out`` themselves
_OUT_CHUNK_BYTES = 1 << 20


def _fill(spec: Any, rows: range | None, out: Any) -> Any:
    """Fill ``out`` with rows ``rows`` (default all) of the one-tensor ``spec``, checking it first."""
    import inspect

    import numpy as np

    from pecli.dtypes import DTYPES, numpy_dtype

    rows = rows if rows is not None else range(spec.shape[0])
    shape, dtype = (len(rows), *spec.shape[1:]), numpy_dtype(spec.dtype)
    if not isinstance(out, np.ndarray):
        raise ParameterError(
            f"out must be a numpy array, got {type(out).__name__}", hint="for a torch CPU tensor pass tensor.numpy()"
        )
    if out.shape != shape:
        raise ParameterError(
            f"out has shape {out.shape}, but the table's is {shape}", hint="pass an array of the table's shape"
        )
    if out.dtype != dtype:
        other = f", or dtype={str(out.dtype)!r}" if str(out.dtype) in DTYPES else ""
        raise ParameterError(
            f"out has dtype {out.dtype}, but the table's is {spec.dtype}",
            hint=f"pass a {spec.dtype} array{other}",
        )
    if not (out.flags.c_contiguous and out.flags.writeable):
        # A copy (np.ascontiguousarray) would be filled instead of the caller's array: name a buffer that works.
        raise ParameterError(
            "out must be C-contiguous and writeable: the table is written into it in place",
            hint=f"pass np.empty({shape}, dtype={literal_repr(spec.dtype)}) or another C-contiguous array you own",
        )
    function = get_scheme(spec.scheme).function
    if "out" in inspect.signature(function).parameters:
        return function(spec.length, spec.dim, dtype=spec.dtype, rows=rows, out=out, **spec.params)
    step = max(1, _OUT_CHUNK_BYTES // max(1, out[:1].nbytes))
    for lo in range(0, len(rows), step):
        part = range(rows.start + lo, min(rows.start + lo + step, rows.stop))
        out[lo : lo + len(part)] = spec.rows(part)
    return out


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
    from pecli.schemes.checks import positive_int
    from pecli.schemes.spec import TableSpec

    # checked now, not at the first next(): a generator function would raise only when iterated
    chunk_bytes = positive_int("chunk_bytes", chunk_bytes)
    return TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype=dtype).row_chunks(chunk_bytes)
