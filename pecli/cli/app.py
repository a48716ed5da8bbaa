"""The Typer app: wires one module per command and turns known errors into one-line messages.

Command modules import only typer and pecli's light modules at import time (numpy, torch and
matplotlib only inside the functions that need them), so ``pecli --help`` stays instant.
:func:`main` imports and registers only the command it runs (all of them for help, version or
an unknown name), so start-up does not grow with the number of commands; ``app`` is the full
app, built on first access.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from typing import Any

import typer

from pecli import __version__

#: one module per command, each with a register(app) function; listed in help order
COMMANDS = ("generate", "timestep", "plot")


def _version(value: bool) -> None:
    if value:
        print(f"pecli {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Generate and inspect positional encodings."""


def build_app(commands: Iterable[str] = COMMANDS) -> typer.Typer:
    """The Typer app with the given commands (module names in :data:`COMMANDS`) registered.

    >>> [info.name for info in build_app(["generate"]).registered_commands]
    ['generate']
    """
    app = typer.Typer(
        name="pecli",
        help="Generate and inspect positional encodings.",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    app.callback()(_root)
    for name in commands:
        importlib.import_module(f"pecli.cli.{name}").register(app)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # the full app (for CliRunner, help and docs generators), built once
        globals()["app"] = full = build_app()
        return full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code. Known errors print one line; PECLI_DEBUG=1 shows tracebacks."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError  # typer >= 0.26 vendors click

    from pecli.cli.output import Output
    from pecli.errors import ExitCode, PecliError

    output = Output()
    args = sys.argv[1:] if argv is None else list(argv)
    # the one command asked for, when the first word names it; else all (help, typos, options)
    wanted = (args[0],) if args and args[0] in COMMANDS else COMMANDS
    command = typer.main.get_command(build_app(wanted))
    try:
        result = command.main(args=args, prog_name="pecli", standalone_mode=False)
        return int(result) if isinstance(result, int) else 0
    except typer.Exit as exit_:
        return exit_.exit_code
    except PecliError as error:
        if os.environ.get("PECLI_DEBUG"):
            raise
        output.error(error)
        return int(error.exit_code)
    except NoArgsIsHelpError as error:
        output.data(error.ctx.get_help())
        return int(ExitCode.USAGE)
    except ClickException as error:
        message = error.format_message().replace("\n", " ")
        context = getattr(error, "ctx", None)
        where = context.command_path if context is not None else "pecli"
        output.error(f"{message} (see '{where} --help')")
        return int(ExitCode.USAGE) if error.exit_code == 2 else error.exit_code
    except (KeyboardInterrupt, typer.Abort):
        sys.stderr.write("\npecli: interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # the reader went away (| head): stop quietly, and keep Python from complaining at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.OK)
