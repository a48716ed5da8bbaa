"""What identify found: a :class:`Candidate`, the :class:`Identification`, and the :class:`Recipe` that reproduces it.

A recipe names the scheme, preset, parameters and sizes, never a flag: ``pecli identify`` spells it
as a command line (:func:`pecli.cli.reproduce.command_line`).

>>> from pecli.schemes.catalog import SCHEMES
>>> print(generate_recipe(Candidate("rope", {**SCHEMES["rope"].defaults, "part": "cos", "base": 5e5}), length=8, dim=4))
rope(base=500000.0, part='cos', dim=4, length=8) -> pe.npy
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pecli.schemes.catalog import SCHEMES, resolve
from pecli.schemes.presets import preset_schemes

__all__ = ["Candidate", "Identification", "Recipe", "Undetermined", "generate_recipe", "timestep_recipe"]


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
class Undetermined:
    """What the table cannot tell: a parameter it only bounds, or readings that write it identically.

    The match names one reading; this says which of its parameters the values do not pin down, and why.

    >>> print(Undetermined("base", "any base ≥ 1.2e+05 writes this table within rounding", low=1.2e5).to_json())
    {'parameter': 'base', 'note': 'any base ≥ 1.2e+05 writes this table within rounding', 'low': 120000.0}
    """

    parameter: str  #: what is undetermined ("base", "heads, head", "sections", "timesteps")
    note: str  #: one line: what the table allows and why
    low: float | None = None  #: the least value of ``parameter`` that writes the table (a bound)
    high: float | None = None  #: the largest such value (a bound)
    #: the readings (their parameters) that write the table alike, or the reading refused
    readings: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "note": self.note,
            **({"low": self.low} if self.low is not None else {}),
            **({"high": self.high} if self.high is not None else {}),
            **({"readings": [dict(reading) for reading in self.readings]} if self.readings else {}),
        }


@dataclass(frozen=True)
class Recipe:
    """How to write a table again: the scheme, preset and parameters, sizes, dtype and file; no flags.

    The library describes it (``str``: ``rope(base=500000.0, part='cos', dim=4, length=8) -> pe.npy``);
    the CLI writes it as the ``pecli generate`` / ``pecli timestep`` command line.
    """

    command: str  #: "generate" (a table of a scheme) or "timestep" (rows of timestep embeddings)
    scheme: str
    preset: str | None
    params: Mapping[str, Any]  #: the parameters set beyond the preset's (else the scheme's) defaults
    dim: int | None = None
    length: int | None = None  #: None: the scheme takes no length (a grid sets it, ALiBi's slopes)
    dtype: str = "float32"
    output: str = "pe.npy"  #: the file written: .npy for one tensor, else .safetensors
    timesteps: tuple[float, ...] | None = None  #: the t of each row (``command == "timestep"``)
    names_scheme: bool = True  #: the scheme is named (not implied by the preset)

    def __str__(self) -> str:
        preset = [f"preset={self.preset!r}"] if self.preset else []
        params = [f"{name}={value!r}" for name, value in self.params.items()]
        sizes = [f"{name}={value}" for name, value in (("dim", self.dim), ("length", self.length)) if value is not None]
        dtype = [f"dtype={self.dtype!r}"] if self.dtype != "float32" else []
        times = [f"timesteps={self.timesteps}"] if self.timesteps is not None else []
        return f"{self.scheme}({', '.join(preset + params + sizes + dtype + times)}) -> {self.output}"


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
    #: the table is query rows query_start … L − 1 of each head's (H, L, L) ALiBi biases (a decoding step's
    #: last q rows, (H, q, L)): pe[:, query_start:, :]
    query_start: int | None = None
    #: the tensors identified together as one table (a RoPE file's ``cos`` and ``sin``); empty for one tensor
    parts: tuple[str, ...] = ()
    #: why no answer can be given whatever the values (too few rows to tell the frequencies apart)
    reason: str | None = None
    #: no match, but the table read the other way round (d × len) matches: this candidate
    transposed: Candidate | None = None
    #: no match because the closest candidate, within identify's noise, does not regenerate the table
    #: within compare's tolerance (entry by entry): its command would not reproduce it
    unverified: bool = False
    #: the same values within rounding read as a grid of one row or column (a 1 × W rope2d table): a single
    #: grid row cannot tell it from the 1-D table matched
    also: Candidate | None = None
    #: what this table cannot tell: a parameter it only bounds, readings that write it identically, a split
    #: assumed, a reading refused
    undetermined: tuple[Undetermined, ...] = ()

    @property
    def matched(self) -> bool:
        return self.level != "none"

    def recipe(self) -> Recipe:
        """How to write the best candidate's table again (the CLI spells it as a command line)."""
        return self._recipe_for(self.best)

    def _recipe_for(self, candidate: Candidate) -> Recipe:
        dtype = self.reproduce_dtype or self.dtype
        if candidate.timesteps is not None:
            return timestep_recipe(candidate, dim=self.shape[-1], dtype=dtype)
        # a query × key bias: (H, L, L), (H, 1, L) or (L, L) biases, or (H,) slopes: no embedding dimension
        if not SCHEMES[candidate.scheme].takes_dim:
            length = None if candidate.params.get("part") == "slopes" else self.shape[-1]
            return generate_recipe(candidate, length=length, dim=None, dtype=dtype)
        length = None if "grid" in SCHEMES[candidate.scheme].defaults else self.shape[-2]  # the grid sets it
        tensors = max(1, len(self.parts))
        return generate_recipe(candidate, length=length, dim=self.shape[-1], dtype=dtype, tensors=tensors)

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

    def to_json(self, command: Callable[[Recipe], str] = str) -> dict[str, Any]:
        """The identification as JSON; ``command`` writes each :class:`Recipe` (the CLI: as its command line)."""
        equivalent = self.equivalent()
        if equivalent is not None:
            equivalent_json = {**equivalent.to_json(), "command": command(self._recipe_for(equivalent))}
        return {
            "shape": list(self.shape),
            "dtype": self.dtype,
            "match": self.level,
            "best": self.best.to_json(),
            "command": command(self.recipe()),
            "tolerance": self.tolerance,
            "precision": self.precision,
            "runners_up": [c.to_json() for c in self.runners_up],
            "value_mean": self.value_mean,
            "value_std": self.value_std,
            **({"query_row": self.query_row} if self.query_row is not None else {}),
            **({"query_start": self.query_start} if self.query_start is not None else {}),
            **({"parts": list(self.parts)} if self.parts else {}),
            **({"reason": self.reason} if self.reason else {}),
            **({"unverified": True} if self.unverified else {}),
            **({"undetermined": [entry.to_json() for entry in self.undetermined]} if self.undetermined else {}),
            **({"transposed": self.transposed.to_json()} if self.transposed is not None else {}),
            # the same table described another way (shift 1 at b = shift 0 at b^(h/(h−1))), with its command
            **({"equivalent": equivalent_json} if equivalent is not None else {}),
            # a grid of one row that writes the table within rounding too, with its command
            **(
                {"also": {**self.also.to_json(), "command": command(self._recipe_for(self.also))}}
                if self.also is not None
                else {}
            ),
        }


