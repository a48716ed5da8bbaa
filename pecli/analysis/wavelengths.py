"""RoPE's wavelengths, the picture of a scaling: 2π/θ_i per frequency pair, before and after.

The chart used to explain NTK, YaRN's ramp (β_fast/β_slow bands) and Llama 3's low/high
frequency bands: each pair's wavelength against the original context, with the scaling's bands.

>>> waves = rope_wavelengths(8, scaling="linear", factor=2.0)
>>> waves.wavelength_original[:2].round(2).tolist(), waves.wavelength[:2].round(2).tolist()
([6.28, 62.83], [12.57, 125.66])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.analysis.relative import scaling_options
from pecli.schemes.rope import rope_frequencies

__all__ = ["RopeWavelengths", "WavelengthBand", "rope_wavelengths"]


@dataclass(frozen=True)
class WavelengthBand:
    """A run of frequency pairs that a scaling treats alike: pairs ``start`` … ``stop − 1``.

    ``description`` states the scaling's rule for the band with its threshold wavelength (YaRN:
    original context / β rotations; Llama 3: original context / frequency factor).
    """

    name: str
    start: int
    stop: int
    description: str


@dataclass(frozen=True)
class RopeWavelengths:
    """Per frequency pair: θ_i and its wavelength 2π/θ_i before and after scaling.

    Attributes:
        inv_freq_original, inv_freq: θ_i unscaled (base^(−2i/d)) and as the scaling leaves it.
        wavelength_original, wavelength: 2π/θ_i in positions, unscaled and scaled.
        factor: how much the scaling stretched each wavelength (θ_original / θ).
        context_length: the original context (``original_max_position``, else ``length``), or None.
        rotations: turns of each unscaled pair within the original context (context / wavelength),
            the quantity YaRN's β_fast/β_slow and Llama 3's frequency factors are thresholds on.
        bands: the pairs the scaling keeps, blends and scales (YaRN, Llama 3); empty otherwise.
    """

    scaling: str
    inv_freq_original: np.ndarray
    inv_freq: np.ndarray
    context_length: int | None
    bands: tuple[WavelengthBand, ...]

    @property
    def wavelength_original(self) -> np.ndarray:
        return 2 * math.pi / self.inv_freq_original

    @property
    def wavelength(self) -> np.ndarray:
        return 2 * math.pi / self.inv_freq

    @property
    def factor(self) -> np.ndarray:
        return self.inv_freq_original / self.inv_freq

    @property
    def rotations(self) -> np.ndarray | None:
        return None if self.context_length is None else self.context_length / self.wavelength_original

    def as_dict(self) -> dict[str, Any]:
        """Plain numbers for JSON: one record per pair, and the bands.

        >>> round(rope_wavelengths(4, length=100).as_dict()["pairs"][1]["wavelength"], 6)
        628.318531
        """
        rotations, original, wavelength, factor = self.rotations, self.wavelength_original, self.wavelength, self.factor
        pairs = [
            {
                "pair": index,
                "inv_freq_original": float(self.inv_freq_original[index]),
                "inv_freq": float(self.inv_freq[index]),
                "wavelength_original": float(original[index]),
                "wavelength": float(wavelength[index]),
                "rotations": None if rotations is None else float(rotations[index]),
                "factor": float(factor[index]),
            }
            for index in range(len(self.inv_freq))
        ]
        bands = [vars(band).copy() for band in self.bands]
        return {"scaling": self.scaling, "context_length": self.context_length, "pairs": pairs, "bands": bands}


def rope_wavelengths(
    dim: int, *, base: float = 10000.0, scaling: str = "none", length: int | None = None, **scaling_params: Any
) -> RopeWavelengths:
    """The wavelength of every RoPE frequency pair before and after ``scaling``, and the scaling's bands.

    The bands are read off the scaled frequencies themselves (pairs left alone, pairs divided by
    the whole factor, pairs in between), so they are exactly the pairs pecli's frequencies treat so.

    Example:
        >>> w = rope_wavelengths(128, base=500000.0, scaling="llama3", factor=8.0, original_max_position=8192)
        >>> [(band.name, band.start, band.stop) for band in w.bands]
        [('high frequency', 0, 29), ('blended', 29, 35), ('low frequency', 35, 64)]
        >>> float(w.factor[-1]), round(float(w.rotations[0]), 1)
        (8.0, 1303.8)
    """
    inv_freq_original = rope_frequencies(dim, base=base)
    options = scaling_options(scaling_params)
    if scaling == "none" and not options:  # no scaling: one array, not two equal ones
        inv_freq = inv_freq_original
    else:
        inv_freq = rope_frequencies(dim, base=base, scaling=scaling, length=length, **options)
    context = scaling_params.get("original_max_position") or length
    return RopeWavelengths(
        scaling=scaling,
        inv_freq_original=inv_freq_original,
        inv_freq=inv_freq,
        context_length=None if context is None else int(context),
        bands=_bands(scaling, inv_freq_original, inv_freq, context, scaling_params),
    )


#: pairs compared at once when the bands are read off (bounded temporaries at a huge d)
_BAND_BLOCK = 1 << 20


def _first(original: np.ndarray, scaled: np.ndarray, target: float, *, equal: bool) -> int:
    """The first pair whose factor ``original / scaled`` is (``equal``) or is not close to ``target``."""
    for start in range(0, len(original), _BAND_BLOCK):
        factor = original[start : start + _BAND_BLOCK] / scaled[start : start + _BAND_BLOCK]
        close = np.isclose(factor, target, rtol=1e-12, atol=0.0)
        hits = np.flatnonzero(close if equal else ~close)
        if hits.size:
            return start + int(hits[0])
    return len(original)


def _bands(
    scaling: str, original: np.ndarray, inv_freq: np.ndarray, context: int | None, params: dict[str, Any]
) -> tuple[WavelengthBand, ...]:
    if scaling not in ("yarn", "llama3"):
        return ()
    full = params["factor"]
    first_blended = _first(original, inv_freq, 1.0, equal=False)
    first_scaled = _first(original, inv_freq, full, equal=True)
    if scaling == "yarn":
        beta_fast, beta_slow = params.get("beta_fast", 32.0), params.get("beta_slow", 1.0)
        names = ("extrapolated", "ramp", "interpolated")
        descriptions = (
            f"kept: ≳ β_fast = {beta_fast:g} rotations in {context} (wavelength ≲ {context / beta_fast:.4g})",
            "linear ramp between the β bounds",
            f"÷ {full:g}: ≲ β_slow = {beta_slow:g} rotations (wavelength ≳ {context / beta_slow:.4g})",
        )
    else:
        low, high = params.get("low_freq_factor", 1.0), params.get("high_freq_factor", 4.0)
        names = ("high frequency", "blended", "low frequency")
        descriptions = (
            f"kept: wavelength < {context}/{high:g} = {context / high:.4g}",
            "smooth blend of kept and ÷ factor",
            f"÷ {full:g}: wavelength > {context}/{low:g} = {context / low:.4g}",
        )
    bounds = (0, first_blended, first_scaled, len(original))
    return tuple(
        WavelengthBand(name, start, stop, description)
        for name, start, stop, description in zip(names, bounds[:-1], bounds[1:], descriptions, strict=True)
        if stop > start
    )
