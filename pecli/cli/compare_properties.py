"""``pecli compare --properties``: each scheme checked for the six properties of an ideal positional encoding."""

from __future__ import annotations

from typing import Any

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

#: the defaults of the property report's shape, as in the issue's example
PROPERTY_DIM, PROPERTY_LEN = 64, 512


def property_report(out: Output, texts: list[str], *, dim: int | None, length: int | None) -> None:
    from pecli.analysis.properties import check_properties
    from pecli.cli.common import check_sizes_positive
    from pecli.schemes.specs import looks_like_spec, parse_spec

    check_sizes_positive(length, dim)
    if not texts:
        raise ParameterError("--properties needs at least one scheme", hint="e.g. --properties sinusoidal count")
    specs = []
    for text in texts:
        if not looks_like_spec(text):
            raise ParameterError(
                f"--properties measures schemes, but {literal_repr(text)} is a file", hint="give scheme names or specs"
            )
        specs.append(parse_spec(text))
    from pecli.cli.relative_compare import relative_checks
    from pecli.schemes import get_scheme

    shown_dim = PROPERTY_DIM if dim is None else dim  # the report's heading: what was given, else the defaults
    shown_length = PROPERTY_LEN if length is None else length
    reports = []
    for spec in specs:
        table = _property_table(spec, length, dim)
        checks = relative_checks(spec.text, length=table.length, dim=table.dim)
        if checks is None and not get_scheme(table.scheme).takes_dim:
            raise ParameterError(
                f"--properties measures position vectors and the scores of rope and alibi; "
                f"{literal_repr(spec.text)} is a "
                "table over query and key positions",
                hint=f"drop {spec.text} from --properties",
            )
        other_size = table.length != shown_length or table.dim not in (None, shown_dim)  # a grid's tokens: say so
        shown = f"{spec.text} ({table.length} × {table.dim})" if other_size else spec.text
        if checks is None:
            with spec.blaming():  # rope2d's parts: "pick one with part=cos|sin|angle", as the spec writes it
                checks = check_properties(table)
        reports.append((shown, checks))
    from pecli.analysis.properties import PropertyReport

    out.show(PropertyReport(shown_dim, shown_length, reports))


def _property_table(spec: Any, length: int | None, dim: int | None) -> Any:
    """``spec``'s table at the sizes --properties measures: --len and --d where given; else what the spec
    sets itself (a grid's tokens; a bias has no dimension), else :data:`PROPERTY_LEN` and :data:`PROPERTY_DIM`.
    A size the user did not give is never blamed: its default is tried only after the spec's own."""
    from pecli.errors import names_a_parameter

    # a bias over query and key positions (alibi) has no dimension: a given --d is for the others listed
    takes_dim = spec.resolved()[0].takes_dim
    lengths = [length] if length is not None else [None, PROPERTY_LEN]
    dims = [None] if not takes_dim else [dim] if dim is not None else [None, PROPERTY_DIM]
    defaulted = [name for name, sizes in (("length", lengths), ("dim", dims)) if len(sizes) > 1]
    tries = [(l_, d_) for l_ in lengths for d_ in dims]
    for number, (try_length, try_dim) in enumerate(tries, start=1):
        try:
            return spec.table(length=try_length, dim=try_dim, dtype="float64")
        except ParameterError as error:
            if not names_a_parameter(error._templates[0], defaulted):
                raise
            if number == len(tries):  # the defaults do not suit it either: say they were defaults
                sizes = " and ".join(f"{{{name}}} {PROPERTY_LEN if name == 'length' else PROPERTY_DIM}"
                                     for name in defaulted)  # fmt: skip
                message, hint = error._templates
                raise ParameterError(f"at the default {sizes} of --properties: {message}", hint=hint) from None
    raise AssertionError("unreachable")  # the last try returns or raises
