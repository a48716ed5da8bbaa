"""Lazy tables: a table known by its shape whose values are computed (or read from a file) only when a part of
it is taken, so a view of that part costs that part alone.

* :class:`RowWindow`: a 2-D table whose window ``table[a:b, c:d]`` is its rows a..b−1, computed by a scheme's
  spec (:meth:`pecli.schemes.spec.TableSpec.rows`) or read in place (:class:`pecli.io.rows.RowReader`);
* :class:`LazySlices`: a computed 3-D table's first slices (ALiBi's heads), each computed when it is read.

:mod:`pecli.sources` makes them from a source (:func:`pecli.sources.resolve_windows`, ``first_slices``).

>>> import numpy as np
>>> def rows_of(rows): return np.arange(rows.start, rows.stop, dtype=np.float64)[:, None] * np.ones(3)
>>> window = RowWindow((10**12, 3), "float64", rows_of, "the table")
>>> window[5:7, 1:].tolist()
[[5.0, 5.0], [6.0, 6.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["PLAIN_HINTS", "LazySlice", "LazySlices", "RowWindow", "WindowHints"]


@dataclass(frozen=True)
class WindowHints:
    """The fixes a refused window names, in the caller's words (the CLI's name its ``--rows``)."""

    narrower: str = "take fewer rows"  #: when the window asked for is too large
    few_rows: str = "take a window of its rows"  #: when the whole table is asked for and too large


#: the hints of a caller that names none
PLAIN_HINTS = WindowHints()


class RowWindow:
    """A 2-D table known by its shape whose rows are computed (or read) only when a window of them is taken.

    ``window[a:b, c:d]`` computes rows a..b−1 alone, ``np.asarray`` all of them; either is refused first
    when it would not fit in memory (``what`` names the table there; ``smaller``, a fix of the source's
    own, such as a smaller ``{length}``, comes before the hints' fewer rows).

    >>> import numpy as np
    >>> from pecli.errors import ParameterError
    >>> window = RowWindow((10**12, 3), "float64", lambda rows: np.zeros((len(rows), 3)), "the table")
    >>> try:
    ...     np.asarray(window)
    ... except ParameterError as error:
    ...     print(error.message.split(",")[0], "|", error.hint)
    the 1000000000000 × 3 table would take 43.7 TiB | take a window of its rows
    """

    ndim = 2

    def __init__(self, shape: tuple[int, ...], dtype: Any, rows_of: Callable[[range], Any], what: str, *,
                 hints: WindowHints = PLAIN_HINTS, smaller: str | None = None) -> None:  # fmt: skip
        import numpy as np

        self.shape, self.dtype = (int(shape[0]), int(shape[1])), np.dtype(dtype)
        self.rows_of, self.what, self.hints, self.smaller = rows_of, what, hints, smaller

    @classmethod
    def of_file(cls, reader: Any, what: str, *, hints: WindowHints = PLAIN_HINTS) -> RowWindow:
        """The 2-D tensor a :class:`~pecli.io.rows.RowReader` locates, each window read in place (one seek).

        >>> import os, tempfile, numpy as np
        >>> from pecli.io.rows import open_rows
        >>> path = os.path.join(tempfile.mkdtemp(), "pe.npy")
        >>> np.save(path, np.arange(12.0).reshape(4, 3))
        >>> RowWindow.of_file(open_rows(path), "the table in pe.npy")[2:3, :2].tolist()
        [[6.0, 7.0]]
        """
        import dataclasses

        import numpy as np

        itemsize = 2 if reader.dtype == "bfloat16" else np.dtype(reader.dtype).itemsize
        cols = reader.shape[1]

        def rows_of(rows: range) -> Any:
            start = reader.offset + rows.start * cols * itemsize
            window = dataclasses.replace(reader, offset=start, shape=(len(rows), cols))
            return next(window.chunks(len(rows)))

        held = "float32" if reader.dtype == "bfloat16" else reader.dtype  # chunks widen bfloat16
        return cls(reader.shape, held, rows_of, what, hints=hints)

    def __getitem__(self, key: Any) -> Any:
        import numpy as np

        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice):
            rows = range(self.shape[0])[key[0]]
            if rows.step == 1:
                shown = self._rows(rows, f"rows {rows.start}:{rows.stop} of {self.what}", self.hints.narrower)
                return shown[:, key[1]]
        return np.asarray(self)[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        hint = ", or ".join(fix for fix in (self.smaller, self.hints.few_rows) if fix)
        values = self._rows(range(self.shape[0]), f"{self.shape[0]} × {self.shape[1]} {self.what.removeprefix('the ')}",
                            hint)  # fmt: skip
        return values if dtype is None else values.astype(dtype, copy=False)

    def _rows(self, rows: range, what: str, hint: str) -> Any:
        import numpy as np

        from pecli.memory import check_fits_in_memory

        # computed in float64 before the dtype's rounding: room for both
        check_fits_in_memory((8 + self.dtype.itemsize) * len(rows) * self.shape[1], what=what, hint=hint)
        return np.asarray(self.rows_of(rows))


class LazySlices:
    """The first ``count`` slices (axis 0) of a computed 3-D table, each computed when it is read.

    ``stack[i]`` is a :class:`LazySlice`; ``np.asarray`` of either computes the values (of a slice:
    that slice alone, so a view that draws heads one at a time never holds them all).

    >>> import numpy as np
    >>> from pecli.schemes.spec import TableSpec
    >>> spec = TableSpec.resolve("alibi", None, {"heads": 4}, length=3, dim=None, dtype="float32", name="pe")
    >>> stack = LazySlices(spec.single(), 2)
    >>> stack.shape, stack[1].shape, np.array_equal(np.asarray(stack[1]), spec.array()[1])
    ((2, 3, 3), (3, 3), True)
    """

    ndim = 3

    def __init__(self, spec: Any, count: int) -> None:
        import math

        from pecli.memory import check_fits_in_memory

        self.spec = spec
        self.shape = (count, *tuple(spec.shape)[1:])
        # a slice is computed whole, in float64, when it is read: refused before any work if it cannot fit
        check_fits_in_memory(
            2 * 8 * math.prod(self.shape[1:]),
            what=f"{' × '.join(map(str, self.shape[1:]))} slice of the table",
            hint="use a smaller {length}",
        )
        import numpy as np

        self.dtype = np.dtype(spec.dtype)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> Any:
        import numpy as np

        if isinstance(index, (int, np.integer)) and -self.shape[0] <= index < self.shape[0]:
            return LazySlice(self.spec, int(index) % self.shape[0], self.shape[1:], self.dtype)
        return np.asarray(self)[index]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        values = np.asarray(self.spec.rows(range(self.shape[0])))
        return values if dtype is None else values.astype(dtype, copy=False)


class LazySlice:
    """One slice of a :class:`LazySlices` stack (a 2-D table), and a window of it (``slice[a:b, c:d]``),
    computed by ``np.asarray``; its ``shape`` and ``dtype`` are known without computing it."""

    ndim = 2

    def __init__(self, spec: Any, index: int, shape: tuple[int, ...], dtype: Any,
                 window: tuple[slice, slice] = (slice(None), slice(None))) -> None:  # fmt: skip
        self.spec, self.index, self.dtype, self.window = spec, index, dtype, window
        self.full = tuple(shape)
        rows, cols = (range(size)[part] for size, part in zip(self.full, window, strict=True))
        self.shape = (len(rows), len(cols))

    def __getitem__(self, key: Any) -> Any:
        import numpy as np

        plain = isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, slice) and k.step is None for k in key)
        if plain and self.window == (slice(None), slice(None)):
            return LazySlice(self.spec, self.index, self.full, self.dtype, key)
        return np.asarray(self)[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        values = np.asarray(self.spec.rows(range(self.index, self.index + 1)))[0][self.window]
        return values if dtype is None else values.astype(dtype, copy=False)
