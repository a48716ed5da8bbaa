"""Option aliases shared by every command, the run's output switches, and the scheme options built from the registry.

Shell completion of scheme names, ``--preset`` values and parameter choices is driven by the same
registry (:func:`complete_scheme`, :func:`complete_preset`), so a new scheme completes at once.

Commands declare ``d: DimOpt = None`` instead of repeating an option's flags and help, and
decorate themselves with :func:`scheme_options` to accept every scheme parameter of
:data:`pecli.schemes.params.PARAMS` (``--base``, ``--layout``…) plus ``--preset``. The decorated
function receives them as one ``scheme_params`` dict holding only the options actually given.
In help, each scheme's own options stand under its heading ("rope options"), and those several
schemes take under "Scheme options", with ``--preset``: both read from the registry
(:func:`scheme_panel`), so a new scheme gets its heading at once.
Every command that prints is decorated with :func:`output_options`: ``-q``, ``--no-color`` and
``--json`` mean the same everywhere, and the command receives the run's one
:class:`~pecli.cli.output.Output` as ``out``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Optional

import typer

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.schemes.params import PARAMS
from pecli.text import ascii_float, ascii_int, literal_repr  # noqa: F401  (the CLI's number parsing)

SCHEME_PANEL = "Scheme options"

#: parameters whose flag is not ``--`` + the name with dashes (scheme parameters have theirs in PARAMS)
_FLAGS = {
    "length": "--len",
    "dim": "--d",
    "dims": "--lines",
    "output": "-o",
    "fmt": "--format",
    "json_output": "--json",
}


def flag_for(name: str) -> str:
    """The flag of a Python parameter named in a core error: from the registry, else ``--name-with-dashes``.

    >>> flag_for("dim"), flag_for("length"), flag_for("freq_shift"), flag_for("max_offset"), flag_for("output")
    ('--d', '--len', '--freq-shift', '--max-offset', '-o')
    """
    if name in PARAMS:
        return PARAMS[name].flag
    return _FLAGS.get(name, "--" + name.replace("_", "-"))


def as_typed(spell: Callable[[str], str], command: Any, args: Iterable[str]) -> Callable[[str], str]:
    """``spell``, but a flag the user wrote as one of its aliases (``--dim`` for ``--d``) reads as typed.

    ``command`` is the click command ``args`` (its own words, without the command's name) were given
    to; a message then names the option the way the user knows it, whichever alias they chose. A
    message's other options follow the user's style: who wrote the long words (``--length``) reads
    the long words of the rest (``--dim``), so an example never mixes ``--d`` with ``--length``.

    >>> import typer
    >>> from pecli.cli.app import app
    >>> timestep = typer.main.get_command(app).commands["timestep"]
    >>> spell = as_typed(flag_for, timestep, ["1", "--dim=2", "--output", "t.npy", "--", "--len"])
    >>> spell("dim"), spell("output"), spell("freq_shift")
    ('--dim', '--output', '--freq-shift')
    >>> generate = typer.main.get_command(app).commands["generate"]
    >>> spell = as_typed(flag_for, generate, ["sinusoidal", "--length", "4"])
    >>> spell("dim"), spell("length"), spell("output")
    ('--dim', '--length', '-o')
    >>> spell = as_typed(flag_for, generate, ["sinusoidal", "--len", "4"])
    >>> spell("dim"), spell("length")
    ('--d', '--len')
    """
    typed: dict[str, str] = {}
    longest: dict[str, str] = {}  # each alias of a long option with several -> its longest (--d -> --dim)
    for param in getattr(command, "params", ()):
        long_opts = [opt for opt in getattr(param, "opts", None) or () if opt.startswith("--")]
        if len(long_opts) > 1:
            longest.update(dict.fromkeys(long_opts, max(long_opts, key=len)))
    for word in args:
        if word == "--":  # what follows is values, not options
            break
        option = word.split("=", 1)[0] if word.startswith("--") else word
        for param in getattr(command, "params", ()):
            opts = getattr(param, "opts", ())
            if option in opts:  # a negative form (--no-x) says the opposite: the flag keeps its own name
                typed.update(dict.fromkeys(opts, option))
    styles = {longest[option] == option for option in set(typed.values()) if option in longest}
    long_words = styles == {True}  # every aliased option typed was typed in its long word

    def spelled(name: str) -> str:
        flag = spell(name)
        return typed.get(flag, longest.get(flag, flag) if long_words else flag)

    return spelled


def parse_int(text: str, *, flag: str, example: str) -> int:
    """An integer within an option's text (``--rows A:B``, ``--grid H,W``); errors name ``flag``.

    >>> parse_int("12", flag="--rows", example="0:128")
    12
    >>> parse_int("٣", flag="--rows", example="0:128")
    Traceback (most recent call last):
    pecli.errors.ParameterError: --rows: '٣' is not an integer in ASCII digits (e.g. --rows 0:128)
    """

    try:
        return ascii_int(text)
    except ValueError:
        digits = text.strip().removeprefix("-")
        too_long = digits.isascii() and digits.isdigit()
        problem = "has too many digits" if too_long else "is not an integer in ASCII digits"
        raise ParameterError(f"{flag}: {literal_repr(text[:20])} {problem}", hint=f"e.g. {flag} {example}") from None


def complete_scheme(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of a scheme name: (name, summary) of every registered scheme starting with ``incomplete``.

    >>> [name for name, _ in complete_scheme("binary")]
    ['binary', 'binary-sine']
    """
    from pecli.schemes.catalog import SCHEMES

    return [(s.name, s.summary) for s in SCHEMES.values() if s.name.startswith(incomplete)]


def complete_preset(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of ``--preset``: (name, "scheme: convention") of the presets starting with ``incomplete``.

    Only the chosen scheme's presets once a scheme is on the command line; each name once. A command
    that computes one scheme (``pecli timestep``) completes that scheme's presets alone, the only
    ones it accepts.

    >>> from pecli.cli.app import app
    >>> context = typer.Context(typer.main.get_command(app))
    >>> [name for name, _ in complete_preset(context, "fair")]
    ['fairseq']
    >>> timestep = typer.Context(typer.main.get_command(app).commands["timestep"])
    >>> [name for name, _ in complete_preset(timestep, "")], complete_preset(timestep, "fair")
    (['ldm', 'guided-diffusion', 'diffusers', 'ddpm'], [])
    """
    from pecli.schemes.presets import PRESETS

    scheme = _scheme_on_command_line(ctx)
    presets = [p for p in PRESETS.values() if p.name.startswith(incomplete)]
    if _command_scheme(ctx) is not None or any(p.scheme == scheme for p in presets):
        presets = [p for p in presets if p.scheme == scheme]
    first = {p.name: p for p in reversed(presets)}  # the first registered wins, as for --preset NAME
    return [
        (name, f"{first[name].scheme}: {first[name].convention}") for name in dict.fromkeys(p.name for p in presets)
    ]


def _command_scheme(ctx: typer.Context) -> str | None:
    """The one scheme the command being completed computes (:func:`scheme_options`' ``scheme``), if any."""
    command = getattr(ctx, "command", None)
    return getattr(getattr(command, "callback", None), "pecli_scheme", None)


def _scheme_on_command_line(ctx: typer.Context) -> str | None:
    """The scheme the command computes, or else the one named on the command line being completed, if any."""
    from pecli.schemes.catalog import SCHEMES

    fixed = _command_scheme(ctx)
    if fixed is not None:
        return fixed
    # while an option waits for its value, click leaves the positional arguments unparsed in ctx.args
    scheme = (ctx.params or {}).get("scheme")
    return scheme if scheme in SCHEMES else next((arg for arg in ctx.args if arg in SCHEMES), None)


def complete_choices(values: Iterable[str] | Callable[[], Iterable[str]]) -> Callable[[str], list[str]]:
    """Shell completion of an option whose values are a fixed set: those starting with the word typed.

    ``values`` may be a function, called only when the shell asks, so a module the choices live in
    is imported only for completion. The option still takes a ``str``: a bad value keeps its own message.

    >>> complete_choices(dtype_names)("b"), complete_choices(("shared", "per-panel"))("")
    (['bfloat16'], ['shared', 'per-panel'])
    """

    def complete(incomplete: str) -> list[str]:
        return [value for value in (values() if callable(values) else values) if value.startswith(incomplete)]

    return complete


def dtype_names() -> tuple[str, ...]:
    """The dtypes a table is written in (for completion).

    >>> dtype_names()
    ('float32', 'float64', 'float16', 'bfloat16')
    """
    from pecli.dtypes import DTYPES

    return DTYPES


def format_names() -> tuple[str, ...]:
    """The table file formats (for completion).

    >>> format_names()
    ('npy', 'safetensors', 'pt', 'csv', 'tsv')
    """
    from pecli.io import FORMATS

    return FORMATS


def _choices_completion(name: str) -> Any:
    """Completion of a parameter whose values some scheme restricts (``--layout``), or None.

    The chosen scheme's values once a scheme is on the command line, else every scheme's.
    """
    from pecli.schemes.catalog import SCHEMES

    every = list(dict.fromkeys(value for s in SCHEMES.values() for value in s.choices.get(name, ())))
    if not every:
        return None

    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        scheme = _scheme_on_command_line(ctx)
        allowed = SCHEMES[scheme].choices.get(name, every) if scheme else every
        return [value for value in allowed if value.startswith(incomplete)]

    return complete


DimOpt = Annotated[Optional[int], typer.Option("--d", "--dim", help="Embedding dimension (columns).", metavar="INT")]
LenOpt = Annotated[Optional[int], typer.Option("--len", "--length", help="Number of positions (rows).", metavar="INT")]
DtypeOpt = Annotated[
    str,
    typer.Option(
        "--dtype",
        help="float32, float64, float16 or bfloat16 (computed in float64 unless --arithmetic, rounded once).",
        metavar="DTYPE",
        autocompletion=complete_choices(dtype_names),
    ),
]


def output_path(value: Optional[str]) -> Optional[str]:
    """Every ``-o``'s check as it is parsed: an empty path is a usage error (exit 2), before any work.

    >>> output_path("pe.npy"), output_path(None), output_path("-")
    ('pe.npy', None, '-')
    >>> output_path("")
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: -o: the output path is empty (give a file name after -o, or leave -o out)
    """
    if value == "":
        raise ParameterError("-o: the output path is empty", hint="give a file name after -o, or leave -o out")
    return value


OutputOpt = Annotated[
    Optional[str],
    typer.Option(
        "-o",
        "--output",
        help="Output file (.npy, .safetensors, .pt, .csv, .tsv), or - for stdout.",
        metavar="PATH",
        callback=output_path,
    ),
]
FormatOpt = Annotated[
    Optional[str],
    typer.Option(
        "--format",
        help="npy, safetensors, pt, csv or tsv (default: from the extension; npy for -).",
        metavar="FORMAT",
        autocompletion=complete_choices(format_names),
    ),
]
KeyOpt = Annotated[
    Optional[str],
    typer.Option(
        "--key", help="Tensor to read from a multi-tensor file: its name, or a part only it contains.", metavar="NAME"
    ),
]
LayerTypeOpt = Annotated[
    Optional[str],
    typer.Option(
        "--layer-type",
        help="With a model's config whose rope_parameters differ by layer type (Gemma 3's sliding_attention and "
        "full_attention): the layer type whose tables to use. Without it, generate --from-config writes each "
        "layer type's tables to a .safetensors file, named TYPE.cos, TYPE.sin; the other commands ask for one.",
        metavar="NAME",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as one JSON document on stdout.")]
QuietOpt = Annotated[
    bool,
    typer.Option("-q", "--quiet", help="Print nothing but errors: the exit code answers (-o -, --json still write)."),
]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="No colour (also NO_COLOR or TERM=dumb).")]
PresetOpt = Annotated[
    Optional[str],
    typer.Option(
        "--preset",
        help="A named convention (pecli generate --list-presets).",
        metavar="NAME",
        rich_help_panel=SCHEME_PANEL,
        autocompletion=complete_preset,
    ),
]
SchemeArg = Annotated[
    Optional[str],
    typer.Argument(
        metavar="[SCHEME]",
        help="Scheme name, preset, or spec such as rope:base=500000 (pecli schemes lists them).",
        show_default=False,
        autocompletion=complete_scheme,
    ),
]


def choices_help(name: str) -> str:
    """The values each scheme allows for parameter ``name``, from the registry ("" if none restricts it).

    >>> choices_help("bit_order")
    'binary: lsb|msb.'
    >>> choices_help("positions")
    'fourier, gaussian: normalized|raw.'
    """
    from pecli.schemes.catalog import SCHEMES

    schemes_by_values: dict[tuple[str, ...], list[str]] = {}
    for scheme in SCHEMES.values():
        if name in scheme.choices:
            schemes_by_values.setdefault(scheme.choices[name], []).append(scheme.name)
    if not schemes_by_values:
        return ""
    return "; ".join(f"{', '.join(names)}: {'|'.join(values)}" for values, names in schemes_by_values.items()) + "."


def schemes_taking(name: str) -> tuple[str, ...]:
    """The schemes that take parameter ``name``, in the registry's order.

    >>> schemes_taking("heads"), schemes_taking("seed")
    (('alibi',), ('learned', 'gaussian'))
    """
    from pecli.schemes.catalog import SCHEMES

    return tuple(scheme.name for scheme in SCHEMES.values() if name in scheme.defaults)


def scheme_panel(name: str, among: Iterable[str] = ()) -> str:
    """The help heading of parameter ``name``: "SCHEME options" when one scheme takes it, else :data:`SCHEME_PANEL`.

    ``among`` are the other parameters the command offers: when every one of them belongs to the
    same single scheme (``timestep`` offers only the timestep scheme's), that scheme's heading.

    >>> scheme_panel("heads"), scheme_panel("base")
    ('alibi options', 'Scheme options')
    >>> scheme_panel("freq_shift", among=["max_period", "scale"])
    'timestep options'
    """
    shared = set(schemes_taking(name)).intersection(*(schemes_taking(other) for other in among))
    schemes = schemes_taking(name) if len(shared) != 1 else tuple(shared)
    return f"{schemes[0]} options" if len(schemes) == 1 else SCHEME_PANEL


def _schemes_note(name: str) -> str:
    """The note "Schemes: a, b." for a parameter several schemes take, unless its choices name them all.

    >>> _schemes_note("base"), _schemes_note("heads"), _schemes_note("positions")
    ('Schemes: sinusoidal, rope, rope2d, sincos2d.', '', '')
    """
    from pecli.schemes.catalog import SCHEMES

    schemes = schemes_taking(name)
    named = {scheme.name for scheme in SCHEMES.values() if name in scheme.choices}
    if len(schemes) < 2 or set(schemes) <= named:
        return ""
    return f"Schemes: {', '.join(schemes)}."


def _panel_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` grouped by heading: the shared ones first, then each scheme's in the registry's order.

    >>> _panel_order(("cos_first", "heads", "base", "std"))
    ('base', 'cos_first', 'std', 'heads')
    """
    from pecli.schemes.catalog import SCHEMES

    rank = {scheme: index for index, scheme in enumerate(SCHEMES, start=1)}
    taking = {name: schemes_taking(name) for name in names}
    # scheme_panel(name, names), with each name's schemes looked up once (not once per pair: 59² scans)
    shared = {name: set(taking[name]).intersection(*taking.values()) for name in names}
    heading = {name: tuple(shared[name]) if len(shared[name]) == 1 else taking[name] for name in names}
    return tuple(sorted(names, key=lambda name: rank[heading[name][0]] if len(heading[name]) == 1 else 0))


def _scheme_parameter(name: str, taken: frozenset[str] = frozenset(), among: Iterable[str] = ()) -> inspect.Parameter:
    """The typer parameter of scheme parameter ``name``; its aliases only where the command has no such flag."""
    param = PARAMS[name]
    flags = [f"{param.flag}/{param.negative_flag}"] if param.negative_flag else [param.flag]
    flags += [alias for alias in param.aliases if alias not in taken]
    option = typer.Option(
        *flags,
        help=" ".join(filter(None, (param.help, choices_help(name), _schemes_note(name)))),
        metavar=param.metavar,
        rich_help_panel=scheme_panel(name, among),
        show_default=False,
        autocompletion=_choices_completion(name),
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[Optional[param.kind], option]
    )


def scheme_options(command: Any = None, *, names: Iterable[str] | None = None, scheme: str | None = None) -> Any:
    """Give ``command`` every scheme option (or only ``names``); it receives the given ones as ``scheme_params``.

    ``@scheme_options`` adds them all; ``@scheme_options(scheme="timestep")`` only that scheme's, for a
    command that computes that scheme alone (its ``--preset`` and choices then complete that scheme's
    values only).
    """
    if command is None:
        return functools.partial(scheme_options, names=names, scheme=scheme)
    if scheme is not None and names is None:
        from pecli.schemes.catalog import SCHEMES

        names = SCHEMES[scheme].defaults
    chosen = _panel_order(tuple(names) if names is not None else tuple(PARAMS))

    def given_params(**values: Any) -> dict[str, Any]:
        return {name: value for name, value in values.items() if value is not None}

    taken = _own_flags(command)
    among = chosen if names is not None else ()  # a command of one scheme's options shows them under its heading
    # a flag the command declares itself (plot's --scale) is the command's: it hands the scheme its value
    extra = [_scheme_parameter(name, taken, among) for name in chosen if PARAMS[name].flag not in taken]
    wrapped = _replace_parameter(command, "scheme_params", extra, given_params)
    if scheme is not None:  # read by completion (typer's callback wrapper copies it)
        wrapped.pecli_scheme = scheme
    return wrapped


def _own_flags(command: Any) -> frozenset[str]:
    """Every flag ``command``'s own options declare (``--key``, ``-o``…)."""
    flags: set[str] = set()
    for parameter in inspect.signature(command, eval_str=True).parameters.values():
        for info in getattr(parameter.annotation, "__metadata__", ()):
            # in Annotated, typer takes the first name given to Option (its ``default`` slot) as a flag too
            first = getattr(info, "default", None)
            declarations = [*(getattr(info, "param_decls", None) or ()), *([first] if isinstance(first, str) else [])]
            for declaration in declarations:
                flags.update(name for name in declaration.split("/") if name.startswith("-"))
    return frozenset(flags)


def output_options(command: Any = None, *, json: bool = True) -> Any:
    """Give ``command`` ``-q``, ``--no-color`` and (unless ``json=False``) ``--json``; it receives the run's ``out``.

    The :class:`~pecli.cli.output.Output` is the one the app built for this run (a fresh one
    under a bare ``CliRunner``), with the command line's switches applied.

    >>> @output_options
    ... def hello(*, out: Output) -> None:
    ...     out.data("quiet" if out.quiet else "hello")
    >>> [name for name in inspect.signature(hello).parameters]
    ['ctx', 'quiet', 'no_color', 'json_output']
    """
    if command is None:
        return functools.partial(output_options, json=json)
    switches = [
        _keyword("ctx", typer.Context, inspect.Parameter.empty),
        _keyword("quiet", QuietOpt, False),
        _keyword("no_color", NoColorOpt, False),
    ]
    if json:
        switches.append(_keyword("json_output", JsonOpt, False))

    def run_output(ctx: typer.Context, quiet: bool, no_color: bool, json_output: bool = False) -> Output:
        out = ctx.ensure_object(Output)
        out.set_switches(quiet=quiet, no_color=no_color, json_output=json_output)
        return out

    return _replace_parameter(command, "out", switches, run_output)


def _keyword(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _replace_parameter(command: Any, hidden: str, extra: list[inspect.Parameter], convert: Callable[..., Any]) -> Any:
    """``command`` as typer sees it: parameter ``hidden`` replaced by ``extra``, whose values ``convert`` makes it."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for name, p in signature.parameters.items() if name != hidden]
    names = [p.name for p in extra]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in names}
        return command(*args, **{hidden: convert(**given)}, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*own, *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in (*own, *extra)}
    del wrapper.__wrapped__  # typer must see the new signature, not the wrapped one
    return wrapper
