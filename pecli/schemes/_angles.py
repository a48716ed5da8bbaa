"""The angle engine shared by every sin/cos scheme: frequencies, phasors, column layouts.

A sinusoidal table is ``exp(i·p·ω)`` for positions ``p`` and frequencies ``ω``, laid out as
columns. For integer positions the phasors are built by angle addition — exact float64 sin/cos
at the start of each block of rows, times a small table of ``exp(i·j·ω)`` for the offsets ``j``
inside a block — which is many times faster than a sin and a cos per element and stays at
float64 rounding level (about 1e-14 absolute), far below float32's resolution. Block starts are
exact sin/cos every ``_ANCHOR_BLOCKS`` blocks and chained by one block step in between.

:func:`fill_sin_cos` is the fast path every table should use: it writes each block straight
into the output (through a complex view when the layout is [sin, cos] pairs), so no
full-size float64 or complex temporary exists, and it splits large tables over threads
(numpy releases the GIL inside its loops). Whole blocks of [sin, cos] pairs are multiplied
straight into the table, rounding once as they are stored.

>>> import numpy as np
>>> z = integer_phasors(0, 3, np.array([1.0, 0.5]))
>>> bool(np.allclose(z, np.exp(1j * np.outer(np.arange(3), [1.0, 0.5]))))
True
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from pecli.dtypes import numpy_dtype
from pecli.errors import ParameterError
from pecli.schemes.backend import claim_backend

__all__ = [
    "fill_sin_cos",
    "geometric_frequencies",
    "integer_phasors",
    "pair_columns",
    "place_pairs",
    "place_sin_cos",
    "position_phasors",
    "sin_cos_table",
]

#: rows per angle-addition block: complex128 temporaries of about 1 MiB (measured: 1.2–1.9× faster
#: than 512 KiB blocks for 65536 × 1024, fewer Python-level iterations; benchmarks/bench_throughput.py)
_BLOCK_BYTES = 1 << 20
#: block-start phasors are exact float64 sin/cos every this many blocks, and one multiplication by
#: the block step apart in between (sin and cos per block start took a fifth of the block loop)
_ANCHOR_BLOCKS = 64
#: tables smaller than this are filled by one thread (starting threads costs more)
_PARALLEL_BYTES = 16 << 20
#: at most this many threads (the work is memory-bound beyond a few cores)
_MAX_THREADS = 8
#: threads take spans of this many blocks from one queue, so a thread whose core another job holds
#: does less of the table instead of the others waiting for it (spans of half the table each left
#: the wall time to the slower core on a shared machine)
_SPAN_BLOCKS = 16
_PAGE = 4096
#: tables of more frequencies than this are filled in column chunks of this many (a block of one
#: row of them holds 4 complex128 copies: 4 MiB)
_MAX_COLUMN_PHASORS = _BLOCK_BYTES // 16
#: blocks hold at most this many rows (bounds the work for small tables of few columns)
_MAX_BLOCK_ROWS = 1024
#: a block is multiplied as rows of up to this many phasors (several table rows each, the block
#: start repeated): numpy's buffered complex128 -> complex64 loop took 15-25 % less CPU with rows
#: of its buffer's 8192 elements than with one table row of 512 (benchmarks/bench_throughput.py)
_INNER_PHASORS = 8192
#: ... for rows of at least this many phasors; narrower tables ran 5-10 % slower repeated
_MIN_REPEATED_PHASORS = 64
#: a load this few bytes below (mod 4 KiB) a store still in flight stalls on it ("4K aliasing"):
#: the speed of the block loop swung 4× with where its temporaries fell, so they are placed.
_ALIAS_WINDOW = 1024


def position_phasors(positions: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """``exp(i·p·ω)`` for any real positions ``p`` (rows; fractional timesteps too) and frequencies ``ω``, in float64.

    >>> position_phasors(np.array([0.0, np.pi]), np.array([1.0])).real.tolist()
    [[1.0], [-1.0]]
    """
    backend = claim_backend()
    if backend is not None:
        return backend.phasors(np.asarray(positions, dtype=np.float64), freqs)
    return np.exp(1j * np.outer(np.asarray(positions, dtype=np.float64), freqs))


def geometric_frequencies(dim: int, base: float, freq_shift: float | None) -> np.ndarray:
    """Frequencies of the sinusoidal family, in float64.

    ``freq_shift=None`` gives Vaswani's ``ω_k = base^(−2k/d)`` for ``k < ceil(d/2)``; a shift ``S``
    gives the tensor2tensor/diffusers form ``ω_i = base^(−i/(h − S))`` for ``i < h = d // 2``.

    >>> geometric_frequencies(4, 10000.0, None)
    array([1.  , 0.01])
    >>> geometric_frequencies(4, 10000.0, 1.0)
    array([1.e+00, 1.e-04])
    """
    if freq_shift is None:
        exponents = np.arange((dim + 1) // 2, dtype=np.float64)  # in place: one array, whatever d
        exponents *= 2.0
        exponents /= dim
        exponents *= -math.log(base)
        return np.exp(exponents, out=exponents)
    half = dim // 2
    if half and half - freq_shift <= 0:  # d = 1 has no frequency: the padding column alone, as the sources give
        raise ParameterError(
            f"{{freq_shift={freq_shift:g}}} needs d // 2 > {freq_shift:g}, but {{dim={dim}}} gives d // 2 = {half} "
            "(the exponent would divide by zero or flip sign)",
            hint="use a larger {dim} or {freq_shift=0}, or drop {freq_shift}",
        )
    exponents = np.arange(half, dtype=np.float64)
    exponents /= half - freq_shift
    exponents *= -math.log(base)
    return np.exp(exponents, out=exponents)


def integer_phasors(start: int, stop: int, freqs: np.ndarray) -> np.ndarray:
    """``exp(i·p·ω)`` for integer positions ``start <= p < stop``, by blockwise angle addition.

    Materialises the whole complex128 array; tables should use :func:`fill_sin_cos` instead.
    """
    from pecli.memory import check_fits_in_memory

    check_fits_in_memory(max(0, stop - start) * len(freqs) * 16, what="table's float64 phasors")
    phasors = np.empty((stop - start, len(freqs)), dtype=np.complex128)
    fill_sin_cos(phasors.view(np.float64), start, freqs, layout="interleaved", cos_first=True)
    return phasors


def sin_cos_table(phasors: np.ndarray, dim: int, dtype: str, *, layout: str, cos_first: bool) -> np.ndarray:
    """The ``(rows, dim)`` table of :func:`place_sin_cos`, rounded once from float64 to ``dtype``.

    >>> sin_cos_table(np.exp(1j * np.array([[0.0]])), 3, "float64", layout="split", cos_first=True).tolist()
    [[1.0, 0.0, 0.0]]
    """
    table = np.empty((len(phasors), dim), dtype=numpy_dtype(dtype))
    place_sin_cos(table, phasors, layout=layout, cos_first=cos_first)
    return table


def place_sin_cos(out: np.ndarray, phasors: np.ndarray, *, layout: str, cos_first: bool) -> None:
    """Write sin and cos of the phasors' angles into ``out``'s columns, rounding once to its dtype.

    ``interleaved``: [first, second, first, second, …]; ``split``: [first … | second …], where
    first is sin (cos with ``cos_first``). Columns beyond the phasors are truncated (odd d in
    Vaswani's form) or zero-filled (odd d with a frequency shift).

    >>> out = np.empty((1, 3))
    >>> place_sin_cos(out, np.exp(1j * np.array([[0.5, 0.25]])), layout="split", cos_first=False)
    >>> bool(np.allclose(out, [[np.sin(0.5), np.sin(0.25), np.cos(0.5)]]))
    True
    """
    first, second = (phasors.real, phasors.imag) if cos_first else (phasors.imag, phasors.real)
    place_pairs(out, first, second, layout=layout)


def fill_sin_cos(out: np.ndarray, start: int, freqs: np.ndarray, *, layout: str, cos_first: bool) -> np.ndarray:
    """Fill ``out`` (rows, dim) with the sin/cos table of integer positions ``start, start + 1, …``.

    The same columns as :func:`place_sin_cos` over :func:`integer_phasors`, for any output dtype
    (float64, float32, float16, bfloat16), computed in float64 and rounded once, block by block:
    peak extra memory is a few MiB whatever the table's size. Returns ``out``.

    >>> table = fill_sin_cos(np.empty((3, 4), np.float32), 5, np.array([1.0, 0.01]), layout="split", cos_first=False)
    >>> angles = np.outer(np.arange(5, 8), [1.0, 0.01])
    >>> bool(np.abs(table - np.hstack([np.sin(angles), np.cos(angles)])).max() < 1e-7)
    True
    """
    rows, count = out.shape[0], len(freqs)
    if rows == 0:
        return out
    if count == 0:
        out[...] = 0
        return out
    if claim_backend() is not None:  # e.g. torch on a device: the whole block of angles there, then place
        phasors = position_phasors(np.arange(start, start + rows, dtype=np.float64), freqs)
        place_sin_cos(out, phasors, layout=layout, cos_first=cos_first)
        return out
    if count > _MAX_COLUMN_PHASORS:  # a block of one row would still cost 64 bytes a frequency
        return _fill_column_chunks(out, start, freqs, layout=layout, cos_first=cos_first)
    # Blocks start at multiples of `block` in position space, and products are always formed over
    # whole blocks (numpy's vector loops may round a complex product differently in a loop's
    # tail), so a position's value never depends on which rows are computed: streamed chunks
    # equal the whole table bit for bit. The row cap keeps small tables cheap.
    block = max(1, min(_BLOCK_BYTES // (16 * count), _MAX_BLOCK_ROWS))
    tile = _rows_per_product(block, count)
    offsets = _placed((block, count), np.complex128, 0)
    inside = np.outer(np.arange(block, dtype=np.float64), freqs)
    np.cos(inside, out=offsets.real)
    np.sin(inside, out=offsets.imag)
    if not cos_first:
        # sin-first layouts want sin + i·cos = i·conj(exp(i·a)): block starts carry (sin a, cos a)
        # and the offsets are conjugated, so the product's parts are already in column order
        np.negative(offsets.imag, out=offsets.imag)
    # one block's step exp(i·block·ω), in the offsets' convention, carries a block start to the next
    step = np.empty(count, dtype=np.complex128)
    np.cos(block * freqs, out=step.real)
    np.sin(block * freqs, out=step.imag)
    if not cos_first:
        np.negative(step.imag, out=step.imag)
    job = _BlockJob(out, _pair_view(out, layout, count), start, freqs, offsets, step, tile, layout, cos_first)
    threads = _thread_count(out.nbytes, rows, block)
    if threads == 1:
        job.run([range(rows)])
        return out
    # spans end on block boundaries in position space, so every span but the ends is whole blocks
    span_rows = block * _SPAN_BLOCKS
    bounds = [0, *range(-start % span_rows, rows, span_rows), rows]
    _run_in_threads(job.run, [range(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo], threads)
    return out


def _fill_column_chunks(out: np.ndarray, start: int, freqs: np.ndarray, *, layout: str, cos_first: bool) -> np.ndarray:
    """:func:`fill_sin_cos` for very many frequencies: chunks of ``_MAX_COLUMN_PHASORS`` frequencies,
    ``_ANCHOR_BLOCKS`` positions at a time (a chunk's blocks are one row, so a batch starts on an exact
    anchor), through an interleaved temporary of ``out``'s dtype (rounded once there, then copied
    exactly): the extra memory is at most that batch, whatever ``d``.

    A chunk's values depend only on its frequencies and positions, so they are the same whichever
    rows are asked for, and equal the unchunked fill's (whose blocks are one row too).
    """
    rows, count, dim = out.shape[0], len(freqs), out.shape[1]
    used = min(2 * count, dim)
    batch = min(rows, _ANCHOR_BLOCKS)
    buffer = np.empty((batch, 2 * _MAX_COLUMN_PHASORS), dtype=out.dtype)
    bounds = [0, *range(-start % _ANCHOR_BLOCKS, rows, _ANCHOR_BLOCKS), rows]
    spans = [(top, bottom) for top, bottom in itertools.pairwise(bounds) if bottom > top]
    for lo in range(0, count, _MAX_COLUMN_PHASORS):
        hi = min(lo + _MAX_COLUMN_PHASORS, count)
        for top, bottom in spans:
            chunk = buffer[: bottom - top, : 2 * (hi - lo)]
            fill_sin_cos(chunk, start + top, freqs[lo:hi], layout="interleaved", cos_first=cos_first)
            if layout == "interleaved":
                stop = min(2 * hi, used)
                out[top:bottom, 2 * lo : stop] = chunk[:, : stop - 2 * lo]
                continue
            out[top:bottom, lo:hi] = chunk[:, 0::2]
            stop = min(count + hi, used)
            if stop > count + lo:
                out[top:bottom, count + lo : stop] = chunk[:, 1::2][:, : stop - count - lo]
    out[:, used:] = 0
    return out


class _BlockJob:
    """The block loop of :func:`fill_sin_cos` over one span of rows (one per thread)."""

    def __init__(
        self,
        out: np.ndarray,
        pairs: np.ndarray | None,
        start: int,
        freqs: np.ndarray,
        offsets: np.ndarray,
        step: np.ndarray,
        tile: int,
        layout: str,
        cos_first: bool,
    ) -> None:
        self.out, self.pairs, self.start, self.freqs = out, pairs, start, freqs
        self.step, self.tile, self.layout, self.cos_first = step, tile, layout, cos_first
        self.block = len(offsets)
        # the block's offsets as the product sees them: `tile` table rows per row
        self.offsets = offsets.reshape(self.block // tile, tile * len(freqs))

    def run(self, spans: Iterable[range]) -> None:
        """Fill each span of rows in turn (one thread's share)."""
        count, shape = len(self.freqs), self.offsets.shape
        # each thread's temporaries, at page offsets where the multiply's loads never trail its stores
        factor = _placed((count,), np.complex128, 2560)
        # the block start once per table row of a product row (the factor itself when one)
        repeated = factor if self.tile == 1 else _placed((self.tile * count,), np.complex128, 3072)
        candidates = (_placed(shape, np.complex128, 2048), _placed(shape, np.complex128, 0))
        for span in spans:
            self._fill(span, factor, repeated, candidates)

    def _fill(self, span: range, factor: np.ndarray, repeated: np.ndarray, candidates: tuple[np.ndarray, ...]) -> None:
        block, anchor_rows, count = self.block, self.block * _ANCHOR_BLOCKS, len(self.freqs)
        position, end = self.start + span.start, self.start + span.stop
        factor_at = None  # the block start that `factor` holds
        while position < end:
            block_start = (position // block) * block
            block_end = min(block_start + block, end)
            lo, hi = position - self.start, block_end - self.start
            if factor_at != block_start or block_start % anchor_rows == 0:
                factor_at = self._exact_factor(factor, (block_start // anchor_rows) * anchor_rows)
            while factor_at < block_start:  # the same chain from the anchor whichever rows are asked for
                np.multiply(factor, self.step, out=factor)
                factor_at += block
            target = self.out[lo:hi] if self.pairs is None else self.pairs[lo:hi]
            if repeated is not factor:
                repeated.reshape(self.tile, count)[...] = factor
            straight = self._as_product(target) if self.pairs is not None and hi - lo == block else None
            if straight is not None:
                # a whole block straight into the table: the product is formed in complex128 and
                # rounded once as it is stored (no temporary, no second pass over the block)
                np.multiply(repeated, self.offsets, out=straight)
            else:
                products = _least_aliased(candidates, target)
                np.multiply(repeated, self.offsets, out=products)
                products = products.reshape(block, count)[position - block_start : block_end - block_start]
                if self.pairs is not None:
                    target[...] = products  # one rounding: complex128 -> complex64 rounds each part
                elif target.dtype.itemsize == 2:
                    _place_half_pairs(target, products, self.layout)
                else:
                    place_pairs(target, products.real, products.imag, layout=self.layout)
            position = block_end
            np.multiply(factor, self.step, out=factor)
            factor_at += block

    def _as_product(self, pairs: np.ndarray) -> np.ndarray | None:
        """A whole block of the table's pairs in the product's shape, or None where that needs a copy."""
        if self.tile == 1:
            return pairs
        return pairs.reshape(self.offsets.shape) if pairs.flags.c_contiguous else None

    def _exact_factor(self, factor: np.ndarray, position: int) -> int:
        """Set ``factor`` to the phasor of ``position`` from float64 sin and cos; returns ``position``."""
        first, second = (np.cos, np.sin) if self.cos_first else (np.sin, np.cos)
        angles = float(position) * self.freqs
        first(angles, out=factor.real)
        second(angles, out=factor.imag)
        return position


def place_pairs(out: np.ndarray, first: np.ndarray, second: np.ndarray, *, layout: str) -> None:
    """Place two (rows, n) arrays as column pairs of ``out``: ``interleaved`` or ``split`` (halves), then zeros.

    RoPE's layouts are these placements of one angle table twice: HF Llama's cat(freqs, freqs)
    is ``split``, GPT-J/Meta's pairs are ``interleaved``. Writing rounds once to ``out``'s dtype.

    >>> out = np.empty((1, 4))
    >>> place_pairs(out, np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]), layout="interleaved")
    >>> out.tolist()
    [[1.0, 3.0, 2.0, 4.0]]
    """
    if out.dtype.name == "bfloat16":  # numpy would round twice (via float32): round from float64 once
        from pecli.dtypes import round_to

        wide = np.empty(out.shape, dtype=np.float64)
        place_pairs(wide, first, second, layout=layout)
        out[...] = round_to(wide, "bfloat16")
        return
    count, dim = first.shape[1], out.shape[1]
    used = min(2 * count, dim)
    if layout == "interleaved":
        out[:, 0:used:2] = first[:, : (used + 1) // 2]
        out[:, 1:used:2] = second[:, : used // 2]
    else:
        out[:, :count] = first
        out[:, count:used] = second[:, : used - count]
    out[:, used:] = 0


def pair_columns(columns: np.ndarray, count: int, dim: int, *, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Where :func:`place_pairs` takes each of ``columns`` from, for ``count`` pairs in ``dim`` columns:
    the pair's index (−1 for a zero-filled column) and whether it is the pair's first part.

    O(len(columns)), whatever ``dim``: a few columns of a wide table are computed without placing it.

    >>> index, first = pair_columns(np.array([0, 1, 2, 4]), 2, 5, layout="split")
    >>> index.tolist(), first.tolist()
    ([0, 1, 0, -1], [True, True, False, False])
    """
    columns = np.asarray(columns, dtype=np.int64)
    used = min(2 * count, dim)
    if layout == "interleaved":
        index, first = columns // 2, columns % 2 == 0
    else:
        first = columns < count
        index = np.where(first, columns, columns - count)
    return np.where(columns < used, index, -1), first


def _place_half_pairs(out: np.ndarray, products: np.ndarray, layout: str) -> None:
    """:func:`place_pairs` of a contiguous complex128 block into a float16/bfloat16 ``out``.

    The block is rounded as it lies (contiguous [first, second] pairs), then its 2-byte patterns
    are placed: bfloat16's rounding (:func:`pecli.dtypes.half_bits`) works on whole contiguous
    blocks; float16's cost is numpy's float64 -> float16 cast either way (about 3 ns an element).
    Where the block is exactly ``out``'s rows (interleaved pairs filling contiguous rows), it is
    rounded straight into them: no temporary, no second pass.
    """
    from pecli.dtypes import half_bits

    wide = products.view(np.float64)
    target = out.view(np.uint16)
    if layout == "interleaved" and wide.shape == target.shape and target.flags.c_contiguous:
        half_bits(wide, out.dtype.name, out=target)
        return
    bits = half_bits(wide, out.dtype.name)
    if layout == "interleaved":
        used = min(bits.shape[1], out.shape[1])
        target[:, :used] = bits[:, :used]
        target[:, used:] = 0
    else:
        place_pairs(target, bits[:, 0::2], bits[:, 1::2], layout=layout)


def _pair_view(out: np.ndarray, layout: str, count: int) -> np.ndarray | None:
    """``out`` seen as (rows, count) complex pairs, when its columns are exactly [first, second]×count."""
    if layout != "interleaved" or out.shape[1] != 2 * count or out.dtype not in (np.float32, np.float64):
        return None
    try:
        return out.view(np.complex64 if out.dtype == np.float32 else np.complex128)
    except ValueError:  # rows not contiguous in memory
        return None


def _placed(shape: tuple[int, ...], dtype: type, page_offset: int) -> np.ndarray:
    """An empty array whose data starts ``page_offset`` bytes into a 4 KiB page."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + _PAGE, dtype=np.uint8)
    shift = (page_offset - raw.ctypes.data) % _PAGE
    return raw[shift : shift + nbytes].view(dtype).reshape(shape)


def _least_aliased(candidates: tuple[np.ndarray, ...], target: np.ndarray) -> np.ndarray:
    """The temporary whose reads do not trail the writes into ``target`` by less than the window."""
    for candidate in candidates:
        if not 0 < (target.ctypes.data - candidate.ctypes.data) % _PAGE < _ALIAS_WINDOW:
            return candidate
    return candidates[0]


def _rows_per_product(block: int, count: int) -> int:
    """Table rows per row of the block's product: a divisor of ``block`` (whose size alone sets the
    values), at most ``_INNER_PHASORS`` phasors, and few enough that repeating the block start costs
    at most an eighth of the product.

    >>> _rows_per_product(128, 512), _rows_per_product(170, 384), _rows_per_product(1024, 8)
    (16, 17, 1)
    """
    if count < _MIN_REPEATED_PHASORS:
        return 1
    most = max(1, min(block // 8, _INNER_PHASORS // count))
    return max(rows for rows in range(1, most + 1) if block % rows == 0)


def _thread_count(nbytes: int, rows: int, block: int) -> int:
    if nbytes < _PARALLEL_BYTES:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, _MAX_THREADS, -(-rows // block)))


def _run_in_threads(work: Callable[[Iterable[range]], None], spans: list[range], threads: int) -> None:
    """``work(spans)`` in ``threads`` threads (this one too) sharing one queue of spans; re-raise the first error.

    Each thread's ``work`` is handed an iterator that yields the next span nobody has taken, so a
    thread slowed by another job on its core takes fewer spans; after an error the others stop.
    """
    queue = iter(spans)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def taken() -> Iterator[range]:
        while not errors:
            with lock:
                span = next(queue, None)
            if span is None:
                return
            yield span

    def guarded() -> None:
        try:
            work(taken())
        except BaseException as error:  # handed to the caller's thread below
            errors.append(error)

    workers = [threading.Thread(target=guarded, daemon=True) for _ in range(min(threads, len(spans)) - 1)]
    for thread in workers:
        thread.start()
    guarded()
    for thread in workers:
        thread.join()
    if errors:
        raise errors[0]
