"""Model files on the command line: ``generate --from-config``, a model directory as a table input, ``info DIR``.

The reading is :mod:`pecli.models`' business; this module turns its answers into tables and lines.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal, literal_repr

if TYPE_CHECKING:
    from pecli.models.info import ConfigInfo
    from pecli.schemes.spec import TableSet, TableSpec


def config_table(
    out: Output,
    source: str,
    scheme: str | None,
    preset: str | None,
    scheme_params: dict[str, Any],
    dim: int | None,
    length: int | None,
    *,
    dtype: str,
    name: str,
    layer_type: str | None = None,
) -> TableSpec | TableSet:
    """The :class:`~pecli.schemes.spec.TableSpec` a model's config implies (:mod:`pecli.models.from_config`);
    a :class:`~pecli.schemes.spec.TableSet` of every layer type's when they differ and none is picked.

    The config sets the scheme and its parameters; ``--len`` (default: the model's context),
    ``--part``, ``--dtype`` and the output options stay the user's.
    """
    from pecli.models.from_config import config_encoding, config_spec

    given = [flag for flag, value in (("SCHEME", scheme), ("{preset}", preset), ("{dim}", dim)) if value is not None]
    given += [f"{{{param}}}" for param in scheme_params if param != "part"]  # flags as the user typed them
    if given:
        raise ParameterError(
            f"--from-config sets the scheme and its parameters, so {', '.join(given)} cannot be given too",
            hint="drop them; --len, --part and --dtype still apply",
        )
    model = config_encoding(source, layer_type=layer_type, per_layer=True)
    if not model.is_formula:
        raise ParameterError(
            f"{literal(model.encoding.model_type)} learns its positions: its table is the weight "
            f"{literal_repr(model.learned_weight())}, "
            "not a formula",
            hint=_learned_hint(model.directory),
        )
    encoding = model.encoding
    spec = config_spec(model, length=length, scheme_params=scheme_params, dtype=dtype, name=name)
    for note in encoding.notes:  # once the config's values are checked: a refused config prints its error only
        out.note(f"{encoding.model_type}: {note}")
    for layer, layer_encoding in encoding.layers:  # the notes of one layer type only
        for note in layer_encoding.notes:
            if note not in encoding.notes:
                out.note(f"{encoding.model_type} ({layer}): {note}")
    return spec


def show_model_directory(out: Output, path: str, *, key: str | None = None, stats: bool = False) -> None:
    """``pecli info DIR``: the position tensors (headers only) and the config's position settings."""
    if key is not None or stats:
        raise ParameterError(
            f"--key and --stats describe one file, but {literal_repr(path)} is a model directory",
            hint="pecli info DIR lists its position tensors; give one of its .safetensors files for --key/--stats",
        )
    from dataclasses import replace

    from pecli.models.info import describe_model_directory

    model = describe_model_directory(path)
    if model.description is not None:
        model = replace(model, description=spelled_notes(out, model.description))
    out.show(model)


def spelled_notes(out: Output, info: ConfigInfo) -> ConfigInfo:
    """``info`` with each note that names a parameter (:class:`~pecli.errors.Message`) spelled as its flag, in
    the text and in the JSON document alike (the output spells only the lines it shows)."""
    from dataclasses import replace

    from pecli.errors import Message

    notes = [note.spelled(out.spell) if isinstance(note, Message) else note for note in info.notes]
    return replace(info, notes=notes)


def _learned_hint(directory: str) -> str:
    """Where a learned table is: ``pecli plot DIR`` draws it when the directory holds the weights."""
    from pecli.io.checkpoint import INDEX_FILE, SINGLE_FILE

    if any(os.path.isfile(os.path.join(directory, name)) for name in (SINGLE_FILE, INDEX_FILE)):
        return f"pecli plot {literal(directory)} draws it"
    return f"pecli plot draws it from the model's directory with its weights ({SINGLE_FILE})"
