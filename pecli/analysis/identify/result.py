"""What identify found: a :class:`Candidate`, the :class:`Identification`, and the command that reproduces it.

>>> from pecli.schemes.catalog import SCHEMES
>>> generate_command(Candidate("rope", {**SCHEMES["rope"].defaults, "part": "cos", "base": 5e5}), length=8, dim=4)
'pecli generate rope --base 500000 --part cos --d 4 --len 8 -o pe.npy'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli.schemes.catalog import SCHEMES, resolve
from pecli.schemes.params import PARAMS
from pecli.schemes.presets import preset_schemes

__all__ = ["Candidate", "Identification", "generate_command", "timestep_command"]


@dataclass(frozen=True)
class Candidate:
    """A scheme with full parameters, and its largest absolute error against the table."""

    scheme: str
    params: Mapping[str, Any]
    max_error: float = math.inf
    presets: tuple[str, ...] = ()  #: presets with exactly these parameters
    timesteps: tuple[float, ...] | None = None  #: the t of each row (timestep rows at arbitrary t)

    def describe(self) -> str:
        """``scheme (preset …): param=value …``, listing the parameters that differ from the scheme's defaults.

        >>> Candidate("rope", {"base": 500000.0, "part": "cos", "factor": None, "offset": 0}).describe()
        'rope: base=500000.0 part=cos'
        >>> Candidate("sinusoidal", {"base": 10000.0, "offset": 0}).describe()
        'sinusoidal: its defaults'
        """
        defaults = SCHEMES[self.scheme].defaults
        presets = f" (preset {', '.join(self.presets)})" if self.presets else ""
        params = " ".join(
            f"{name}={value}"
            for name, value in self.params.items()
            if value is not None and not (name in defaults and _same(value, defaults[name]))
        )
        times = f" at {len(self.timesteps)} timesteps" if self.timesteps is not None else ""
        return f"{self.scheme}{presets}{times}: " + (params or "its defaults")

    def to_json(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "params": dict(self.params),
            "presets": list(self.presets),
            "max_error": self.max_error,
            **({"timesteps": list(self.timesteps)} if self.timesteps is not None else {}),
        }


@dataclass(frozen=True)
class Identification:
    """The outcome of :func:`pecli.analysis.identify.identify_table`: the closest candidate and how well it matches."""

    shape: tuple[int, ...]
    dtype: str  #: the dtype of the table as given (the file's)
    best: Candidate
    level: str  #: "exact", "approximate" or "none"
    tolerance: float  #: the largest error of an exact match (rounding of ``precision``)
    precision: str = "float32"  #: the coarsest dtype holding every value exactly (see value_precision)
    runners_up: list[Candidate] = field(default_factory=list)
    value_mean: float = 0.0
    value_std: float = 0.0
    reproduce_dtype: str = ""  #: the dtype the reproduce command writes (the values' precision when coarser)
    gaussian: bool = False  #: no match, and the values look like N(mean, std²) draws (a random or learned table)
    #: the table is this query row of each head's ALiBi biases (BLOOM's, MPT's (H, 1, L)): pe[:, q, :]
    query_row: int | None = None
    #: the tensors identified together as one table (a RoPE file's ``cos`` and ``sin``); empty for one tensor
    parts: tuple[str, ...] = ()

    @property
    def matched(self) -> bool:
        return self.level != "none"

    def command(self) -> str:
        """The ``pecli generate`` command that reproduces the best candidate's table."""
        return self._command_for(self.best)

    def _command_for(self, candidate: Candidate) -> str:
        dtype = self.reproduce_dtype or self.dtype
        if candidate.timesteps is not None:
            return timestep_command(candidate, dim=self.shape[-1], dtype=dtype)
        # a query × key bias: (H, L, L), (H, 1, L) or (L, L) biases, or (H,) slopes: no embedding dimension
        if SCHEMES[candidate.scheme].axes == "query-key":
            length = None if candidate.params.get("part") == "slopes" else self.shape[-1]
            return generate_command(candidate, length=length, dim=None, dtype=dtype)
        length = None if "grid" in SCHEMES[candidate.scheme].defaults else self.shape[-2]  # the grid sets it
        tensors = max(1, len(self.parts))
        return generate_command(candidate, length=length, dim=self.shape[-1], dtype=dtype, tensors=tensors)

    def equivalent(self) -> Candidate | None:
        """The other description of the same table: a sinusoid's frequency shift 1 at base b is shift 0
        at base b^(h/(h−1)), h = d // 2 (both give ω_i = b^(−i/(h−1))); None for any other match.

        >>> shifted = Candidate("sinusoidal", {**SCHEMES["sinusoidal"].defaults, "layout": "split", "freq_shift": 1.0})
        >>> found = Identification(shape=(8, 64), dtype="float32", best=shifted, level="exact", tolerance=0.0)
        >>> found.equivalent().describe()
        'sinusoidal: base=13459.603241553643 layout=split freq_shift=0.0'
        """
        params = self.best.params
        half = self.shape[-1] // 2
        sinusoid = SCHEMES[self.best.scheme].search == "sinusoids"
        if not sinusoid or params.get("freq_shift") != 1.0 or half < 2 or not self.matched:
            return None
        base = params["base"] ** (half / (half - 1))
        return Candidate(self.best.scheme, {**params, "freq_shift": 0.0, "base": base}, self.best.max_error)

    def to_json(self) -> dict[str, Any]:
        equivalent = self.equivalent()
        if equivalent is not None:
            equivalent_json = {**equivalent.to_json(), "command": self._command_for(equivalent)}
        return {
            "shape": list(self.shape),
            "dtype": self.dtype,
            "match": self.level,
            "best": self.best.to_json(),
            "command": self.command(),
            "tolerance": self.tolerance,
            "precision": self.precision,
            "runners_up": [c.to_json() for c in self.runners_up],
            "value_mean": self.value_mean,
            "value_std": self.value_std,
            **({"query_row": self.query_row} if self.query_row is not None else {}),
            **({"parts": list(self.parts)} if self.parts else {}),
            # the same table described another way (shift 1 at b = shift 0 at b^(h/(h−1))), with its command
            **({"equivalent": equivalent_json} if equivalent is not None else {}),
        }


