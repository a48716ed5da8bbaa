"""The one error family of pecli, shared by the core, the table I/O and the CLI.

Every error pecli raises on purpose is a :class:`PecliError`. It carries a one-line
``message`` naming the problem and an optional ``hint`` naming the fix; the CLI prints
``pecli: error: <message> (<hint>)`` and exits with :attr:`PecliError.exit_code`.

>>> err = ParameterError("d must be a positive integer, got 0", hint="pass --d 512")
>>> str(err)
'd must be a positive integer, got 0 (pass --d 512)'
>>> int(err.exit_code)
2

The core names Python parameters, the CLI names flags: a message written with ``{dim}`` (a
parameter) or ``{dim=64}`` (a parameter and an example value) reads ``dim`` / ``dim=64`` from
Python and ``--d`` / ``--d 64`` once the CLI spells it (:meth:`PecliError.spelled`).

>>> err = ParameterError("{dim} must be a positive integer, got 0", hint="pass e.g. {dim=64}")
>>> str(err)
'dim must be a positive integer, got 0 (pass e.g. dim=64)'
>>> err.spelled({"dim": "--d"}.__getitem__)
'--d must be a positive integer, got 0 (pass e.g. --d 64)'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from enum import IntEnum

from pecli.text import literal, unliteral

__all__ = [
    "ExitCode",
    "Message",
    "OutputError",
    "ParameterError",
    "PecliError",
    "TableFileError",
    "did_you_mean",
    "name_parameters",
    "names_a_parameter",
    "respelled",
]


class ExitCode(IntEnum):
    """Process exit codes, as diff, cmp and grep use them: a script can tell "no" from a failure.

    Documented in README, ``pecli --help`` and the man page, all from :attr:`meaning`.

    >>> [f"{int(code)} {code.name}" for code in ExitCode]
    ['0 OK', '1 NO_MATCH', '2 USAGE', '3 FAILURE', '129 HANGUP', '130 INTERRUPTED', '143 TERMINATED']
    """

    OK = 0
    #: the answer is "no", and nothing else: compare found a difference, identify no convention
    NO_MATCH = 1
    #: a usage error: a bad option value, an unknown name, an unreadable or malformed input
    USAGE = 2
    #: a runtime failure: the output cannot be written (path, permission, full disk, terminal,
    #: closed stdout), memory ran out, an unexpected I/O error, or a bug in pecli
    FAILURE = 3
    #: the terminal went away (128 + SIGHUP): stopped as by Ctrl-C
    HANGUP = 129
    #: interrupted by Ctrl-C (128 + SIGINT)
    INTERRUPTED = 130
    #: asked to stop (128 + SIGTERM: ``timeout``, ``docker stop``, systemd): stopped as by Ctrl-C
    TERMINATED = 143

    @property
    def meaning(self) -> str:
        """One sentence for the documentation.

        >>> ExitCode.NO_MATCH.meaning
        'The answer is no: compare found a difference, identify found no matching convention.'
        """
        return _MEANINGS[self]


_MEANINGS = {
    ExitCode.OK: "Success.",
    ExitCode.NO_MATCH: "The answer is no: compare found a difference, identify found no matching convention.",
    ExitCode.USAGE: "A usage error: a bad option value, an unknown name, an unreadable or malformed input.",
    ExitCode.FAILURE: (
        "A runtime failure: the output cannot be written (missing directory, no permission, full disk,"
        " a terminal or a closed stdout), memory ran out, or pecli hit an internal error."
    ),
    ExitCode.HANGUP: "Stopped by SIGHUP (the terminal closed), leaving no partial output file behind.",
    ExitCode.INTERRUPTED: "Interrupted (Ctrl-C), leaving no partial output file behind.",
    ExitCode.TERMINATED: "Stopped by SIGTERM (timeout, docker stop), leaving no partial output file behind.",
}


class PecliError(Exception):
    """Base class: a known failure with a one-line message and an optional hint (exit 3 unless a subclass says)."""

    exit_code: int = ExitCode.FAILURE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self._templates = (message, hint)
        message, hint = name_parameters(message), hint if hint is None else name_parameters(hint)
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def hint_names(self, name: str) -> bool:
        """Whether the hint asks for parameter ``name`` (a command that has no such option must say otherwise).

        >>> PecliError("no context", hint="give {length}").hint_names("length")
        True
        """
        return self._templates[1] is not None and names_a_parameter(self._templates[1], [name])

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The one-line text with each parameter written as ``spell(name)`` (the CLI: its flag)."""
        message, hint = (text if text is None else name_parameters(text, spell) for text in self._templates)
        return f"{message} ({hint})" if hint else message  # type: ignore[return-value]


