"""A model's config → the table ``generate --from-config`` writes for it: the scheme, its parameters and
sizes as a :class:`~pecli.schemes.spec.TableSpec`, with the config's values recorded, its sizes checked
before any work, and an error about a value the config set blamed on the config's field.

Messages name parameters (``{length}``, ``{part}``, ``{layer_type}``); the CLI spells them as flags.

>>> import json, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "config.json")
>>> with open(path, "w") as file:
...     json.dump({"model_type": "llama", "head_dim": 8, "max_position_embeddings": 16, "rope_theta": 10000.0}, file)
>>> model = config_encoding(path)
>>> spec = config_spec(model, length=4, scheme_params={"part": "cos"})
>>> spec.scheme, spec.shape, spec.params["base"], spec.metadata()["config.rope_theta"]
('rope', (4, 8), 10000.0, '10000.0')
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pecli.dtypes import format_bytes
from pecli.errors import ParameterError, PecliError, names_a_parameter, respelled
from pecli.models.config import model_encoding, read_config
from pecli.models.directory import shown
from pecli.models.encoding import ModelEncoding
from pecli.text import literal, literal_repr

if TYPE_CHECKING:
    from pecli.analysis.diagnosis.finding import ConfigFacts, Reference
    from pecli.schemes.spec import TableSet, TableSpec

__all__ = [
    "ABSURD_BYTES",
    "ROW_VALUES",
    "ConfigEncoding",
    "config_encoding",
    "config_facts",
    "config_spec",
    "with_config_facts",
]

#: a table larger than this is no model's: no disk holds it, so the config is broken or hostile
ABSURD_BYTES = 1 << 50
#: the widest row (one position's values: head_dim, d_model) a config may ask for
ROW_VALUES = 1 << 24


@dataclass(frozen=True)
class ConfigEncoding:
    """A config's position encoding and where it came from: the file, and the directory of the model."""

    encoding: ModelEncoding
    config_file: str  #: the config.json read (the model directory's, for a directory)
    directory: str  #: the model directory (the config file's folder)

    @property
    def is_formula(self) -> bool:
        """Whether the config sets a formula (a scheme), rather than a learned table in the weights."""
        return self.encoding.scheme is not None

    def learned_weight(self) -> str:
        """The learned position table's name in the model's own weights when they are there, else the usual name."""
        from pecli.models.directory import open_model_directory

        usual = self.encoding.learned_weight or ""
        try:
            names = [tensor.name for tensor in open_model_directory(self.directory).position_tensors()]
        except PecliError:
            return usual
        return next((name for name in names if name.endswith(usual)), names[0] if names else usual)


def config_encoding(source: str, *, layer_type: str | None = None, per_layer: bool = False) -> ConfigEncoding:
    """The position encoding of the config ``source`` names (a config.json, or a model directory holding one).

    Per-layer rope parameters that differ need ``layer_type``, unless ``per_layer`` (a file of every
    layer type's tables): a :class:`~pecli.errors.ParameterError` says so.
    """
    config_file = os.path.join(source, "config.json") if os.path.isdir(source) else source
    encoding = model_encoding(read_config(source), source=config_file, layer_type=layer_type)
    if encoding.layers and not per_layer:
        names = ", ".join(layer for layer, _ in encoding.layers)
        raise ParameterError(
            f"{literal(config_file)}: the layer types {literal(names)} have different position settings",
            hint="pick one with {layer_type=" + literal(encoding.layers[0][0]) + "}",
        )
    directory = source if os.path.isdir(source) else (os.path.dirname(source) or ".")
    return ConfigEncoding(encoding, config_file, directory)


