"""Shell completion through typer's completion classes, with help text shown literally.

The scripts in completions/ call ``pecli`` back with ``_PECLI_COMPLETE=complete_bash`` (zsh,
fish). typer renders each candidate's help through Rich markup, which eats bracketed text such as
"[sin | cos]" and wraps long help over several lines (which fish then reads as extra candidates);
the zsh and fish classes here print the help as it is, on one line.
"""

from __future__ import annotations

from pecli.cli._typer_compat import (
    CompletionItem,
    FishComplete,
    ZshComplete,
    add_completion_class,
    completion_init,
)


def one_line(text: str) -> str:
    """Help text for a completion menu: whitespace collapsed, nothing else changed.

    >>> one_line("split [sin | cos],\\n  ω_i = 10000^(−i/(h − 1))")
    'split [sin | cos], ω_i = 10000^(−i/(h − 1))'
    """
    return " ".join(text.split())


class LiteralZshComplete(ZshComplete):
    """typer's zsh completion without Rich rendering of the help."""

    def format_completion(self, item: CompletionItem) -> str:
        def escape(text: str) -> str:  # the quoting of typer's ZshComplete: _arguments '*: :(("v":"help"))'
            return (
                text.replace('"', '""').replace("'", "''").replace("$", "\\$").replace("`", "\\`").replace(":", r"\\:")
            )

        if item.help:
            return f'"{escape(item.value)}":"{escape(one_line(item.help))}"'
        return f'"{escape(item.value)}"'


class LiteralFishComplete(FishComplete):
    """typer's fish completion without Rich rendering of the help."""

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.value}\t{one_line(item.help)}" if item.help else item.value


def install() -> None:
    """Register the shell completion classes (typer does so only for its own --install-completion).

    >>> from pecli.cli._typer_compat import get_completion_class
    >>> install(); get_completion_class("zsh") is LiteralZshComplete
    True
    """
    completion_init()
    add_completion_class(LiteralZshComplete, "zsh")
    add_completion_class(LiteralFishComplete, "fish")
