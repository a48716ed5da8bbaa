"""The Typer app: wires one module per command and turns known errors into one-line messages.

Command modules import only typer and pecli's light modules at import time (numpy, torch and
matplotlib only inside the functions that need them), so ``pecli --help`` stays instant.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from pecli import __version__

app = typer.Typer(
    name="pecli",
    help="Generate and inspect positional encodings.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        print(f"pecli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Generate and inspect positional encodings."""


#: one module per command, each with a register(app) function; listed in help order
COMMANDS = ("generate", "plot", "distance", "compare", "identify")

for _name in COMMANDS:
    importlib.import_module(f"pecli.cli.{_name}").register(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code. Known errors print one line; PECLI_DEBUG=1 shows tracebacks."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError  # typer >= 0.26 vendors click

    from pecli.cli.output import Output
    from pecli.errors import ExitCode, PecliError

    output = Output()
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="pecli", standalone_mode=False)
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
