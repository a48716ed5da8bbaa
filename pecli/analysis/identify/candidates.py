"""The candidates: every (scheme, full parameters) the search tries, in the order it prefers them.

Presets come first, then the sinusoidal family over its structures at round bases, then bases and
first positions read off the table, RoPE, ALiBi, the grid conventions over every H × W, NeRF's
Fourier features and every other deterministic scheme at its choices. Timestep rows at arbitrary
t come last, read off the phases. :func:`presets_with` names the preset a found candidate is.

>>> import pecli
>>> first = next(candidates(pecli.encode("sinusoidal", 16, 8)))
>>> first[0], first[1]["base"]
('sinusoidal', 10000.0)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from pecli.analysis.identify.biases import alibi_candidates
from pecli.analysis.identify.buckets import bucket_candidates
from pecli.analysis.identify.grids import grid_scheme_candidates
from pecli.analysis.identify.result import Candidate
from pecli.analysis.identify.rotary import rope_candidates
from pecli.analysis.identify.sinusoids import (
    padding_row,
    read_amplitudes,
    read_base_and_offset,
    sin_cos_structures,
    sinusoidal_frequencies,
)
from pecli.analysis.identify.timesteps import read_max_periods, read_timesteps, round_timesteps
from pecli.analysis.value_precision import arithmetic_tolerance
from pecli.schemes.catalog import SCHEMES, resolve
from pecli.schemes.fourier import fourier_angles_fit
from pecli.schemes.presets import PRESETS
from pecli.schemes.timestep import timestep_embedding

__all__ = ["BASES", "OFFSETS", "SCREEN_ROWS", "candidates", "presets_with", "timestep_candidates"]

#: bases tried for every sinusoidal structure: Vaswani's 10000 (also LLaMA 1/2's RoPE theta), the
#: RoPE bases of Llama 3 (500000, meta-llama/llama3 llama/model.py, rope_theta) and Code Llama
#: (1e6, rope_theta in its params.json), and a decade grid around them
BASES: tuple[float, ...] = (10000.0, 500000.0, 1e6, 100.0, 1000.0, 5000.0, 20000.0, 50000.0, 1e5, 5e6, 1e7)
#: first positions always tried (fairseq starts at 2); a detected one is added
OFFSETS: tuple[int, ...] = (0, 1, 2, 3, 4)
#: the rows every candidate is screened on, at each end of the table
SCREEN_ROWS = 8
#: bases tried for the grid RoPEs (diffusers', timm's and Qwen2-VL's 10000 first)
_GRID_BASES = BASES[:3]
#: a grid table's size parameters, which presets leave to the table
_GRID_SIZE = ("grid", "cls_token", "extra_tokens")
#: parameters a preset takes on the command line when the table sets them: positional-encodings'
#: PositionalEncoding1D is ``--preset vaswani --pad-dim``, SD3-medium ``--preset sd3 --pos-embed-max-size 192``,
#: an EVA-02 cos table ``--preset eva02 --part cos`` (the preset leaves the part open)
_PRESET_OVERRIDES = ("pad_dim", "pos_embed_max_size", "part", "arithmetic")
#: timestep periods tried: 10000 (ldm's, guided-diffusion's and diffusers' default), 2000 (diffusers'
#: transformer_rfd4_proteina.py, get_rfd4_time_embedding's max_positions) and 1000 (a max_period callers
#: pass to diffusers' get_timestep_embedding; issue 30's attack)
_MAX_PERIODS = (10000.0, 2000.0, 1000.0)
#: then the max periods read off the table (:func:`read_max_periods`), then these round ones, for tables no
#: row of which lets them be read (the lowest two frequencies turned past π in every row, at small d ≥ 6)
_ROUND_PERIODS = (5000.0, 20000.0, 50000.0, 1e5, 500.0, 100.0, 200.0, 2e5, 5e5, 1e6)
#: a timestep convention is read over the whole table only if it writes a few rows within this (relative)
_DISCERNIBLE = 1e-2


def _sinusoidal_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    """Structures on the unit circle, each with the grid's round bases first, then the bases read off the table
    (the simplest true description wins: fairseq's shift 1 at base 10000, not Vaswani's form at 10000^(h/(h−1)))."""
    # fairseq's full weight zeroes its padding row; x-transformers scales every value by d^-0.5:
    # the structure, base and offset are read off the rows after the padding row, at unit amplitude
    padding_idx = padding_row(table, SCREEN_ROWS)
    fitted = table if padding_idx is None else table[padding_idx + 1 :]
    amplitude, amplitudes = read_amplitudes(fitted)
    # only the rows and columns read are divided by the amplitude (a divided copy was the table's size)
    skipped = 0 if padding_idx is None else padding_idx + 1
    structures = []
    # an odd d may carry the frequencies of d + 1 (positional-encodings' PositionalEncoding1D)
    for pad_dim in (False, True) if table.shape[1] % 2 else (False,):
        for layout, kind in sin_cos_structures(fitted, amplitude):
            for cos_first in (False, True):
                for freq_shift in (None,) if kind == "vaswani" else (0.0, 1.0):
                    bases, offsets = read_base_and_offset(fitted, layout, cos_first, freq_shift, pad_dim, amplitude)
                    offsets = list(dict.fromkeys([*OFFSETS, *(first - skipped for first in offsets)]))
                    fitted_bases = [base for base in bases if base not in BASES]
                    structures.append((layout, cos_first, freq_shift, pad_dim, fitted_bases, offsets))
    for round_bases in (True, False):
        for layout, cos_first, freq_shift, pad_dim, fitted_bases, offsets in structures:
            tried = BASES if round_bases else fitted_bases
            for base, offset, amplitude in itertools.product(tried, offsets, amplitudes):
                yield {
                    "base": base,
                    "layout": layout,
                    "cos_first": cos_first,
                    "freq_shift": freq_shift,
                    "offset": offset,
                    "padding_idx": padding_idx,
                    "amplitude": amplitude,
                    "pad_dim": pad_dim,
                }


def _fourier_candidates(length: int, dim: int) -> Iterator[dict[str, Any]]:
    """NeRF's γ(x) in every variant whose width is ``dim`` (2·L, + 1 with the input column)."""
    for include_input in (True, False):
        if (dim - include_input) % 2 or dim - include_input < 2:
            continue
        bands = (dim - include_input) // 2
        for positions in ({"positions": "normalized"}, {"positions": "raw"}):
            for log_sampling in (True, False):
                for pi in (False, True):
                    # its largest angle 2^(L − 1)·(π)·max|x| is beyond float64: no such table
                    if not fourier_angles_fit(length, bands, pi=pi, positions=positions["positions"]):
                        continue
                    yield {"include_input": include_input, "log_sampling": log_sampling, "pi": pi, **positions}


