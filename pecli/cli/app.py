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
import functools
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import typer

from pecli import __version__
from pecli.errors import ExitCode, PecliError

#: one module per command, each with a register(app) function; listed in help order
COMMANDS = ("generate", "timestep", "plot", "distance", "compare", "identify", "resample", "info", "schemes")

#: the environment variable through which shell completion scripts call pecli (click's convention)
COMPLETE_VAR = "_PECLI_COMPLETE"

#: the end of ``pecli --help``: every exit code, from the enum's own documentation
EPILOG = "Exit status: " + "; ".join(f"{int(code)} {code.meaning[0].lower()}{code.meaning[1:-1]}" for code in ExitCode)


def version_line() -> str:
    """pecli's version with the numpy and torch it finds and the Python it runs on (as ``pip --version``).

    Read from the installed packages' metadata, so torch is never imported.

    >>> version_line().startswith(f"pecli {__version__} (numpy ")
    True
    """
    from importlib import metadata

    found = []
    for package in ("numpy", "torch"):
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} not installed")
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"pecli {__version__} ({', '.join(found)}; Python {python})"


def _version(ctx: typer.Context, value: bool) -> None:
    if value:
        stdout = getattr(ctx.obj, "stdout", None) or sys.stdout  # the run's, where main gave one
        stdout.write(version_line() + "\n")
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
        epilog=EPILOG + ".",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    app.callback()(_root)
    _patch_typer()
    for name in commands:
        importlib.import_module(f"pecli.cli.{name}").register(app)
    for command in app.registered_commands:
        assert command.callback is not None, command.name  # every command module registers a function
        command.callback = _stop_quietly_when_reader_leaves(command.callback)
        # the listing of pecli --help shows the help's first line whole, never cut to fit ("else right...")
        command.short_help = command.short_help or summary_line(command.help or command.callback.__doc__ or "")
    return app


def _patch_typer() -> None:
    """What pecli changes in Typer process-wide; a run in-process restores it afterwards (:func:`main`)."""
    from pecli.cli._typer_compat import use_number_parsers, use_plain_help
    from pecli.cli.options import ascii_float, ascii_int

    use_number_parsers(ascii_int, ascii_float)  # --d ８ or --len ١٢ is refused, not read as 8 or 12
    use_plain_help()  # options under their panels' headings, FLOAT not <float>, INPUT not {INPUT}


@functools.cache
def _command(wanted: tuple[str, ...]) -> Any:
    """The click command of the commands ``wanted``, built once a process.

    A process runs one command line, but a caller in Python (a notebook, the test suite) runs many: Typer's
    build (about 12 ms, most of a small run) is paid once. The commands read their modules' names when they
    run, so the built command holds no state of a run; what the build patches process-wide is patched again
    by each run (:func:`_patch_typer`), since a run restores it afterwards.

    >>> _command(("schemes",)) is _command(("schemes",))
    True
    """
    return typer.main.get_command(build_app(wanted))


