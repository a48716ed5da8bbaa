"""An engine's rotated q and k against a probe (``pecli compare engine.safetensors probe.safetensors``).

A probe file (:mod:`pecli.probe`) records its convention in its header; the engine's file holds the
probe's q and k as the engine rotated them: tensors ``q_rotated`` and ``k_rotated`` (or ``q`` and
``k``; a file of one tensor is its rotated q), shaped as the probe's (heads × positions × head_dim),
with or without a leading batch of one, or positions × heads × head_dim (vLLM's tokens × heads).
:func:`compare_rotated` reports what differs, where, and the cause :func:`~pecli.probe.diagnose_rotated`
names.

>>> from pecli.probe import make_probe, rotary_spec, rotate
>>> probe = make_probe(rotary_spec("rope", dim=16, length=64), heads=1)
>>> wrong = rotate(probe.spec, probe.q, probe.positions, layout="interleaved")
>>> report = compare_rotated(probe, {"q_rotated": wrong, "k_rotated": probe.k_rotated})
>>> report.agree, [check.name for check in report.checks if not check.agree]
(False, ['q_rotated'])
>>> report.checks[0].diagnosis[0].code
'pairing'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli.analysis.diagnosis.finding import Finding
from pecli.errors import ParameterError
from pecli.probe import PROBE_TENSORS, ColumnOrder, Probe, diagnose_rotated, tried_mistakes
from pecli.report import Shown
from pecli.text import literal

__all__ = ["RotatedCheck", "RotatedComparison", "compare_probe_files", "compare_rotated", "is_probe", "read_probe"]


def is_probe(metadata: Mapping[str, str]) -> bool:
    """Whether a file's header says it is a rotary probe.

    >>> is_probe({"probe": "rotary"}), is_probe({"scheme": "rope"})
    (True, False)
    """
    return metadata.get("probe") == "rotary"


def read_probe(tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str]) -> Probe:
    """The :class:`~pecli.probe.Probe` a probe file's tensors and header hold (its convention from the header)."""
    from pecli.schemes.spec import TableSpec

    missing = [name for name in PROBE_TENSORS if name not in tensors]
    if missing or not is_probe(metadata):
        raise ParameterError(
            f"not a rotary probe: {', '.join(missing) or 'its header'} missing",
            hint="a probe holds q, k, positions, q_rotated, k_rotated and scores, its header 'probe: rotary'",
        )
    spec = TableSpec.from_metadata(metadata)
    values = {name: np.asarray(tensors[name]) for name in PROBE_TENSORS}
    seed = int(metadata.get("probe.seed", "0"))
    return Probe(spec, seed, **values)


def rotation_tolerance(probe: Probe, which: str = "q") -> np.ndarray:
    """Per position, what a float32 rotation may differ by: 1e-5 plus the float32 noise of the angle p·θ.

    >>> from pecli.probe import make_probe, rotary_spec
    >>> rotation_tolerance(make_probe(rotary_spec("rope", dim=8, length=8), heads=1, positions=[0, 7])).shape
    (1, 2, 1)
    """
    scale = float(np.abs(np.asarray(getattr(probe, which), dtype=np.float64)).max(initial=0.0))
    positions = np.asarray(probe.positions, dtype=np.float64)
    return (1e-5 * max(1.0, scale) + 16 * positions * 2.0**-24 * scale)[None, :, None]


#: the unit roundoff of an engine's half-precision output: its rotation may differ by a few of these × |q|
_HALF_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}


def _stored_dtype(values: Any) -> str:
    """The dtype ``values`` came in, by name (``float16``, ``bfloat16``; a torch tensor's without ``torch.``)."""
    dtype = values.dtype if hasattr(values, "detach") else np.asarray(values).dtype
    return str(dtype).removeprefix("torch.")