def _number(value: float) -> str:
    """A float as the command line should spell it: 500000, 1, 12345.5 (exact, shortest)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _flags(params: Mapping[str, Any], reference: Mapping[str, Any]) -> list[str]:
    """The flags that set ``params`` where they differ from ``reference``."""
    flags = []
    for name, value in params.items():
        if value == reference.get(name) and type(value) is type(reference.get(name)):
            continue
        param = PARAMS[name]
        if param.kind is bool:
            flags.append(param.flag if value else param.negative_flag or "")
        else:
            flags += [param.flag, _number(value) if param.kind in (int, float) else str(value)]
    return flags


def _output(dtype: str, stem: str, *, tensors: int = 1) -> list[str]:
    # .npy holds one tensor and no bfloat16
    suffix = "safetensors" if dtype == "bfloat16" or tensors > 1 else "npy"
    return (["--dtype", dtype] if dtype != "float32" else []) + ["-o", f"{stem}.{suffix}"]


def generate_command(
    candidate: Candidate, *, length: int | None, dim: int | None, dtype: str = "float32", tensors: int = 1
) -> str:
    """The ``pecli generate`` command line that writes ``candidate``'s table (``None``: a size it does not take).

    ``tensors``: how many tensors the command writes (a RoPE table's cos and sin: 2, to a .safetensors).

    Example:
        >>> generate_command(Candidate("sinusoidal", {**SCHEMES["sinusoidal"].defaults, "base": 5e5}), length=8, dim=4)
        'pecli generate sinusoidal --base 500000 --d 4 --len 8 -o pe.npy'
    """
    parts = ["pecli", "generate"]
    if candidate.presets:
        parts += ["--preset", candidate.presets[0]]
        if preset_schemes(candidate.presets[0]) != [candidate.scheme]:
            parts.append(candidate.scheme)  # a preset name several schemes share needs its scheme
        reference = resolve(candidate.scheme, candidate.presets[0], {})[1]
    else:
        parts.append(candidate.scheme)
        reference = dict(SCHEMES[candidate.scheme].defaults)
    parts += _flags(candidate.params, reference)
    parts += (["--d", str(dim)] if dim is not None else []) + (["--len", str(length)] if length is not None else [])
    return " ".join(parts + _output(dtype, "pe", tensors=tensors))


def timestep_command(candidate: Candidate, *, dim: int, dtype: str = "float32") -> str:
    """The ``pecli timestep`` command line that embeds ``candidate``'s timesteps (a preset when one has its parameters).

    Example:
        >>> diffusers = {**SCHEMES["timestep"].defaults, "flip_sin_to_cos": False, "freq_shift": 1.0}
        >>> timestep_command(Candidate("timestep", diffusers, presets=("diffusers",), timesteps=(0.5, 3.0)), dim=8)
        'pecli timestep 0.5 3.0 --dim 8 --preset diffusers -o t.npy'
    """
    from pecli.analysis.identify.timesteps import timestep_arguments

    parts = ["pecli", "timestep", *timestep_arguments(np.array(candidate.timesteps)), "--dim", str(dim)]
    defaults = dict(SCHEMES["timestep"].defaults)
    if candidate.presets and dict(candidate.params) != defaults:
        parts += ["--preset", candidate.presets[0]]
    else:
        parts += _flags(candidate.params, defaults)
    return " ".join(parts + _output(dtype, "t"))


def _same(value: Any, default: Any) -> bool:
    """``value == default`` for parameter values (10000 and 10000.0 alike; lists too)."""
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # arrays and the like
        return False