class Message(str):
    """A note's text: Python names as a ``str`` (``rows=0:200``), flags once the CLI spells it (``--rows 0:200``).

    >>> note = Message("rows repeat: {rows=0:200} shows them")
    >>> note, note.spelled(lambda name: "--" + name)
    ('rows repeat: rows=0:200 shows them', 'rows repeat: --rows 0:200 shows them')
    """

    template: str

    def __new__(cls, template: str) -> Message:
        message = super().__new__(cls, name_parameters(template))
        message.template = template
        return message

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The text with each parameter written as ``spell(name)`` (the CLI: its flag)."""
        return name_parameters(self.template, spell)


class ParameterError(PecliError, ValueError):
    """An invalid scheme, preset, parameter or option value (a usage error, exit 2)."""

    exit_code = ExitCode.USAGE


class NoLayerTypes(ParameterError):
    """A layer type asked of a model's config that has one set of rope parameters for every layer (exit 2);
    compare, given two configs, reads the layer type from the other and this one as it is."""


class TableFileError(PecliError, ValueError):
    """An input table that is missing, unreadable, corrupt or of the wrong shape (exit 2)."""

    exit_code = ExitCode.USAGE


class OutputError(PecliError, OSError):
    """The output could not be written: a missing directory, no permission, a full disk (exit 3)."""

    exit_code = ExitCode.FAILURE


#: a hint names at most this many valid choices
_LISTED = 20


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A hint listing the valid ``choices`` (the first 20), nearest first when ``word`` is close to one.

    >>> did_you_mean("sinusiodal", ["sinusoidal", "learned", "count"])
    "did you mean 'sinusoidal'? valid: sinusoidal, learned, count"
    >>> did_you_mean(5, ["float32", "float64"])
    'valid: float32, float64'
    >>> did_you_mean("x", [f"t{i}" for i in range(1000)])[-30:]
    '16, t17, t18, t19 and 980 more'

    Case is no distance: a name in the wrong case is the one suggested, and a typo in it is matched too.

    >>> did_you_mean("CSV", ["npy", "csv", "tsv"])
    "did you mean 'csv'? valid: npy, csv, tsv"
    >>> did_you_mean("Sinusiodal", ["sinusoidal", "learned"])
    "did you mean 'sinusoidal'? valid: sinusoidal, learned"

    The hint is a template: a name with braces (a tensor called ``{rows}``) stays as it is.

    >>> name_parameters(did_you_mean("{row}", ["{rows}", "x"]))
    "did you mean '{rows}'? valid: {rows}, x"
    """
    choices = list(choices)
    # a name given as a number, a type or a list (``dtype=np.float32``) is near none of them
    close: list[str] = []
    if isinstance(word, str):
        folded: dict[str, str] = {}  # the casefolded name -> the first choice written so
        for choice in choices:
            folded.setdefault(str(choice).casefold(), str(choice))
        same = folded.get(word.casefold())
        near = difflib.get_close_matches(word.casefold(), list(folded), n=3, cutoff=0.6)
        close = [same] if same is not None else [folded[name] for name in near]
    valid = "valid: " + ", ".join(literal(str(choice)) for choice in choices[:_LISTED])  # names from files
    if len(choices) > _LISTED:  # a file can hold a million tensor names: the line stays short
        valid += f" and {len(choices) - _LISTED} more"
    if close:
        return "did you mean " + " or ".join(literal(repr(c)) for c in close) + "? " + valid
    return valid


#: ``{name}`` or ``{name=example}``: a Python parameter in an error's text
_PARAMETER = re.compile(r"\{([a-z][a-z0-9_]*)(?:=([^{}]*))?\}")


def respelled(error: PecliError, spell: Callable[[str, str | None], str | None]) -> tuple[str, str | None]:
    """``error``'s message and hint with each parameter written as ``spell(name, example)``.

    A parameter ``spell`` returns None for stays a placeholder, for the CLI to spell later: a
    config file or a spec string names the values it set in its own words, the caller's sizes
    remain flags.

    >>> error = ParameterError("{base} must be > 1 at {length}", hint="e.g. {base=10000}")
    >>> respelled(error, lambda name, example: None if name == "length" else f"{name}={example or '…'}")
    ('base=… must be > 1 at {length}', 'e.g. base=10000')
    """

    def fill(match: re.Match[str]) -> str:
        spelled = spell(match.group(1), match.group(2))
        return match.group(0) if spelled is None else spelled

    message, hint = error._templates
    return _PARAMETER.sub(fill, message), None if hint is None else _PARAMETER.sub(fill, hint)


def names_a_parameter(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` (a message template) has a placeholder for one of ``names``.

    >>> names_a_parameter("{base} must be > 1", ["base"]), names_a_parameter("{length} too large", ["base"])
    (True, False)
    """
    wanted = set(names)
    return any(match.group(1) in wanted for match in _PARAMETER.finditer(text))


def name_parameters(text: str, spell: Callable[[str], str] | None = None) -> str:
    """Fill the parameter placeholders of an error's text: Python names, or ``spell(name)`` (flags).

    >>> name_parameters("use {base=10000} or drop {freq_shift}")
    'use base=10000 or drop freq_shift'
    >>> name_parameters("use {base=10000} or drop {freq_shift}", lambda name: "--" + name.replace("_", "-"))
    'use --base 10000 or drop --freq-shift'

    Text from outside entered the template through :func:`~pecli.text.literal`: its braces are
    no placeholder, and read as they are once the template is filled.

    >>> from pecli.text import literal
    >>> name_parameters(f"{literal('{rows}.npy')}: use {{rows}}", lambda name: "--" + name)
    '{rows}.npy: use --rows'
    """

    def fill(match: re.Match[str]) -> str:
        name, example = match.group(1), match.group(2)
        if spell is None:
            return name if example is None else f"{name}={example}"
        return spell(name) if example is None else f"{spell(name)} {example}"

    return unliteral(_PARAMETER.sub(fill, text))