def config_spec(
    model: ConfigEncoding,
    *,
    length: int | None = None,
    scheme_params: Mapping[str, Any] | None = None,
    dtype: str = "float32",
    name: str = "pe",
) -> TableSpec | TableSet:
    """The :class:`~pecli.schemes.spec.TableSpec` the config implies, recording the config's values.

    The config sets the scheme and its parameters; ``length`` (default: the model's context), ``part``
    (in ``scheme_params``) and ``dtype`` stay the caller's. A size no disk holds, a row no model has,
    or a value the scheme refuses is a :class:`~pecli.errors.ParameterError` naming the config's field.
    A config whose layer types differ (read with ``per_layer``) gives a
    :class:`~pecli.schemes.spec.TableSet`: one table per layer type, each tensor named ``TYPE.PART``.
    """
    from pecli.schemes.spec import TableSet

    encoding = model.encoding
    if encoding.scheme is None:
        raise ParameterError(
            f"{literal(encoding.model_type)} learns its positions:"
            f" its table is the weight {literal_repr(model.learned_weight())}, not a formula",
            hint="read it from the model's weights",
        )
    if length is not None and length <= 0:
        raise ParameterError(f"{{length}} must be a positive integer, got {length}", hint="e.g. {length=512}")
    metadata = encoding.metadata(model.config_file)
    if encoding.layers:  # the layer types differ and none was picked: one table per layer type, in one file
        tables = tuple(
            (layer, _encoding_spec(layer_encoding, length, scheme_params, dtype, name, model.config_file))
            for layer, layer_encoding in encoding.layers
        )
        _check_size(sum(table.nbytes for _, table in tables), encoding, length, model.config_file)
        return TableSet(tables, extra_metadata=metadata)
    table = _encoding_spec(encoding, length, scheme_params, dtype, name, model.config_file)
    return dataclasses.replace(table, extra_metadata=metadata)


def _needs_length(encoding: ModelEncoding, params: Mapping[str, Any], dtype: str) -> bool:
    """Whether the table asked for has a length axis (ALiBi's slopes, one per head, have none)."""
    from pecli.schemes.spec import TableSpec

    try:
        TableSpec.resolve(encoding.scheme, encoding.preset, params, length=None, dim=encoding.dim, dtype=dtype)
    except ParameterError as error:
        return names_a_parameter(error._templates[0], ["length"])
    return False


def _encoding_spec(
    encoding: ModelEncoding,
    length: int | None,
    scheme_params: Mapping[str, Any] | None,
    dtype: str,
    name: str,
    config_file: str = "config.json",
) -> TableSpec:
    """The checked table of one encoding (a layer type's), a bad value blamed on its config field."""
    from pecli.schemes.spec import TableSpec

    params = {**encoding.params, **(scheme_params or {})}
    if length is None and encoding.length is None and _needs_length(encoding, params, dtype):
        raise ParameterError(
            f"{literal(shown(config_file))} has no max_position_embeddings (the model's context)",
            hint="give the table's length as {length}, or add max_position_embeddings to the config",
        )
    fields = {k: v for k, v in encoding.fields.items() if not (k == "length" and length is not None)}
    try:
        table = TableSpec.resolve(encoding.scheme, encoding.preset, params,
                                  length=length if length is not None else encoding.length, dim=encoding.dim,
                                  dtype=dtype, name=name)  # fmt: skip
        _check_size(table.nbytes, encoding, length, config_file)
        if all(len(part.shape) == 2 for part in table.parts()):  # a relative bias's row is a whole matrix
            row = max(part.shape[1] for part in table.parts())
            if row > ROW_VALUES:
                raise ParameterError(
                    f"{literal(shown(config_file))} asks for rows of {row:,} values"
                    f" ({_config_sizes(encoding, length)})",
                    hint="no model's position table is that wide: check the model's config",
                )
            table.check()  # the scheme checks its values on the first row, here where a field can be named
    except ParameterError as error:
        raise _blamed_on_config(error, fields, config_file) from None
    return table


def _blamed_on_config(
    error: ParameterError, fields: dict[str, str], config_file: str = "config.json"
) -> ParameterError:
    """``error`` from the scheme with each parameter the config set named by its config field.

    An error about the caller's own options (``length``, ``part``) is returned as it is; in a blamed
    one they stay placeholders, for the CLI to spell.
    """
    if not names_a_parameter(error._templates[0], fields):
        return error

    def spell(parameter: str, example: str | None) -> str | None:
        if parameter in fields:
            return fields[parameter]
        if parameter in ("length", "part"):
            return None
        return parameter if example is None else f"{parameter}={example}"

    message, _ = respelled(error, spell)
    return ParameterError(f"{literal(shown(config_file))}: {message}", hint="the model's config sets this value")


