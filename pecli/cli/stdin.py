"""The table on a run's stdin, read once and kept for the rest of the run (``pecli plot -``, ``--bias-from -``).

Apart from :mod:`pecli.cli.inputs`, so that ``generate`` (which reads stdin only for ``--bias-from -``)
does not load the input resolver's helpers.
"""

from __future__ import annotations

from typing import Any

from pecli.cli.output import Output


def stdin_table(out: Output) -> bytes:
    """The bytes of the table on ``out``'s stdin, read on first use and kept for the rest of the run."""
    if out.stdin_table is None:  # a terminal is refused there, before anything is read
        from pecli.io.source import read_stdin

        with read_stdin(out.stdin_bytes) as handle:
            out.stdin_table = handle.read()
    return out.stdin_table


def stdin_file_params(out: Output, scheme_params: dict[str, Any]) -> dict[str, Any]:
    """``scheme_params`` with a table file given as ``-`` (T5's ``--bias-from -``) as stdin's table.

    Stdin is read once per run (:func:`stdin_table`); the scheme reads its bytes as often as it
    needs (its sizes, then its values), and records the parameter as ``-``.
    """
    if scheme_params.get("bias_from") != "-":
        return scheme_params
    from pecli.io.source import ReadTable

    return {**scheme_params, "bias_from": ReadTable("-", stdin_table(out))}
