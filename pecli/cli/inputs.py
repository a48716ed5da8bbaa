"""Table inputs shared by plot, distance, compare and identify: a file, ``-``, or a scheme.

An existing path wins over a scheme name; a scheme takes the generate options (``--d``,
``--len``, ``--preset``, ``--base``…).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pecli.errors import ParameterError


@dataclass
class InputTable:
    """A table to inspect: its values, where it came from, and what its file says about it."""

    array: Any  # np.ndarray
    label: str  #: a title: the scheme and parameters, or the file name and key
    metadata: dict[str, str] = field(default_factory=dict)
    source: str = ""


def is_file_input(source: str) -> bool:
    """Whether ``source`` names a file (or stdin) rather than a scheme (an existing path wins).

    >>> is_file_input("sinusoidal"), is_file_input("pe.npy"), is_file_input("sinusiodal")
    (False, True, False)
    """
    if source == "-" or os.path.exists(source):
        return True
    from pecli.schemes.catalog import SCHEMES

    if source.split(":", 1)[0] in SCHEMES:
        return False
    return os.sep in source or "." in source


def load_input(
    source: str,
    *,
    key: str | None = None,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
) -> InputTable:
    """Read ``source`` as a table file, or compute it when it names a scheme."""
    scheme_params = scheme_params or {}
    if is_file_input(source):
        given = [flag for flag, value in (("--preset", preset), ("--d", dim), ("--len", length)) if value is not None]
        if given or scheme_params:
            from pecli.schemes.catalog import PARAMS

            given += [PARAMS[name].flag for name in scheme_params]
            raise ParameterError(
                f"{', '.join(given)} apply to a scheme, but {source!r} is a file",
                hint="drop them, or give a scheme name instead of the file",
            )
        from pecli.tables import read_table

        table = read_table(source, key=key)
        name = "<stdin>" if source == "-" else os.path.basename(source)
        label = f"{name} [{table.key}]" if table.key else name
        if "scheme" in table.metadata:
            label = _describe(table.metadata.get("scheme", ""), table.metadata) + f" — {label}"
        return InputTable(table.array, label, table.metadata, source)
    if key is not None:
        raise ParameterError(f"--key applies to files, but {source!r} is a scheme", hint="drop --key")
    from pecli.cli.common import build_table

    spec = build_table(source, preset, scheme_params, length=length, dim=dim, dtype=dtype, name="pe").single().check()
    return InputTable(spec.array(), _describe(spec.scheme, spec.metadata()), spec.metadata(), source)


def _describe(scheme: str, metadata: dict[str, str]) -> str:
    from pecli.schemes.catalog import SCHEMES

    names = SCHEMES[scheme].defaults if scheme in SCHEMES else {}
    params = ", ".join(f"{name}={metadata[name]}" for name in names if name in metadata)
    preset = f" ({metadata['preset']})" if metadata.get("preset") else ""
    return f"{scheme}{preset}" + (f": {params}" if params else "")
