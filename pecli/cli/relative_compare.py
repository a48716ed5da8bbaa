"""``pecli compare`` of relative schemes: two RoPE specs by frequencies and decay, and their properties.

Two rope specs are compared where they differ as encodings — which frequency pairs and by how
much, and from which offset their long-term decay profiles part — with
:func:`pecli.analysis.relative_compare.compare_rope`. ``compare --properties`` measures rope and
alibi by the properties that apply to a score or a bias
(:func:`~pecli.analysis.relative_compare.relative_properties`). :func:`bias_view` names the axes of a
bias compared as a table (head, query, key).
"""

from __future__ import annotations

from typing import Any

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = ["bias_view", "compare_rope_specs", "relative_checks"]

#: the default context of a RoPE comparison without --len: long enough to see scaled pairs turn
DEFAULT_LENGTH = 4096


def _relative_spec(text: str, views: tuple[str, ...]) -> tuple[Any, str, dict[str, Any]] | None:
    """(parsed spec, scheme, full parameters) when ``text`` is a spec of a scheme whose relative view is one
    of ``views`` (:attr:`~pecli.schemes.catalog.Scheme.relative`), else None."""
    from pecli.schemes.specs import looks_like_spec, parse_spec

    if not looks_like_spec(text):
        return None
    spec = parse_spec(text)
    scheme, params = spec.resolved()
    if scheme.relative not in views:
        return None
    return spec, scheme.name, {name: value for name, value in params.items() if value is not None and name != "part"}


def _default_length(*params: dict[str, Any]) -> int:
    """The scaled context of the longest spec (original context × factor), at least :data:`DEFAULT_LENGTH`.

    >>> _default_length({"original_max_position": 4096, "factor": 4.0}, {})
    16384
    """
    scaled = [int(p["original_max_position"] * p.get("factor", 1.0)) for p in params if "original_max_position" in p]
    return max([DEFAULT_LENGTH, *scaled])


def compare_rope_specs(out: Output, texts: list[str], *, dim: int | None, length: int | None) -> bool | None:
    """Compare two rope specs and print where they differ; None (nothing done) unless both are rope specs.

    Returns whether they are the same encoding.
    """
    from pecli.analysis.relative_compare import RopeSpecsReport, compare_rope

    specs = [_relative_spec(text, ("score",)) for text in texts]
    if any(spec is None for spec in specs):
        return None
    if dim is None:
        raise ParameterError("comparing two rope specs needs the head dimension", hint="add --d, e.g. --d 128")
    from pecli.analysis.relative import scaling_options

    for spec, _, params in specs:  # type: ignore[misc]
        # each spec's values checked, an error in its own words (at a small --d: its size is checked below)
        spec.table(length=1, dim=min(dim, 64), dtype="float64")
        with spec.blaming():  # what the score comparison cannot model, said in the spec's words too
            scaling_options(params)
    (_, _, params_a), (_, _, params_b) = specs  # type: ignore[misc]
    length = length or _default_length(params_a, params_b)
    report = RopeSpecsReport(
        texts[0], texts[1], dim, length, params_a, params_b, compare_rope(dim, length, params_a, params_b)
    )
    out.show(report)
    return report.same


def relative_checks(text: str, *, length: int, dim: int) -> list[Any] | None:
    """The properties of a spec of a scheme with a score or bias (rope, alibi…), or None for another scheme."""
    import inspect

    from pecli.analysis.relative_compare import relative_properties
    from pecli.schemes.catalog import SCHEMES

    found = _relative_spec(text, ("score", "bias"))
    if found is None:
        return None
    spec, scheme, params = found
    if SCHEMES[scheme].relative == "bias":  # the parameters its bias cannot do without (alibi's heads)
        needed = inspect.signature(SCHEMES[scheme].bias_function).parameters.values()
        for name in (p.name for p in needed if p.kind is p.KEYWORD_ONLY and p.default is p.empty):
            if name not in params:
                raise ParameterError(f"{literal_repr(text)}: {scheme}'s properties need its {name}",
                                     hint=f"e.g. {scheme}:{name}=8")  # fmt: skip
    with spec.blaming():
        return relative_properties(scheme, params, length=length, dim=dim)


def bias_view(a: Any, b: Any, references: list[Any], query_rows: list[bool]) -> tuple[Any, Any, tuple[str, str] | None]:
    """Tables A and B as compared, with the names of their axes (None: those ``compare_tables`` gives them).

    By the axes the tables have, not by their number of heads: a (heads, 1, k) file squeezed to heads × k
    (one query row per head, ``query_rows``) is (head, key); a 2-D table against a reference over query and
    key positions, its (len, len) table, is (query, key), or, when the reference's own table has a head axis
    (alibi: heads=1; a (1, L, L) file squeezed), a per-head table of one head: (head, query, key), named and
    diagnosed as any per-head bias.

    >>> import numpy as np
    >>> from pecli.analysis.compare import Reference
    >>> one = np.zeros((4, 4))
    >>> a, b, axes = bias_view(one, one, [None, Reference("alibi", {"heads": 1})], [False, False])
    >>> a.shape, axes
    ((1, 4, 4), None)
    >>> bias_view(one, one, [Reference("t5", {}), None], [False, False])[2]
    ('query', 'key')
    """
    from pecli.schemes.catalog import find_scheme

    if a.ndim != 2:
        return a, b, None
    if any(query_rows):
        return a, b, ("head", "key")
    reference = next((found for found in references if found is not None), None)
    scheme = None if reference is None else find_scheme(reference.scheme)
    if reference is None or scheme is None or scheme.axes != "query-key" or len(a) != a.shape[1]:
        return a, b, None
    if reference.params.get("part") not in (None, *scheme.default_parts):
        return a, b, None  # not its query × key table (alibi's slopes as a row): named as any table
    if reference.params.get("heads") is not None and reference.params.get("head") is None:
        return a[None], b[None], None  # its table is (heads, L, L): one head's, squeezed
    return a, b, ("query", "key")
