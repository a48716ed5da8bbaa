"""Statistics of stored tensors — min, max, mean, std — in float64, safe from overflow, NaN counted.

Thousands of small tensors (a checkpoint's biases and norms) are reduced together, a batch at a
time; a tensor of values near 1e308 is scaled first so that neither its sum nor its squares
overflow.

>>> import numpy as np
>>> from pecli.io import StoredTensor
>>> tensor_stats(StoredTensor((3,), "float32", lambda: np.array([1, 2, 3], np.float32)), "t", 12)["mean"]
2.0
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pecli.io import StoredTensor

__all__ = ["all_tensor_stats", "itemsize", "tensor_stats"]


@functools.cache
def itemsize(dtype: str) -> int:
    """Bytes per value of dtype ``dtype``: a numpy name or string (``<U2``), or a torch name numpy lacks.

    >>> itemsize("bfloat16"), itemsize("<U2"), itemsize("float8_e4m3fn"), itemsize("qint32")
    (2, 8, 1, 4)
    """
    import numpy as np

    if dtype == "bfloat16":
        return 2
    try:
        return np.dtype(dtype).itemsize
    except TypeError:  # float8_e5m2, qint8, quint4x2…: the name carries the bits
        bits = re.search(r"\d+", dtype)
        return max(1, int(bits.group()) // 8) if bits else 1


#: a tensor and its float64 copy this small fit in any memory pecli runs in
_ALWAYS_FITS = 16 << 20

#: above this magnitude the sum or the squares of a tensor's values can overflow float64
_OVERFLOWS = 1e150
#: below this magnitude their squares fall to float64's subnormals or to 0 (a std of 1e-300s would read 0)
_UNDERFLOWS = 1e-150


def _needs_scaling(scale: float) -> bool:
    """Whether values whose largest magnitude is ``scale`` (finite) are scaled into [-1, 1] for their moments.

    >>> _needs_scaling(1e308), _needs_scaling(1e-300), _needs_scaling(1.0), _needs_scaling(0.0)
    (True, True, False, False)
    """
    return scale > _OVERFLOWS or 0.0 < scale < _UNDERFLOWS


def tensor_stats(entry: StoredTensor, key: str, nbytes: int) -> dict[str, float | int | None] | None:
    """min, max, mean and std (in float64, scaled so values near 1e308 do not overflow, nor 1e-300 underflow).

    None for a dtype with no real numbers. NaN values are left out and counted (``nan``, present
    only when there are some); infinities are kept (so ``max`` is inf, the mean ±inf or NaN, the std
    NaN) and counted too (``posinf``, ``neginf``, present only when there are some), so that a JSON
    reader, which sees null for every non-finite figure, can tell an infinity from no data.
    Refuses (a :class:`~pecli.errors.ParameterError`) a tensor that, with its float64 copy, would not
    fit in the memory available.

    >>> import numpy as np
    >>> from pecli.io import StoredTensor
    >>> values = np.array([[1, 2], [3, 6]], dtype=np.int16)
    >>> tensor_stats(StoredTensor((2, 2), "int16", lambda: values), "", 8)
    {'min': 1.0, 'max': 6.0, 'mean': 3.0, 'std': 1.8708286933869707}
    >>> huge = np.array([1e308, 1e308, np.nan])
    >>> tensor_stats(StoredTensor((3,), "float64", lambda: huge), "", 24)
    {'min': 1e+308, 'max': 1e+308, 'mean': 1e+308, 'std': 0.0, 'nan': 1}
    >>> endless = np.array([[1, np.inf], [2, 3]])
    >>> tensor_stats(StoredTensor((2, 2), "float64", lambda: endless), "", 32)
    {'min': 1.0, 'max': inf, 'mean': inf, 'std': nan, 'posinf': 1}
    """
    from pecli.io import is_real_dtype
    from pecli.memory import check_fits_in_memory

    if not is_real_dtype(entry.dtype):
        return None
    count = nbytes // itemsize(entry.dtype)
    if entry.read_values is not None and count > _BLOCK_VALUES:
        return _blockwise_stats(entry.read_values, count)
    if nbytes + 8 * count > _ALWAYS_FITS:  # asking the system costs more than a small tensor's statistics
        check_fits_in_memory(
            nbytes + 8 * count,
            what=f"tensor {key!r} and its statistics",
            hint="drop {stats} (the header alone is instant), or choose a smaller tensor with {key}",
        )
    import numpy as np

    # ufunc reductions rather than the array methods: the same arithmetic as numpy's mean and std,
    # without their per-call overhead, which dominates for thousands of small tensors
    values = np.asarray(entry.load(), dtype=np.float64).reshape(-1)
    found: dict[str, float | int | None] = {"min": None, "max": None, "mean": None, "std": None}
    nan_count = 0
    if values.size and math.isnan(np.minimum.reduce(values)):  # NaN propagates: count them, leave them out
        missing = np.isnan(values)
        nan_count = int(np.count_nonzero(missing))
        values = values[~missing]
    if values.size:
        low, high = float(np.minimum.reduce(values)), float(np.maximum.reduce(values))
        scale = max(abs(low), abs(high))
        if scale == math.inf:
            with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: the mean and std are NaN
                mean, std = _mean_and_std(values)
        elif _needs_scaling(scale):  # scaled into [-1, 1]: the sum and squares neither overflow nor underflow
            mean, std = (scale * moment for moment in _mean_and_std(values / scale))
        else:
            mean, std = _mean_and_std(values)
        found = {"min": low, "max": high, "mean": mean, "std": std}
        if scale == math.inf:
            found.update(_infinity_counts(values))
    if nan_count:
        found["nan"] = nan_count
    return found


def _infinity_counts(values: Any) -> dict[str, int]:
    """``posinf`` and ``neginf``: how many of ``values`` are +inf and −inf, each only when there are some.

    >>> import numpy as np
    >>> _infinity_counts(np.array([np.inf, -np.inf, np.inf, 1.0])), _infinity_counts(np.array([1.0]))
    ({'posinf': 2, 'neginf': 1}, {})
    """
    import numpy as np

    counts = {"posinf": int(np.count_nonzero(values == np.inf)), "neginf": int(np.count_nonzero(values == -np.inf))}
    return {name: count for name, count in counts.items() if count}


#: tensors of at most this many values have their statistics computed together, a batch at a time
_BATCHED_VALUES = 4096

#: float64 values in one batch (8 MiB, and as much again for the deviations)
_BATCH_VALUES = 1 << 20


def all_tensor_stats(tensors: Sequence[tuple[str, StoredTensor, int]]) -> list[dict[str, float | int | None] | None]:
    """:func:`tensor_stats` of each ``(key, entry, nbytes)``, the same values bit for bit.

    Small tensors of one dtype and size (a checkpoint's thousands of biases and norms) are read
    into one float64 array and reduced along its rows, a batch at a time: a few numpy calls per
    batch instead of ten per tensor, which dominated ``--stats`` on 10,000 tensors. A row with a
    NaN, an infinity or a value beyond the overflow guard takes :func:`tensor_stats`' careful path.

    >>> import numpy as np
    >>> from pecli.io import StoredTensor
    >>> ints = StoredTensor((2, 2), "int16", lambda: np.array([[1, 2], [3, 6]], dtype=np.int16))
    >>> gap = StoredTensor((2, 2), "float32", lambda: np.array([[1, np.nan], [3, 5]], dtype=np.float32))
    >>> for found in all_tensor_stats([("a", ints, 8), ("b", gap, 16)]):
    ...     print(found)
    {'min': 1.0, 'max': 6.0, 'mean': 3.0, 'std': 1.8708286933869707}
    {'min': 1.0, 'max': 5.0, 'mean': 3.0, 'std': 1.632993161855452, 'nan': 1}
    """
    from pecli.io import is_real_dtype

    found: list[dict[str, float | int | None] | None] = [None] * len(tensors)
    batches: dict[tuple[str, int], list[int]] = {}
    for index, (key, entry, nbytes) in enumerate(tensors):
        count = math.prod(entry.shape)
        if 0 < count <= _BATCHED_VALUES and is_real_dtype(entry.dtype):
            batches.setdefault((entry.dtype, count), []).append(index)
        else:
            found[index] = tensor_stats(entry, key, nbytes)
    if not batches:
        return found
    import numpy as np

    for (_, count), indices in batches.items():
        step = max(1, _BATCH_VALUES // count)
        for first in range(0, len(indices), step):
            batch = indices[first : first + step]
            values = np.empty((len(batch), count))
            for row, index in enumerate(batch):
                values[row] = tensors[index][1].load().reshape(-1)
            # per row, the arithmetic of tensor_stats and _mean_and_std (a reduction along a
            # contiguous row sums pairwise, as it does over a 1-D array)
            with np.errstate(all="ignore"):  # rows with NaN or inf are redone below
                low, high = np.minimum.reduce(values, axis=1), np.maximum.reduce(values, axis=1)
                largest = np.maximum(np.abs(low), np.abs(high))
                # False for NaN, inf, and magnitudes whose sum or squares leave float64's normal range
                plain = (largest <= _OVERFLOWS) & ((largest >= _UNDERFLOWS) | (largest == 0.0))
                mean = np.add.reduce(values, axis=1) / count
                deviation = values - mean[:, None]
                variance = np.add.reduce(deviation * deviation, axis=1) / count
            for row, index in enumerate(batch):
                if plain[row]:
                    found[index] = {
                        "min": float(low[row]),
                        "max": float(high[row]),
                        "mean": float(mean[row]),
                        "std": math.sqrt(variance[row]),
                    }
                else:
                    found[index] = tensor_stats(tensors[index][1], tensors[index][0], tensors[index][2])
    return found


#: values read and reduced at once by :func:`_blockwise_stats` (8 MiB in float64)
_BLOCK_VALUES = 1 << 20


def _blockwise_stats(read_values: Callable[[int, int], Any], count: int) -> dict[str, float | int | None]:
    """:func:`tensor_stats` of a tensor read a block at a time: memory bounded by one block, not the tensor.

    Two passes over the file: the extremes and the NaN count, then the mean and the deviations'
    squares of each block (scaled as :func:`tensor_stats` scales them), merged with Chan's pairwise
    update, so the mean and std agree with the whole-array figures to a few units in the last place.

    >>> import numpy as np
    >>> values = np.arange(10.0)
    >>> found = _blockwise_stats(lambda start, n: values[start : start + n], 10)
    >>> found["min"], found["max"], found["mean"], round(found["std"], 12)
    (0.0, 9.0, 4.5, 2.872281323269)
    """
    import numpy as np

    def blocks() -> Iterator[Any]:
        for start in range(0, count, _BLOCK_VALUES):
            block = np.asarray(read_values(start, min(_BLOCK_VALUES, count - start)), dtype=np.float64)
            yield block[~np.isnan(block)] if math.isnan(np.minimum.reduce(block)) else block

    low, high, present = math.inf, -math.inf, 0
    infinities = {"posinf": 0, "neginf": 0}
    for block in blocks():
        if block.size:
            block_low, block_high = float(np.minimum.reduce(block)), float(np.maximum.reduce(block))
            low, high = min(low, block_low), max(high, block_high)
            present += block.size
            if max(abs(block_low), abs(block_high)) == math.inf:  # rare: only then count them
                for name, how_many in _infinity_counts(block).items():
                    infinities[name] += how_many
    found: dict[str, float | int | None] = {"min": None, "max": None, "mean": None, "std": None}
    if present:
        scale = max(abs(low), abs(high))
        found = {"min": low, "max": high, **_merged_moments(blocks(), scale)}
        found.update({name: how_many for name, how_many in infinities.items() if how_many})
    if present < count:
        found["nan"] = count - present
    return found


def _merged_moments(blocks: Iterator[Any], scale: float) -> dict[str, float | int | None]:
    """The mean and std of the values in ``blocks`` (NaN-free, extremes ±``scale``), merged block by block."""
    import numpy as np

    if scale == math.inf:  # an infinity: the sum is ±inf or NaN, and every deviation from it NaN
        with np.errstate(invalid="ignore", over="ignore"):
            total, size = 0.0, 0
            for block in blocks:
                total, size = total + float(np.add.reduce(block)), size + block.size
        return {"mean": total / size, "std": math.nan}
    divisor = scale if _needs_scaling(scale) else 1.0  # scaled into [-1, 1]: nothing overflows or underflows
    mean, squares, size = 0.0, 0.0, 0
    for block in blocks:
        if not block.size:
            continue
        values = block / divisor if divisor != 1.0 else block
        block_mean = float(np.add.reduce(values)) / values.size
        deviation = values - block_mean
        block_squares = float(np.add.reduce(deviation * deviation))
        merged = size + values.size
        delta = block_mean - mean
        mean += delta * values.size / merged
        squares += block_squares + delta * delta * size * values.size / merged
        size = merged
    return {"mean": mean * divisor, "std": math.sqrt(squares / size) * divisor}


def _mean_and_std(values: Any) -> tuple[float, float]:
    """The mean and the (population) standard deviation of a 1-D float64 array, as numpy computes them."""
    import numpy as np

    mean = np.add.reduce(values) / values.size
    deviation = values - mean
    return float(mean), math.sqrt(np.add.reduce(deviation * deviation) / values.size)
