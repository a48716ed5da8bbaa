"""The one place pecli reaches into Typer's private modules (``typer._click``, ``typer._completion_classes``).

Typer 0.26 vendors click as ``typer._click``; pecli needs a few of its names to turn click's
errors into one-line messages, to tell a broken pipe from a failure, and to print completion
help literally. pyproject pins ``typer<0.29`` (0.29 imports pydantic at every start, ~0.1 s):
when that pin moves, this module is the one to revisit.

>>> issubclass(NoArgsIsHelpError, ClickException), callable(get_completion_class)
(True, True)
"""

from __future__ import annotations

from typer._click import Context
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer._click.shell_completion import CompletionItem, add_completion_class, get_completion_class
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
]
