"""Option aliases shared by every command, and the scheme options built from the registry.

Commands declare ``d: DimOpt = None`` instead of repeating an option's flags and help, and
decorate themselves with :func:`scheme_options` to accept every scheme parameter of
:data:`pecli.schemes.catalog.PARAMS` (``--base``, ``--layout``…) plus ``--preset``. The decorated
function receives them as one ``scheme_params`` dict holding only the options actually given.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable
from typing import Annotated, Any, Optional

import typer

from pecli.schemes.catalog import PARAMS

SCHEME_PANEL = "Scheme options"

DimOpt = Annotated[Optional[int], typer.Option("--d", "--dim", help="Embedding dimension (columns).", metavar="INT")]
LenOpt = Annotated[Optional[int], typer.Option("--len", "--length", help="Number of positions (rows).", metavar="INT")]
DtypeOpt = Annotated[
    str,
    typer.Option(
        "--dtype", help="float32, float64, float16 or bfloat16 (computed in float64, rounded once).", metavar="DTYPE"
    ),
]
OutputOpt = Annotated[
    Optional[str],
    typer.Option(
        "-o", "--output", help="Output file (.npy, .safetensors, .pt, .csv, .tsv), or - for stdout.", metavar="PATH"
    ),
]
FormatOpt = Annotated[
    Optional[str],
    typer.Option(
        "--format", help="npy, safetensors, pt, csv or tsv (default: from the extension; npy for -).", metavar="FORMAT"
    ),
]
KeyOpt = Annotated[
    Optional[str], typer.Option("--key", help="Tensor to read from a multi-tensor file.", metavar="NAME")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as one JSON document on stdout.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="Print only data and errors.")]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="No colour (also NO_COLOR or TERM=dumb).")]
PresetOpt = Annotated[
    Optional[str],
    typer.Option(
        "--preset",
        help="A named convention (pecli generate --list-presets).",
        metavar="NAME",
        rich_help_panel=SCHEME_PANEL,
    ),
]


def _scheme_parameter(name: str) -> inspect.Parameter:
    param = PARAMS[name]
    flags = [f"{param.flag}/{param.negative_flag}"] if param.negative_flag else [param.flag]
    option = typer.Option(
        *flags, help=param.help, metavar=param.metavar, rich_help_panel=SCHEME_PANEL, show_default=False
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[Optional[param.kind], option]
    )


def scheme_options(command: Any = None, *, names: Iterable[str] | None = None) -> Any:
    """Give ``command`` every scheme option (or only ``names``); it receives the given ones as ``scheme_params``.

    ``@scheme_options`` adds them all; ``@scheme_options(names=SCHEMES["timestep"].defaults)`` only
    one scheme's, for a command that computes that scheme alone.
    """
    if command is None:
        return functools.partial(scheme_options, names=names)
    chosen = tuple(names) if names is not None else tuple(PARAMS)
    signature = inspect.signature(command, eval_str=True)
    own = [p for name, p in signature.parameters.items() if name != "scheme_params"]
    extra = [_scheme_parameter(name) for name in chosen]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in chosen}
        scheme_params = {name: value for name, value in given.items() if value is not None}
        return command(*args, scheme_params=scheme_params, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*own, *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in (*own, *extra)}
    del wrapper.__wrapped__  # typer must see the new signature, not the wrapped one
    return wrapper