def _as_probe_shape(values: Any, expected: np.ndarray, name: str) -> np.ndarray:
    stored = _stored_dtype(values)
    is_torch = hasattr(values, "detach")
    floating = values.dtype.is_floating_point if is_torch else np.asarray(values).dtype.kind in "fV"
    if not floating:  # a rotation of real vectors is floating point: ints, bools, complex, text are a wrong dump
        raise ParameterError(
            f"{name} must hold real numbers (a floating-point rotation of the probe's values), got {stored}",
            hint="save the engine's rotated q and k as they come out (float32, float16, bfloat16)",
        )
    array = np.asarray(values.detach().cpu().float() if is_torch else values).astype(np.float64)
    if array.ndim == expected.ndim + 1 and array.shape[0] == 1:
        array = array[0]  # a batch of one
    if array.shape != expected.shape and array.shape == (expected.shape[1], expected.shape[0], expected.shape[2]):
        array = array.transpose(1, 0, 2)  # tokens × heads × head_dim
    if array.shape != expected.shape:
        heads, positions, dim = expected.shape
        raise ParameterError(
            f"{name} has shape {tuple(array.shape)}; the probe's is {heads} heads × {positions} positions × {dim}",
            hint="rotate the probe's q and k at its positions and save them as they come out",
        )
    return array


@dataclass(frozen=True)
class RotatedCheck:
    """One rotated tensor against the probe's: the largest difference, where, and the causes found."""

    name: str
    agree: bool
    max_abs_diff: float
    worst: dict[str, int]  #: head, position (the probe's), dim
    tolerance: float  #: at the worst element
    diagnosis: list[Finding] = field(default_factory=list)
    nans: int = 0  #: entries the engine left NaN (the worst is then the first of them; max_abs_diff is the others')
    entries: int = 0  #: entries compared
    infs: int = 0  #: entries the engine left ±inf (counted as the NaNs are, never a difference of inf)
    #: agreed in another column order, shared by q and k (the scores unchanged): which, and the evidence
    column_order: Finding | None = None
    tried: tuple[str, ...] = ()  #: the mistakes tried (codes) when none explains a difference

    def to_json(self) -> dict[str, Any]:
        return {"agree": self.agree, "max_abs_diff": self.max_abs_diff, "worst": dict(self.worst),
                "tolerance": self.tolerance, "nan": self.nans, "inf": self.infs,
                "column_order": None if self.column_order is None else self.column_order.to_json(),
                "diagnosis": [found.to_json() for found in self.diagnosis]}  # fmt: skip

    def text_lines(self) -> list[str]:
        where = f"head {self.worst['head']}, position {self.worst['position']}, dim {self.worst['dim']}"
        verdict = "agrees" if self.agree else "differs"
        if self.nans or self.infs:
            bad = self.nans + self.infs
            what = _non_finite_kind(self.nans, self.infs)
            rest = "" if bad == self.entries else f"; elsewhere max |Δ| {self.max_abs_diff:.3g}"
            found = f"{what} at {bad} of {self.entries} entries (the first at {where}){rest}"
            return [f"{self.name}: {verdict}: {found}", *(f"  cause: {cause.message}" for cause in self.diagnosis)]
        found = f"max |Δ| {self.max_abs_diff:.3g} at {where} (tolerance {self.tolerance:.3g})"
        if self.column_order is not None:
            verdict += f" with its rotated columns reordered ({self.column_order.figures['order']})"
        lines = [f"{self.name}: {verdict}: {found}"]
        if self.column_order is not None:
            lines.append(f"  note: {self.column_order.message}")
        if not self.agree:
            tried = f" (tried: {', '.join(self.tried)})" if self.tried else ""
            lines += [f"  cause: {found.message}" for found in self.diagnosis] or [
                f"  cause: no known mistake explains it{tried}"
            ]
        return lines


@dataclass(frozen=True)
class RotatedComparison(Shown):
    """An engine's rotated q and k against a probe (shown by the run's one output, or raised by pecli.testing)."""

    engine: str
    probe: str
    convention: str
    checks: list[RotatedCheck]
    #: the engine's scores q·k/√head_dim against the probe's (both q and k given): agree, max_abs_diff, tolerance
    scores: dict[str, Any] | None = None

    @property
    def agree(self) -> bool:
        return all(check.agree for check in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "probe": self.probe, "convention": self.convention, "agree": self.agree,
                "tensors": {check.name: check.to_json() for check in self.checks}, "scores": self.scores}  # fmt: skip

    def text_lines(self) -> list[str]:
        lines = [f"{self.engine} against the probe {self.probe} ({self.convention})"]
        for check in self.checks:
            lines += check.text_lines()
        return lines


