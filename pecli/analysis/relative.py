"""Relative encodings as they act on attention: RoPE scores and decay, ALiBi biases.

RoPE rotates each pair of a query and a key by its position times the pair's frequency θ_i, so
their dot product depends on the positions only through the offset h = m − n. Written with each
pair as a complex number (q_i, k_i; the ``half`` layout pairs columns i and i + d/2, ``interleaved``
columns 2i and 2i + 1), the score of RoFormer (Su et al. 2021, §3.4.3) normalised by the head
dimension d is

    s(m, n) = ⟨R_m q, R_n k⟩ / d = Re Σ_i z_i·e^{i·(m−n)·θ_i} / d,   z_i = q_i·conj(k_i),

times a² when YaRN's attention factor a scales the cos/sin tables. With ``qk="ones"`` every z_i
is 2 and s(h) = Σ_i cos(h·θ_i) / (d/2): 1 at h = 0, decaying with |h|. The frequencies are pecli's
own (:func:`pecli.schemes.rope.rope_frequencies`), with every scaling it supports.

>>> profile = rope_profile(4, 8)
>>> profile.score.round(4).tolist()
[1.0, 0.8838, 0.6409, 0.4912]
>>> bool(np.all(profile.bound >= np.abs(profile.score)))
True
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.errors import ParameterError
from pecli.memory import check_fits_in_memory
from pecli.schemes.alibi import alibi_slopes
from pecli.schemes.checks import choice, integer, positive_int
from pecli.schemes.rope import position_phasors, rope_attention_factor, rope_frequencies
from pecli.text import literal_repr

__all__ = [
    "QK_MODES",
    "AlibiProfile",
    "RopeProfile",
    "alibi_profile",
    "rope_profile",
    "rope_query_key",
    "rope_score_matrix",
    "rope_scores",
    "scaling_options",
]

QK_MODES: tuple[str, ...] = ("ones", "random")
#: complex128 bytes per block of phasors: big enough for fast matrix products, small enough for any cache
_BLOCK_BYTES = 1 << 22


def rope_query_key(dim: int, qk: str = "ones", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The float64 query and key vectors (d,) whose rotary scores are drawn.

    ``ones``: all ones, RoFormer's setting for its long-term decay. ``random``: one query and one
    key of independent unit-variance Gaussian entries from ``numpy.random.default_rng(seed)``.

    >>> q, k = rope_query_key(4, "random", seed=1)
    >>> q.shape, bool(np.array_equal(q, rope_query_key(4, "random", seed=1)[0]))
    ((4,), True)
    """
    dim = positive_int("dim", dim)
    qk = choice("qk", qk, QK_MODES)
    if qk == "ones":
        return np.ones(dim), np.ones(dim)
    rng = np.random.default_rng(integer("seed", seed))
    return rng.standard_normal(dim), rng.standard_normal(dim)


def _pair_products(
    dim: int, qk: str, seed: int, layout: str, scaling: str, scaling_params: dict[str, Any]
) -> tuple[np.ndarray, float]:
    """z_i = q_i·conj(k_i) per frequency pair, and the factor a²/d every score is multiplied by."""
    layout = choice("layout", layout, ("half", "interleaved"))
    query, key = rope_query_key(dim, qk, seed)
    if layout == "half":
        half = dim // 2
        pairs_q, pairs_k = query[:half] + 1j * query[half:], key[:half] + 1j * key[half:]
    else:
        pairs_q, pairs_k = query[0::2] + 1j * query[1::2], key[0::2] + 1j * key[1::2]
    options = scaling_options(scaling_params)
    attention = rope_attention_factor(scaling, **{k: v for k, v in options.items() if k != "apply_attention_factor"})
    squared = attention**2 if options.get("apply_attention_factor") else 1.0
    return pairs_q * np.conj(pairs_k), squared / dim


