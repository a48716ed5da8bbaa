"""pecli: generate and inspect positional encodings.

The encoding core is pure numpy and imported lazily, so ``import pecli`` (and ``pecli --help``)
stay instant; torch is optional and used only by :mod:`pecli.torch` and ``.pt`` files. The inspecting
half is here too (:mod:`pecli.api`): :func:`identify`, :func:`compare`, :func:`from_config` and
:func:`figure` return the results the CLI prints.

>>> import pecli
>>> pecli.encode("sinusoidal", 2048, 512).shape
(2048, 512)
>>> float(pecli.sinusoidal_table(2, 4, dtype="float64")[1, 0].round(6))
0.841471
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> module that defines it (imported on first access)
_LAZY = {
    "encode": "pecli.schemes",
    "iter_row_chunks": "pecli.schemes",
    "sinusoidal_table": "pecli.schemes.sinusoidal",
    "learned_table": "pecli.schemes.learned",
    "count_table": "pecli.schemes.indexing",
    "count_normalized_table": "pecli.schemes.indexing",
    "binary_table": "pecli.schemes.indexing",
    "binary_sine_table": "pecli.schemes.indexing",
    "memn2n_table": "pecli.schemes.indexing",
    "rope_table": "pecli.schemes.rope",
    "apply_rotary": "pecli.schemes.rope",
    "alibi_table": "pecli.schemes.alibi",
    "sincos2d_table": "pecli.schemes.grid",
    "coordconv_table": "pecli.schemes.grid",
    "fourier_table": "pecli.schemes.fourier",
    "gaussian_table": "pecli.schemes.fourier",
    "timestep_embedding": "pecli.schemes.timestep",
    "timestep_table": "pecli.schemes.timestep",
    "identify": "pecli.api",
    "compare": "pecli.api",
    "from_config": "pecli.api",
    "figure": "pecli.api",
    "SCHEMES": "pecli.schemes.catalog",
    "PRESETS": "pecli.schemes.presets",
    "PecliError": "pecli.errors",
    "ParameterError": "pecli.errors",
    "TableFileError": "pecli.errors",
    "OutputError": "pecli.errors",
}

#: submodules reachable as attributes of ``pecli`` (imported on first access): ``pecli.testing.assert_…``
_SUBMODULES = ("testing",)

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"pecli.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pecli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