def compare_rotated(probe: Probe, rotated: Mapping[str, Any], *, atol: float | None = None,
                    engine: str = "engine", probe_label: str = "probe") -> RotatedComparison:  # fmt: skip
    """``rotated`` (``q_rotated`` and/or ``k_rotated``: an engine's rotation of the probe's q and k) against the
    probe's; ``atol`` replaces the default tolerance (:func:`rotation_tolerance`).

    q and k returned in another column order (:func:`~pecli.probe.column_orders`), the same for both, agree:
    the attention's scores q·k are unchanged, and the check says so with their max |Δ|. One of them alone
    reordered differs, with that order named.
    """
    from pecli.arguments import check_tolerance
    from pecli.probe import column_orders

    check_tolerance("atol", atol)
    orders = column_orders(probe.spec, probe.q.shape[-1])
    seen: dict[str, _Seen] = {}
    for name in ("q_rotated", "k_rotated"):
        if name not in rotated:
            continue
        which = name[0]
        expected = np.asarray(getattr(probe, name), dtype=np.float64)
        actual = _as_probe_shape(rotated[name], expected, name)
        noise = rotation_tolerance(probe, which)
        roundoff = _HALF_ROUNDOFF.get(_stored_dtype(rotated[name]))
        if roundoff is not None:  # an engine in float16/bfloat16: its output's own rounding, a few units of |q|
            noise = noise + 4 * roundoff * float(np.abs(np.asarray(getattr(probe, which), np.float64)).max(initial=0))
        allowed = np.broadcast_to(noise if atol is None else np.full_like(noise, atol), expected.shape)
        order = None
        if np.isfinite(actual).all() and not (np.abs(actual - expected) <= allowed).all():
            order = next((found for found in orders if (np.abs(found.restore(actual) - expected) <= allowed).all()),
                         None)  # fmt: skip
        seen[name] = _Seen(actual, order.restore(actual) if order else actual, expected, allowed, noise, order)
    if not seen:
        raise ParameterError("no rotated q or k to compare", hint="name the tensors q_rotated and k_rotated")
    scores = _scores(probe, seen) if len(seen) == 2 else None
    matched = {item.order.code for item in seen.values() if item.order}
    consistent = len(seen) == 2 and len(matched) == 1 and all(item.order for item in seen.values())
    checks = []
    for name, item in seen.items():
        check = _check(probe, name, item)
        if item.order is not None:
            shared = consistent and scores is not None and scores["agree"]
            check = _reordered(check if shared else _check(probe, name, item, as_given=True), name, item.order,
                               shared, seen, scores)  # fmt: skip
        elif not check.agree and not check.nans and not check.infs and not check.diagnosis:
            check = dataclasses.replace(check, diagnosis=_diagnosed_reordered(probe, name, item, orders))
        checks.append(check)
    return RotatedComparison(engine, probe_label, _convention(probe), checks, scores)


@dataclass(frozen=True)
class _Seen:
    """One engine tensor: as given, in the probe's column order, and what it is held to."""

    given: np.ndarray
    actual: np.ndarray  #: in the probe's column order
    expected: np.ndarray
    allowed: np.ndarray
    noise: np.ndarray
    order: ColumnOrder | None


def _check(probe: Probe, name: str, item: _Seen, *, as_given: bool = False) -> RotatedCheck:
    """One tensor (in the probe's column order, or ``as_given``) against the probe's: the largest difference,
    where, NaN/inf counted, the causes of a difference."""
    expected, actual, allowed = item.expected, item.given if as_given else item.actual, item.allowed
    difference = np.abs(actual - expected)
    missing = ~np.isfinite(actual)  # NaN or ±inf where the engine gave them: counted, not a difference
    nans = int(np.isnan(actual).sum())
    bad = int(missing.sum())
    difference[missing] = 0.0
    worst_at = np.argmax(missing) if bad else np.argmax(difference)
    head, row, dim = np.unravel_index(int(worst_at), expected.shape)
    agree = not bad and bool((difference <= allowed).all())
    worst = {"head": int(head), "position": int(probe.positions[row]), "dim": int(dim)}
    if bad:
        findings = [_non_finite(nans, bad - nans, worst)]
    else:
        findings = [] if agree else diagnose_rotated(probe, actual, which=name[0], tolerance=float(item.noise.max()))
    tolerance = float(allowed[head, row, dim])
    tried = () if agree or findings else tuple(tried_mistakes(probe))
    return RotatedCheck(name, agree, float(difference.max(initial=0.0)), worst, tolerance, findings, nans,
                        difference.size, bad - nans, tried=tried)  # fmt: skip