def check_profile_fits(dim: int, offsets: int) -> None:
    """Refuse (a ParameterError with the size) a score profile whose working memory cannot fit.

    Its arrays: a few float64 per offset (score, bound, offsets) and per frequency pair, and one block
    of complex phasors (:func:`_offset_phasors`: ``_BLOCK_BYTES``, or one offset's d/2 when larger).

    >>> check_profile_fits(128, 1000)
    >>> check_profile_fits(2**50, 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: the score profile would take 64.0 PiB, more than ...
    """
    pairs = max(1, dim // 2)
    check_fits_in_memory(
        8 * 4 * offsets + 16 * 4 * pairs + 4 * max(_BLOCK_BYTES, 16 * pairs),
        what="score profile",
        hint="use a smaller {length} or {dim}",
    )


def _offset_phasors(offsets: range, inv_freq: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """``exp(i·h·θ_i)`` as (pairs, block) arrays for consecutive blocks of ``offsets``; yields (block, first index).

    Angle addition along the offsets: a block starting at offset h0 is exp(i·h0·θ) (exact sin/cos)
    times one fixed table exp(i·j·step·θ), so each value costs one complex product. Pairs along the
    rows let the partial sums over pairs run as whole-block vector additions.
    """
    block = max(1, min(len(offsets), _BLOCK_BYTES // (16 * len(inv_freq))))
    # rows = pairs: the frequencies take the place of positions in exp(i·outer(·, ·))
    steps = position_phasors(inv_freq, offsets.step * np.arange(block, dtype=np.float64))
    for first in range(0, len(offsets), block):
        count = min(block, len(offsets) - first)
        start = position_phasors(np.array([float(offsets[first])]), inv_freq)[0]
        yield steps[:, :count] * start[:, None], first


def _frequencies(dim: int, length: int, base: float, scaling: str, scaling_params: dict[str, Any]) -> np.ndarray:
    return rope_frequencies(dim, base=base, scaling=scaling, length=length, **scaling_options(scaling_params))


def scaling_options(params: dict[str, Any]) -> dict[str, Any]:
    """The scaling's options among a RoPE table's parameters.

    ``offset`` (the first row's position) does not change a score that depends on m − n; a
    partial rotation is not modelled here, so a factor other than 1 is refused.
    """
    options = {name: value for name, value in params.items() if name != "offset"}
    partial = options.pop("partial_rotary_factor", None)
    if partial not in (None, 1, 1.0):
        raise ParameterError(
            f"rotary scores of a partial rotation ({{partial_rotary_factor}} {partial}) are not supported",
            hint="pass {dim} as the rotated width, int(dim·factor), without the factor",
        )
    return options


def rope_scores(
    query_positions: np.ndarray,
    key_positions: np.ndarray,
    dim: int,
    *,
    length: int,
    base: float = 10000.0,
    layout: str = "half",
    scaling: str = "none",
    qk: str = "ones",
    seed: int = 0,
    **scaling_params: Any,
) -> np.ndarray:
    """The rotary scores s(m, n) for query positions m (rows) and key positions n (columns), float64.

    Computed block by block of query rows as Re[(q·e^{imθ}) · conj(k·e^{inθ})ᵀ] / d, so only the
    (len(query_positions), len(key_positions)) result is ever whole. ``length`` is the context the
    frequencies are for (dynamic NTK scaling depends on it).

    Example:
        >>> rope_scores(np.array([0, 5]), np.array([0, 3]), 8, length=8).round(4).tolist()
        [[1.0, 0.4912], [0.79, 0.6409]]
    """
    length = positive_int("length", length)
    inv_freq = _frequencies(dim, length, base, scaling, scaling_params)
    products, scale = _pair_products(dim, qk, seed, layout, scaling, scaling_params)
    query_positions = np.asarray(query_positions, dtype=np.float64).ravel()
    key_positions = np.asarray(key_positions, dtype=np.float64).ravel()
    check_fits_in_memory(8 * len(query_positions) * len(key_positions), what="score matrix")
    # the key side once: conj(k_i·e^{inθ_i}); the query side z_i·e^{imθ_i} carries q·conj(k) already
    keys_side = np.conj(position_phasors(key_positions, inv_freq)).T
    scores = np.empty((len(query_positions), len(key_positions)), dtype=np.float64)
    block = max(1, _BLOCK_BYTES // (16 * len(inv_freq)))
    for first in range(0, len(query_positions), block):
        rows = query_positions[first : first + block]
        scores[first : first + len(rows)] = ((position_phasors(rows, inv_freq) * products) @ keys_side).real
    return scores * scale


def rope_score_matrix(
    length: int,
    dim: int,
    *,
    rows: range | None = None,
    cols: range | None = None,
    **options: Any,
) -> np.ndarray:
    """The (rows × cols) rotary score matrix of a length-``length`` context; every position by default.

    ``rows`` and ``cols`` are ranges of query and key positions inside 0..length − 1; a step draws
    the matrix at a coarser resolution (``range(0, 65536, 256)``) without building the whole of it.
    ``options`` are :func:`rope_scores`'s (``base``, ``layout``, ``scaling`` and its parameters,
    ``qk``, ``seed``).

    Example:
        >>> rope_score_matrix(3, 4).round(4).tolist()
        [[1.0, 0.7701, 0.2918], [0.7701, 1.0, 0.7701], [0.2918, 0.7701, 1.0]]
    """
    length = positive_int("length", length)
    picked = []
    for name, positions in (("rows", rows), ("cols", cols)):
        positions = range(length) if positions is None else positions
        if not isinstance(positions, range) or (len(positions) and (min(positions) < 0 or max(positions) >= length)):
            raise ParameterError(
                f"{name} must be a range of positions inside 0..{length - 1}, got {literal_repr(positions)}",
                hint=f"pass e.g. {name}=range(0, {length}, 4)",
            )
        picked.append(np.asarray(positions))
    return rope_scores(picked[0], picked[1], dim, length=length, **options)


@dataclass(frozen=True)
class RopeProfile:
    """The rotary score against the offset h = m − n, and RoFormer's decay bound.

    Attributes:
        offsets: the offsets h (int64).
        score: s(h), the score of a query at position m + h and a key at m (any m).
        relative_bound: RoFormer's relative upper bound (Fig. 2): (1/(d/2))·Σ_{j=1}^{d/2} |S_j(h)|,
            S_j(h) = Σ_{i<j} e^{i·h·θ_i}; it depends on the frequencies only.
        bound_scale: C such that |s(h)| ≤ C·relative_bound(h) for these q, k (Abel summation:
            C = a²·max(|z_{d/2−1}|, max_i |z_{i+1} − z_i|)/2; 1 for ``qk="ones"``).
    """

    offsets: np.ndarray
    score: np.ndarray
    relative_bound: np.ndarray
    bound_scale: float

    @property
    def bound(self) -> np.ndarray:
        """The upper bound on |s(h)|: ``bound_scale · relative_bound``."""
        return self.bound_scale * self.relative_bound


def rope_profile(
    length: int,
    dim: int,
    *,
    offsets: range | None = None,
    base: float = 10000.0,
    layout: str = "half",
    scaling: str = "none",
    qk: str = "ones",
    seed: int = 0,
    **scaling_params: Any,
) -> RopeProfile:
    """The score s(h) and its decay bound for offsets h (default 0 … length − 1), in O(len·d) memory.

    The score depends on the offset only, so this is every diagonal of :func:`rope_score_matrix`
    without building it: the offsets are taken in blocks, each a (block, d/2) table of e^{ihθ}.

    With ``qk="ones"`` the profile is RoFormer's long-term decay, s(h) = Σ_i cos(h·θ_i) / (d/2)
    (even in h). With ``qk="random"`` it is the realised score of one seeded draw of q and k (not
    even in h); over independent draws its expectation is 0 at every offset and its standard
    deviation a²/√d at every offset — RoPE's decay is a property of aligned q and k.

    Args:
        length: the context length (the frequencies of dynamic NTK scaling depend on it).
        dim: head dimension d (even).
        offsets: the offsets to compute, a range of any step and sign.
        base, layout, scaling, **scaling_params: as :func:`pecli.schemes.rope.rope_table`.
        qk, seed: the query and key, as :func:`rope_query_key`.

    Example:
        >>> profile = rope_profile(1000, 128, offsets=range(0, 1000, 250))
        >>> profile.offsets.tolist(), profile.score.round(3).tolist()
        ([0, 250, 500, 750], [1.0, 0.307, 0.298, 0.171])
        >>> profile.relative_bound.round(2).tolist()  # (d/2 + 1)/2 at h = 0
        [32.5, 6.55, 6.19, 5.48]
    """
    length = positive_int("length", length)
    offsets = range(length) if offsets is None else offsets
    if not isinstance(offsets, range) or not len(offsets):
        raise ParameterError(
            f"offsets must be a non-empty range, got {literal_repr(offsets)}", hint="pass e.g. range(0, 1024)"
        )
    check_profile_fits(dim, len(offsets))
    inv_freq = _frequencies(dim, length, base, scaling, scaling_params)
    products, scale = _pair_products(dim, qk, seed, layout, scaling, scaling_params)
    score = np.empty(len(offsets), dtype=np.float64)
    relative_bound = np.empty(len(offsets), dtype=np.float64)
    for phasors, first in _offset_phasors(offsets, inv_freq):
        stop = first + phasors.shape[1]
        # real float64 products (BLAS) instead of a complex one: Re(z·e) = z.re·e.re − z.im·e.im
        real, imag = np.ascontiguousarray(phasors.real), np.ascontiguousarray(phasors.imag)
        score[first:stop] = products.real @ real - products.imag @ imag
        relative_bound[first:stop] = _partial_sum_magnitudes(real, imag)
    largest_step = float(np.max(np.abs(np.diff(products)))) if len(products) > 1 else 0.0
    bound_scale = scale * dim * max(abs(products[-1]), largest_step) / 2
    return RopeProfile(
        offsets=np.asarray(offsets, dtype=np.int64),
        score=score * scale,
        relative_bound=relative_bound / len(inv_freq),
        bound_scale=float(bound_scale),
    )


def _partial_sum_magnitudes(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    """Σ_j |S_j| per column, S_j = Σ_{i<=j} (real[i] + i·imag[i]): a running sum over the pairs (rows).

    Faster than cumsum along pairs, and sqrt(re² + im²) is several times faster than complex abs (hypot).
    """
    count = real.shape[1]
    sum_real, sum_imag, total = np.zeros(count), np.zeros(count), np.zeros(count)
    square, imag_square = np.empty(count), np.empty(count)
    for pair_real, pair_imag in zip(real, imag, strict=True):
        sum_real += pair_real
        sum_imag += pair_imag
        np.multiply(sum_real, sum_real, out=square)
        square += np.multiply(sum_imag, sum_imag, out=imag_square)
        total += np.sqrt(square, out=square)
    return total


@dataclass(frozen=True)
class AlibiProfile:
    """ALiBi's bias against the offset h = query − key position, per head: ``bias[head, h] = −m_head·|h|``."""

    offsets: np.ndarray
    slopes: np.ndarray
    bias: np.ndarray


def alibi_profile(heads: int, length: int, *, offsets: range | None = None) -> AlibiProfile:
    """The bias each of ``heads`` heads adds at offsets h (default 0 … length − 1), float64 (H, offsets).

    Example:
        >>> profile = alibi_profile(2, 3)
        >>> profile.slopes.tolist(), profile.bias.tolist()
        ([0.0625, 0.00390625], [[0.0, -0.0625, -0.125], [0.0, -0.00390625, -0.0078125]])
    """
    length = positive_int("length", length)
    offsets = range(length) if offsets is None else offsets
    if not isinstance(offsets, range) or not len(offsets):
        raise ParameterError(
            f"offsets must be a non-empty range, got {literal_repr(offsets)}", hint="pass e.g. range(0, 1024)"
        )
    slopes = alibi_slopes(heads)
    check_fits_in_memory(8 * len(slopes) * len(offsets), what="bias profile")
    distance = np.abs(np.asarray(offsets, dtype=np.float64))
    # 0.0 − x, as alibi_table: the bias at h = 0 is +0, not −0
    return AlibiProfile(np.asarray(offsets, dtype=np.int64), slopes, 0.0 - slopes[:, None] * distance[None, :])
