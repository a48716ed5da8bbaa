"""Assertions for an engine's test suite, in the spirit of ``numpy.testing`` and ``torch.testing``.

The reference is the model's own convention, never hand-written rotary code: a config.json, a model
directory, a cached model id (``org/name``) or a scheme spec (``"rope:base=500000"``).

- :func:`assert_table_matches` checks an engine's cos/sin table in the layout it keeps.
- :func:`assert_rotary_matches` runs the engine's own rotary function on a probe's q and k
  (:mod:`pecli.probe`): a table check passes while the pairing is wrong, this one does not.

On failure each raises ``AssertionError`` whose message is the diagnosis: what differs, where (the
largest difference, its position and dimension) and the named cause. Torch is imported only to read
the user's torch tensors (on any device: moved to the CPU).

>>> import numpy as np
>>> from pecli.schemes.rope import rope_table
>>> cos, sin = (rope_table(64, 16, part=part, dtype="float32") for part in ("cos", "sin"))
>>> assert_table_matches((cos, sin), "rope")
>>> assert_table_matches((cos, sin), "rope:base=500000")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
AssertionError: the engine's cos differs from rope:base=500000's ((cos, sin)):
...
diagnosis: the base differs: A uses base 500000, B is the same table with base 10000
...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from pecli.arguments import as_array, check_tolerance, source_text
from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = ["assert_rotary_matches", "assert_table_matches"]


def _to_numpy(value: Any, label: str = "the engine's table") -> np.ndarray:
    """A numpy array of ``value``: a torch tensor is detached and moved to the CPU (bfloat16 widened to float32)."""
    return as_array(value, label)[0]


def _reference(reference: Any) -> str:
    """``reference`` as the text the resolvers read: a ``pathlib.Path`` as its path; anything else not a str refused."""
    return source_text(reference, "reference",
                       expected="a config.json, a model directory, a cached model id or a scheme spec",
                       hint="pass e.g. 'rope:base=500000' or the path of the model's config.json")  # fmt: skip


def _non_finite(name: str, values: np.ndarray) -> str | None:
    """Where ``values`` first holds NaN or ±inf, as an assertion message; None when every value is finite."""
    if values.dtype.kind not in "fc" or np.isfinite(values).all():
        return None
    position, column = (int(i) for i in np.argwhere(~np.isfinite(values))[0])
    count = int((~np.isfinite(values)).sum())
    return (f"the engine's {name} holds {count} non-finite value{'s' if count > 1 else ''} "
            f"(first {values[position, column]} at position {position}, dimension {column})\n"
            "named cause: non_finite")  # fmt: skip


def _squeezed(array: np.ndarray) -> np.ndarray:
    """(1, …, positions, width) → (positions, width)."""
    while array.ndim > 2 and array.shape[0] == 1:
        array = array[0]
    while array.ndim > 2 and array.shape[-2] == 1:  # (positions, 1, width): a heads axis of one
        array = array[..., 0, :]
    if array.ndim != 2:
        raise ParameterError(f"a rotary table is positions × width, got shape {array.shape}", hint="index one head")
    return array


def _parts(actual: Any) -> tuple[str, np.ndarray, np.ndarray]:
    """The layout's name and the engine's cos and sin (positions × width) of ``actual``."""
    if isinstance(actual, (tuple, list)):
        if len(actual) != 2:
            raise ParameterError(f"a table pair is (cos, sin), got {len(actual)} tensors", hint="pass (cos, sin)")
        cos, sin = (_squeezed(_to_numpy(part)) for part in actual)
        if np.iscomplexobj(cos) or np.iscomplexobj(sin) or not all(_is_real(part) for part in (cos, sin)):
            raise ParameterError(
                f"a (cos, sin) pair holds real numbers, got {cos.dtype} and {sin.dtype}",
                hint="pass the complex freqs_cis alone, or its .real and .imag as (cos, sin)",
            )
        return "(cos, sin)", cos, sin
    from pecli.analysis.engine_cache import cache_parts

    return cache_parts(_squeezed(_to_numpy(actual)))


def _is_real(array: np.ndarray) -> bool:
    """Numbers a table can hold: floats (bfloat16 and float8 arrays are numpy kind V), integers, booleans."""
    return array.dtype.kind in "fiubV"


def assert_table_matches(actual: Any, reference: str, *, part: str | None = None, atol: float | None = None,
                         rtol: float | None = None) -> None:  # fmt: skip
    """Assert that an engine's rotary table is ``reference``'s, raising ``AssertionError`` with the diagnosis.

    Args:
        actual: the engine's table, a numpy array or a torch tensor (any device), as engines keep it:
            a ``(cos, sin)`` pair (positions × rotary_dim, as transformers' rotary modules return, or
            positions × rotary_dim/2); one ``cos_sin_cache`` (vLLM: positions × rotary_dim, the cos
            of the rotary_dim/2 frequencies then their sin); or the complex form (``freqs_cis``,
            Llama's reference code: positions × rotary_dim/2). Leading axes of one are dropped.
        reference: a config.json, a model directory, a cached model id or a scheme spec.
        part: ``"cos"`` or ``"sin"`` to check one (default both).
        atol, rtol: the tolerance (default: the rounding of the engine's dtype plus float32 angle noise).

    A table of the rotary_dim/2 frequencies is compared as the convention places them (its columns
    repeated as halves or adjacent pairs), so the worst dimension is a column of the full table. A pair
    in halves for a config whose attention rotates adjacent pairs after de-interleaving q and k (DeepSeek
    V3's ``rope_interleave``, GLM's re-interleaving ``apply_rotary_pos_emb``) is the pair transformers'
    rotary module returns: it is checked in that layout, and :func:`assert_rotary_matches` checks the
    rotation itself.

    >>> import numpy as np
    >>> p, k = np.arange(32)[:, None], np.arange(8)[None, :]
    >>> assert_table_matches(np.exp(1j * p * 10000.0 ** (-k / 8)), "rope")  # Llama's freqs_cis
    """
    from pecli.analysis.compare import Reference, compare_tables
    from pecli.analysis.compare_report import CompareReport, Side
    from pecli.analysis.engine_cache import frequency_placement, placed
    from pecli.models.rope_family import transformers_cache_layout
    from pecli.probe import rotary_spec

    reference = _reference(reference)
    check_tolerance("atol", atol)
    check_tolerance("rtol", rtol)
    if part not in (None, "cos", "sin"):
        raise ParameterError(f"part must be 'cos', 'sin' or None (both), got {literal_repr(part)}", hint="part='cos'")
    layout_name, cos, sin = _parts(actual)
    positions, width = cos.shape
    if cos.shape != sin.shape:
        raise ParameterError(f"cos is {cos.shape} but sin is {sin.shape}", hint="pass tables of one shape")
    if not positions or not width:  # the reference's length and width come from the table: none to compare
        raise ParameterError(f"the engine's table is empty ({layout_name} of shape {cos.shape})",
                             hint="pass the table the engine built")  # fmt: skip
    spec = rotary_spec(reference, dim=width if layout_name == "(cos, sin)" else 2 * width, length=positions)
    spec = dataclasses.replace(spec, dtype="float64")
    module = transformers_cache_layout(spec.extra_metadata)
    if module is not None and layout_name == "(cos, sin)" and frequency_placement(cos) == "halves":
        # the pair transformers' rotary module returns (halves) for a family whose attention de-interleaves q and
        # k first: the same rotation, checked in that layout (assert_rotary_matches checks the rotation itself)
        reference_cos = dataclasses.replace(spec, params={**spec.params, "part": "cos"}).array()
        if frequency_placement(reference_cos) == "adjacent pairs":
            spec = dataclasses.replace(spec, params={**spec.params, **module[0]})
    half = width * 2 == int(spec.dim or 0)
    if not half and width != spec.dim:
        raise AssertionError(f"the rotary table is {width} wide ({layout_name}); {reference}'s has {spec.dim} "
                             f"rotary columns ({int(spec.dim or 0) // 2} frequencies)")  # fmt: skip
    for name, values in (("cos", cos), ("sin", sin)):
        if part not in (None, name):
            continue
        table = dataclasses.replace(spec, params={**spec.params, "part": name})
        problem = _non_finite(name, values)
        if problem is not None:
            raise AssertionError(problem)
        expected = table.array()
        engine = placed(values, frequency_placement(expected) or "halves") if half else values
        result = compare_tables(expected, engine, atol=atol, rtol=rtol or 0.0, reference=Reference(table.scheme,
                                dict(table.params)), reference_side="a")  # fmt: skip
        if not result.agree:
            report = CompareReport(Side(f"{reference} ({name})", expected.shape, "float64"),
                                   Side(f"actual {layout_name}", engine.shape, str(values.dtype)), result)  # fmt: skip
            lines = "\n".join(report.text_lines() + _named(result.diagnosis))
            raise AssertionError(f"the engine's {name} differs from {reference}'s ({layout_name}):\n{lines}")


def assert_rotary_matches(apply_fn: Callable[[Any, Any, Any], Any], reference: str, *, seed: int = 0,
                          atol: float | None = None, heads: int = 2, dim: int | None = None,
                          length: int | None = None, device: str | None = None) -> None:  # fmt: skip
    """Assert that ``apply_fn`` rotates queries and keys as ``reference`` does, raising the named cause.

    ``apply_fn(q, k, positions)`` gets a probe (:func:`pecli.probe.make_probe`): ``q`` and ``k`` of
    shape (heads, positions, head_dim), float32, and ``positions`` of shape (positions,), int64 (0, 1,
    the original context ± 1, the longest …); it returns the rotated ``(q, k)`` of the same shape.
    They are numpy arrays, or torch tensors on ``device`` when one is given (``"cpu"``, ``"cuda"``);
    the returned tensors may be either. Reshape inside ``apply_fn`` to the engine's layout
    (transformers' batch × heads × positions × head_dim: ``q[None]``; vLLM's tokens × heads × head_dim:
    ``q.transpose(0, 1)``).

    ``dim`` (the head's width) and ``length`` (the longest context) are needed for a scheme spec; a
    model's config gives its own. ``atol`` replaces the default tolerance (1e-5 plus the float32 noise
    of the angle p·θ at each position).

    >>> from pecli.probe import rotary_spec, rotate
    >>> spec = rotary_spec("rope", dim=16, length=64)
    >>> assert_rotary_matches(lambda q, k, p: (rotate(spec, q, p), rotate(spec, k, p)), "rope", dim=16, length=64)
    """
    from pecli.probe import head_dim_of, make_probe, rotary_spec
    from pecli.probe_check import compare_rotated

    if not callable(apply_fn):
        raise ParameterError(
            f"apply_fn must be a function (q, k, positions) -> (q, k), got {type(apply_fn).__name__}",
            hint="pass the engine's rotary function, wrapped to that signature",
        )

    reference = _reference(reference)
    check_tolerance("atol", atol)
    if device is not None:
        device = _torch_device(device)
    spec = rotary_spec(reference, dim=dim, length=length)
    probe = make_probe(spec, heads=heads, seed=seed, head_dim=head_dim_of(reference, spec))
    inputs: tuple[Any, ...] = (probe.q, probe.k, probe.positions)
    if device is not None:
        import torch

        inputs = tuple(torch.from_numpy(array.copy()).to(device) for array in inputs)
    returned = apply_fn(*inputs)
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise ParameterError("apply_fn(q, k, positions) must return the rotated (q, k)", hint="return q, k")
    rotated = {"q_rotated": _to_numpy(returned[0]), "k_rotated": _to_numpy(returned[1])}
    report = compare_rotated(probe, rotated, atol=atol, engine="apply_fn", probe_label=reference)
    if not report.agree:
        causes = _named([found for check in report.checks for found in check.diagnosis])
        raise AssertionError(f"the rotation differs from {reference}'s:\n" + "\n".join(report.text_lines() + causes))


def _torch_device(device: Any) -> str:
    """``device`` if torch can compute there, else a :class:`ParameterError` (never torch's own
    ``AssertionError("Torch not compiled with CUDA enabled")``, which a test would report as a mismatch)."""
    try:
        import torch
    except ImportError as error:
        raise ParameterError(
            f"device {literal_repr(device)} needs torch, which is not installed",
            hint="pip install 'pecli[torch]', or drop device to get numpy arrays",
        ) from error
    from pecli.torch_backend import check_device

    text = str(device)
    try:
        parsed = torch.device(text)
    except (RuntimeError, TypeError) as error:
        raise ParameterError(
            f"device {literal_repr(text)} is not a torch device", hint="pass 'cpu', 'cuda' or 'cuda:0'"
        ) from error
    if parsed.type not in ("cpu", "cuda"):
        raise ParameterError(
            f"device {literal_repr(text)}: pecli.testing runs on 'cpu' or a CUDA device", hint="pass 'cpu'"
        )
    return check_device(text)


def _named(findings: Any) -> list[str]:
    """The last line of a failure: the causes' codes, for a test to match (none when no cause is known)."""
    codes = list(dict.fromkeys(found.code for found in findings))
    return [f"named cause: {', '.join(codes)}"] if codes else []