def _scores(probe: Probe, seen: Mapping[str, _Seen]) -> dict[str, Any]:
    """The engine's attention scores q·k/√head_dim (its q and k as given) against the probe's, with their bound.

    The bound carries each element's tolerance through the dot product: Σ |q|·εk + |k|·εq + εq·εk, over √head_dim,
    plus the probe's float32 rounding of the scores.
    """
    q, k = seen["q_rotated"], seen["k_rotated"]
    dim = probe.q.shape[-1]
    with np.errstate(invalid="ignore", over="ignore"):
        have = np.einsum("hpd,hsd->hps", q.given, k.given) / np.sqrt(dim)
    want = np.asarray(probe.scores, dtype=np.float64)
    eq, ek = q.allowed[..., 0], k.allowed[..., 0]  # per head and position
    q1, k1 = np.abs(q.expected).sum(axis=-1), np.abs(k.expected).sum(axis=-1)
    bound = q1[:, :, None] * ek[:, None, :] + k1[:, None, :] * eq[:, :, None] + dim * eq[:, :, None] * ek[:, None, :]
    bound = bound / np.sqrt(dim) + 4 * 2.0**-24 * np.maximum(1.0, np.abs(want))
    difference = np.abs(have - want)
    finite = bool(np.isfinite(difference).all())
    worst = float(difference.max(initial=0.0)) if finite else None
    return {"agree": finite and bool((difference <= bound).all()), "max_abs_diff": worst,
            "tolerance": float(bound.max(initial=0.0))}  # fmt: skip


def _reordered(check: RotatedCheck, name: str, order: ColumnOrder, shared: bool, seen: Mapping[str, _Seen],
               scores: dict[str, Any] | None) -> RotatedCheck:  # fmt: skip
    """A tensor that agrees in another column order: agreed when q and k share it (``shared``: the scores agree,
    ``check`` then in the probe's order), else differs (``check`` as given) with the order named."""
    figures: dict[str, Any] = {"order": order.code, "columns": [int(column) for column in order.order]}
    if shared and scores is not None:
        figures["scores_max_abs_diff"] = scores["max_abs_diff"]
        message = (f"{order.message}, for q and k alike: the attention's scores q·k are unchanged "
                   f"(max |Δ scores| {scores['max_abs_diff']:.3g})")  # fmt: skip
        return dataclasses.replace(
            check, agree=True, diagnosis=[], column_order=Finding("column_order", message, figures)
        )
    other = "k_rotated" if name == "q_rotated" else "q_rotated"
    if other not in seen:
        why = f"{other} is not given, so the scores q·k cannot be checked"
    elif seen[other].order is None:
        why = f"{other} comes in the probe's column order, so the scores q·k differ"
    else:
        why = f"{other} comes in another order ({seen[other].order.code}), so the scores q·k differ"  # type: ignore[union-attr]
    if scores is not None and scores["max_abs_diff"] is not None:
        why += f" (max |Δ scores| {scores['max_abs_diff']:.3g})"
        figures["scores_max_abs_diff"] = scores["max_abs_diff"]
    message = f"{order.message}; the scores q·k are unchanged only when q and k both come so: {why}"
    return dataclasses.replace(check, agree=False, diagnosis=[Finding("column_order", message, figures)])


def _diagnosed_reordered(probe: Probe, name: str, item: _Seen, orders: Sequence[ColumnOrder]) -> list[Finding]:
    """A tensor no mistake explains as given: the mistakes that explain it in another column order, that order first."""
    for order in orders:
        found = diagnose_rotated(probe, order.restore(item.given), which=name[0], tolerance=float(item.noise.max()))
        if found:
            figures = {"order": order.code, "columns": [int(column) for column in order.order]}
            return [Finding("column_order", f"{order.message}; in that order:", figures), *found]
    return []


def _non_finite_kind(nans: int, infs: int) -> str:
    """What the engine left that is no number: ``NaN``, ``infinite`` or ``NaN or infinite``."""
    return "NaN or infinite" if nans and infs else "NaN" if nans else "infinite"


