"""Diffusion timestep embeddings: latent/guided-diffusion's ``timestep_embedding``, diffusers' and DDPM's.

One formula covers them all (h = d // 2, S the frequency shift)::

    ω_i = max_period^(−i/(h − S)),  args = scale · t · ω,  E[t] = [cos(args) | sin(args)]

with [sin | cos] when ``flip_sin_to_cos`` is off, and a zero column appended for odd ``d``.
guided-diffusion / latent-diffusion is flip on, S = 0 (openai/guided-diffusion
guided_diffusion/nn.py, CompVis/latent-diffusion ldm/modules/diffusionmodules/util.py);
diffusers' ``get_timestep_embedding`` defaults to flip off, S = 1 (huggingface/diffusers
src/diffusers/models/embeddings.py), as does DDPM (hojonathanho/diffusion diffusion_tf/nn.py),
but diffusers' UNets call it with flip on and S = 0, i.e. the latent-diffusion convention.

Timesteps may be fractional (continuous-time models), so angles are ``t·ω`` in float64 and the
table is rounded once at the end: rounding t first would move the phase (bfloat16 stores
t = 998.39 as 1000).

>>> timestep_embedding([1.0], 4, dtype="float64").round(10).tolist()
[[0.5403023059, 0.9999500004, 0.8414709848, 0.0099998333]]
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.dtypes import numpy_dtype, round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import fill_sin_cos, geometric_frequencies, place_pairs, position_phasors, sin_cos_table
from pecli.schemes.arithmetic import angle_sin_cos, check_arithmetic, exponential_frequencies32
from pecli.schemes.checks import check_table_size, finite, finite_above, positive_int, row_range
from pecli.schemes.spec import TableSpec
from pecli.text import literal_repr

__all__ = [
    "TimestepList",
    "TimestepRange",
    "TimestepSpec",
    "number_text",
    "parse_range",
    "parse_timesteps",
    "timestep_embedding",
    "timestep_frequencies",
    "timestep_table",
]


def timestep_frequencies(dim: int, max_period: float, freq_shift: float, scale: float) -> np.ndarray:
    """``scale · ω``: the angle per unit of t (float64, d // 2 of them), after checking every parameter.

    >>> timestep_frequencies(4, 10000.0, 0.0, 2.0).tolist()
    [2.0, 0.02]
    """
    max_period = finite_above("max_period", max_period, 1.0, example="10000")
    freq_shift = finite("freq_shift", freq_shift, example="0")
    scale = finite("scale", scale, example="1")
    if dim // 2 and dim // 2 - freq_shift <= 0:
        # diffusers divides by half_dim − downscale_freq_shift unchecked: NaN (0/0) or growing frequencies.
        # d = 1 has no frequency to divide: diffusers and latent-diffusion return the zero padding column.
        raise ParameterError(
            f"{{dim={dim}}} with {{freq_shift={freq_shift:g}}} gives d // 2 − shift = {dim // 2 - freq_shift:g} ≤ 0, "
            "which divides the exponent by zero or flips its sign (diffusers silently returns NaN)",
            hint=f"use {{dim={2 * (math.floor(freq_shift) + 1)}}} or more, or a smaller {{freq_shift}}",
        )
    return scale * geometric_frequencies(dim, max_period, freq_shift)


def _embed(phasors: np.ndarray, dim: int, dtype: str, flip_sin_to_cos: bool) -> np.ndarray:
    return sin_cos_table(phasors, dim, dtype, layout="split", cos_first=bool(flip_sin_to_cos))


def timestep_embedding(
    timesteps: Iterable[float],
    dim: int,
    *,
    max_period: float = 10000.0,
    flip_sin_to_cos: bool = True,
    freq_shift: float = 0.0,
    scale: float = 1.0,
    repeat_only: bool = False,
    dtype: str = "float32",
    arithmetic: str | None = None,
) -> np.ndarray:
    """Embeddings of arbitrary real timesteps, shape ``(len(timesteps), dim)``.

    The defaults are latent/guided-diffusion's ``timestep_embedding`` (and diffusers' UNets);
    ``flip_sin_to_cos=False, freq_shift=1`` is diffusers' ``get_timestep_embedding`` default.

    Args:
        timesteps: finite real numbers (integers or fractions).
        dim: embedding dimension; odd ``dim`` appends a zero column.
        max_period: the frequency base, > 1.
        flip_sin_to_cos: [cos | sin] (True) or [sin | cos] (False).
        freq_shift: ``S`` in ω_i = max_period^(−i/(h − S)); needs h − S > 0.
        scale: multiplies the angles (diffusers' ``scale``).
        repeat_only: return t repeated ``dim`` times instead (latent-diffusion's ``repeat_only``).
        dtype: ``float32``, ``float64``, ``float16`` or ``bfloat16``; angles are float64.
        arithmetic: ``float64`` (None: the exact table), or the precision a library computes in
            (``float32``: diffusers' order of operations; ``float16``/``bfloat16``: the timesteps held
            in that dtype first, as ``timesteps.half()`` does).

    Returns:
        The table, rounded once from float64 to ``dtype``.

    Example:
        >>> timestep_embedding([0.5], 2, flip_sin_to_cos=False, dtype="float64").round(6).tolist()
        [[0.479426, 0.877583]]
        >>> timestep_embedding([998.39], 3, repeat_only=True, dtype="float64").tolist()
        [[998.39, 998.39, 998.39]]
    """
    dim = positive_int("dim", dim)
    if isinstance(timesteps, (str, bytes)):  # list("12") is ["1", "2"]: two timesteps read from one string
        raise ParameterError(
            f"timesteps must be a 1-d sequence of real numbers, got the string {_shown(timesteps)}",
            hint="pass e.g. timesteps=[0, 250, 999]",
        )
    try:
        given = np.asarray(list(timesteps) if not isinstance(timesteps, np.ndarray) else timesteps)
        times = given.astype(np.float64) if given.dtype.kind != "c" else given
    except (TypeError, ValueError):
        raise ParameterError(
            f"timesteps must be a 1-d sequence of real numbers, got {_shown(timesteps)}",
            hint="pass e.g. timesteps=[0, 250, 999]",
        ) from None
    if times.dtype.kind == "c":  # refused by name, not cast with numpy's ComplexWarning
        raise ParameterError(
            f"timesteps must be a 1-d sequence of real numbers, got dtype {times.dtype}",
            hint="pass e.g. timesteps=[0, 250, 999] (np.real(t) if the imaginary parts are 0)",
        )
    if times.ndim != 1:
        raise ParameterError(f"timesteps must be a 1-d sequence, got shape {times.shape}", hint="flatten them")
    bad = np.flatnonzero(~np.isfinite(times))
    if len(bad):
        raise ParameterError(
            f"timestep {times[bad[0]]} (index {bad[0]}) is not finite",
            hint="every t must be a finite number",
        )
    check_table_size(len(times), dim, hint="use a smaller {dim} or fewer timesteps")
    if repeat_only:  # latent-diffusion: repeat(timesteps, "b -> b d", d=dim); no frequencies at all
        return round_to(np.repeat(times[:, None], dim, axis=1), dtype)
    freqs = timestep_frequencies(dim, max_period, freq_shift, scale)  # checks every parameter, in any arithmetic
    arithmetic = check_arithmetic(arithmetic)
    if arithmetic != "float64":
        return _in_arithmetic(times, dim, max_period, freq_shift, scale, flip_sin_to_cos, arithmetic, dtype)
    return _embed(position_phasors(times, freqs), dim, dtype, flip_sin_to_cos)


def _shown(value: object) -> str:
    """``value`` for a message, cut to one short line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _in_arithmetic(
    times: np.ndarray,
    dim: int,
    max_period: float,
    freq_shift: float,
    scale: float,
    flip_sin_to_cos: bool,
    arithmetic: str,
    dtype: str,
) -> np.ndarray:
    """diffusers' get_timestep_embedding in float32, the timesteps held in ``arithmetic`` first."""
    if arithmetic == "float16" and len(times):
        peak = float(np.abs(times).max())
        if peak >= _FLOAT16_OVERFLOW:  # float16 rounds it to inf: every angle of its row would be NaN
            raise ParameterError(
                f"timestep {peak:g} overflows float16 (its largest is 65504), in which {{arithmetic=float16}} holds t",
                hint="use {arithmetic=float32} or {arithmetic=bfloat16}, or timesteps below 65504",
            )
    half = dim // 2
    freqs32 = exponential_frequencies32(half, math.log(max_period), half - freq_shift, order="diffusers")
    _, cos, sin = angle_sin_cos(times, freqs32, arithmetic, product_scale=scale)
    wide = np.zeros((len(times), dim))  # an odd dim's last column stays 0, as diffusers pads it
    place_pairs(wide[:, : 2 * half], cos if flip_sin_to_cos else sin, sin if flip_sin_to_cos else cos, layout="split")
    return round_to(wide, dtype)


#: the smallest magnitude float16 rounds to inf (65504 + half its last step of 32)
_FLOAT16_OVERFLOW = 65520.0


def timestep_table(
    length: int,
    dim: int,
    *,
    max_period: float = 10000.0,
    flip_sin_to_cos: bool = True,
    freq_shift: float = 0.0,
    scale: float = 1.0,
    repeat_only: bool = False,
    dtype: str = "float32",
    rows: range | None = None,
    arithmetic: str | None = None,
) -> np.ndarray:
    """The ``timestep`` scheme: row ``p`` embeds t = p, for t = 0 … length − 1.

    Integer timesteps use the exact blockwise angle addition of the sinusoidal schemes.

    Example:
        >>> table = timestep_table(1000, 8, dtype="float64")
        >>> bool(np.allclose(table, timestep_embedding(range(1000), 8, dtype="float64"), atol=1e-12, rtol=0))
        True
    """
    length = positive_int("length", length)
    dim = positive_int("dim", dim)
    rows = row_range(rows, length, per_row=dim)
    if repeat_only:
        return timestep_embedding(np.arange(rows.start, rows.stop), dim, repeat_only=True, dtype=dtype)
    freqs = timestep_frequencies(dim, max_period, freq_shift, scale)
    table = np.empty((len(rows), dim), dtype=numpy_dtype(dtype))
    arithmetic = check_arithmetic(arithmetic)
    if arithmetic != "float64":  # diffusers' get_timestep_embedding in float32, timesteps held in `arithmetic`
        positions = np.arange(rows.start, rows.stop, dtype=np.float64)
        return _in_arithmetic(positions, dim, max_period, freq_shift, scale, flip_sin_to_cos, arithmetic, dtype)
    return fill_sin_cos(table, rows.start, freqs, layout="split", cos_first=bool(flip_sin_to_cos))


# -- where the timesteps come from ---------------------------------------------------------------


def number_text(value: float) -> str:
    """Shortest text of a float that reads back exactly; integers without ``.0`` (up to 2**53).

    >>> number_text(250.0), number_text(998.39), number_text(1234567.5), number_text(-1e308)
    ('250', '998.39', '1234567.5', '-1e+308')
    """
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


@dataclass(frozen=True)
class TimestepList:
    """Explicit timesteps (arguments or stdin); recorded in metadata as a JSON list."""

    values: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.values)

    def array(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Timesteps ``start:stop`` as float64."""
        return np.asarray(self.values[start:stop], dtype=np.float64)

    def describe(self) -> str:
        """``[0, 250, 999.5]``; evenly spaced timesteps as the range they are (``seq 0 13999999`` stays short).

        >>> TimestepList((0.0, 250.0, 999.5)).describe(), TimestepList((0.0, 2.0, 4.0, 6.0)).describe()
        ('[0, 250, 999.5]', '0:7:2')
        """
        even = self.as_range()
        return even.describe() if even is not None else "[" + ", ".join(number_text(v) for v in self.values) + "]"

    def as_range(self) -> TimestepRange | None:
        """The :class:`TimestepRange` yielding exactly these timesteps, if they are evenly spaced (three or more)."""
        if len(self.values) < 3 or self.values[1] == self.values[0]:
            return None
        start, step = self.values[0], self.values[1] - self.values[0]
        candidate = TimestepRange(start, start + step * (len(self.values) - 0.5), step)  # STOP half a step past
        if len(candidate) != len(self.values) or not np.array_equal(candidate.array(), self.array()):
            return None
        return candidate


@dataclass(frozen=True)
class TimestepRange:
    """``start + k·step`` for k = 0, 1, … while before ``stop`` (Python slice semantics, real numbers).

    Each value is computed from k directly, so long fractional ranges do not drift.

    >>> r = parse_range("0:1:0.25")
    >>> len(r), r.array().tolist(), r.describe()
    (4, [0.0, 0.25, 0.5, 0.75], '0:1:0.25')
    """

    start: float
    stop: float
    step: float

    def __len__(self) -> int:
        """The count of k whose value, ``start + step·k`` as :meth:`array` computes it, lies before ``stop``:
        the quotient's rounding is checked against the values themselves (0.1:0.4:0.1 holds 0.1, 0.2, 0.3;
        its quotient 3.0000000000000004 alone would count 0.4000000000000001 in).

        >>> len(parse_range("0.1:0.4:0.1")), len(parse_range("0.4:0.1:-0.1")), len(parse_range("0:1000:10"))
        (3, 3, 100)
        """
        count = max(0, math.ceil((self.stop - self.start) / self.step))
        while count and not self._before_stop(count - 1):
            count -= 1
        while count < _MAX_RANGE_LENGTH and self._before_stop(count):
            count += 1
        return count

    def _before_stop(self, k: int) -> bool:
        value = float(np.float64(self.start) + np.float64(self.step) * np.float64(k))  # as array() computes it
        return value < self.stop if self.step > 0 else value > self.stop

    def array(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Timesteps number ``start:stop`` of the range as float64."""
        stop = len(self) if stop is None else min(stop, len(self))
        return self.start + self.step * np.arange(start, stop, dtype=np.float64)

    def describe(self) -> str:
        """``START:STOP:STEP``, as ``--range`` takes it."""
        return ":".join(number_text(v) for v in (self.start, self.stop, self.step))


def _parse_number(token: str, where: str) -> float:
    try:
        value = float(token if token.isascii() else "not ASCII")  # float() also reads '١٢' and fullwidth digits
    except ValueError:
        raise ParameterError(
            f"{literal_repr(token)} {where} is not a number", hint="timesteps are numbers such as 0, 250 or 998.39"
        ) from None
    if not math.isfinite(value):
        raise ParameterError(
            f"timestep {literal_repr(token)} {where} is not finite", hint="every t must be a finite number"
        )
    return value


#: beyond 2^53 steps, start + k·step no longer tells k from k + 1
_MAX_RANGE_LENGTH = float(2**53)


def parse_range(text: str) -> TimestepRange:
    """``START:STOP[:STEP]`` (START defaults to 0, STEP to 1) as a :class:`TimestepRange`.

    >>> parse_range("1000:0:-250").array().tolist()
    [1000.0, 750.0, 500.0, 250.0]
    >>> parse_range("0:10:0")
    Traceback (most recent call last):
    pecli.errors.ParameterError: range step is 0 (use a non-zero step, e.g. range=0:1000:10)
    """
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[1].strip():
        raise ParameterError(f"{{range}} {literal_repr(text)} is not START:STOP:STEP", hint="e.g. {range=0:1000:10}")
    start = _parse_number(parts[0], "in {range}") if parts[0].strip() else 0.0
    stop = _parse_number(parts[1], "in {range}")
    step = _parse_number(parts[2], "in {range}") if len(parts) == 3 and parts[2].strip() else 1.0
    if step == 0:
        raise ParameterError("{range} step is 0", hint="use a non-zero step, e.g. {range=0:1000:10}")
    count = (stop - start) / step
    if not count <= _MAX_RANGE_LENGTH:  # also inf and NaN: 0:1e308:1e-308, 0:1:1e-320
        raise ParameterError(
            f"{{range}} {text} has more than {_MAX_RANGE_LENGTH:.3g} elements, the most a range can hold",
            hint="use a larger STEP or a shorter span",
        )
    timesteps = TimestepRange(start, stop, step)
    if not len(timesteps):
        raise ParameterError(
            f"{{range}} {text} has no elements",
            hint="STOP must lie after START in the direction of STEP, e.g. 0:1000:10 or 999:-1:-1",
        )
    return timesteps


_SEPARATORS = re.compile(r"[\s,]+")


def parse_timesteps(text: str, *, source: str = "stdin") -> TimestepList:
    """Numbers separated by whitespace, commas or newlines; a bad token is named with its line.

    >>> parse_timesteps("0, 250\\n999.5").values
    (0.0, 250.0, 999.5)
    >>> parse_timesteps("1 2\\n3 x")
    Traceback (most recent call last):
    pecli.errors.ParameterError: 'x' on line 2 of stdin is not a number (timesteps are numbers such as 0, 250 or 998.39)
    """
    values: list[float] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for token in _SEPARATORS.split(line.strip()):
            if token:
                values.append(_parse_number(token, f"on line {number} of {source}"))
    if not values:
        raise ParameterError(f"no timesteps: {source} is empty", hint="give numbers such as 0 250 999")
    return TimestepList(tuple(values))


def parse_timestep_arguments(arguments: Iterable[str]) -> TimestepList:
    """Command-line arguments, each one or more numbers separated by commas; errors name the argument.

    >>> parse_timestep_arguments(["0", "250,999"]).values
    (0.0, 250.0, 999.0)
    """
    values: list[float] = []
    for number, argument in enumerate(arguments, start=1):
        for token in _SEPARATORS.split(argument.strip()):
            if token:
                values.append(_parse_number(token, f"(argument {number})"))
    if not values:
        raise ParameterError("no timesteps given", hint="give numbers such as 0 250 999")
    return TimestepList(tuple(values))


def timesteps_from_text(text: str) -> TimestepList | TimestepRange:
    """The timesteps a ``timesteps`` metadata entry describes (:meth:`TimestepList.describe` or a range)."""
    if text.startswith("["):
        return TimestepList(tuple(float(v) for v in json.loads(text)))
    return parse_range(text)


# -- a table of timestep embeddings ---------------------------------------------------------------


@dataclass(frozen=True)
class TimestepSpec(TableSpec):
    """A :class:`TableSpec` of the ``timestep`` scheme whose row ``r`` embeds ``timesteps[r]``.

    Example:
        >>> spec = TimestepSpec.build(parse_timesteps("0 1"), 4, dtype="float64")
        >>> spec.array()[1].round(6).tolist(), spec.metadata()["timesteps"]
        ([0.540302, 0.99995, 0.841471, 0.01], '[0, 1]')
    """

    timesteps: TimestepList | TimestepRange | None = None

    @property
    def size_placeholders(self) -> str:
        """The sizes a user can shrink: the width, and the number of timesteps (no length option).

        >>> TimestepSpec.build(parse_timesteps("0 1"), 4).size_placeholders
        '{dim} or fewer timesteps'
        """
        return "{dim} or fewer timesteps"

    @classmethod
    def build(
        cls,
        timesteps: TimestepList | TimestepRange,
        dim: int,
        *,
        preset: str | None = None,
        params: Mapping[str, Any] | None = None,
        dtype: str = "float32",
        name: str = "t_emb",
    ) -> TimestepSpec:
        """Resolve preset and parameters for the ``timestep`` scheme (values are checked by :meth:`check`)."""
        spec = cls.resolve("timestep", preset, params or {}, length=len(timesteps), dim=dim, dtype=dtype, name=name)
        return dataclasses.replace(spec, timesteps=timesteps)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> TimestepSpec:
        """The spec recorded in a file ``pecli timestep`` wrote."""
        spec = super().from_metadata(metadata)
        if "timesteps" not in metadata:
            return spec
        return dataclasses.replace(spec, timesteps=timesteps_from_text(metadata["timesteps"]))

    def rows(self, rows: range):
        if self.timesteps is None or self.dim is None:
            return super().rows(rows)
        return timestep_embedding(
            self.timesteps.array(rows.start, rows.stop), self.dim, dtype=self.dtype, **self.params
        )

    def row_positions(self) -> np.ndarray | None:
        """Each row's angle multiplier: scale·t (its angles are scale·t·ω, ω ≤ 1); None without timesteps.

        >>> TimestepSpec.build(parse_range("0:30:10"), 4).row_positions().tolist()
        [0.0, 10.0, 20.0]
        >>> TimestepSpec.build(parse_range("0:30:10"), 4, params={"scale": 1000.0}).row_positions().tolist()
        [0.0, 10000.0, 20000.0]
        """
        if self.timesteps is None:
            return None
        return self.timesteps.array() * abs(float(self.params.get("scale", 1.0)))

    def metadata(self) -> dict[str, str]:
        meta = super().metadata()
        if self.timesteps is not None:
            meta["timesteps"] = self.timesteps.describe()
        return meta

    def summary(self, *, with_values: bool) -> dict[str, Any]:
        summary = super().summary(with_values=with_values)
        if isinstance(self.timesteps, TimestepRange):
            summary["timesteps"] = {"range": self.timesteps.describe(), "count": len(self.timesteps)}
        elif self.timesteps is not None:
            summary["timesteps"] = list(self.timesteps.values)
        return summary
