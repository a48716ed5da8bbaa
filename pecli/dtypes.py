"""Output dtypes: names, numpy types, and the one rounding step from float64.

Every scheme computes in float64 and rounds once, here, to the requested dtype. numpy rounds
float64 to float32 and float16 correctly; bfloat16 (through ``ml_dtypes``, the numpy extension
JAX uses) would round twice via float32, so :func:`round_to` rounds the float64 bits directly.

>>> import numpy as np
>>> round_to(np.array([1.0 + 2.0**-8 + 1e-12]), "bfloat16").astype(np.float64)
array([1.0078125])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pecli.errors import ParameterError, did_you_mean
from pecli.text import literal_repr

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DTYPES",
    "check_dtype",
    "half_bits",
    "held_values",
    "itemsize",
    "largest_value",
    "numpy_dtype",
    "round_to",
    "round_to_stored",
    "widen_bfloat16",
]

DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "bfloat16")
_ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2}
#: each dtype's largest finite value (bfloat16's: 0x7F7F, known here without importing ml_dtypes)
_LARGEST = {
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
}


def check_dtype(name: str) -> str:
    """``name`` if it is a dtype pecli writes, else a :class:`ParameterError` listing them."""
    if not isinstance(name, str) and str(getattr(name, "__name__", name)).split(".")[-1] in _ITEMSIZE:
        # np.float32, np.dtype("float32"), torch.float32: a dtype object is refused (the name is asked for),
        # with the name that means it rather than "unknown dtype <class 'numpy.float32'>"
        spelled = str(getattr(name, "__name__", name)).split(".")[-1]
        raise ParameterError(
            f"dtype is given by its name, got the object {literal_repr(name)}",
            hint=f"pass dtype={literal_repr(spelled)}",
        )
    if not isinstance(name, str) or name not in _ITEMSIZE:
        raise ParameterError(f"unknown dtype {literal_repr(name)}", hint=did_you_mean(name, DTYPES))
    return name


def itemsize(name: str) -> int:
    """Bytes per element of dtype ``name``."""
    return _ITEMSIZE[check_dtype(name)]


def largest_value(name: str) -> float:
    """The largest finite value dtype ``name`` holds (no ``ml_dtypes`` import for bfloat16).

    >>> largest_value("float16"), largest_value("bfloat16")
    (65504.0, 3.3895313892515355e+38)
    """
    return _LARGEST[check_dtype(name)]


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype for ``name``; bfloat16 comes from ``ml_dtypes`` (imported only then)."""
    import numpy as np

    if check_dtype(name) == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def round_to(values, name: str):
    """Round a float64 array once to dtype ``name`` (round to nearest, ties to even).

    For float64, a contiguous writable array that owns its memory comes back as itself (no copy of
    a whole table); a view or a broadcast is copied, as for any other dtype.
    """
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    fresh = values.base is None and values.flags.c_contiguous and values.flags.writeable
    if fresh and check_dtype(name) == "float64":  # nothing to round: the array itself, not a copy of it
        if not np.isfinite(values).all():
            _refuse_overflow(values, name)
        return values
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = values.astype(name) if check_dtype(name) != "bfloat16" else _round_to_bfloat16(values)
    if not np.isfinite(rounded).all():
        _refuse_overflow(values, name)
    return rounded


def held_values(values, name: str):
    """``values`` rounded once to dtype ``name`` and given back as float64, each exactly as ``name`` holds it.

    The same rounding as :func:`round_to` (and the same refusal past the dtype's range), for code that
    only needs the rounded values: bfloat16 is rounded on the integer bits, so ``ml_dtypes`` is not
    imported (its 0.7 release takes 2–3 s to import: numpy registers its casts one by one).

    >>> import numpy as np
    >>> held_values(np.array([1.0 + 2.0**-8 + 1e-12, 1 / 3]), "bfloat16").tolist()
    [1.0078125, 0.333984375]
    """
    import numpy as np

    if check_dtype(name) != "bfloat16":
        return np.asarray(round_to(values, name), dtype=np.float64)
    return widen_bfloat16(round_to_stored(values, name)).astype(np.float64)