def _config_sizes(encoding: ModelEncoding, length: int | None) -> str:
    """The config's sizes, as ``max_position_embeddings 4096, head_dim 128`` (and ``{length=N}`` when given)."""
    sizes = [
        f"{key} {literal(shown(str(value)))}"
        for what, (key, value) in encoding.provenance.items()
        if what in ("length", "dim", "heads") and not (what == "length" and length is not None)
    ]
    return ", ".join(sizes + ([f"{{length={length}}}"] if length is not None else []))


def _check_size(nbytes: int, encoding: ModelEncoding, length: int | None, config_file: str = "config.json") -> None:
    """A ParameterError, before any work, when the config's sizes make a table no disk can hold."""
    if nbytes <= ABSURD_BYTES:
        return
    raise ParameterError(
        f"{literal(shown(config_file))} asks for a table of {format_bytes(nbytes)} ({_config_sizes(encoding, length)})",
        hint="no disk holds it: pass a smaller {length}, or check the model's config",
    )


def config_facts(source: str, *, layer_type: str | None = None) -> ConfigFacts | None:
    """What the config ``source`` says beyond one table's parameters, for the diagnosis of an engine's table: the
    head width it sets explicitly (``head_dim``) and hidden_size / num_attention_heads beside it (an engine that
    derives the head width ignores the first), and each layer type's parameters (an engine that computes one layer
    type with another's settings). None when the config sets no formula, or it cannot be read.

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
    >>> with open(path, "w") as file:
    ...     json.dump({"model_type": "qwen3", "head_dim": 128, "hidden_size": 1024, "num_attention_heads": 16,
    ...                "max_position_embeddings": 4096, "rope_theta": 1e6}, file)
    >>> facts = config_facts(path)
    >>> facts.head_dim, facts.hidden_over_heads, facts.layers
    (('head_dim', 128), ('hidden_size/num_attention_heads', '1024/16', 64), ())
    """
    from pecli.analysis.diagnosis.finding import ConfigFacts

    try:
        config = read_config(source)
        encoding = model_encoding(config, layer_type=layer_type)
        everyone = model_encoding(config).layers if layer_type is not None else encoding.layers
    except PecliError:
        return None
    if encoding.scheme is None:
        return None
    head_dim, hidden_over_heads = _head_dim_facts(config, encoding)
    layers = tuple((name, dict(layer.params)) for name, layer in everyone if layer.dim == encoding.dim)
    return ConfigFacts(head_dim, hidden_over_heads, layer_type, layers)


def _head_dim_facts(
    config: Mapping[str, Any], encoding: ModelEncoding
) -> tuple[tuple[str, int] | None, tuple[str, str, int] | None]:
    """The head width ``config`` sets by a key of its own (``("head_dim", 256)``), and the width its
    hidden_size / num_attention_heads give (``("hidden_size/num_attention_heads", "1152/4", 288)``) when they
    differ; (None, None) when it sets none, or the two agree."""
    from pecli.models.class_defaults import HEAD_DIM_KEYS
    from pecli.models.rope_config import config_head_dim

    key, value = encoding.provenance.get("dim", (None, None))
    if not isinstance(key, str) or not isinstance(value, int):
        return None, None
    *path, name = key.split(".")  # a composite config's text_config.head_dim: read beside it
    sub: Any = config
    for step in path:
        sub = sub.get(step) if isinstance(sub, Mapping) else None
    if name not in HEAD_DIM_KEYS or not isinstance(sub, Mapping):
        return None, None
    try:
        width, (keys, values) = config_head_dim({k: v for k, v in sub.items() if k not in HEAD_DIM_KEYS})
    except PecliError:
        return None, None
    if width == value:
        return None, None
    prefix = "".join(f"{step}." for step in path)
    keys = "/".join(prefix + part for part in str(keys).split("/"))
    return (key, value), (keys, str(values), width)


def with_config_facts(reference: Reference, source: str, *, layer_type: str | None = None) -> Reference:
    """``reference`` (a config's table) with what the config ``source`` says beyond its parameters
    (:func:`config_facts`), for the diagnosis."""
    facts = config_facts(source, layer_type=layer_type)
    return reference if facts is None else dataclasses.replace(reference, config=facts)
