"""Figure titles and axes: the table's name and only what sets it apart, and axes named for what the table is.

A title that lists every parameter (``freq_shift=null, original_max_position=null, …``) runs off
both edges of the image and hides the one parameter that matters; :func:`table_title` keeps the
shape and the parameters that differ from the scheme's defaults, and :func:`fit_title` wraps the
result to the figure's width, shortening the last line with "…" rather than cutting it.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from pecli.schemes.catalog import find_scheme

__all__ = ["TableAxes", "changed_parameters", "fit_title", "panel_titles", "table_axes", "table_title"]

#: metadata values that mean "not set"
_UNSET = ("", "null", "none", "None")
#: an average glyph of the title font is about this many times its size wide (DejaVu Sans)
_GLYPH_WIDTH = 0.55


def _same(value: str, default: object) -> bool:
    if default is None:
        return value in _UNSET
    if isinstance(default, bool):
        return value.lower() == str(default).lower()
    try:
        return float(value) == float(default)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return value == str(default)


def table_title(metadata: Mapping[str, str]) -> str | None:
    """``scheme (preset), len × d: param=value, …`` with only the parameters that differ from the defaults.

    None when ``metadata`` names no known scheme.

    >>> table_title({"scheme": "sinusoidal", "len": "2048", "d": "512", "base": "10000.0", "freq_shift": "null"})
    'sinusoidal, 2048 × 512'
    >>> table_title({"scheme": "rope", "len": "4096", "d": "128", "part": "cos", "scaling": "none", "base": "500000"})
    'rope, 4096 × 128: base=500000, part=cos'

    A size given alone (a relative scheme's length, with no d) is named, as the other titles name
    sizes (``d=128, len=4096``): a bare number would read as a parameter's value.

    >>> table_title({"scheme": "alibi", "len": "2", "heads": "3"})
    'alibi, len=2: heads=3'
    """
    from pecli.schemes.catalog import SCHEMES

    scheme = SCHEMES.get(metadata.get("scheme", ""))
    if scheme is None:
        return None
    sizes = {name: metadata[name] for name in ("len", "d") if metadata.get(name) not in (None, *_UNSET)}
    shape = " × ".join(sizes.values()) if len(sizes) == 2 else "".join(f"{name}={size}" for name, size in sizes.items())
    return scheme_title(scheme.name, metadata, preset=metadata.get("preset"), shape=shape)


def scheme_title(
    scheme: str, params: Mapping[str, object], *, preset: str | None = None, shape: str = "", skip: tuple[str, ...] = ()
) -> str:
    """``scheme (preset), shape: param=value, …``, naming only the parameters (less ``skip``) that differ
    from the scheme's defaults; values from metadata (text) or from Python (``None`` is unset).

    >>> scheme_title("alibi", {"heads": 8, "head": None, "part": "bias"}, shape="d=4", skip=("part",))
    'alibi, d=4: heads=8'
    """
    shown = {name: str(value) for name, value in params.items() if name not in skip}
    changed = changed_parameters(scheme, shown)
    return (
        scheme + (f" ({preset})" if preset else "") + (f", {shape}" if shape else "")
        + (f": {', '.join(changed)}" if changed else "")
    )  # fmt: skip


def changed_parameters(scheme: str, metadata: Mapping[str, str]) -> list[str]:
    """``name=value`` for each of ``scheme``'s parameters in ``metadata`` that differs from its default.

    A scheme this version does not know (a file's metadata may name any) has no parameters to name.

    >>> changed_parameters("rope", {"base": "10000.0", "scaling": "yarn", "factor": "8.0", "mscale": "None"})
    ['scaling=yarn', 'factor=8.0']
    >>> changed_parameters("from-a-newer-pecli", {"base": "1"})
    []
    """
    from pecli.schemes.catalog import SCHEMES

    defaults = SCHEMES[scheme].defaults if scheme in SCHEMES else {}
    return [
        f"{name}={_short(metadata[name])}"
        for name, default in defaults.items()
        if name in metadata and not _same(metadata[name], default)
    ]


def _short(value: str) -> str:
    """A long float as 6 significant digits (a derived YaRN attention factor, say); a short value as is.

    A long list (LongRoPE's 64 rescale factors) is its count.

    >>> _short("1.1386294361119891"), _short("500000.0"), _short("8,8"), _short("0.000244140625")
    ('1.13863', '500000.0', '8,8', '0.000244141')
    >>> _short(str(tuple(range(1, 33))))
    '(32 values)'
    """
    if len(value) > 24 and value.count(",") >= 3:
        return f"({value.count(',') + 1} values)"
    try:
        number = float(value)
    except ValueError:
        return value
    shorter = f"{number:.6g}"
    return shorter if len(value) > 10 and "e" not in shorter else value


_PART_BREAK = re.compile(r", |: | — | (?=\[)")


def panel_titles(labels: Sequence[str]) -> list[str]:
    """What sets each panel apart: the labels less the parts all of them share (the figure's title says those).

    Labels are split into parts at ``, ``, ``: ``, `` — `` and before ``[``; the parts every label
    begins and ends with go, and brackets around what is left go too. A label that would be left
    empty (all labels alike) stays whole.

    >>> panel_titles(["rope: base=500000.0, factor=8.0 — llama31.safetensors [cos]",
    ...               "rope: base=500000.0, factor=8.0 — llama31.safetensors [sin]"])
    ['cos', 'sin']
    >>> panel_titles(["head 0, slope 0.5", "head 1, slope 0.25"]), panel_titles(["cos", "sin"])
    (['head 0, slope 0.5', 'head 1, slope 0.25'], ['cos', 'sin'])
    """
    if len(labels) < 2:
        return list(labels)
    split = [_PART_BREAK.split(label) for label in labels]
    separators = [_PART_BREAK.findall(label) for label in labels]
    shortest = min(len(parts) for parts in split)
    lead = 0
    while lead < shortest - 1 and len({parts[lead] for parts in split}) == 1:
        lead += 1
    trail = 0
    while trail < shortest - 1 - lead and len({parts[-1 - trail] for parts in split}) == 1:
        trail += 1
    titles = []
    for label, parts, between in zip(labels, split, separators, strict=True):
        kept = len(parts) - trail
        text = "".join(part + (between[i] if i < kept - 1 else "") for i, part in enumerate(parts[lead:kept], lead))
        text = text.strip()
        titles.append(text[1:-1] if text.startswith("[") and text.endswith("]") else text or label)
    return titles if len(set(titles)) == len(titles) else list(labels)


def fit_title(title: str, width_inches: float, *, fontsize: float = 10.0, max_lines: int = 2) -> str:
    """``title`` wrapped to ``width_inches`` of ``fontsize``-point text, at most ``max_lines`` lines.

    >>> fit_title("sinusoidal, 2048 × 512", 8.0)
    'sinusoidal, 2048 × 512'
    >>> print(fit_title("rope: " + ", ".join(f"p{i}=value" for i in range(30)), 4.0))
    rope: p0=value, p1=value, p2=value, p3=value,
    p4=value, p5=value, p6=value, p7=value, p8=value,…
    >>> print(fit_title("score — rope: " + ", ".join(f"p{i}=value" for i in range(30)) + " — llama3", 4.0))
    score — rope: p0=value, p1=value, p2=value,
    p3=value, p4=value, p5=value, p6=value,… — llama3
    """
    columns = max(10, int(width_inches * 72 / (fontsize * _GLYPH_WIDTH)))
    lines = textwrap.wrap(title, columns, break_on_hyphens=False) or [""]
    if len(lines) <= max_lines:
        return "\n".join(lines)
    head, between, name = title.rpartition(" — ")
    if between and len(between + name) <= columns // 2:
        # the input's name (a file, a model directory) closes the title: shorten the parameters before it
        lines = _shortened(head, columns, max_lines, reserve=len(between + name))
        if len(lines[-1] + between + name) > columns:  # fewer lines than allowed: the name takes the next
            return "\n".join([*lines, between.strip() + " " + name])
        return "\n".join([*lines[:-1], lines[-1] + between + name])
    return "\n".join(_shortened(title, columns, max_lines))


def _shortened(text: str, columns: int, max_lines: int, *, reserve: int = 0) -> list[str]:
    """``text`` wrapped to ``columns``, its last line ending in "…" and leaving ``reserve`` columns free."""
    lines = textwrap.wrap(text, columns, break_on_hyphens=False) or [""]
    if len(lines) < max_lines or (len(lines) == max_lines and len(lines[-1]) + reserve <= columns):
        return lines
    last = " ".join(lines[max_lines - 1 :])
    room = columns - reserve
    shortened = textwrap.shorten(last, room, placeholder="…") if room >= 2 else "…"
    if len(shortened) > room or shortened == "…":  # a word longer than the line: cut the word
        shortened = last[: max(room - 1, 0)] + "…"
    return [*lines[: max_lines - 1], shortened]


class TableAxes(NamedTuple):
    """Axis labels, and the value of row ``i``: ``row_start + row_step × i`` (timesteps, say)."""

    x_label: str = "Embedding Dimension"
    y_label: str = "Position"
    row_start: float = 0.0
    row_step: float = 1.0


#: a (rows, 1, k) file with at most this many rows is read as one query row per head; more, as positions
_MOST_HEADS = 128


def table_axes(metadata: Mapping[str, str], *, symmetric: bool = False, shape: Sequence[int] = ()) -> TableAxes:
    """The axes of a table, from its metadata: timesteps, query/key positions, positions of a distance matrix.

    ``symmetric``: the table is square and equal to its transpose, as a distance or similarity matrix
    is (and a (len, d) table never is); without metadata (a .npy, a pipe) it gets position axes too.

    >>> table_axes({"scheme": "timestep", "timesteps": "0:1000:10"})
    TableAxes(x_label='Embedding Dimension', y_label='Timestep t', row_start=0.0, row_step=10.0)
    >>> table_axes({"scheme": "alibi"})[:2], table_axes({"metric": "cosine"})[:2]
    (('Key position j', 'Query position i'), ('Position j', 'Position i'))
    >>> table_axes({"scheme": "t5", "part": "buckets"})[:2], table_axes({"scheme": "coordconv"})[:2]
    (('Key position j', 'Query position i'), ('Embedding Dimension', 'Pixel (grid rows, row-major)'))
    >>> table_axes({}, symmetric=True)[:2]
    ('Position j', 'Position i')

    ``shape``: the file's own shape, where a table without a scheme is drawn from a 3-D array, read as
    compare reads one: square slices (heads, L, L) are (head, query, key); (heads, 1, k), squeezed to
    heads × k, one query row per head (BLOOM's build_alibi_tensor), is (head, key) — when there are at most
    128 rows, as many as a model's heads: the PyTorch tutorial's ``pe`` buffer, (max_len, 1, d), stays a
    position table.

    >>> table_axes({}, shape=(8, 64, 64))[:2], table_axes({}, shape=(8, 1, 64))[:2]
    (('Key position j', 'Query position i'), ('Key position j', 'Head h (query row 0)'))
    >>> table_axes({}, shape=(8, 64, 32))[:2], table_axes({}, shape=(5000, 1, 512))[:2]
    (('Embedding Dimension', 'Position'), ('Embedding Dimension', 'Position'))
    """
    if "scheme" not in metadata and len(shape) == 3 and shape[0] > 1:
        if shape[1] == 1 and shape[0] <= _MOST_HEADS:
            return TableAxes("Key position j", "Head h (query row 0)")
        if shape[1] == shape[2]:
            return TableAxes("Key position j", "Query position i")
    described = find_scheme(metadata.get("scheme"))
    axes = described.axes if described else None
    if axes == "timesteps":
        spacing = _timestep_spacing(metadata.get("timesteps", ""))
        if spacing is None:  # rows are not a timestep axis: say what a row is, not "Timestep t" over row numbers
            return TableAxes(y_label="Row i (timestep t_i, unevenly spaced)")
        return TableAxes(y_label="Timestep t", row_start=spacing[0], row_step=spacing[1])
    if axes == "query-key":  # biases and buckets of query i against key j
        return TableAxes("Key position j", "Query position i")
    if "metric" in metadata or (symmetric and "scheme" not in metadata):
        return TableAxes("Position j", "Position i")
    if axes == "patches":
        return TableAxes(y_label="Patch (grid rows, row-major)")
    if axes == "pixels":
        return TableAxes(y_label="Pixel (grid rows, row-major)")
    return TableAxes()


def _timestep_spacing(text: str) -> tuple[float, float] | None:
    """START and STEP of the timesteps a table records (a range, or an evenly spaced list); None when uneven.

    >>> _timestep_spacing("0:1000:10"), _timestep_spacing("[0, 250, 500]"), _timestep_spacing("[7]")
    ((0.0, 10.0), (0.0, 250.0), (7.0, 1.0))
    >>> _timestep_spacing("[0, 250, 999]") is None
    True
    """
    if not text.startswith("["):
        return _range_start_step(text)
    import json

    try:
        values = [float(value) for value in json.loads(text)]
    except (ValueError, TypeError):
        return None
    if not values:
        return 0.0, 1.0
    if len(values) == 1:
        return values[0], 1.0
    from itertools import pairwise

    steps = [b - a for a, b in pairwise(values)]
    step = (values[-1] - values[0]) / (len(values) - 1)
    if step != 0 and all(abs(each - step) <= 1e-9 * max(abs(step), 1.0) for each in steps):
        return values[0], step
    return None


def _range_start_step(text: str) -> tuple[float, float]:
    """START and STEP of ``START:STOP[:STEP]``; (0, 1) for anything else."""
    parts = text.split(":")
    try:
        if len(parts) in (2, 3):
            return float(parts[0] or 0), float(parts[2]) if len(parts) == 3 and parts[2] else 1.0
    except ValueError:
        pass
    return 0.0, 1.0