def summary_line(help_text: str) -> str:
    """A command's one-line summary for the listing of ``pecli --help``: the first line of its help.

    >>> summary_line("Generate a positional-encoding table.\\n\\nSCHEME defaults to sinusoidal.")
    'Generate a positional-encoding table.'
    """
    return help_text.strip().split("\n", 1)[0].strip()


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so nothing left in its buffer fails again at interpreter exit."""
    with contextlib.suppress(AttributeError, OSError, ValueError):  # AttributeError: started with stdout closed
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def start_collecting() -> None:
    """Turn the cycle collector on for the command's work, with what start-up built set aside for good.

    The console script starts with it off (:mod:`pecli.__main__`): the start's modules, classes
    and Typer's objects are never garbage, and a full collection traversing them cost ~20 ms of
    ``pecli plot --terminal``'s start. ``gc.freeze`` moves them out of every later collection.

    >>> import gc
    >>> start_collecting(); gc.isenabled()
    True
    """
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _stop_quietly_when_reader_leaves(callback: Callable[..., Any]) -> Callable[..., Any]:
    """Exit 0 without noise when stdout's reader goes away (``| head``), during the command or its last flush.

    Typer would turn the BrokenPipeError into exit 1; the flush here catches what would otherwise
    fail at interpreter shutdown ("Exception ignored … BrokenPipeError").
    """

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        start_collecting()
        try:
            result = callback(*args, **kwargs)
            from pecli.cli._typer_compat import get_current_context

            context = get_current_context(silent=True)
            stdout = getattr(context and context.obj, "stdout", sys.stdout)  # the run's own, where main gave one
            if stdout is not None:  # None: started with stdout closed (>&-)
                stdout.flush()
            return result
        except BrokenPipeError:
            _silence_stdout()
            raise typer.Exit(int(ExitCode.OK)) from None

    return run


def __getattr__(name: str) -> Any:
    if name == "app":  # the full app (for CliRunner, help and docs generators), built once
        globals()["app"] = full = build_app()
        return full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _flag_for(name: str) -> str:
    """The flag of a parameter a result's text names (the options module, imported on first use)."""
    from pecli.cli.options import flag_for

    return flag_for(name)


def main(argv: list[str] | None = None, *, output: Any = None) -> int:
    """Run the CLI; return the exit code. Known errors print one line; PECLI_DEBUG=1 shows tracebacks.

    ``output`` is the run's context (a :class:`~pecli.cli.output.Output`: its streams and switches);
    by default one over the process's stdin, stdout and stderr. The command receives this same one,
    so ``-q`` silences the warnings it raises too, and a test can run pecli over in-memory streams.
    What the run patches process-wide (warning display, number parsing, signal handlers) is restored
    when it ends, except for a command line's signals (``argv`` None), which stay set aside for the exit.

    A reader that closes stdout early (``| head``) is not a failure: exit 0 without a word. A signal
    that arrives after the command's work is done (while stdout is flushed, or as the signals are
    being set aside for the exit) is answered like one during the work: a completed write is a success.
    """
    try:
        if os.environ.get(COMPLETE_VAR):
            # the completion scripts in completions/ call back with _PECLI_COMPLETE=complete_bash…
            from pecli.cli.completion import install

            install()
        from pecli.cli.output import Output, tolerate_narrow_stdout, write_whole_stdout

        if argv is None:  # the process's own command line: its stdout is ours until the exit
            write_whole_stdout()
            tolerate_narrow_stdout()
        output = output if output is not None else Output(spell=_flag_for)
        with _restored_afterwards(signals=argv is not None):
            stop_on_signals()
            code = _run(argv, output)
            code = _flush_stdout(output, code)  # a reader that left shows up here, not as noise at interpreter exit
        if argv is None:  # a command line: its work is done, and a late Ctrl-C must not turn it into a failure
            for signum in (signal.SIGINT, *_STOPPING_SIGNALS):
                signal.signal(signum, signal.SIG_IGN)
        return code
    except KeyboardInterrupt:
        return _stopped(ExitCode.INTERRUPTED, "interrupted", output)
    except Stopped as stop:
        stopping = signal.Signals(stop.signum)
        return _stopped(_STOPPING_SIGNALS[stopping], f"stopped by {stopping.name}", output)
    except BrokenPipeError:
        # the reader went away (| head): stop quietly, and keep Python from complaining at exit
        _silence_stdout()
        return int(ExitCode.OK)
    except SystemExit as exit_:
        from pecli.cli._typer_compat import PacifyFlushWrapper

        # typer's sign of a broken pipe (--help | head -1): sys.exit(1) while handling EPIPE
        epipe = isinstance(exit_.__context__, OSError) and exit_.__context__.errno == errno.EPIPE
        if epipe or isinstance(sys.stdout, PacifyFlushWrapper):
            _silence_stdout()
            return int(ExitCode.OK)
        raise exit_ from None