def candidates(table: np.ndarray) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (scheme, full parameters) to try: presets first, then the sinusoidal grid, RoPE, the rest."""
    for preset in PRESETS.values():
        scheme, params = resolve(preset.scheme, preset.name, {})
        if "seed" not in params and scheme.is_sequence:
            yield scheme.name, params
    for params in _sinusoidal_candidates(table):
        yield "sinusoidal", {**SCHEMES["sinusoidal"].defaults, **params}
    for params in rope_candidates(table, BASES):
        yield "rope", {**SCHEMES["rope"].defaults, **params}
    for params in alibi_candidates(table):
        yield "alibi", {**SCHEMES["alibi"].defaults, **params}
    yield from grid_scheme_candidates(table, _GRID_BASES)
    for scheme in SCHEMES.values():
        if scheme.search == "biases" and scheme.relative == "buckets":  # a bucket matrix (T5's), read off
            for params in bucket_candidates(table):
                yield scheme.name, {**scheme.defaults, **params}
    for params in _fourier_candidates(*table.shape[:2]):
        yield "fourier", {**SCHEMES["fourier"].defaults, **params}
    for scheme in SCHEMES.values():
        # the others have their searchers above, or none (a random draw, which no convention fixes)
        if scheme.search != "choices":
            continue
        choices = {name: values for name, values in scheme.choices.items() if name != "part"}
        for part in scheme.parts or (None,):
            for chosen in itertools.product(*choices.values()):
                params = {**scheme.defaults, **dict(zip(choices, chosen, strict=True))}
                yield scheme.name, params if part is None else {**params, "part": part}


def timestep_candidates(
    table: np.ndarray, precision: str, refused: list[dict[str, Any]] | None = None
) -> Iterator[Candidate]:
    """Timestep rows at arbitrary t: each convention's t read off the phases, rounded within the noise.

    ``refused`` gathers the conventions whose rows are written by a t that the values cannot pin down (t ± 2π/ω
    writes them within rounding: :func:`~pecli.analysis.identify.timesteps.read_timesteps` reads none)."""
    if ("split", "shifted") not in sin_cos_structures(table):  # [cos | sin] halves, on sampled rows
        return
    # a few rows first: a convention that does not write them is no full pass (each is one over the table)
    few = np.concatenate([table[:SCREEN_ROWS], table[-SCREEN_ROWS:]]).astype(np.float64)
    scale = float(np.abs(few).max()) or 1.0
    seen: set[tuple[bool, tuple[float, ...]]] = set()
    passed: set[tuple[bool, tuple[float, ...]]] = set()  # those whose reading writes the few rows
    structures = []
    for preset in ("ldm", "diffusers"):  # [cos | sin] with shift 0, [sin | cos] with shift 1, then the others
        params = resolve("timestep", preset, {})[1]
        for shift in (params["freq_shift"], 1.0 - params["freq_shift"]):
            structure = {"flip_sin_to_cos": params["flip_sin_to_cos"], "freq_shift": shift}
            structures.append((params, structure, read_max_periods(few, **structure)))
    # the listed periods in every structure first: of two that write the same frequencies (d = 4: shift 0 at
    # 10000 is shift 1 at 100), the listed one is named
    for listed in (True, False):
        for params, structure, read_periods in structures:
            shift = structure["freq_shift"]
            # no round period at d < 6, whose one frequency below ω_0 = 1 fixes t only to (noise)·max_period:
            # some alias (t ×10 at ×10 the period) fits as well
            rounds = _ROUND_PERIODS if table.shape[1] >= 6 else ()
            periods = _MAX_PERIODS if listed else [*read_periods, *rounds]
            for period in dict.fromkeys(periods):
                settings = {**structure, "max_period": period}
                frequencies = (bool(structure["flip_sin_to_cos"]), _rounded(table.shape[1], period, shift))
                if frequencies in seen:  # d = 7: shift 0 at 1000 is shift 1 at 100 (ω = 1, 0.1, 0.01)
                    if frequencies in passed and period in read_periods:
                        break  # a read 10000.0018 whose round form, listed, was tried
                    continue
                seen.add(frequencies)
                read = read_timesteps(few, **settings, precision=precision)
                unreadable = read is None and refused is not None
                if unreadable:  # the rows may be this convention's at a t they cannot pin down
                    read = read_timesteps(few, **settings, precision=precision, near=True)
                if read is None:
                    continue
                written = timestep_embedding(read, table.shape[1], dtype="float64", **settings)
                # a period read is kept in its roundest form that writes the rows within their noise (5000 for
                # 4999.9997, not for 5003); the others within a loose bound, each then verified
                allowed = (
                    4 * arithmetic_tolerance(len(few), precision, positions=read)
                    if period in read_periods
                    else _DISCERNIBLE * scale
                )
                if np.any(np.abs(written - few) > allowed):
                    continue
                if unreadable:
                    assert refused is not None
                    refused.append({**params, **settings})
                    continue
                passed.add(frequencies)
                times = read_timesteps(table, **settings, precision=precision)
                if times is not None:
                    convention = {**params, **settings}
                    rounded = tuple(round_timesteps(times, precision).tolist())
                    yield Candidate("timestep", convention, timesteps=rounded)
                    # the fewest decimals within float32's angle noise (±6e-5 at t = 500) need not be the t a
                    # library held: its float32 t, read from the ω = 1 phase to ~1e-7, is the other reading
                    held = tuple(float(t) for t in times.astype(np.float32))
                    if held != rounded:
                        yield Candidate("timestep", convention, timesteps=held)
                    if period in read_periods:
                        break  # the simplest reading that writes the rows: 5000, not 4999.9997 as well


def _rounded(dim: int, max_period: float, freq_shift: float) -> tuple[float, ...]:
    """A convention's frequencies to 12 significant digits: two conventions with the same write the same table."""
    freqs = sinusoidal_frequencies(dim, max_period, freq_shift)
    return () if freqs is None else tuple(float(f"{f:.12g}") for f in freqs)


def presets_with(scheme: str, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The presets of ``scheme`` with these parameters (a grid's size, H × W and the cls row, aside, and
    a ``pad_dim``, ``pos_embed_max_size`` or part the table sets, which the command adds to the preset).

    A table with a zeroed padding row is fairseq's full weight, where row = position: it is named
    by the preset whose first position is padding_idx + 1 (fairseq's), with ``--offset 0``.
    """
    names = []
    sizes = {name: params[name] for name in _GRID_SIZE if name in params}
    sizes |= {name: params[name] for name in _PRESET_OVERRIDES if params.get(name) not in (None, False)}
    padding_idx = params.get("padding_idx")
    for preset in PRESETS.values():
        resolved, full = resolve(preset.scheme, preset.name, {})
        if resolved.name != scheme:
            continue
        full_weight = padding_idx is not None and full.get("offset") == padding_idx + 1
        if {**full, **sizes} == dict(params) or (
            full_weight and {**full, **sizes, "offset": params["offset"], "padding_idx": padding_idx} == dict(params)
        ):
            names.append(preset.name)
    return tuple(names)
