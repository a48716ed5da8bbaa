"""CSV and TSV: one line per row, values separated by ``,`` or a tab, at the digits that round-trip.

A value is written with as many significant digits as its dtype needs to be read back exactly
(17 for float64, 9 for float32, 5 for float16). pecli writes text; it reads tables only from the
binary formats.

>>> import numpy as np
>>> b"".join(text_pieces(Tensor.from_array(np.array([[0.1, 2.0]], dtype=np.float32)), ","))
b'0.100000001,2\\n'
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator

import numpy as np

from pecli.io.tensor import Tensor

__all__ = ["text_pieces"]

_VALUE_FORMAT = {"float64": "%.17g", "float32": "%.9g", "float16": "%.5g"}

#: values formatted per text piece: text is ~10× slower to produce than binary, so a reader such
#: as ``| head -1`` gets its first line after a few milliseconds, not after a whole 32 MiB chunk
_TEXT_PIECE_VALUES = 1 << 16


def text_pieces(tensor: Tensor, delimiter: str) -> Iterator[bytes]:
    """Lines of ``tensor``'s values (one row each, 2-D and wider rows flattened), a few thousand per piece."""
    template = _VALUE_FORMAT.get(tensor.dtype, "%.17g")
    for chunk in tensor.chunks():
        chunk = np.asarray(chunk)
        chunk = chunk.reshape(chunk.shape[0], math.prod(chunk.shape[1:])) if chunk.ndim > 1 else chunk[:, None]
        step = max(1, _TEXT_PIECE_VALUES // max(1, chunk.shape[1]))
        for start in range(0, chunk.shape[0], step):
            buffer = io.BytesIO()
            np.savetxt(buffer, chunk[start : start + step], fmt=template, delimiter=delimiter)
            yield buffer.getvalue()
