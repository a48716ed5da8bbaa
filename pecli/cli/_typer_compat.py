"""The one place pecli reaches into Typer's private modules (``typer._click``, ``typer._completion_classes``).

Typer 0.26 vendors click as ``typer._click``; pecli needs a few of its names to turn click's
errors into one-line messages, to tell a broken pipe from a failure, and to print completion
help literally; :func:`use_plain_help` adjusts how its plain (rich-less) help reads. pyproject
pins ``typer<0.29`` (0.29 imports pydantic at every start, ~0.1 s): when that pin moves,
this module is the one to revisit.

>>> issubclass(NoArgsIsHelpError, ClickException), callable(get_completion_class)
(True, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from typer._click import Context
from typer._click.exceptions import BadParameter, ClickException, NoArgsIsHelpError
from typer._click.globals import get_current_context
from typer._click.shell_completion import CompletionItem, add_completion_class, get_completion_class
from typer._click.types import FloatParamType, IntParamType
from typer._click.types import _NumberParamTypeBase as NumberParamType
from typer._click.utils import PacifyFlushWrapper
from typer._completion_classes import FishComplete, ZshComplete, completion_init
from typer.core import TyperArgument, TyperCommand, TyperOption

__all__ = [
    "BadNumber",
    "ClickException",
    "CompletionItem",
    "Context",
    "FishComplete",
    "FloatParamType",
    "IntParamType",
    "NoArgsIsHelpError",
    "NumberParamType",
    "PacifyFlushWrapper",
    "ZshComplete",
    "add_completion_class",
    "completion_init",
    "get_completion_class",
    "get_current_context",
    "help_sections",
    "use_number_parsers",
    "use_plain_help",
]


def use_number_parsers(parse_int: Callable[[Any], int], parse_float: Callable[[Any], float]) -> None:
    """Make every INT and FLOAT option convert its text with these functions instead of ``int``/``float``.

    Click converts with Python's own ``int()``/``float()``, which accept Unicode digits (``'١٢'``,
    fullwidth ``'８'``); pecli's parsers take ASCII only. A ``ValueError`` from them becomes a
    :class:`BadNumber`, which keeps the text given (the CLI's message names it with an example).
    """
    IntParamType._number_class = staticmethod(parse_int)  # type: ignore[assignment]
    FloatParamType._number_class = staticmethod(parse_float)  # type: ignore[assignment]
    NumberParamType.convert = _convert_number  # type: ignore[method-assign]


class BadNumber(BadParameter):
    """An INT or FLOAT option given text that is not one: the text, and whether an integer was wanted.

    >>> error = BadNumber("1e400", integer=True)
    >>> error.value, error.needs
    ('1e400', 'an integer')
    """

    def __init__(self, value: Any, *, integer: bool, ctx: Context | None = None, param: Any = None) -> None:
        self.value = value
        self.integer = integer
        self.needs = "an integer" if integer else "a number"
        super().__init__(f"{value!r} is not {self.needs}", ctx=ctx, param=param)


def _convert_number(self: NumberParamType, value: Any, param: Any, ctx: Context | None) -> Any:
    """click's conversion of a number, failing with a :class:`BadNumber` that keeps the text given."""
    try:
        return self._number_class(value)
    except ValueError:
        raise BadNumber(value, integer=isinstance(self, IntParamType), ctx=ctx, param=param) from None


#: the heading of options that name no panel (``rich_help_panel``), as in rich help
OPTIONS_PANEL = "Options"

_typer_option_metavar = TyperOption.make_metavar
_typer_argument_metavar = TyperArgument.make_metavar
#: Typer 0.28 passes ``usage=`` to an argument's metavar (and writes ``{NAME}`` there); 0.26 does not
_ARGUMENT_METAVAR_TAKES_USAGE = "usage" in _typer_argument_metavar.__code__.co_varnames


def _option_metavar(self: TyperOption, ctx: Context) -> str:
    """click's uppercase placeholder (``FLOAT``, ``INT``, ``TEXT``) where the vendored click writes ``<float>``."""
    metavar = re.sub(r"^<(\w+)>", lambda match: match.group(1).upper(), _typer_option_metavar(self, ctx))
    return "INT" if metavar == "INTEGER" else metavar  # Typer 0.26's click writes INTEGER


def _argument_metavar(self: TyperArgument, ctx: Context, *, usage: bool = False) -> str:
    """An argument's metavar as written; in the usage line ``[NAME]`` when optional, never ``{NAME}``."""
    if _ARGUMENT_METAVAR_TAKES_USAGE:
        metavar = _typer_argument_metavar(self, ctx, usage=False)
    else:
        metavar = _typer_argument_metavar(self, ctx)
    return f"[{metavar}]" if usage and not self.required and not metavar.startswith("[") else metavar


def help_sections(command: Any, ctx: Context) -> list[tuple[str, list[Any]]]:
    """``command``'s parameters as help lists them: (heading, params) for the arguments, "Options", then each panel.

    Options go under their ``rich_help_panel`` (``None``: "Options"), panels in order of first use;
    hidden parameters are left out. The man page groups its entries the same way.
    """
    sections: dict[str, list[Any]] = {"Arguments": [], OPTIONS_PANEL: []}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        heading = "Arguments" if param.param_type_name == "argument" else None
        heading = heading or getattr(param, "rich_help_panel", None) or OPTIONS_PANEL
        sections.setdefault(heading, []).append(param)
    return [(heading, params) for heading, params in sections.items() if params]


def _format_options_by_panel(self: TyperCommand, ctx: Context, formatter: Any) -> None:
    """The arguments, then the options under their ``rich_help_panel`` headings ("Options" first)."""
    for heading, params in help_sections(self, ctx):
        records = [record for record in (param.get_help_record(ctx) for param in params) if record is not None]
        if records:
            with formatter.section(heading):
                formatter.write_dl(records)


def use_plain_help() -> None:
    """Make typer's plain help read as pecli wants it (pecli runs typer without rich: start-up time).

    Options are listed under their ``rich_help_panel`` heading, as rich help does (plain help
    ignores it); placeholders are click's ``FLOAT``/``INT``/``TEXT``, not ``<float>``; a required
    argument shows in the usage line as ``INPUT``, not ``{INPUT}``.
    """
    TyperCommand.format_options = _format_options_by_panel  # type: ignore[method-assign]
    TyperOption.make_metavar = _option_metavar  # type: ignore[method-assign]
    TyperArgument.make_metavar = _argument_metavar  # type: ignore[method-assign]