def round_to_stored(values, name: str):
    """``values`` rounded once to dtype ``name`` as a file stores them: bfloat16 as its uint16 bit patterns, rounded
    on the integer bits (no ``ml_dtypes`` import: its 0.7 release takes 2–3 s to import, numpy registering its casts
    one by one), other dtypes as :func:`round_to` gives them; the same refusal past the dtype's range.

    >>> import numpy as np
    >>> round_to_stored(np.array([1.0, 1.0 + 2.0**-8 + 1e-12]), "bfloat16").tolist()
    [16256, 16257]
    >>> round_to_stored(np.array([0.5]), "float16").dtype.name
    'float16'
    """
    import numpy as np

    if check_dtype(name) != "bfloat16":
        return round_to(values, name)
    values = np.asarray(values, dtype=np.float64)
    bits = _bfloat16_bits(values)
    if ((bits & np.uint16(0x7F80)) == np.uint16(0x7F80)).any():  # all exponent bits set: inf or NaN
        _refuse_overflow(values, name)
    return bits


def widen_bfloat16(bits):
    """The float32 values (exact) of uint16 bfloat16 bit patterns ``bits``.

    >>> import numpy as np
    >>> widen_bfloat16(np.array([16256, 49152, 16257], dtype=np.uint16)).tolist()
    [1.0, -2.0, 1.0078125]
    """
    import numpy as np

    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _bfloat16_bits(values):
    """The uint16 bfloat16 patterns of float64 ``values``, rounded once to nearest even, in numpy integer
    arithmetic (no ``ml_dtypes``): float32 first (numpy rounds once), then to the upper 16 bits by adding
    0x7FFF plus the kept part's lowest bit; the float32 values exactly halfway are redone from float64
    (:func:`_fix_ties`), and NaN stays NaN.

    >>> import numpy as np
    >>> _bfloat16_bits(np.array([1.0, -2.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, np.inf, np.nan])).tolist()
    [16256, 49152, 16256, 16258, 32640, 32704]
    """
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        single = values.astype(np.float32, order="C")
    word = single.view(np.uint32)
    nan = np.isnan(single)
    lowest = (word >> np.uint32(16)) & np.uint32(1)
    bits = ((np.where(nan, np.uint32(0), word) + np.uint32(0x7FFF) + lowest) >> np.uint32(16)).astype(np.uint16)
    if nan.any():  # a quiet NaN of the same sign
        bits[nan] = ((word[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    ties = np.flatnonzero((word & np.uint32(0xFFFF)).reshape(-1) == np.uint32(0x8000))
    _fix_ties(values, ties, bits)
    return bits


def _fix_ties(values, ties, result) -> None:
    """Redo in ``result`` (uint16 bfloat16 patterns) the values whose float32 lies exactly halfway between two
    bfloat16 values: the float64 value, compared with that float32, says which way (exactly halfway: to even)."""
    import numpy as np

    if not len(ties):
        return
    wide = values.reshape(-1)[ties]
    with np.errstate(over="ignore", invalid="ignore"):
        tied = wide.astype(np.float32)
    lower = (tied.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    wide, near = np.abs(wide), np.abs(tied).astype(np.float64)
    fixed = lower + ((wide > near) | ((wide == near) & (lower & np.uint16(1)).astype(bool)))
    if result.flags.c_contiguous:
        result.reshape(-1)[ties] = fixed
    else:
        result[np.unravel_index(ties, result.shape)] = fixed


def _refuse_overflow(values, name: str) -> None:
    """A table with values beyond ``name``'s range would silently hold inf: refuse it instead."""
    import numpy as np

    largest = largest_value(name)
    finite = np.isfinite(values)
    if not finite.all():
        raise ParameterError(
            "the table's values are not finite (a parameter is too large or not a number)",
            hint="use smaller parameter values",
        )
    peak = float(np.abs(values).max())
    raise ParameterError(
        f"{name} cannot hold the table's values (up to {peak:g}; its largest is {largest:g})",
        hint="use a wider {dtype} (float32, float64), or smaller {length} or parameter values",
    )


def half_bits(values, name: str, out=None):
    """The uint16 bit patterns of float64 ``values`` rounded once to ``name`` (float16 or bfloat16).

    The fast exact routes: numpy's float64 -> float16 cast rounds once; bfloat16 is
    :func:`_round_to_bfloat16`. A contiguous block converts several times faster than strided
    columns, so callers round whole blocks here and place the 2-byte patterns afterwards, or
    pass ``out`` (a uint16 array of ``values``' shape, e.g. the table's own rows) to have them
    written there with no temporary and no second pass.

    numpy's float16 cast is a scalar loop (about 3 ns an element), yet exact vectorised routes
    (Veltkamp's split to 11 bits, in float64 or after numpy's float32 cast with a fallback where
    the float32 is halfway, then an integer repack to float16 bits; git history of issue 32 with
    its exhaustive test) took about 0.8× its time on a hot 1 MiB block but gained nothing inside
    ``encode`` (its blocks, alternating old and new, CPU time within ±10 %; a dozen numpy passes
    each): the cast stays.

    >>> import numpy as np
    >>> half_bits(np.array([1.0, -2.0**-24]), "float16").tolist()
    [15360, 32769]
    """
    import numpy as np

    if check_dtype(name) == "bfloat16":
        bits = _round_to_bfloat16(values, out=out).view(np.uint16)
        return bits if out is None else out
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if out is None:
            return values.astype(np.float16).view(np.uint16)
        np.copyto(out.view(np.float16), values, casting="unsafe")  # the same one rounding, in place
    return out


def _round_to_bfloat16(values, out=None):
    """bfloat16 of float64 ``values``, rounded once to nearest even (into ``out``'s uint16 bits if given).

    numpy rounds float64 to float32 once, and ``ml_dtypes`` rounds float32 to bfloat16 once
    (compiled, about four times faster than the same rounding in numpy integer operations on the
    bits, and 1.5× faster than them on a cached block: benchmarks/bench_throughput.py's
    history); the two roundings equal the float64 value's own rounding except where the float32
    lies exactly halfway between two bfloat16 values (its low 16 bits 0x8000): for those few the
    float64 value, compared with the float32, says which way. Infinities, NaN and values beyond
    float32's range come out as one rounding gives them (beyond float32's range is beyond
    bfloat16's too). The halfway test is one contiguous shift and compare (a strided look at
    the low 2-byte halves took three times as long), and the few halfway values are redone by
    index (boolean masks over the block, five of them, had cost as much as the rounding).
    tests/schemes/test_dtypes_rounding.py checks ties, near-ties, subnormals and specials exactly.
    """
    import numpy as np

    bfloat16 = numpy_dtype("bfloat16")
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        single = values.astype(np.float32, order="C")
        if out is None:
            result = single.astype(bfloat16).view(np.uint16)
        else:
            result = out
            np.copyto(out.view(bfloat16), single, casting="unsafe")
    # the low halves moved up in place (a new 4-byte array per block cost a page fault per 4 KiB)
    halves = np.left_shift(single.view(np.uint32), np.uint32(16), out=single.view(np.uint32))
    _fix_ties(values, np.flatnonzero(halves == np.uint32(0x80000000)), result)
    return result.view(bfloat16)


def format_bytes(nbytes: float) -> str:
    """A byte count for people, in binary units, however large (never a number of hundreds of digits).

    >>> format_bytes(160), format_bytes(4 << 20), format_bytes(16 * 2**40)
    ('160 B', '4.0 MiB', '16.0 TiB')
    >>> format_bytes(2**62), format_bytes(2**100), format_bytes(10**400)
    ('4.0 EiB', '1.3e+30 bytes', 'more than 1e+308 bytes')
    """
    if nbytes >= 2**1023:  # past float64: only its size can be said
        return "more than 1e+308 bytes"
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{float(nbytes):.1e} bytes"