def _current_directory_gone() -> bool:
    """Whether the working directory was removed under pecli (then no relative path can be resolved)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def _stdout_error(error: OSError) -> str:
    """The line for a result that stdout would not take, with what to do about it.

    >>> _stdout_error(OSError(28, "No space left on device"))
    'cannot write to stdout: No space left on device (the disk is full: free space or redirect stdout elsewhere)'
    """
    hint = (
        "the disk is full: free space or redirect stdout elsewhere"
        if error.errno == errno.ENOSPC
        else ("redirect stdout to a file or a pipe that takes it")
    )
    return f"cannot write to stdout: {error.strerror or error} ({hint})"


def _option_of_another_command(option: str, context: Any) -> str | None:
    """The message for an option this command lacks but others take (``timestep --len``), or None.

    Click would guess an option of this command by spelling (``--scale`` for ``--len``); the user
    meant another command's option, so the message says which take it and, where the command says
    so (its callback's ``pecli_instead``), what stands for it here.

    >>> timestep = typer.main.get_command(build_app(["timestep"])).commands["timestep"]
    >>> _option_of_another_command("--rows", typer.Context(timestep, info_name="timestep"))
    'No such option: --rows: an option of pecli plot, distance, not of pecli timestep'
    >>> _option_of_another_command("--nonesuch", typer.Context(timestep, info_name="timestep")) is None
    True
    >>> print(_option_of_another_command("--rows", typer.Context(_command(("plot",)), info_name="pecli")))
    pecli takes --rows after the command's name (an option of pecli plot, distance): e.g. pecli plot --rows …
    """
    commands = getattr(_command(COMMANDS), "commands", {})  # every command (an error's path only)
    others = [
        name
        for name, command in commands.items()
        if name != context.info_name and any(option in (*p.opts, *p.secondary_opts) for p in command.params)
    ]
    if not others:
        return None
    instead = getattr(getattr(context.command, "callback", None), "pecli_instead", {}).get(option)
    owners = f"pecli {', '.join(others)}"
    if context.parent is None and hasattr(context.command, "commands"):  # given before the command's name
        return (
            f"pecli takes {option} after the command's name (an option of {owners}): "
            f"e.g. pecli {others[0]} {option} …"
        )
    if instead:
        return f"pecli {context.info_name} has no {option} (an option of {owners}): {instead}"
    return f"No such option: {option}: an option of {owners}, not of pecli {context.info_name}"


def _negative_number(option: str | None) -> bool:
    """Whether an unknown option is a negative number (click reads ``-1`` as an option's name).

    >>> _negative_number("-1"), _negative_number("-0.5e3"), _negative_number("-inf"), _negative_number("--dim")
    (True, True, True, False)
    """
    if not option or not option.startswith("-"):
        return False
    try:
        float(option)
    except ValueError:
        return False
    return True


def _stdout_failed(output: Any) -> bool:
    """Whether stdout refuses what is waiting in its buffer (then it is emptied for good: /dev/null).

    A write that failed leaves its bytes in the buffer, so flushing again fails the same way; a
    failure elsewhere (reading a file) leaves stdout writable.
    """
    try:
        output.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError):
        _silence_stdout()
        return True
    return False


def _flush_stdout(output: Any, code: int) -> int:
    """``code``, or 3 with one line when the last of the result cannot be written (a full disk)."""
    try:
        output.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        _silence_stdout()
        if code in (ExitCode.OK, ExitCode.NO_MATCH):  # the failure was not reported yet: the answer did not arrive
            output.error(_stdout_error(error))
            return int(ExitCode.FAILURE)
    return code


#: signals that stop pecli as Ctrl-C does (temporary removed, one line), each with its exit code
_STOPPING_SIGNALS = {signal.SIGTERM: ExitCode.TERMINATED, signal.SIGHUP: ExitCode.HANGUP}


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds like KeyboardInterrupt (temporaries are removed on the way)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def stop_on_signals() -> None:
    """Make SIGTERM and SIGHUP stop pecli as Ctrl-C does (exit 143 and 129), where they are not ignored.

    ``timeout``, ``docker stop`` and systemd send SIGTERM; a closed terminal sends SIGHUP. A signal
    the parent set to be ignored (``nohup``) stays ignored.
    """
    for signum in _STOPPING_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _raise_stopped)


def _stopped(code: ExitCode, what: str, output: Any = None) -> int:
    """The exit code for a run stopped by ``what``, or 0 when its output was already complete.

    Nothing is imported here: an interrupt in the middle of importing numpy leaves it half
    initialised, and importing it again ("cannot load module more than once") would end in a
    traceback. A write can only have completed once :mod:`pecli.io.atomic` was loaded.
    """
    # the run's stderr (one that refuses the line loses it), once main has built it
    say = output.say if output is not None else _say_on_stderr
    completed_writes = getattr(sys.modules.get("pecli.io.atomic"), "completed_writes", None)
    written = completed_writes() if completed_writes is not None else []
    if written:  # the rename happened: the command succeeded, whatever came after
        say(f"pecli: {what} after {written[-1]!r} was completely written\n")
        return int(ExitCode.OK)
    say(f"pecli: {what}\n")
    return int(code)


def _say_on_stderr(line: str) -> None:
    """``line`` on the process's stderr, before the run's output exists; lost where stderr refuses it."""
    with contextlib.suppress(AttributeError, OSError, ValueError):  # AttributeError: started with stderr closed
        sys.stderr.write(line)
        sys.stderr.flush()


@contextlib.contextmanager
def _restored_afterwards(*, signals: bool) -> Iterator[None]:
    """Put back, when the block ends, what a run changes for the whole process: how warnings are shown,
    how click parses numbers and lays out help (:mod:`pecli.cli._typer_compat`), and (``signals``) the
    handlers of SIGTERM and SIGHUP."""
    import warnings

    from typer.core import TyperArgument, TyperCommand, TyperOption

    from pecli.cli._typer_compat import FloatParamType, IntParamType, NumberParamType

    patched = [
        (warnings, "showwarning"),
        (IntParamType, "_number_class"),
        (FloatParamType, "_number_class"),
        (NumberParamType, "convert"),
        (TyperCommand, "format_options"),
        (TyperOption, "make_metavar"),
        (TyperArgument, "make_metavar"),
    ]
    saved = [(owner, name, owner.__dict__.get(name, _ABSENT)) for owner, name in patched]
    handlers = {signum: signal.getsignal(signum) for signum in _STOPPING_SIGNALS} if signals else {}
    try:
        yield
    finally:
        for owner, name, value in saved:
            if value is _ABSENT:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, value)
        for signum, handler in handlers.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(signum, handler)


_ABSENT = object()


def _warnings_as_one_line(output: Any) -> None:
    """Show Python's warnings (numpy's "overflow encountered in …") as one ``pecli: warning:`` line each,
    without the file name, line number and source excerpt of the default format."""
    import warnings

    def show(message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        output.warn(f"{str(message).splitlines()[0] if str(message) else category.__name__}")

    warnings.showwarning = show


def _out_of_memory(args: list[str], flags: frozenset[str] | None = None) -> str:
    """The out-of-memory line: the files read and their sizes, or (for a generated table) its flags.

    ``flags`` are the options the command takes (None: any): the fix names only those, and never
    an output the user already gave.

    >>> _out_of_memory(["generate", "--d", "8"])
    'out of memory (use a smaller --len or --d, or write to a .npy or .safetensors file)'
    >>> _out_of_memory(["timestep", "--d", "8"], frozenset({"--d", "--range", "--format"}))
    'out of memory (use a smaller --d or fewer timesteps in --range, or write to a .npy or .safetensors file)'
    >>> _out_of_memory(["plot", "rope", "--d", "8"], frozenset({"--d", "--len", "--output", "--rows"}))
    'out of memory (use a smaller --len or --d)'
    """
    from pecli.dtypes import format_bytes

    def takes(flag: str) -> bool:
        return flags is None or flag in flags

    # the files read: not the output, which may exist already (``-o d.npy`` is written, not read)
    outputs = {i + 1 for i, arg in enumerate(args) if arg in ("-o", "--output")}
    files = [arg for i, arg in enumerate(args[1:], 1)
             if i not in outputs and not arg.startswith("-") and os.path.isfile(arg)]  # fmt: skip
    if files:
        sizes = ", ".join(f"{name} ({format_bytes(os.path.getsize(name))})" for name in files)
        parts = [flag for flag in ("--key", "--rows") if takes(flag)]
        part = f", or read part of it with {' or '.join(parts)}" if parts else ""
        return f"out of memory reading {sizes} (give a smaller table{part})"
    smaller = " or ".join(flag for flag in ("--len", "--d") if takes(flag))
    if flags is not None and "--range" in flags:
        smaller = f"{smaller} or fewer timesteps in --range" if smaller else "fewer timesteps in --range"
    fixes = [f"use a smaller {smaller}"] if smaller else []
    written = any(arg.lower().endswith((".npy", ".safetensors")) for arg in args[1:])
    if takes("--format") and not written:  # a command that writes data (--format), not a figure
        fixes.append("write to a .npy or .safetensors file")
    return f"out of memory ({', or '.join(fixes)})" if fixes else "out of memory"


#: examples for number options that have no default anywhere and where 8 (or 2) would be refused or odd
_NUMBER_EXAMPLES: dict[str, float] = {
    "width": 80,
    "height": 32,
    "dpi": 100,
    "slice": 0,
    "head": 0,
    "original_max_position": 4096,
    "low_freq_factor": 1,
    "high_freq_factor": 4,
    "beta_fast": 32,
    "beta_slow": 1,
}


def _bad_number(error: Any, spell: Callable[[str], str]) -> str:
    """The line for an INT or FLOAT option given other text: ``--seed must be an integer, got '1e400' (e.g. --seed 8)``.

    The option is named as typed; the example is its default, else a scheme's default for it
    (``--base 10000``), else one of :data:`_NUMBER_EXAMPLES`, else a value that fits most options (8, or 2
    for a number).
    """
    from pecli.schemes.catalog import SCHEMES
    from pecli.text import literal_repr

    param = error.param
    options = [opt for opt in getattr(param, "opts", ()) if opt.startswith("-")]
    typed = spell(param.name) if param is not None and param.name else ""
    flag = typed if typed in options else (max(options, key=lambda opt: opt.startswith("--")) if options else "")
    name = flag or (param.human_readable_name if param is not None else "the value")
    defaults = [getattr(param, "default", None), *(scheme.defaults.get(param.name) for scheme in SCHEMES.values())]
    numbers = [value for value in defaults if isinstance(value, (int, float)) and not isinstance(value, bool)]
    fallback = _NUMBER_EXAMPLES.get(getattr(param, "name", None) or "", 8 if error.integer else 2)
    example = numbers[0] if numbers else fallback
    if isinstance(example, float) and example.is_integer():
        example = int(example)
    fix = f" (e.g. {flag} {example})" if flag else ""
    return f"{name} must be {error.needs}, got {literal_repr(str(error.value))}{fix}"


def _command_flags(command: Any, args: list[str]) -> frozenset[str] | None:
    """The long options of the command ``args`` name (None when the command is not known)."""
    sub = getattr(command, "commands", {}).get(args[0]) if args else None
    if sub is None:
        return None
    return frozenset(name for param in sub.params for name in getattr(param, "opts", ()) if name.startswith("--"))


@contextlib.contextmanager
def _help_to(output: Any) -> Iterator[None]:
    """While the command line is parsed and run, help goes where the run's results go when stdout is closed.

    Click and Rich print help to ``sys.stdout``, which is None when the process started with stdout
    closed (``>&-``); they then print nothing and exit 0. The run's stdout stands in for it, so help,
    like any result, ends with one line on stderr and exit 3.
    """
    if sys.stdout is not None:
        yield
        return
    sys.stdout = output.stdout
    try:
        yield
    finally:
        sys.stdout = None  # as the process started: no stdout


def _run(argv: list[str] | None, output: Any) -> int:
    """The command's exit code, with every known error turned into one line on ``output``'s stderr.

    ``output`` is also the command's (click's ``ctx.obj``): the one the warnings go to.
    """
    from pecli.cli._typer_compat import BadNumber, ClickException, NoArgsIsHelpError

    _warnings_as_one_line(output)
    args = sys.argv[1:] if argv is None else list(argv)
    # the one command asked for, when the first word names it; else all (help, typos, options, completion)
    wanted = (args[0],) if args and args[0] in COMMANDS and not os.environ.get(COMPLETE_VAR) else COMMANDS
    _patch_typer()
    command = _command(tuple(wanted))
    from pecli.cli.options import as_typed, flag_for

    # a message names an option as the user wrote it (--dim, not its first alias --d)
    sub = getattr(command, "commands", {}).get(args[0]) if args else None
    spell = as_typed(flag_for, sub, args[1:])
    output.spell = as_typed(output.spell, sub, args[1:])
    try:
        with _help_to(output):
            result = command.main(
                args=args, prog_name="pecli", complete_var=COMPLETE_VAR, standalone_mode=False, obj=output
            )
        code = int(result) if isinstance(result, int) else 0
    except typer.Exit as exit_:
        code = exit_.exit_code
    except PecliError as error:
        if os.environ.get("PECLI_DEBUG"):
            raise
        # the core names parameters (dim), the CLI their flags (--d); and the file, where the core had an array
        output.error(output.naming_the_input(error.spelled(spell)))
        return int(error.exit_code)
    except NoArgsIsHelpError as error:
        try:
            output.data(error.ctx.get_help())
        except PecliError as failure:  # stdout closed (>&-): the help has nowhere to go
            output.error(failure.spelled(_flag_for))
            return int(failure.exit_code)
        return int(ExitCode.USAGE)
    except BadNumber as error:  # --seed 1e400: the option as typed, what it takes, and an example
        output.error(_bad_number(error, spell))
        return int(ExitCode.USAGE)
    except ClickException as error:
        message = error.format_message().replace("\n", " ")
        context = getattr(error, "ctx", None)
        where = context.command_path if context is not None else "pecli"
        if context is not None and type(error).__name__ == "NoSuchOption":  # click's guess is by spelling alone
            message = _option_of_another_command(error.option_name, context) or message  # type: ignore[attr-defined]
        if _negative_number(getattr(error, "option_name", None)):  # timestep -1 5: a value, read as an option
            message += (
                f"; a value starting with '-' goes after '--', with the options before it ({where} [OPTIONS] -- -1 5)"
            )
        output.error(f"{message} (see '{where} --help')")
        # click's usage errors exit 2; any other click failure is a runtime one, never "no"
        return int(ExitCode.USAGE) if error.exit_code == 2 else int(ExitCode.FAILURE)
    except typer.Abort:  # click's own word for Ctrl-C at a prompt; KeyboardInterrupt and Stopped reach main()
        return _stopped(ExitCode.INTERRUPTED, "interrupted", output)
    except BrokenPipeError:
        raise  # main() ends quietly
    except MemoryError:
        if os.environ.get("PECLI_DEBUG"):
            raise
        output.error(_out_of_memory(args, _command_flags(command, args)))
        return int(ExitCode.FAILURE)
    except OSError as error:  # an I/O failure no check foresaw (a vanished file, a device error)
        if os.environ.get("PECLI_DEBUG"):
            raise
        # the result could not be written (stdout on a full disk, /dev/full); click writes help through
        # a stream of its own, so its failure shows as an unnamed ENOSPC (pecli's files are named)
        if _stdout_failed(output) or (error.filename is None and error.errno == errno.ENOSPC):
            output.error(_stdout_error(error))
            return int(ExitCode.FAILURE)
        if error.filename is None and _current_directory_gone():  # os.path.abspath needs it (cd d; rmdir ../d)
            output.error("the current directory no longer exists (cd to one that does, or give absolute paths)")
            return int(ExitCode.FAILURE)
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
        return _stopped(ExitCode.INTERRUPTED, "interrupted", output)
    return code
