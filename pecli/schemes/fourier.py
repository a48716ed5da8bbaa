"""Fourier features of scalar positions: NeRF's deterministic bands and Gaussian random features."""

from __future__ import annotations

import math

import numpy as np

from pecli.dtypes import round_to
from pecli.errors import ParameterError
from pecli.schemes._angles import place_sin_cos, position_phasors
from pecli.schemes.checks import (
    choice,
    even_dim,
    finite_above,
    fourier_width,
    non_negative_int,
    positive_int,
    row_range,
)

__all__ = ["fourier_angles_fit", "fourier_table", "gaussian_table", "scaled_positions"]


def scaled_positions(length: int, rows: range, kind: str) -> np.ndarray:
    """Positions of ``rows`` in float64: ``raw`` 0, 1, 2, … or ``normalized`` to [−1, 1] (2p/(len−1) − 1).

    >>> scaled_positions(3, range(3), "normalized").tolist()
    [-1.0, 0.0, 1.0]
    """
    kind = choice("positions", kind, ("normalized", "raw"))
    positions = np.arange(rows.start, rows.stop, dtype=np.float64)
    if kind == "raw":
        return positions
    return 2.0 * positions / (length - 1) - 1.0 if length > 1 else np.zeros_like(positions)


def fourier_angles_fit(length: int, bands: int, *, pi: bool, positions: str) -> bool:
    """Whether NeRF's largest angle f_(L−1)·max|x| (f_(L−1) = 2^(L−1), ·π with ``pi``) is a float64.

    Beyond it the frequencies, or their product with the positions, overflow to infinity: no
    such table exists in float64 (``bands`` is L; ``positions`` as :func:`scaled_positions`).

    >>> fourier_angles_fit(16, 1024, pi=False, positions="normalized")
    True
    >>> fourier_angles_fit(16, 1024, pi=True, positions="normalized")
    False
    >>> fourier_angles_fit(16, 1024, pi=False, positions="raw")
    False
    """
    largest = max(1.0, float(length - 1)) if positions == "raw" else 1.0
    try:  # exact: 2^(L−1) scales (π·max|x|) without rounding until it overflows
        math.ldexp((math.pi if pi else 1.0) * largest, bands - 1)
    except OverflowError:
        return False
    return True


def fourier_table(
    length: int,
    dim: int | None = None,
    *,
    num_freqs: int | None = None,
    include_input: bool = True,
    log_sampling: bool = True,
    pi: bool = False,
    positions: str = "normalized",
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """NeRF's γ(x) = [x, sin(f_0·x), cos(f_0·x), …, sin(f_{L−1}·x), cos(f_{L−1}·x)] per position.

    Frequencies f_k = 2^k (``log_sampling``) or L evenly spaced values from 2^0 to 2^(L−1),
    as nerf-pytorch's Embedder (run_nerf_helpers.py) builds them; ``pi`` multiplies them by π,
    as the NeRF paper (eq. 4) writes γ. nerf-pytorch puts the input first (``include_input``).

    Args:
        length: number of positions.
        dim: 2·L (+1 with ``include_input``); may be None when ``num_freqs`` is given.
        num_freqs: L (nerf-pytorch's ``multires``); None: from ``dim``.
        include_input: the position itself in column 0.
        log_sampling: powers of two (True) or linear spacing (False).
        pi: multiply frequencies by π.
        positions: ``normalized`` to [−1, 1] or ``raw`` indices.
        dtype: output dtype. rows: compute only these positions.

    Example:
        >>> fourier_table(3, num_freqs=2, dtype="float64")[2].round(6).tolist()
        [1.0, 0.841471, 0.540302, 0.909297, -0.416147]
    """
    length = positive_int("length", length)
    width = fourier_width(dim, num_freqs, include_input)
    bands = (width - int(bool(include_input))) // 2
    rows = row_range(rows, length, per_row=width)
    x = scaled_positions(length, rows, positions)
    if bands and not fourier_angles_fit(length, bands, pi=pi, positions=positions):
        most = next(n for n in range(bands, 0, -1) if fourier_angles_fit(length, n, pi=pi, positions=positions))
        extra = int(bool(include_input))
        given, fewer = (
            (f"{{num_freqs={bands}}}", f"{{num_freqs={most}}}")
            if num_freqs is not None
            else (f"{{dim={width}}} (L = {bands} frequencies)", f"{{dim={2 * most + extra}}}")
        )
        raise ParameterError(
            f"{given} reaches 2^{bands - 1}{'·π' if pi else ''}"
            f"{' times positions up to ' + str(length - 1) if positions == 'raw' and length > 2 else ''}, "
            "an angle beyond float64 (about 1.8e308)",
            hint=f"use at most {fewer}",
        )
    # nerf-pytorch: 2.**linspace(0, L−1, L) (log) or linspace(2.**0, 2.**(L−1), L) (linear)
    freqs = 2.0 ** np.arange(bands, dtype=np.float64) if log_sampling else np.linspace(1.0, 2.0 ** (bands - 1), bands)
    if pi:
        freqs = freqs * math.pi
    table = np.empty((len(rows), width), dtype=np.float64)
    if include_input:
        table[:, 0] = x
    place_sin_cos(
        table[:, int(bool(include_input)) :], position_phasors(x, freqs), layout="interleaved", cos_first=False
    )
    return round_to(table, dtype)


def gaussian_table(
    length: int,
    dim: int,
    *,
    sigma: float = 10.0,
    seed: int = 0,
    positions: str = "normalized",
    dtype: str = "float32",
    rows: range | None = None,
) -> np.ndarray:
    """Random Fourier features [sin(2π·B·x) | cos(2π·B·x)] with d/2 frequencies B ~ N(0, σ²).

    B is ``np.random.default_rng(seed).standard_normal(d // 2) · σ`` (PCG64, float64): the same
    seed gives the same table on every machine (Tancik et al. 2020's Gaussian mapping, with the
    sin-then-cos order of the authors' ``input_mapping``).

    Example:
        >>> table = gaussian_table(4, 6, seed=1)
        >>> table.shape, bool((gaussian_table(4, 6, seed=1) == table).all())
        ((4, 6), True)
    """
    length = positive_int("length", length)
    dim = even_dim("gaussian", positive_int("dim", dim), "[sin | cos] of d/2 frequencies")
    sigma = finite_above("sigma", sigma, 0.0, example="10")
    seed = non_negative_int("seed", seed)
    rows = row_range(rows, length, per_row=dim)
    frequencies = np.random.default_rng(seed).standard_normal(dim // 2) * sigma
    table = np.empty((len(rows), dim), dtype=np.float64)
    x = scaled_positions(length, rows, positions)
    place_sin_cos(table, position_phasors(x, 2.0 * math.pi * frequencies), layout="split", cos_first=False)
    return round_to(table, dtype)
