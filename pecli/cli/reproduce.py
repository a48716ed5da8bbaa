"""The command line that writes an identified table again: a :class:`~pecli.analysis.identify.Recipe` spelled as flags.

The core's recipe names a scheme, a preset and Python parameters; only the CLI knows their flags.

>>> from pecli.analysis.identify.result import Candidate, generate_recipe
>>> from pecli.schemes.catalog import SCHEMES
>>> found = Candidate("rope", {**SCHEMES["rope"].defaults, "part": "cos", "base": 5e5})
>>> command_line(generate_recipe(found, length=8, dim=4))
'pecli generate rope --base 500000 --part cos --d 4 --len 8 -o pe.npy'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pecli.analysis.identify.result import Identification, Recipe
from pecli.cli.options import flag_for
from pecli.schemes.params import PARAMS

__all__ = ["command_line", "reproduce"]


def reproduce(found: Identification) -> str:
    """The command line that writes ``found``'s best candidate again (``pecli identify``'s "reproduce:")."""
    return command_line(found.recipe())


def command_line(recipe: Recipe) -> str:
    """``recipe`` as the ``pecli generate`` (or ``pecli timestep``) command that carries it out.

    >>> command_line(Recipe("timestep", "timestep", "diffusers", {}, dim=8, output="t.npy", timesteps=(0.5, 3.0)))
    'pecli timestep 0.5 3.0 --dim 8 --preset diffusers -o t.npy'
    >>> command_line(Recipe("timestep", "timestep", "ldm", {}, dim=8, output="t.npy", timesteps=(-5.0, 3.0)))
    'pecli timestep --dim 8 --preset ldm -o t.npy -- -5.0 3.0'
    """
    times: list[str] = []
    if recipe.timesteps is not None:  # rows of timestep embeddings: pecli timestep
        times = _timestep_arguments(recipe.timesteps or ())
        parts = ["pecli", "timestep", *times, "--dim", str(recipe.dim)]  # timestep's own --dim, not generate's --d
        parts += ["--preset", recipe.preset] if recipe.preset else _flags(recipe.params)
    else:
        parts = ["pecli", "generate"]
        if recipe.preset:
            parts += ["--preset", recipe.preset]
        if recipe.names_scheme:
            parts.append(recipe.scheme)
        parts += _flags(recipe.params)
        sizes = (("dim", recipe.dim), ("length", recipe.length))
        parts += [text for name, size in sizes if size is not None for text in (flag_for(name), str(size))]
    parts += [flag_for("dtype"), recipe.dtype] if recipe.dtype != "float32" else []
    parts += [flag_for("output"), recipe.output]
    if times and times[0] != flag_for("range") and any(time.startswith("-") for time in times):
        # a word starting with '-' is read as an option: the timesteps go last, after '--'
        parts = [*parts[:2], *parts[2 + len(times) :], "--", *times]
    return " ".join(parts)


def _timestep_arguments(times: tuple[float, ...]) -> list[str]:
    """``pecli timestep``'s arguments: ``--range START:STOP:STEP`` for evenly spaced integers, else the values."""
    from pecli.analysis.identify.timesteps import timestep_range

    span = timestep_range(np.array(times, dtype=np.float64))
    if span is not None:
        return [flag_for("range"), ":".join(map(str, span))]
    return [repr(float(time)) for time in times]


def _number(value: float) -> str:
    """A float as the command line should spell it: 500000, 1, 12345.5 (exact, shortest)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _flags(params: Mapping[str, Any]) -> list[str]:
    """The flags that set ``params``."""
    flags = []
    for name, value in params.items():
        param = PARAMS[name]
        if param.kind is bool:
            flags.append(param.flag if value else param.negative_flag or "")
        else:
            flags += [param.flag, _number(value) if param.kind in (int, float) else str(value)]
    return flags
