"""Grid tables (sincos2d, CoordConv, 2-D RoPE) read off their token count: every H × W with H·W tokens.

A grid table has one row per patch token, row-major, behind optional all-zero rows: a cls row
(MAE), or diffusers' ``extra_tokens`` of them; its shape fixes H·W but not H and W, so each
factorisation is a candidate (square ones first), and regenerating decides. timm's
``reverse_coord`` table of H × W *is* the plain table of W × H, so the transposed grid names it.
The rest is read off the rows: diffusers' ``base_size`` and SD3's ``pos_embed_max_size`` crop
from the lowest frequency's phase along each axis, Qwen2-VL's M-RoPE sections from the first
frequency that turns with h and with w (and, over a video's T × H × W tokens, with t). A grid of
one row or one column that writes a 1-D match's table too is named beside it (:func:`_one_line_grid`).

>>> [params["grid"] for params in grid_candidates(np.ones((12, 8)))]
['3,4', '4,3', '2,6', '6,2', '1,12', '12,1']
>>> table = np.ones((11, 8)); table[:2] = 0  # two leading zero rows: diffusers' extra_tokens=2
>>> [(params["grid"], params["extra_tokens"]) for params in grid_candidates(table)][-3:]
[('3,3', 2), ('1,9', 2), ('9,1', 2)]
>>> import pecli
>>> crop = pecli.encode("sincos2d", None, 32, preset="sd3", grid="6,10", pos_embed_max_size=192)
>>> [(p["base_size"], p["pos_embed_max_size"]) for p in diffusers_crops(crop, 6, 10)]
[(64.0, 192)]
>>> mrope = pecli.encode("rope2d", None, 32, grid="4,6", sections="2,6,8", part="cos")
>>> mrope_sections(mrope, 4, 6, "half")
'2,6,8'
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from pecli.analysis.identify.result import Candidate, Undetermined
from pecli.analysis.identify.rotary import section_bases
from pecli.analysis.identify.verify import _max_error
from pecli.analysis.value_precision import rounding_tolerance, value_precision
from pecli.schemes.catalog import SCHEMES, resolve
from pecli.schemes.checks import axial_grid
from pecli.schemes.presets import presets_of

__all__ = [
    "assumed_sections",
    "diffusers_crops",
    "grid_bases",
    "grid_candidates",
    "grid_scheme_candidates",
    "mrope_sections",
]

#: grids tried per token count (the most square first)
_MAX_GRIDS = 16
#: diffusers' sin-cos base (get_1d_sincos_pos_embed_from_grid hard-codes 10000)
_DIFFUSERS_BASE = 10000.0
#: diffusers' interpolation_scale, tried for the whole base_size it makes of the table's base_size / scale
#: (1 first: only the quotient shows; PixArt's max(sample_size // 64, 1) and halves after)
_INTERPOLATION_SCALES = (1.0, 2.0, 0.5, 3.0, 4.0, 1.5, 0.25, 0.75, 0.875, 1.25)
#: a base read off a grid table is kept when within this (relative) of its 3 significant digits
_ROUND_BASE = 1e-3


def grid_bases(row: np.ndarray) -> tuple[float, ...]:
    """Round bases (3 significant digits) that the second token's row of a grid table shows.

    Token 1 turns by ω_k = ω_1^k along one axis (every grid layout's frequencies are geometric, ω_0 = 1):
    its row holds sin ω_k and cos ω_k (sincos2d), or one part of them (RoPE's cos, sin or angle). ω_1 is
    an angle below 1 radian read from the row whose square and cube are read there too; the base is
    ω_1^(−n) for the exponents the layouts use (d/4 frequencies per axis, shifted by 1 (vit-pytorch's
    ``temperature``), d/2 for M-RoPE). A vit-pytorch table at temperature 100 reads 100:

    >>> import pecli
    >>> table = pecli.encode("sincos2d", None, 32, preset="vit-pytorch", grid="4,4", base=100.0)
    >>> 100.0 in grid_bases(table[1])
    True
    """
    dim = row.size
    values = row.astype(np.float64)
    # the other axis stands at 0 (sin 0 = 0, cos 0 = 1, angle 0) in a quarter of the columns or more:
    # a 1-D table's second row (a sinusoidal one's) is no grid's, and tries no other base
    if dim < 8 or np.count_nonzero((np.abs(values) <= 1e-7) | (np.abs(values - 1.0) <= 1e-7)) < dim // 4:
        return ()
    values = values[(values > 1e-6) & (values < 1.0 - 1e-9)]
    if not values.size:
        return ()
    angles = np.unique(np.concatenate([np.arcsin(values), np.arccos(values), values]))
    angles = angles[(angles > 1e-3) & (angles < 0.999)]  # ω_0 = 1 (read as 1 − 1e-7) is no ω_1

    def present(targets: np.ndarray) -> np.ndarray:
        index = np.clip(np.searchsorted(angles, targets), 1, len(angles) - 1)
        nearest = np.minimum(np.abs(angles[index] - targets), np.abs(angles[index - 1] - targets))
        return nearest <= 1e-5 * np.maximum(targets, 1e-3)

    if len(angles) < 3:
        return ()
    steps = angles[present(angles**2) & present(angles**3)]
    if not steps.size:
        return ()
    step = float(steps[-1])  # ω_1 is the largest such angle (its powers qualify too)
    exponents = sorted({dim // 4, dim // 4 - 1, (dim + 3) // 4, (dim + 3) // 4 - 1, dim // 2} - {0})
    found: list[float] = []
    for exponent in exponents:
        logarithm = -exponent * math.log(step)
        if not 0.0 < logarithm < math.log(1e12):
            continue
        base = math.exp(logarithm)
        rounded = float(f"{base:.3g}")
        if rounded > 1.0 and abs(base / rounded - 1.0) < _ROUND_BASE and rounded not in found:
            found.append(rounded)
    return tuple(found)


def _factor_pairs(tokens: int) -> list[tuple[int, int]]:
    pairs = [(h, tokens // h) for h in range(1, tokens + 1) if tokens % h == 0]
    return sorted(pairs, key=lambda pair: (round(abs(math.log(pair[0] / pair[1])), 9), -pair[1]))[:_MAX_GRIDS]


def grid_candidates(table: np.ndarray) -> Iterator[dict[str, Any]]:
    """``grid`` (``"H,W"``), ``cls_token`` and ``extra_tokens`` for every grid ``table``'s rows can cover."""
    nonzero = np.flatnonzero(table[:-1].any(axis=1))  # the last row is a patch's
    zero_rows = int(nonzero[0]) if len(nonzero) else len(table) - 1
    leading: list[tuple[bool, int | None, int]] = [(False, None, 0)]
    leading += [(True, None, 1)] * (zero_rows >= 1)
    leading += [(True, zero_rows, zero_rows)] * (zero_rows >= 2)
    for cls_token, extra_tokens, rows in leading:
        for height, width in _factor_pairs(len(table) - rows):
            yield {"grid": f"{height},{width}", "cls_token": cls_token, "extra_tokens": extra_tokens}


def _axis_phase(table: np.ndarray, sin_column: int, cos_column: int, first: int, last: int, steps: int):
    """(phase at token ``first``, phase per step) of one sin/cos column pair between two tokens ``steps`` apart."""
    phase = np.arctan2(table[[first, last], sin_column], table[[first, last], cos_column]).astype(np.float64)
    return float(phase[0]), float(phase[1] - phase[0]) / steps


def diffusers_crops(table: np.ndarray, height: int, width: int) -> Iterator[dict[str, Any]]:
    """diffusers' by-axis table with its ``base_size`` and ``pos_embed_max_size`` read off the rows.

    Along each axis the lowest frequency's angle is (c + i)·s·ω, i the token's index: s = base_size / M
    (the M × M table's scaling, M the side without a crop) and c = (M − side) // 2 (the crop's
    corner). c = 0 on both axes is an uncropped table with base_size s·side; otherwise M is
    side + 2c or side + 2c + 1, and base_size M·s (a whole number in diffusers' configs).
    """
    quarter = table.shape[1] // 4
    if table.shape[1] % 4 or quarter < 2 or height * width != len(table):
        return
    omega = _DIFFUSERS_BASE ** (-(quarter - 1) / quarter)  # the lowest frequency: the angle stays below π
    corners, steps = [], []
    # by-axis: [sin w | cos w | sin h | cos h]; w runs along row 0, h down column 0
    for side, offset, stride in ((width, 0, 1), (height, 2 * quarter, width)):
        if side < 2:
            continue
        start, step = _axis_phase(
            table, offset + quarter - 1, offset + 2 * quarter - 1, 0, (side - 1) * stride, side - 1
        )
        if not step > 0:
            return
        corners.append((side, start / step))
        steps.append(step / omega)
    if not steps:
        return
    scale = float(np.mean(steps))
    corner_counts = [(side, round(corner)) for side, corner in corners]
    if any(abs(corner - round(corner)) > 0.05 or corner < -0.05 for _, corner in corners):
        return  # not a whole corner: no crop of diffusers' table
    sizes: list[tuple[float, int | None]]
    if all(count == 0 for _, count in corner_counts):
        # uncropped, each axis scaled by its own side: base_size / (side · interpolation_scale) per step
        spans = [step * side for step, (side, _) in zip(steps, corners, strict=True)]
        if max(spans) - min(spans) > 1e-3 * max(spans):
            return
        sizes = [(float(np.mean(spans)), None)]
    else:
        sides = [set(range(side + 2 * count, side + 2 * count + 2)) for side, count in corner_counts]
        sizes = [(scale * size, size) for size in sorted(set.intersection(*sides)) if size >= max(height, width)]
    # span = base_size / interpolation_scale: a whole base_size at scale 1 first (any crop), then the others
    for interpolation in _INTERPOLATION_SCALES:
        found = False
        for span, max_size in sizes:
            base_size = span * interpolation
            if abs(base_size - round(base_size)) < 1e-3 * base_size and round(base_size) > 0:
                found = True
                yield {
                    "base_size": float(round(base_size)),
                    "interpolation_scale": interpolation,
                    "pos_embed_max_size": max_size,
                }
        if found:
            return


def mrope_sections(
    table: np.ndarray,
    height: int,
    width: int,
    layout: str,
    thresholds: dict[str, float] | None = None,
    frames: int = 1,
) -> str | None:
    """Qwen2-VL's ``t,h,w`` sections of an M-RoPE table: an image's (t = 0 throughout), or a video's of
    ``frames`` frames (tokens row-major over t, h, w), or None.

    Frequencies fall along the head, t's first: the first frequency that turns between tokens (0, 0) and
    (H − 1, 0) starts h's, and the first that turns between (0, 0) and (0, W − 1) starts w's. In an image
    the t section never turns; in a video the first frequency turns between frames 0 and T − 1 and no
    h or w one does. ``thresholds`` keeps each layout's threshold (64 roundings at its largest
    |value|) between calls on one table: one pass over it, not one a grid.

    >>> import pecli
    >>> video = pecli.encode("rope2d", None, 32, grid="3,4,5", sections="4,6,6", part="cos")
    >>> mrope_sections(video, 4, 5, "half", frames=3), mrope_sections(video, 3, 20, "half")
    ('4,6,6', None)
    """
    half = table.shape[1] // 2
    if table.shape[1] % 2 or height < 2 or width < 2 or len(table) != frames * height * width:
        return None
    columns = table[:, :half] if layout == "half" else table[:, 0::2]
    threshold = None if thresholds is None else thresholds.get(layout)
    if threshold is None:
        scale = float(np.abs(columns).max()) or 1.0
        threshold = 64 * rounding_tolerance(value_precision(table), scale=scale)
        if thresholds is not None:
            thresholds[layout] = threshold
    # a slow section's first frequency barely moves a cos over a small grid (1 − cos θ ≈ θ²/2): read again
    # at one rounding when 64 see no turn (regenerating the table decides either way)
    for margin in (1.0, 1 / 64):
        sections = _turning_sections(columns, (frames, height, width), threshold * margin)
        if sections is not None:
            return sections
    return _proportional_sections(columns, height, width, threshold / 64) if frames == 1 else None


def _proportional_sections(columns: np.ndarray, height: int, width: int, threshold: float) -> str | None:
    """Qwen2-VL's split (t, h, w = 16, 24, 24 of 64 frequencies: 2 : 3 : 3) when h's first frequency (the first
    to change at all) is at a quarter of the head and no w frequency turns over the grid (at base 1e6 w's
    first turns cos by ~1e-7 over 4 tokens): the split is then assumed, not read (:func:`assumed_sections` says so)."""
    half = columns.shape[1]
    # t's frequencies stand at angle 0 on every token of an image: the first to change at all is h's first
    turns_with_h = columns[(height - 1) * width] != columns[0]
    turns_with_w = np.abs(columns[width - 1] - columns[0]) > threshold
    if half % 8 or turns_with_w.any() or not turns_with_h.any() or int(turns_with_h.argmax()) != half // 4:
        return None
    return f"{half // 4},{3 * half // 8},{3 * half // 8}"


def assumed_sections(table: np.ndarray, best: Candidate) -> Undetermined | None:
    """Why ``best``'s M-RoPE sections are assumed (Qwen2-VL's proportional split, :func:`mrope_sections`),
    not read off ``table`` (no w frequency turns over its grid); None when they are read, or there are none.

    >>> import pecli
    >>> table = pecli.encode("rope2d", None, 64, grid="4,4", sections="8,12,12", base=1e6, part="cos")
    >>> params = {**SCHEMES["rope2d"].defaults, "grid": "4,4", "sections": "8,12,12", "base": 1e6, "part": "cos"}
    >>> assumed_sections(table, Candidate("rope2d", params)).note[:62]
    "no w frequency turns by more than the values' rounding over 4 "
    """
    sections, grid = best.params.get("sections"), best.params.get("grid")
    if sections is None or grid is None or len(table) != math.prod(axial_grid(grid, sections)):
        return None
    *frames, height, width = axial_grid(grid, sections)
    layout = "interleaved" if best.params.get("layout") == "interleaved" else "half"
    half = table.shape[1] // 2
    columns = table[:, :half] if layout == "half" else table[:, 0::2]
    # mrope_sections' thresholds: 64 roundings, then one
    threshold = 64 * rounding_tolerance(value_precision(table), scale=float(np.abs(columns).max()) or 1.0)
    if (frames and frames[0] > 1) or any(
        _turning_sections(columns, (1, height, width), threshold * margin) is not None for margin in (1.0, 1 / 64)
    ):
        return None
    return Undetermined(
        "sections",
        f"no w frequency turns by more than the values' rounding over {width} tokens: Qwen2-VL's proportional split "
        f"t, h, w = {sections} (2 : 3 : 3) is assumed, not read",
        readings=({"sections": sections},),
    )


def _turning_sections(columns: np.ndarray, grid: tuple[int, int, int], threshold: float) -> str | None:
    """:func:`mrope_sections` of one frequency per column (``columns``), read with ``threshold``."""
    frames, height, width = grid
    half = columns.shape[1]
    turns_with_h = np.abs(columns[(height - 1) * width] - columns[0]) > threshold
    turns_with_w = np.abs(columns[width - 1] - columns[0]) > threshold
    if not turns_with_h.any() or not turns_with_w.any():
        return None
    h_start, w_start = int(turns_with_h.argmax()), int(turns_with_w.argmax())
    if not 0 < h_start < w_start < half:
        return None
    if frames > 1:  # the last frame's first token: only t's frequencies have turned, the first of them at least
        turns_with_t = np.abs(columns[(frames - 1) * height * width] - columns[0]) > threshold
        if not turns_with_t[0] or turns_with_t[h_start:].any():
            return None
    return f"{h_start},{w_start - h_start},{half - w_start}"


def _rope_parts(table: np.ndarray) -> tuple[str, ...]:
    """The parts an axial RoPE table can be: token (0, 0) has angle 0, so its row tells."""
    first = table[0]
    return ("cos",) if (first == 1).all() else ("sin", "angle") if not first.any() else ()


def _mrope_candidates(
    table: np.ndarray, grid: tuple[int, int, int], part: str, bases: tuple[float, ...], thresholds: dict[str, float]
) -> Iterator[dict]:
    """Qwen2-VL's M-RoPE over ``grid`` (T, H, W; T = 1 an image, written ``H,W``), its sections read off."""
    frames, height, width = grid
    spelled = f"{height},{width}" if frames == 1 else f"{frames},{height},{width}"
    for layout in ("half", "interleaved"):
        sections = mrope_sections(table, height, width, layout, thresholds, frames=frames)
        if sections is not None:
            for base in (
                *bases,
                *(read for read in _mrope_bases(table, grid, layout, part, sections) if read not in bases),
            ):
                named = None if layout == "half" else layout  # Qwen2-VL's half is the default with sections
                yield {"grid": spelled, "part": part, "sections": sections, "layout": named, "base": base}


def _mrope_bases(table: np.ndarray, grid: tuple[int, int, int], layout: str, part: str, sections: str) -> list[float]:
    """The bases M-RoPE's h and w sections show (its frequencies are the 1-D RoPE's, split into sections): each
    fitted on the tokens along its axis from (0, 0), the other coordinates at 0."""
    _, height, width = grid
    half = table.shape[1] // 2
    columns = table[:, :half] if layout == "half" else table[:, 0::2]
    _, h_count, w_count = map(int, sections.split(","))
    h_start, w_start = half - w_count - h_count, half - w_count
    along_h = columns[: height * width : width, h_start:w_start]  # tokens (h, 0)
    along_w = columns[:width, w_start:]  # tokens (0, w)
    found = [
        *section_bases(along_h, part, h_start, table.shape[1]),
        *section_bases(along_w, part, w_start, table.shape[1]),
    ]
    return list(dict.fromkeys(found))


def _video_grids(tokens: int) -> Iterator[tuple[int, int, int]]:
    """(T, H, W) of a video's tokens: T ≥ 2 frames of H × W (both ≥ 2), fewest frames first."""
    for frames in range(2, tokens // 4 + 1):
        if tokens % frames == 0:
            for height, width in _factor_pairs(tokens // frames):
                if height >= 2 and width >= 2:
                    yield frames, height, width


def _rope2d_candidates(
    table: np.ndarray, height: int, width: int, bases: tuple[float, ...], thresholds: dict[str, float]
) -> Iterator[dict]:
    """Axial RoPE over H × W: diffusers' (w first), timm's/EVA-02's (h first), Qwen2-VL's M-RoPE sections."""
    grid = f"{height},{width}"
    for part in _rope_parts(table):
        if table.shape[1] % 4 == 0:
            for layout, indexing, base in itertools.product(("interleaved", "half"), ("xy", "ij"), bases):
                # diffusers' order is the scheme's default; timm's ij spells its layout as EVA-02's preset does
                if indexing == "xy":
                    spelled = {"layout": None if layout == "interleaved" else layout}
                else:
                    spelled = {"layout": layout, "grid_indexing": "ij"}
                yield {"grid": grid, "part": part, **spelled, "base": base}
        yield from _mrope_candidates(table, (1, height, width), part, bases, thresholds)


def grid_scheme_candidates(table: np.ndarray, bases: tuple[float, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(scheme, full parameters) of every grid convention over every grid the token count allows."""
    dim = table.shape[1]
    sincos_presets = [resolve("sincos2d", name, {})[1] for name in presets_of("sincos2d")]
    diffusers = resolve("sincos2d", "diffusers", {})[1]
    read_bases: dict[int, tuple[float, ...]] = {}
    thresholds: dict[str, float] = {}  # each layout's turning threshold, for M-RoPE's sections
    for grid in grid_candidates(table):
        height, width = map(int, grid["grid"].split(","))
        # behind diffusers' extra_tokens zero rows (cls_token with extra_tokens), or MAE's one cls row
        lead = (grid["extra_tokens"] or 1) if grid["cls_token"] else 0
        if lead not in read_bases:  # the bases the grid's second token shows, beyond the round ones
            shown = grid_bases(table[lead + 1]) if len(table) > lead + 1 else ()
            read_bases[lead] = tuple(base for base in shown if base not in bases)
        grid_bases_here = (*bases, *read_bases[lead])
        for params in sincos_presets:  # the interleaved layout takes any d; the others d divisible by 4
            if dim % 4 == 0 or params["layout"] == "interleaved":
                yield "sincos2d", {**params, **grid}
        for params, base in itertools.product(sincos_presets, read_bases[lead]):  # a preset at a base read off the row
            if dim % 4 == 0 or params["layout"] == "interleaved":
                yield "sincos2d", {**params, **grid, "base": base}
        # every layout at the grid bases, beyond the presets' (the presets above come first)
        for layout, base in itertools.product(SCHEMES["sincos2d"].choices["layout"], grid_bases_here):
            if dim % 4 == 0 or layout == "interleaved":
                yield "sincos2d", {**SCHEMES["sincos2d"].defaults, **grid, "layout": layout, "base": base}
        for read in diffusers_crops(table[lead:], height, width):
            yield "sincos2d", {**diffusers, **grid, **read}
        if dim in (2, 3) and not grid["cls_token"]:
            for layout in SCHEMES["coordconv"].choices["layout"]:  # uber's columns differ on a non-square grid
                yield "coordconv", {**SCHEMES["coordconv"].defaults, "grid": grid["grid"], "layout": layout}
        if not grid["cls_token"]:
            for params in _rope2d_candidates(table, height, width, grid_bases_here, thresholds):
                yield "rope2d", {**SCHEMES["rope2d"].defaults, **params}
    # a video's M-RoPE (Qwen2-VL, T frames of H × W): its sections read off, at the round bases and the row's
    video_bases = (*bases, *read_bases.get(0, ()))
    for part in _rope_parts(table):
        for video in _video_grids(len(table)):
            for params in _mrope_candidates(table, video, part, video_bases, thresholds):
                yield "rope2d", {**SCHEMES["rope2d"].defaults, **params}


def _one_line_grid(
    values: np.ndarray, best: Candidate, screened: Iterable[tuple[float, Candidate]], tolerance: float
) -> Candidate | None:
    """The first screened grid reading of one row or one column (a 1 × W rope2d or sincos2d table) of another
    scheme than ``best``'s that writes every row within rounding too; None when there is none.

    Such a grid's other axis stands at 0: its half of the columns is cos 0 = 1 (sin 0 = 0), which a 1-D
    table at base b² holds within rounding on a few positions (its frequencies there are b^(−1) and less).
    Those values cannot tell the two apart; the search names the 1-D reading (the simpler, tried first) and
    this one beside it."""
    if best.params.get("grid") is not None:
        return None
    for excess, candidate in screened:
        if excess > 1.0:
            break  # sorted: the rest are beyond the noise
        grid = candidate.params.get("grid")
        if (
            candidate.scheme == best.scheme
            or grid is None
            or 1 not in axial_grid(grid, candidate.params.get("sections"))
        ):
            continue
        error = _max_error(values, candidate, [range(0, len(values))], tolerance)
        return replace(candidate, max_error=error) if error <= tolerance else None
    return None
