"""Probes for engine implementers: seeded q and k, and their rotation in a model's own RoPE convention.

A table check passes while an engine's pairing is wrong (labscommunity/cascadia#69: the cos/sin
values matched, the partner did not): a probe checks the rotation itself. It holds seeded query and
key vectors (heads × positions × head_dim), the positions (0, 1, the original context ± 1, a few in
between, the longest), the expected rotated q and k and their attention scores q·k/√head_dim, all in
the model's convention: its pairing, partial rotary (only the first ``rotary_dim`` columns turn, each
with its partner within them), frequency scaling and attention factor.

:func:`diagnose_rotated` names what an engine's rotated vectors got wrong, by re-rotating the probe's
q (or k) with each known mistake (:mod:`pecli.schemes.mistakes`) and keeping those that reproduce them.

>>> probe = make_probe(rotary_spec("rope", dim=64, length=4096), heads=1, positions=[0, 1, 5])
>>> probe.q.shape, probe.q_rotated.dtype.name, probe.positions.tolist()
((1, 3, 64), 'float32', [0, 1, 5])
>>> bool(np.allclose(probe.q_rotated[:, 0], probe.q[:, 0]))  # position 0 turns nothing
True
>>> wrong = rotate(probe.spec, probe.q.astype(np.float64), probe.positions, layout="interleaved")
>>> [found.code for found in diagnose_rotated(probe, wrong)]
['pairing']
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.analysis.diagnosis.finding import Finding
from pecli.errors import ParameterError
from pecli.schemes.spec import TableSpec
from pecli.text import literal_repr

__all__ = [
    "PROBE_TENSORS",
    "ColumnOrder",
    "Probe",
    "column_orders",
    "diagnose_rotated",
    "head_dim_of",
    "make_probe",
    "probe_positions",
    "rotary_spec",
    "rotate",
    "tried_mistakes",
]

#: the tensors a probe file holds, in order
PROBE_TENSORS = ("q", "k", "positions", "q_rotated", "k_rotated", "scores")


def rotary_spec(
    reference: str,
    *,
    dim: int | None = None,
    length: int | None = None,
    preset: str | None = None,
    scheme_params: Mapping[str, Any] | None = None,
    layer_type: str | None = None,
) -> TableSpec:
    """The rotary convention ``reference`` names: a config.json, a model directory, a cached model id
    (``org/name``) or a scheme (``rope``, with ``dim``, ``length``, ``preset`` and ``scheme_params``).

    ``length`` is the longest context (default: the model's); the spec's ``part`` is left unset.

    >>> spec = rotary_spec("rope", dim=8, length=16, scheme_params={"base": 500000.0})
    >>> spec.params["base"], spec.shape
    (500000.0, (16, 8))
    >>> rotary_spec("rope:base=500000,scaling=linear,factor=2", dim=8, length=16).params["factor"]
    2.0
    """
    from pecli.models.hub_cache import is_model_id, resolve_model_id
    from pecli.schemes.specs import looks_like_spec, parse_spec
    from pecli.sources import kind_of_source

    if looks_like_spec(reference):  # NAME:param=value,…: its parameters, under those given here
        parsed = parse_spec(reference)
        preset = preset or (parsed.preset if parsed.scheme else None)
        reference = parsed.scheme or parsed.preset or reference
        scheme_params = {**parsed.params, **(scheme_params or {})}
    kind = kind_of_source(reference)
    if kind.reads_a_file and not kind.options and is_model_id(reference):
        reference, kind = resolve_model_id(reference), kind_of_source(resolve_model_id(reference))
    if kind.options:  # a config or a model directory
        from pecli.models.from_config import config_encoding, config_spec

        spec: Any = config_spec(config_encoding(reference, layer_type=layer_type), length=length)
    elif kind.reads_a_file:
        raise ParameterError(
            f"{literal_repr(reference)} is a table file, not a rotary convention",
            hint="give a config.json, a model directory, a cached model id or a scheme spec such as 'rope'",
        )
    else:
        scheme: str | None = reference
        if looks_like_spec(reference) and parse_spec(reference).scheme is None:  # a preset's name: its own scheme
            scheme, preset = None, preset or reference
        spec = TableSpec.resolve(scheme, preset, dict(scheme_params or {}), length=length, dim=dim)
    from pecli.schemes.catalog import get_scheme

    if get_scheme(spec.scheme).kind != "rotary" or "layout" not in spec.params or len(spec.shape) != 2:
        raise ParameterError(
            f"{literal_repr(reference)} is no 1-D rotary encoding ({spec.scheme}): rotary tables and probes are RoPE's",
            hint="give a RoPE model's config.json or a 'rope' spec",
        )
    spec.check()  # every value now (an odd dim, base 0 …), not when the first table is built
    return dataclasses.replace(spec, params={**spec.params, "part": None})


def head_dim_of(reference: str, spec: TableSpec) -> int:
    """The head's width: a config's ``head_dim`` (its table covers the rotary columns only), else the spec's ``dim``.

    >>> head_dim_of("rope", rotary_spec("rope", dim=8, length=4))
    8
    """
    from pecli.models.hub_cache import is_model_id, resolve_model_id
    from pecli.sources import kind_of_source

    if not kind_of_source(reference).options and is_model_id(reference):
        reference = resolve_model_id(reference)
    if not kind_of_source(reference).options:
        return int(spec.dim or 0)
    from pecli.models.config import read_config
    from pecli.models.rope_config import config_head_dim

    return max(int(spec.dim or 0), config_head_dim(read_config(reference))[0])


def probe_positions(spec: TableSpec) -> list[int]:
    """0, 1, the original context ± 1, the longest position, and a few (geometric) in between.

    The original context is the scaling's ``original_max_position`` when the spec scales, else its length.

    >>> probe_positions(rotary_spec("rope", dim=8, length=4096))
    [0, 1, 5, 17, 52, 155, 463, 1377, 4095, 4096, 4097]
    """
    longest = int(spec.length or 1)
    original = int(spec.params.get("original_max_position") or longest) if _scales(spec) else longest
    ends = {0, 1, original - 1, original, original + 1, longest - 1}
    between = {int(np.rint(x)) - 1 for x in np.geomspace(2, max(original, 4), 8)[1:-1]}
    last = max(longest - 1, original + 1)
    return sorted(p for p in ends | between if 0 <= p <= last)


def _scales(spec: TableSpec) -> bool:
    return (spec.params.get("scaling") or "none") != "none"


def _rotated_columns(spec: TableSpec) -> int:
    from pecli.schemes.rope import rotary_dim

    dim = int(spec.dim or 0)
    if spec.params.get("scaling") == "proportional":  # the whole head turns, the last frequencies at 0
        return dim
    return rotary_dim(dim, float(spec.params.get("partial_rotary_factor") or 1.0))


def rotate(
    spec: TableSpec,
    x: np.ndarray,
    positions: Sequence[int] | np.ndarray,
    *,
    layout: str | None = None,
    partner_over_head: bool = False,
    swap_cos_sin: bool = False,
    length: int | None = None,
    **params: Any,
) -> np.ndarray:
    """Rotate ``x`` (…, positions, head_dim) at ``positions`` by ``spec``'s RoPE, in float64.

    The frequencies are those of a batch whose longest position is ``max(positions)`` (dynamic NTK and
    LongRoPE choose by it, as transformers' ``max(position_ids) + 1``). ``layout`` and ``params``
    override the spec's (a mistake's variant); ``partner_over_head`` pairs a partial rotary's columns
    across the whole head (column i with i + head_dim/2), the partial-rotary partner mistake;
    ``swap_cos_sin`` multiplies by sin where cos belongs and the reverse (the rotary columns only);
    ``length`` replaces ``max(positions) + 1`` where the frequencies choose by it (as an engine computed it).

    >>> spec = rotary_spec("rope", dim=4, length=8)
    >>> rotate(spec, np.array([[1.0, 0.0, 0.0, 0.0]]), [1]).round(6).tolist()
    [[0.540302, 0.0, 0.841471, 0.0]]
    """
    from pecli.schemes.rope import apply_rotary

    positions = _positions(positions)
    all_params = {**spec.params, **params}
    layout = layout or all_params["layout"]
    table = dataclasses.replace(spec, length=int(positions.max()) + 1 if length is None else length, dtype="float64")
    if length is None:
        low, high = int(positions.min()), int(positions.max())
        if high - low < max(_SPAN_ROWS, 8 * len(positions)):  # one block of rows, indexed (not a call per position)
            span = range(low, high + 1)
            cos, sin = (
                dataclasses.replace(table, params={**all_params, "part": part}).rows(span)[positions - low]
                for part in ("cos", "sin")
            )  # fmt: skip
        else:  # a few positions far apart: each its own row
            cos, sin = (
                np.stack([
                    dataclasses.replace(table, params={**all_params, "part": part}).rows(range(p, p + 1))[0]
                    for p in positions.tolist()
                ])
                for part in ("cos", "sin")
            )  # fmt: skip
    else:  # the frequencies (row 1's angles) and the factor (row 0's cos) of a table that long, at any position
        first = {part: dataclasses.replace(table, length=max(length, 2), params={**all_params, "part": part}).rows(
            range(2)) for part in ("angle", "cos")}  # fmt: skip
        angles = positions[:, None].astype(np.float64) * first["angle"][1][None, :]
        cos, sin = first["cos"][0] * np.cos(angles), first["cos"][0] * np.sin(angles)
    if layout != all_params["layout"]:  # the same frequencies, paired the other way
        cos, sin = (_relayout(values, all_params["layout"], layout, _rotated_columns(spec)) for values in (cos, sin))
    if swap_cos_sin:
        cos, sin = sin, cos
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] < cos.shape[1]:
        raise ParameterError(
            f"x has shape {x.shape}: the rotation needs a last axis (head_dim) of at least {cos.shape[1]}, "
            "the table's rotary columns",
            hint=f"pass x of shape (…, positions, head_dim ≥ {cos.shape[1]})",
        )
    passed = x.shape[-1] - cos.shape[1]  # a config's table covers the rotary columns only: the rest pass
    cos, sin = np.pad(cos, ((0, 0), (0, passed)), constant_values=1.0), np.pad(sin, ((0, 0), (0, passed)))
    turned = x.shape[-1] if partner_over_head else _rotated_columns(dataclasses.replace(spec, params=all_params))
    out = x.copy()
    out[..., :turned] = apply_rotary(x[..., :turned], cos[:, :turned], sin[:, :turned], layout=layout)
    return out


def _positions(positions: Any) -> np.ndarray:
    """``positions`` as a 1-D int64 array; a :class:`ParameterError` for a fraction, NaN, a negative or an empty list
    (a cast would truncate 0.5 to 0 and turn NaN into −2**63, named as an internal row range).

    >>> _positions([0, 1.0, np.int32(7)]).tolist()
    [0, 1, 7]
    """
    wanted = "{positions} must be a non-empty list of integer positions ≥ 0"
    try:
        values = np.asarray(positions)
    except (ValueError, TypeError) as error:
        raise ParameterError(wanted, hint="e.g. {positions=0,1,4096}") from error
    numeric = values.dtype.kind in "iub" or (values.dtype.kind == "f" and bool(np.isfinite(values).all()))
    if (values.ndim != 1 or not values.size or not numeric or (values < 0).any()
            or (values.dtype.kind == "f" and bool((values != np.round(values)).any()))
            or float(values.max()) >= 2.0**62):  # fmt: skip
        raise ParameterError(
            f"{wanted}, got {np.array2string(values, threshold=8)}",
            hint="e.g. {positions=0,1,4096}",
        )
    return values.astype(np.int64)


#: positions spanning fewer rows than this are computed as one block of rows
_SPAN_ROWS = 4096


def _relayout(values: np.ndarray, source: str, target: str, rotated: int) -> np.ndarray:
    """A cos/sin table's rotated columns moved from one pairing's placement to the other's."""
    out = values.copy()
    freqs = values[:, : rotated // 2] if source == "half" else values[:, 0:rotated:2]
    if target == "half":
        out[:, :rotated] = np.concatenate([freqs, freqs], axis=1)
    else:
        out[:, :rotated] = np.repeat(freqs, 2, axis=1)
    return out


@dataclass(frozen=True)
class ColumnOrder:
    """A reordering of the rotated columns that an engine may return, applied to q and k alike: q·k is unchanged.

    ``order[j]`` is the probe's column that the engine's column ``j`` holds.
    """

    code: str
    message: str
    order: np.ndarray

    def restore(self, values: np.ndarray) -> np.ndarray:
        """The engine's ``values`` (…, head_dim) in the probe's column order."""
        out = np.empty_like(values)
        out[..., self.order] = values
        return out


def column_orders(spec: TableSpec, head_dim: int) -> list[ColumnOrder]:
    """The column orders engines return a rotation in besides the probe's, for ``spec``'s pairing.

    Adjacent pairs: de-interleaved, evens then odds (transformers' ``apply_rotary_pos_emb_interleave``:
    DeepSeek V3, Mistral 4, GLM-4-MoE-Lite). Halves: each column beside its partner i + rotary_dim/2 (an
    engine fed q and k through llama.cpp's permuted Q/K weights, rotating adjacent pairs). Only the
    rotated columns move; the rest pass in place.

    >>> spec = rotary_spec("rope:layout=interleaved", dim=8, length=4)
    >>> [(found.code, found.order.tolist()) for found in column_orders(spec, 8)]
    [('deinterleaved', [0, 2, 4, 6, 1, 3, 5, 7])]
    """
    rotated = min(_rotated_columns(spec), head_dim)
    if rotated < 4:  # two columns: every order is the same
        return []
    rest = np.arange(rotated, head_dim)
    if spec.params["layout"] == "interleaved":
        order = np.r_[np.arange(0, rotated, 2), np.arange(1, rotated, 2), rest]
        message = ("the rotated columns are returned de-interleaved (evens, then odds), as transformers' "
                   "apply_rotary_pos_emb_interleave does")  # fmt: skip
        return [ColumnOrder("deinterleaved", message, order)]
    half = rotated // 2
    order = np.r_[np.stack([np.arange(half), np.arange(half) + half], axis=1).ravel(), rest]
    message = (
        f"the rotated columns are returned with each beside its partner (column i, then i + {half}), "
        "as an engine rotating adjacent pairs through llama.cpp's permuted Q/K weights does"
    )
    return [ColumnOrder("partners_adjacent", message, order)]


@dataclass(frozen=True)
class Probe:
    """Seeded q and k, their positions, and the expected rotated q, k and scores (float32; see the module)."""

    spec: TableSpec
    seed: int
    positions: np.ndarray  #: (positions,) int64
    q: np.ndarray  #: (heads, positions, head_dim) float32
    k: np.ndarray
    q_rotated: np.ndarray
    k_rotated: np.ndarray
    scores: np.ndarray  #: (heads, positions, positions): q_rotated · k_rotated / √head_dim

    def tensors(self) -> dict[str, np.ndarray]:
        """The probe's tensors by name (:data:`PROBE_TENSORS`)."""
        return {name: getattr(self, name) for name in PROBE_TENSORS}

    def metadata(self) -> dict[str, str]:
        """String pairs for the file's header: the convention (the spec's record) and how the probe was made."""
        heads, _, dim = self.q.shape
        return {
            **self.spec.metadata(),
            "probe": "rotary",
            "probe.seed": str(self.seed),
            "probe.heads": str(heads),
            "probe.positions": ",".join(str(int(p)) for p in self.positions),
            "probe.layout": str(self.spec.params["layout"]),
            "probe.rotary_dim": str(_rotated_columns(self.spec)),
            "probe.head_dim": str(dim),
            "probe.scores": f"q_rotated · k_rotated / sqrt({dim})",
            "probe.values": "float64 rotation, rounded once to float32; q, k ~ N(0, 1) from numpy's default_rng(seed)",
        }


def make_probe(
    spec: TableSpec,
    *,
    heads: int = 2,
    seed: int = 0,
    positions: Sequence[int] | None = None,
    head_dim: int | None = None,
) -> Probe:
    """Seeded q and k (``heads`` × positions × ``head_dim``) and their rotation by ``spec`` (see :func:`rotary_spec`).

    ``head_dim`` (default: the spec's ``dim``) may be wider than the spec's table: the columns past it pass.

    >>> probe = make_probe(rotary_spec("rope", dim=8, length=64), heads=2, seed=1)
    >>> probe.scores.shape, probe.positions[[0, -1]].tolist()
    ((2, 11, 11), [0, 65])
    """
    from pecli.memory import check_fits_in_memory
    from pecli.schemes.checks import non_negative_int, positive_int

    heads, seed = positive_int("heads", heads), non_negative_int("seed", seed)
    chosen = _positions(probe_positions(spec) if positions is None else positions)
    if head_dim is not None:
        head_dim = positive_int("head_dim", head_dim)
    rng = np.random.default_rng(seed)
    shape = (heads, len(chosen), int(head_dim or spec.dim or 0))
    # q, k, their rotations (float64) and the scores, before any of them is drawn
    check_fits_in_memory(8 * heads * len(chosen) * (6 * shape[2] + len(chosen)), what="probe", hint="use fewer {heads}")
    q, k = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    q_rotated, k_rotated = (rotate(spec, x, chosen) for x in (q, k))
    scores = np.einsum("hpd,hsd->hps", q_rotated, k_rotated) / math.sqrt(shape[2])
    f32 = np.float32
    return Probe(spec, seed, chosen, q, k, q_rotated.astype(f32), k_rotated.astype(f32), scores.astype(f32))


def _variants(probe: Probe) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(code, sentence, ``rotate`` overrides, figures) for each known mistake of the probe's convention."""
    from pecli.schemes.catalog import get_scheme

    spec, params = probe.spec, probe.spec.params
    mistakes = get_scheme(spec.scheme).known_mistakes(params)
    layout, dim, rotated = params["layout"], probe.q.shape[-1], _rotated_columns(spec)
    other = "interleaved" if layout == "half" else "half"
    names = {"half": "halves (NeoX, rotate_half)", "interleaved": "adjacent pairs (GPT-J, rotate every two)"}
    found: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
        ("pairing", f"the pairing differs: the reference pairs {names[layout]}, the rotation {names[other]}",
         {"layout": other}, {"reference_pairing": layout, "pairing": other}),
    ]  # fmt: skip
    if rotated < dim:
        found.append((
            "partial_rotary_partner",
            f"partial rotary: only the first {rotated} of {dim} columns turn, each with its partner among them; "
            f"the rotation paired them across the whole head (column i with i + {dim // 2})",
            {"partner_over_head": True}, {"rotary_columns": rotated, "head_dim": dim},
        ))  # fmt: skip
    if mistakes is None:
        return found
    if mistakes.unscaled:
        found.append((
            "unscaled",
            f"the frequency scaling ({params.get('scaling')}) is not applied: the rotation is the unscaled RoPE "
            f"of base {params.get(mistakes.base)}", dict(mistakes.unscaled), {"scaling": params.get("scaling")},
        ))  # fmt: skip
    if params.get("apply_attention_factor"):
        found.append(("constant_factor", "the attention factor is not applied",
                      {"apply_attention_factor": False}, {"attention_factor": "not applied"}))  # fmt: skip
    for code, what, changes in mistakes.swaps:
        found.append((code, what, dict(changes), {}))
    base = params.get(mistakes.base) if mistakes.base else None
    if base:
        for other_base in (10000.0, 500000.0, 1000000.0, 5000000.0, 50000.0, 100000.0):
            if abs(other_base - float(base)) > 1e-9:
                found.append(("base_differs", f"the base differs: the reference's is {float(base):g}, "
                              f"the rotation's {other_base:g}", {mistakes.base: other_base},
                              {"reference_base": float(base), "base": other_base}))  # fmt: skip
    return found


def diagnose_rotated(probe: Probe, actual: Any, *, which: str = "q", tolerance: float | None = None) -> list[Finding]:
    """The known mistakes that reproduce ``actual`` (an engine's rotated ``which``: ``q`` or ``k``) from the probe.

    Each finding names the mistake with its evidence (``residual``: max |variant − actual|). Tried: the
    other pairing, a partial rotary's partner across the whole head, the frequency scaling left out,
    the attention factor left out, applied twice or inverted, LongRoPE's other factor set, positions
    off by one, and other usual bases. An empty list: no known mistake explains the difference.
    """
    if which not in ("q", "k"):
        raise ParameterError(f"which must be 'q' or 'k', got {literal_repr(which)}", hint="which='q'")
    actual = np.asarray(actual, dtype=np.float64)
    vectors = np.asarray(getattr(probe, which), dtype=np.float64)
    expected = np.asarray(getattr(probe, f"{which}_rotated"), dtype=np.float64)
    if actual.shape != expected.shape:
        return []
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    tolerance = 2e-5 * scale if tolerance is None else tolerance
    findings: list[Finding] = []

    def kept(code: str, message: str, variant: np.ndarray, figures: dict[str, Any]) -> None:
        if float(np.abs(variant - expected).max(initial=0.0)) <= tolerance:
            return  # this mistake changes nothing at the probe's positions: it explains no difference
        off = float(np.abs(variant - actual).max(initial=0.0))
        if off <= tolerance:
            findings.append(Finding(code, message, {**figures, "residual": off}))

    for code, message, overrides, figures in _variants(probe):
        try:
            variant = rotate(probe.spec, vectors, probe.positions, **overrides)
        except ParameterError:
            continue
        kept(code, message, variant, figures)
    for code, message, variant, figures in _engine_slips(probe, vectors):
        kept(code, message, variant, figures)
    with np.errstate(divide="ignore", invalid="ignore"):
        _factor_findings(probe, expected, actual, tolerance, kept)
    for shift in (1, -1):
        shifted = probe.positions + shift
        if (shifted >= 0).all():
            kept("positions_shifted", f"positions off by one: the rotation used position p{shift:+d} for position p",
                 rotate(probe.spec, vectors, shifted), {"shift": shift})  # fmt: skip
    best: dict[str, Finding] = {}
    for found in sorted(findings, key=lambda found: found.figures["residual"]):
        best.setdefault(found.code, found)
    return list(best.values())


def tried_mistakes(probe: Probe) -> list[str]:
    """The codes :func:`diagnose_rotated` tries on ``probe``'s convention, in its order, each once.

    >>> tried_mistakes(make_probe(rotary_spec("rope", dim=16, length=64), heads=1))[:3]
    ['pairing', 'base_differs', 'not_rotated']
    """
    vectors = np.asarray(probe.q, dtype=np.float64)
    codes = [code for code, *_ in _variants(probe)] + [code for code, *_ in _engine_slips(probe, vectors)]
    return list(dict.fromkeys([*codes, "constant_factor", "positions_shifted"]))


def rounded_positions(positions: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """``positions`` rounded (to nearest, ties to even) to a float of ``mantissa_bits`` significant bits.

    bfloat16 keeps 8 (integers exact to 256), float16 11 (to 2048).

    >>> rounded_positions(np.array([0, 255, 256, 257, 1000, 4097]), 8).tolist()
    [0, 255, 256, 256, 1000, 4096]
    """
    values = np.asarray(positions, dtype=np.float64)
    exponent = np.floor(np.log2(np.maximum(values, 1.0)))
    step = 2.0 ** np.maximum(exponent - (mantissa_bits - 1), 0.0)
    return (np.round(values / step) * step).astype(np.int64)


def _engine_slips(probe: Probe, vectors: np.ndarray) -> list[tuple[str, str, np.ndarray, dict[str, Any]]]:
    """(code, sentence, variant, figures) for an engine's own slips the convention does not name: the vectors not
    rotated at all, cos and sin swapped, the positions held in bfloat16/float16, another partial rotary's width
    turned (the whole head, a half or a quarter)."""
    spec, positions = probe.spec, probe.positions
    found: list[tuple[str, str, np.ndarray, dict[str, Any]]] = [
        ("not_rotated", "the vectors are not rotated: they are the probe's input as given", vectors.copy(), {}),
        ("cos_sin_swapped", "cos and sin are swapped: each column is multiplied by sin where cos belongs",
         rotate(spec, vectors, positions, swap_cos_sin=True), {}),
    ]  # fmt: skip
    for dtype, bits in (("bfloat16", 8), ("float16", 11)):
        rounded = rounded_positions(positions, bits)
        if (rounded != positions).any():
            at = int(np.argmax(rounded != positions))
            # the batch's length max(positions) + 1 (dynamic NTK and LongRoPE choose by it): summed in that dtype
            # too (transformers' max(position_ids) + 1), or from the integer positions
            batch = int(positions.max()) + 1
            for length in dict.fromkeys((int(rounded_positions(np.array([rounded.max() + 1]), bits)[0]), batch)):
                seen = "" if length == batch else f", the batch's length {batch} became {length}"
                found.append((
                    "positions_dtype",
                    f"the positions are held in {dtype}: position {int(positions[at])} became {int(rounded[at])}{seen}",
                    rotate(spec, vectors, rounded, length=length),
                    {"dtype": dtype, "position": int(positions[at]), "rounded": int(rounded[at]), "length": length},
                ))  # fmt: skip
    head_dim, rotated = vectors.shape[-1], _rotated_columns(spec)
    if spec.params.get("scaling") == "proportional":
        return found
    # another partial rotary factor's width turned (with the frequencies of a rotary that wide): the whole head
    # where a part turns (ignored), a part where the whole head turns (assumed), or another part (differs)
    for turned in dict.fromkeys((head_dim, head_dim // 2, head_dim // 4)):
        if turned == rotated or turned < 2 or turned % 2:
            continue
        wide = dataclasses.replace(spec, dim=turned, params={**spec.params, "partial_rotary_factor": 1.0,
                                                               "rotary_dim": None})  # fmt: skip
        try:
            variant = rotate(wide, vectors, positions)
        except ParameterError:
            continue
        figures = {"rotary_columns": rotated, "turned_columns": turned, "head_dim": head_dim}
        if turned == head_dim:
            found.append(("partial_rotary_ignored",
                          f"partial rotary ignored: only the first {rotated} of {head_dim} columns turn, "
                          f"the rotation turned all {head_dim} (frequencies of a {head_dim}-wide head)",
                          variant, figures))  # fmt: skip
        elif rotated == head_dim:
            found.append(("partial_rotary_assumed",
                          f"the whole head of {head_dim} columns turns; the rotation turned only the first "
                          f"{turned} (a partial rotary factor of {turned / head_dim:g})",
                          variant, figures))  # fmt: skip
        else:
            found.append(("partial_rotary_differs",
                          f"the first {rotated} of {head_dim} columns turn (a partial rotary factor of "
                          f"{rotated / head_dim:g}); the rotation turned the first {turned} (a factor of "
                          f"{turned / head_dim:g}, frequencies of a {turned}-wide rotary)",
                          variant, figures))  # fmt: skip
    return found


def _factor_findings(probe: Probe, expected: np.ndarray, actual: np.ndarray, tolerance: float, kept: Any) -> None:
    """A constant factor between expected and actual, named by the convention's known factors."""
    from pecli.schemes.catalog import get_scheme

    mistakes = get_scheme(probe.spec.scheme).known_mistakes(probe.spec.params)
    named = {} if mistakes is None else dict(mistakes.factors)
    rotated = _rotated_columns(probe.spec)
    # the whole vector scaled; a partial rotary's turned columns alone (a factor on cos and sin: the rest pass)
    for columns in (expected.shape[-1], rotated) if rotated < expected.shape[-1] else (expected.shape[-1],):
        turned, have = expected[..., :columns], actual[..., :columns]
        norm = float((turned * turned).sum())
        if norm == 0:
            continue
        factor = float((turned * have).sum()) / norm
        if abs(factor - 1.0) < 1e-6 or not np.isfinite(factor):
            continue
        name = next((what for what, value in named.items() if abs(value - factor) <= 1e-4 * abs(value)), None)
        what = f": {name}" if name else ""
        variant = expected.copy()
        variant[..., :columns] *= factor
        where = ("the rotation is the reference" if columns == expected.shape[-1]
                 else f"the rotation's {columns} rotary columns are the reference's")  # fmt: skip
        kept("constant_factor", f"{where} times {factor:.6g}{what}", variant, {"factor": factor, "columns": columns})
