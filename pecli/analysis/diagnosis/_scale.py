"""The constant-factor finding: B = c·A, with c named from the reference's parameters when it matches."""

from __future__ import annotations

import numpy as np

from pecli.analysis.diagnosis.finding import Finding, Reference, residual
from pecli.schemes import get_scheme

__all__ = ["factor_findings", "named_factors"]


def named_factors(reference: Reference | None) -> dict[str, float]:
    """The constants the reference's scheme names for its parameters (YaRN's attention factor…), with ratios.

    >>> sorted(named_factors(None))
    []
    """
    if reference is None:
        return {}
    mistakes = get_scheme(reference.scheme).known_mistakes(reference.params)
    factors = dict(mistakes.factors) if mistakes is not None else {}
    if "mscale(factor, mscale)" in factors and "mscale(factor, mscale_all_dim)" in factors:
        ratio = factors["mscale(factor, mscale)"] / factors["mscale(factor, mscale_all_dim)"]
        factors["mscale / mscale_all_dim"] = ratio
        factors["mscale_all_dim / mscale"] = 1.0 / ratio
    return factors


def factor_findings(a: np.ndarray, b: np.ndarray, tolerance: float, reference: Reference | None) -> list[Finding]:
    """``B = c·A`` within the tolerance (scaled by |c|), c ≠ 1: the factor, and what it matches.

    >>> a = np.array([[1.0, 0.5], [0.25, -1.0]])
    >>> factor_findings(a, 2 * a, 1e-9, None)[0].figures["factor"]
    2.0
    """
    norm = float(np.einsum("ij,ij->", a, a))
    if norm == 0.0:
        return []
    factor = float(np.einsum("ij,ij->", a, b)) / norm
    off = residual(factor * a, b)
    if off > tolerance * max(1.0, abs(factor)) or abs(factor - 1.0) * float(np.abs(a).max()) <= tolerance:
        return []
    matches = [
        (abs(factor - value), name)
        for name, value in named_factors(reference).items()
        if abs(factor - value) * float(np.abs(a).max()) <= tolerance * max(1.0, abs(factor))
    ]
    figures: dict[str, object] = {"factor": factor, "residual": off}
    message = f"B = {factor:.6g}·A: a constant factor"
    if matches:
        name = min(matches)[1]
        figures["matches"] = name
        message += f", {name}"
    return [Finding("constant_factor", message, figures)]