def _non_finite(nans: int, infs: int, first: dict[str, int]) -> Finding:
    """The cause when the engine gave NaN or ±inf: its own arithmetic, as no mistake of the convention does.

    >>> _non_finite(3, 0, {"head": 0, "position": 5, "dim": 1}).message
    "the engine's rotation produced NaN (no mistake of the convention does)"
    """
    kind = _non_finite_kind(nans, infs)
    what = kind if kind == "NaN" else f"{kind} values"
    message = f"the engine's rotation produced {what} (no mistake of the convention does)"
    return Finding("non_finite", message, {"nan": nans, "inf": infs, "first": dict(first)})


def _convention(probe: Probe) -> str:
    params = probe.spec.params
    shown = [f"{name}={params[name]:g}" if isinstance(params[name], float) else f"{name}={params[name]}"
             for name in ("layout", "base", "scaling", "factor", "partial_rotary_factor")
             if params.get(name) not in (None, "none", 1.0)]  # fmt: skip
    heads, positions, dim = probe.q.shape
    return f"{probe.spec.scheme} {' '.join(shown)}; {heads} heads × {positions} positions × {dim}"


def _engine_tensors(tensors: Mapping[str, Any]) -> dict[str, Any]:
    named = {name: tensors[name] for name in ("q_rotated", "k_rotated") if name in tensors}
    if not named:
        named = {f"{name}_rotated": tensors[name] for name in ("q", "k") if name in tensors}
    if not named and len(tensors) == 1:
        named = {"q_rotated": next(iter(tensors.values()))}
    if not named:
        raise ParameterError(
            f"the engine's file holds {literal(', '.join(sorted(tensors))) or 'no tensor'}; which is the rotated q?",
            hint="save the engine's rotation of the probe's q and k as q_rotated and k_rotated",
        )
    return named


def _check_same_inputs(first: Probe, second: Probe, labels: Sequence[str]) -> None:
    """Two probes compare only when they rotate the same q and k at the same positions."""
    for name in ("positions", "q", "k"):
        a, b = getattr(first, name), getattr(second, name)
        if a.shape != b.shape or not np.array_equal(a, b):
            shapes = f" ({' × '.join(map(str, a.shape))} against {' × '.join(map(str, b.shape))})"
            raise ParameterError(
                f"{literal(labels[0])} and {literal(labels[1])} are probes of different inputs: their {name} differ"
                + (shapes if a.shape != b.shape else ""),
                hint="write both probes with the same head width, length and seed, or compare each with an "
                "engine's rotation of its q and k",
            )


def compare_probe_files(paths: Sequence[str], *, atol: float | None = None) -> RotatedComparison | None:
    """Two files one of which is a probe: the other's rotated q and k against it; None when neither is a probe.

    Two probes of the same q, k and positions compare the second's rotation against the first's (as an
    engine's); probes of different inputs are refused.

    Only the headers are read to decide; a file that cannot be read is left to the table comparison.
    """
    import os

    from pecli.errors import PecliError
    from pecli.io import open_tensors
    from pecli.text import printable

    if len(paths) != 2 or not all(os.path.isfile(path) for path in paths):
        return None
    headers: list[dict[str, str]] = []
    for path in paths:
        try:
            with open_tensors(path) as opened:
                headers.append(dict(opened.metadata))
        except PecliError:
            return None
    probes = [is_probe(header) for header in headers]
    if not any(probes):
        return None
    side = probes.index(True)
    loaded = []
    for path in paths:
        with open_tensors(path) as opened:
            loaded.append({name: entry.load() for name, entry in opened.entries.items()})
    probe = read_probe(loaded[side], headers[side])
    labels = [printable(os.path.basename(path)) for path in paths]
    if all(probes):  # two probes: the second's rotation of the same q and k is read as an engine's
        other = read_probe(loaded[1], headers[1])
        _check_same_inputs(probe, other, labels)
        engine = {"q_rotated": other.q_rotated, "k_rotated": other.k_rotated}
        return compare_rotated(probe, engine, atol=atol, engine=labels[1], probe_label=labels[0])
    return compare_rotated(probe, _engine_tensors(loaded[1 - side]), atol=atol, engine=labels[1 - side],
                           probe_label=labels[side])  # fmt: skip