def _changed(params: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``params`` that differ from ``reference`` (in value or type)."""
    return {
        name: value
        for name, value in params.items()
        if not (value == reference.get(name) and type(value) is type(reference.get(name)))
    }


def _output(dtype: str, stem: str, *, tensors: int = 1) -> str:
    # .npy holds one tensor and no bfloat16
    return f"{stem}.{'safetensors' if dtype == 'bfloat16' or tensors > 1 else 'npy'}"


def generate_recipe(
    candidate: Candidate, *, length: int | None, dim: int | None, dtype: str = "float32", tensors: int = 1
) -> Recipe:
    """How to write ``candidate``'s table with :func:`pecli.encode` (``None``: a size it does not take).

    ``tensors``: how many tensors are written (a RoPE table's cos and sin: 2, to a .safetensors).

    Example:
        >>> found = Candidate("sinusoidal", {**SCHEMES["sinusoidal"].defaults, "base": 5e5})
        >>> print(generate_recipe(found, length=8, dim=4))
        sinusoidal(base=500000.0, dim=4, length=8) -> pe.npy
    """
    if candidate.presets:
        preset = candidate.presets[0]
        reference = resolve(candidate.scheme, preset, {})[1]
        # a preset name several schemes share needs its scheme
        named = preset_schemes(preset) != [candidate.scheme]
    else:
        preset, named, reference = None, True, dict(SCHEMES[candidate.scheme].defaults)
    return Recipe(
        "generate",
        candidate.scheme,
        preset,
        _changed(candidate.params, reference),
        dim=dim,
        length=length,
        dtype=dtype,
        output=_output(dtype, "pe", tensors=tensors),
        names_scheme=named,
    )


def timestep_recipe(candidate: Candidate, *, dim: int, dtype: str = "float32") -> Recipe:
    """How to embed ``candidate``'s timesteps (:func:`pecli.timestep_embedding`; a preset when one has its parameters).

    Example:
        >>> diffusers = {**SCHEMES["timestep"].defaults, "flip_sin_to_cos": False, "freq_shift": 1.0}
        >>> found = Candidate("timestep", diffusers, presets=("diffusers",), timesteps=(0.5, 3.0))
        >>> print(timestep_recipe(found, dim=8))
        timestep(preset='diffusers', dim=8, timesteps=(0.5, 3.0)) -> t.npy
    """
    defaults = dict(SCHEMES["timestep"].defaults)
    changed = _changed(candidate.params, defaults)
    # a preset when it sets a convention (not for the defaults' arithmetic alone), with what it leaves
    uses_preset = bool(candidate.presets) and any(name != "arithmetic" for name in changed)
    preset = candidate.presets[0] if uses_preset else None
    return Recipe(
        "timestep",
        "timestep",
        preset,
        _changed(candidate.params, resolve("timestep", preset, {})[1]) if preset else changed,
        dim=dim,
        dtype=dtype,
        output=_output(dtype, "t"),
        timesteps=tuple(candidate.timesteps or ()),
        names_scheme=False,
    )


def _same(value: Any, default: Any) -> bool:
    """``value == default`` for parameter values (10000 and 10000.0 alike; lists too)."""
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # arrays and the like
        return False
