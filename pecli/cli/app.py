"""The Typer app: wires one module per command and turns known errors into one-line messages.

Command modules import only typer and pecli's light modules at import time (numpy, torch and
matplotlib only inside the functions that need them), so ``pecli --help`` stays instant.
:func:`main` imports and registers only the command it runs (all of them for help, version or
an unknown name), so start-up does not grow with the number of commands; ``app`` is the full
app, built on first access.
"""

from __future__ import annotations

import contextlib
import errno
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


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so nothing left in its buffer fails again at interpreter exit."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code. Known errors print one line; PECLI_DEBUG=1 shows tracebacks.

    A reader that closes stdout early (``| head``) is not a failure: exit 0 without a word.
    """
    try:
        code = _run(argv)
        if sys.stdout is not None:  # None: started with stdout closed
            sys.stdout.flush()  # a reader that left shows up here, not as noise at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except SystemExit as exit_:
        # typer answers a closed pipe (EPIPE) inside a command with sys.exit(1)
        if isinstance(exit_.__context__, OSError) and exit_.__context__.errno == errno.EPIPE:
            _silence_stdout()
            return 0
        raise


def _run(argv: list[str] | None) -> int:
    """The command's exit code, with every known error turned into one line on stderr."""
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
        code = int(result) if isinstance(result, int) else 0
    except typer.Exit as exit_:
        code = exit_.exit_code
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
        sys.stderr.write("pecli: interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        raise  # main() ends quietly
    except MemoryError:
        if os.environ.get("PECLI_DEBUG"):
            raise
        output.error("out of memory (use a smaller --len or --d, or write to a .npy or .safetensors file)")
        return int(ExitCode.FAILURE)
    except OSError as error:  # an I/O failure no check foresaw (a vanished file, a device error)
        if os.environ.get("PECLI_DEBUG"):
            raise
        where = f": {error.filename!r}" if error.filename else ""
        output.error(f"{error.strerror or error}{where} (set PECLI_DEBUG=1 for the traceback)")
        return int(ExitCode.FAILURE)
    except Exception as error:
        # a bug: still one line (a user's script should not parse a traceback), with the way to see it
        if os.environ.get("PECLI_DEBUG"):
            raise
        first_line = str(error).splitlines()[0][:200] if str(error) else ""
        output.error(
            f"internal error: {type(error).__name__}: {first_line} "
            "(this is a bug in pecli: rerun with PECLI_DEBUG=1 and report the traceback)"
        )
        return int(ExitCode.FAILURE)
    if code == ExitCode.INTERRUPTED:  # typer turns Ctrl-C inside a command into a silent Exit(130)
        sys.stderr.write("pecli: interrupted\n")
    return code
