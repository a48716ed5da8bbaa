"""Colormaps as RGB lookup tables for the terminal, without matplotlib: RdBu and viridis built in,
and the xterm 256-colour entries that keep a map's order (:func:`ordered_xterm`).

>>> colormap_lut("RdBu").shape
(256, 3)
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "LUT_SIZE",
    "RDBU",
    "VIRIDIS",
    "XTERM_ORDER",
    "cielab",
    "colormap_lut",
    "ordered_xterm",
    "rdbu_lut",
    "xterm_order",
    "xterm_palette",
]

#: ColorBrewer's 11-class RdBu, the anchors of matplotlib's "RdBu" (matplotlib/_cm.py, _RdBu_data), low to high
RDBU: tuple[tuple[int, int, int], ...] = (
    (103, 0, 31),
    (178, 24, 43),
    (214, 96, 77),
    (244, 165, 130),
    (253, 219, 199),
    (247, 247, 247),
    (209, 229, 240),
    (146, 197, 222),
    (67, 147, 195),
    (33, 102, 172),
    (5, 48, 97),
)
#: matplotlib's viridis sampled at 17 evenly spaced points (matplotlib 3.11, ``colormaps["viridis"]``),
#: interpolated linearly in between: within 6/255 of matplotlib's 256 colours
VIRIDIS: tuple[tuple[int, int, int], ...] = (
    (68, 1, 84),
    (72, 24, 106),
    (71, 45, 123),
    (66, 64, 134),
    (59, 82, 139),
    (51, 99, 141),
    (44, 114, 142),
    (38, 130, 142),
    (33, 145, 140),
    (31, 159, 136),
    (39, 173, 129),
    (61, 188, 116),
    (92, 200, 99),
    (129, 211, 77),
    (170, 220, 50),
    (213, 226, 26),
    (253, 231, 37),
)
_ANCHORS = {"RdBu": RDBU, "viridis": VIRIDIS}
#: matplotlib's default colormap resolution (rcParams["image.lut"])
LUT_SIZE = 256

#: :func:`ordered_xterm` of the built-in maps, computed once (~50 ms a run otherwise); a test recomputes them
XTERM_ORDER: dict[str, tuple[int, ...]] = {
    "RdBu": (
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        52,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        88,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        167,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        173,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        216,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        223,
        224,
        224,
        224,
        224,
        224,
        224,
        224,
        224,
        224,
        224,
        224,
        224,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        255,
        254,
        254,
        254,
        254,
        254,
        254,
        254,
        254,
        254,
        254,
        254,
        253,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        152,
        117,
        117,
        117,
        117,
        117,
        117,
        110,
        110,
        110,
        110,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        74,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        67,
        32,
        32,
        32,
        32,
        32,
        32,
        32,
        32,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
        25,
    ),
    "viridis": (
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        53,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        24,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        30,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        36,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        78,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        113,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        148,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        184,
        220,
        220,
    ),
}


def rdbu_lut() -> np.ndarray:
    """RdBu as matplotlib builds it: the 11 anchors evenly spaced, interpolated linearly to 256 RGB rows.

    >>> lut = rdbu_lut()
    >>> lut.shape, lut[0].tolist(), lut[-1].tolist()
    ((256, 3), [103, 0, 31], [5, 48, 97])
    """
    return _anchor_lut(RDBU)


@functools.lru_cache(maxsize=4)
def colormap_lut(name: str) -> np.ndarray:
    """The 256 RGB rows of colormap ``name``: RdBu and viridis built in, any other from matplotlib.

    >>> colormap_lut("viridis")[[0, -1]].tolist()
    [[68, 1, 84], [253, 231, 37]]
    """
    if name in _ANCHORS:
        return _anchor_lut(_ANCHORS[name])
    from pecli.render.image import check_cmap  # only for a colormap named on the command line

    return (check_cmap(name)(np.linspace(0.0, 1.0, LUT_SIZE))[:, :3] * 255).astype(np.uint8)


def _anchor_lut(colors: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    anchors = np.asarray(colors, dtype=np.float64) / 255.0
    # the same arithmetic as matplotlib.colors._create_lookup_table (in units of LUT steps), so every byte matches
    where = np.linspace(0.0, 1.0, len(colors)) * (LUT_SIZE - 1)
    samples = (LUT_SIZE - 1) * np.linspace(0.0, 1.0, LUT_SIZE)
    upper = np.searchsorted(where, samples)[1:-1]
    fraction = ((samples[1:-1] - where[upper - 1]) / (where[upper] - where[upper - 1]))[:, None]
    inner = fraction * (anchors[upper] - anchors[upper - 1]) + anchors[upper - 1]
    table = np.clip(np.concatenate([anchors[:1], inner, anchors[-1:]]), 0.0, 1.0)
    # matplotlib's to_rgba(bytes=True) truncates value * 255
    return (table * 255).astype(np.uint8)


def xterm_palette() -> np.ndarray:
    """RGB of xterm colours 16-255 (the 6×6×6 cube and the grey ramp; 0-15 follow the user's theme).

    >>> xterm_palette()[[0, -1]].tolist()
    [[0, 0, 0], [238, 238, 238]]
    """
    levels = np.array([0, 95, 135, 175, 215, 255])
    cube = np.array([(r, g, b) for r in levels for g in levels for b in levels])
    greys = np.array([(8 + 10 * i,) * 3 for i in range(24)])
    return np.concatenate([cube, greys])


def cielab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of 8-bit sRGB rows: a distance there matches what the eye sees, unlike one in RGB.

    >>> cielab(np.array([[255, 255, 255], [0, 0, 0]])).round(1).tolist()
    [[100.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    linear = rgb.astype(np.float64) / 255.0
    linear = np.where(linear <= 0.04045, linear / 12.92, ((linear + 0.055) / 1.055) ** 2.4)
    xyz = linear @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def ordered_xterm(lut: np.ndarray) -> np.ndarray:
    """xterm colour numbers (16-255) for each row of ``lut`` that keep the map's order.

    The nearest colour alone can step back along the map: a lighter or greyer blue between two
    darker ones reads as a band that is not in the data. Each palette colour is placed where it
    lies along the map (its nearest ``lut`` row); the colours chosen for rows 0, 1, 2… never step
    back in that place, and their CIELAB lightness moves only the way the map's does; among such
    choices the total CIELAB distance is least (dynamic programming over the palette).

    >>> chosen = ordered_xterm(rdbu_lut())
    >>> int(chosen[0]), int(chosen[-1]), len(set(chosen.tolist())) > 10
    (52, 25, True)
    """
    lut_lab = cielab(lut)
    palette = cielab(xterm_palette())
    cost = np.sqrt(((lut_lab[:, None, :] - palette[None, :, :]) ** 2).sum(axis=2))  # (lut rows, palette)
    place = cost.argmin(axis=0)
    lightness = palette[:, 0]
    forward = place[None, :] >= place[:, None]  # [previous, next]: never back along the map
    rising = forward & (lightness[None, :] >= lightness[:, None])
    falling = forward & (lightness[None, :] <= lightness[:, None])
    # the map's lightness trend over ±4 rows: 8-bit rounding jitters it row to row
    rows = np.arange(1, len(lut_lab))
    map_rises = lut_lab[np.minimum(rows + 4, len(lut_lab) - 1), 0] >= lut_lab[np.maximum(rows - 5, 0), 0]
    total = cost[0].copy()
    back = np.zeros(cost.shape, dtype=np.int64)
    for row in range(1, len(cost)):
        allowed = rising if map_rises[row - 1] else falling
        reach = np.where(allowed, total[:, None], np.inf)  # the path cost of each previous colour
        back[row] = reach.argmin(axis=0)
        total = reach.min(axis=0) + cost[row]
    chosen = np.empty(len(cost), dtype=np.int64)
    chosen[-1] = int(total.argmin())
    for row in range(len(cost) - 1, 0, -1):
        chosen[row - 1] = back[row][chosen[row]]
    return chosen + 16


def xterm_order(name: str) -> tuple[int, ...]:
    """:func:`ordered_xterm` of colormap ``name``: the built-in maps' from :data:`XTERM_ORDER`, others computed.

    >>> xterm_order("RdBu") == tuple(ordered_xterm(colormap_lut("RdBu")).tolist())
    True
    """
    if name in XTERM_ORDER:
        return XTERM_ORDER[name]
    return tuple(ordered_xterm(colormap_lut(name)).tolist())
