"""The one place pecli reaches into Typer's private modules (``typer._click``, ``typer._completion_classes``).

Typer 0.26 vendors click as ``typer._click``; pecli needs a few of its names to turn click's
errors into one-line messages, to tell a broken pipe from a failure, and to print completion
help literally. pyproject pins ``typer<0.29`` (0.29 imports pydantic at every start, ~0.1 s):
when that pin moves, this module is the one to revisit.

>>> issubclass(NoArgsIsHelpError, ClickException), callable(get_completion_class)
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typer._click import Context
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer._click.shell_completion import CompletionItem, add_completion_class, get_completion_class
from typer._click.types import FloatParamType, IntParamType
from typer._click.utils import PacifyFlushWrapper
from typer._completion_classes import FishComplete, ZshComplete, completion_init

__all__ = [
    "ClickException",
    "CompletionItem",
    "Context",
    "FishComplete",
    "NoArgsIsHelpError",
    "PacifyFlushWrapper",
    "ZshComplete",
    "add_completion_class",
    "completion_init",
    "get_completion_class",
    "use_number_parsers",
]


def use_number_parsers(parse_int: Callable[[Any], int], parse_float: Callable[[Any], float]) -> None:
    """Make every INT and FLOAT option convert its text with these functions instead of ``int``/``float``.

    Click converts with Python's own ``int()``/``float()``, which accept Unicode digits (``'١٢'``,
    fullwidth ``'８'``); pecli's parsers take ASCII only. A ``ValueError`` from them becomes click's
    one-line "is not a valid integer" error naming the option.
    """
    IntParamType._number_class = staticmethod(parse_int)  # type: ignore[assignment]
    FloatParamType._number_class = staticmethod(parse_float)  # type: ignore[assignment]
