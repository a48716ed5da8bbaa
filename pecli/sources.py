"""One resolver for every input: a source string and the key/part choice in, a table and its description out.

A source is, in this order of precedence (the first kind whose ``matches`` says yes reads it):

* ``-``: standard input, whose bytes the caller passes in (``stdin=``: bytes, a stream, or a
  function returning bytes, so a caller can read stdin once per run and only when asked);
* a model directory: the table its ``config.json`` implies (as ``generate --from-config`` writes it),
  or, when the model learns its positions, its one 2-D position table among the weights;
* a model config (``config.json``, any JSON file :func:`pecli.models.read_config` reads): the
  table it implies, ``length`` rows (default: the model's context), ``key`` picking a part (``cos``, ``sin``);
* a model id (``org/name``, optionally ``@revision``): its snapshot in the local Hugging Face cache, read
  as a model directory (offline; an id not in the cache says how to fetch it);
* a table file (.npy, .safetensors, .pt, .csv, .tsv): the tensor ``key`` names, or its only one;
* a scheme spec (``sinusoidal``, ``rope:base=500000``), computed with the scheme options.

Adding a kind of source is adding a :class:`SourceKind` to :data:`SOURCE_KINDS`: nothing else
decides what a source is. Messages name parameters (``{key}``, ``{dim}``); the CLI spells flags.

>>> import numpy as np, pecli
>>> table = resolve("sinusoidal", dim=4, length=3)
>>> table.kind, table.scheme, np.allclose(table.array, pecli.encode("sinusoidal", length=3, dim=4))
('scheme', 'sinusoidal', True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Union

from pecli.errors import Message, ParameterError
from pecli.row_window import PLAIN_HINTS, LazySlice, LazySlices, RowWindow, WindowHints  # noqa: F401  (LazySlice: handed on)
from pecli.text import literal, literal_repr

__all__ = [
    "CONFIG_SUFFIXES",
    "SOURCE_KINDS",
    "CachedModelSource",
    "SourceKind",
    "SourceRequest",
    "SourceTable",
    "check_layer_type",
    "config_table_spec",
    "is_config_source",
    "kind_of_source",
    "reads_a_file",
    "resolve",
    "resolve_parts",
    "resolve_windows",
    "scheme_of_spec",
    "source_tensors",
    "spec_rows",
    "spec_values",
    "takes_layer_type",
]

#: standard input as a caller hands it over: its bytes, a stream, or a function that reads them once
Stdin = Union[bytes, IO[bytes], Callable[[], bytes], None]


@dataclass
class SourceTable:
    """A resolved input: its values, a title, what its file or scheme says about it, and how it was chosen."""

    array: Any  # np.ndarray
    label: str  #: a title: the scheme and parameters, or the file name and key (raw: not yet terminal-safe)
    metadata: dict[str, str] = field(default_factory=dict)
    source: str = ""
    key: str | None = None  #: the tensor of the file it was read from
    dtype: str = ""  #: the stored dtype, when numpy holds the values wider (a bfloat16 file's float32)
    kind: str = ""  #: which :data:`SOURCE_KINDS` entry read it: stdin, model-directory, file, scheme
    requested_key: str | None = None  #: the key asked for (a part of a name selects the whole name)
    scheme: str | None = None  #: the scheme, when known (computed, or recorded in the file's metadata)
    params: dict[str, Any] = field(default_factory=dict)  #: the scheme's parameters, when computed

    @property
    def dtype_name(self) -> str:
        """The table's dtype as stored: ``bfloat16`` for a bfloat16 file, else the array's."""
        return self.dtype or self.array.dtype.name

    @property
    def key_note(self) -> Message | None:
        """Why this tensor: a note when the key asked for was part of the chosen tensor's name, else None.

        >>> SourceTable(None, "", key="bert.embeddings.position_embeddings.weight",
        ...             requested_key="position_embeddings").key_note
        "key 'position_embeddings' selects the tensor 'bert.embeddings.position_embeddings.weight'"
        """
        if self.requested_key is None or self.key is None or self.key == self.requested_key:
            return None
        return Message(f"{{key}} {literal_repr(self.requested_key)} selects the tensor {literal_repr(self.key)}")


@dataclass(frozen=True)
class SourceRequest:
    """What the caller asks of a source besides its name: the key, the scheme options, stdin's bytes."""

    key: str | None = None
    preset: str | None = None
    scheme_params: dict[str, Any] = field(default_factory=dict)
    length: int | None = None
    dim: int | None = None
    dtype: str = "float32"
    stdin: Stdin = None
    #: a computed 3-D table's first slices (axis 0: ALiBi's or T5's heads) to compute, when not all are used
    first_slices: int | None = None
    #: the layer type of a model's config whose rope parameters differ by layer type (Gemma 3's)
    layer_type: str | None = None
    #: a file's complex tensor is read (an engine's freqs_cis, which compare reads as a RoPE pair), not refused
    complex_ok: bool = False

    def scheme_options(self) -> list[str]:
        """The scheme options given, as placeholders (``{preset}``, ``{dim}``, a parameter's ``{base}``)."""
        given = [f"{{{name}}}" for name, value in (("preset", self.preset), ("dim", self.dim), ("length", self.length))
                 if value is not None]  # fmt: skip
        return given + [f"{{{name}}}" for name in self.scheme_params]


class SourceKind:
    """One kind of source: whether a source string is one (``matches``) and how to read it (``load``)."""

    name = ""
    #: whether it is read from bytes (a file, stdin, a directory) rather than computed from options
    reads_a_file = True
    #: the scheme options it takes although it reads a file (a config's table takes its ``length``)
    options: frozenset[str] = frozenset()

    def matches(self, source: str) -> bool:
        raise NotImplementedError

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        raise NotImplementedError

    def tensors(self, source: str, request: SourceRequest) -> dict[str, tuple[tuple[int, ...], str]] | None:
        """The tensors a file holds (name -> (shape, dtype), headers only); None for a source that is no one file."""
        return None

    def parts(self, source: str, request: SourceRequest) -> list[SourceTable] | None:
        """A computed source's parts (a config's RoPE cos and sin); None when it has none of its own."""
        return None

    def windows(self, source: str, request: SourceRequest, hints: WindowHints) -> list[SourceTable] | None:
        """Its 2-D tables as :class:`~pecli.row_window.RowWindow` s (rows computed or read when a window of them
        is taken); None when it has none (it is read whole)."""
        return None


def stdin_bytes(stdin: Stdin) -> bytes:
    """Standard input's bytes from what a caller handed over (bytes, a stream, or a function)."""
    if stdin is None:
        raise ParameterError("'-' reads a table from standard input, but none was passed in",
                             hint="pass stdin=bytes (or a stream)")  # fmt: skip
    if isinstance(stdin, (bytes, bytearray)):
        return bytes(stdin)
    if callable(stdin):
        return stdin()
    return stdin.read()


def _file_table(source: str, readable: Any, request: SourceRequest, kind: str) -> SourceTable:
    """A table file's (or stdin's) tensor, titled by its name, key and the scheme its metadata records."""
    from pecli.io import read_table

    table = read_table(readable, key=request.key, complex_ok=request.complex_ok)
    return SourceTable(table.array, _file_label(source, table.key, table.metadata), table.metadata, source, table.key,
                       table.dtype, kind, request.key, table.metadata.get("scheme") or None)  # fmt: skip


def _file_label(source: str, key: str | None, metadata: dict[str, str]) -> str:
    """A file's table's title: its name and key, after the scheme its metadata records."""
    name = "<stdin>" if source == "-" else os.path.basename(source)
    label = f"{name} [{key}]" if key else name
    scheme = metadata.get("scheme")
    return label if scheme is None else _describe(scheme, metadata) + f" — {label}"


class StdinSource(SourceKind):
    """``-``: a table file's bytes on standard input."""

    name = "stdin"

    def matches(self, source: str) -> bool:
        return source == "-"

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        from pecli.io.source import ReadTable

        return _file_table(source, ReadTable("-", stdin_bytes(request.stdin)), request, self.name)

    def tensors(self, source: str, request: SourceRequest) -> dict[str, tuple[tuple[int, ...], str]] | None:
        from pecli.io import read_tensors
        from pecli.io.source import ReadTable

        return read_tensors(ReadTable("-", stdin_bytes(request.stdin)))[0]


class ModelDirectorySource(SourceKind):
    """A model directory: the table its config implies, or its one 2-D position table (or the weight ``key`` names).

    A directory whose weights hold a 2-D position tensor (a learned table, Whisper's stored
    sinusoids) is that tensor, as ``key`` picks among the weights; one that holds none (weights
    optional), or a ``key`` naming a part (``cos``, ``sin``), is the table its config implies.
    """

    name = "model-directory"
    options = frozenset({"length"})

    def matches(self, source: str) -> bool:
        return os.path.isdir(source)

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        from pecli.models.directory import open_model_directory, shown

        model = self._formula(source, request.layer_type)
        if model is not None and (request.key in _part_names(model) or not _holds_a_table(source)):
            return _config_table(source, model, request, self.name)
        if model is None and os.path.exists(os.path.join(source, "config.json")) and not _holds_a_table(source):
            _config_model(source, request.layer_type)  # no weights to fall back on: the config's own error, if any
        tensor, array = open_model_directory(source).position_table(request.key)
        label = f"{os.path.basename(os.path.normpath(source))} [{shown(tensor.name)}]"
        return SourceTable(array, label, {}, source, tensor.name, tensor.dtype, self.name, request.key)

    @staticmethod
    def _formula(source: str, layer_type: str | None = None) -> Any:
        """The directory's config when it sets a formula, else None (no config, a learned table, a bad config)."""
        from pecli.errors import PecliError

        if not os.path.exists(os.path.join(source, "config.json")):
            return None
        try:
            model = _config_model(source, layer_type)
        except PecliError:
            return None
        return model if model.is_formula else None

    def parts(self, source: str, request: SourceRequest) -> list[SourceTable] | None:
        model = self._formula(source, request.layer_type)
        if model is None or _holds_a_table(source):
            return None
        return _config_parts(source, model, request, self.name)


class ConfigSource(SourceKind):
    """A model's config file (``config.json``): the table ``generate --from-config`` writes for it."""

    name = "config"
    options = frozenset({"length"})

    def matches(self, source: str) -> bool:
        return source.lower().endswith(CONFIG_SUFFIXES) and not os.path.isdir(source)

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        model = _config_model(source, request.layer_type)
        if not model.is_formula:
            return ModelDirectorySource().load(model.directory, request)  # the learned table, in the weights
        return _config_table(source, model, request, self.name)

    def parts(self, source: str, request: SourceRequest) -> list[SourceTable] | None:
        model = _config_model(source, request.layer_type)
        return _config_parts(source, model, request, self.name) if model.is_formula else None


#: the endings of the files a model config is read from. Not ``.gguf``: a GGUF file is a table file
#: here (its position tensors, as .safetensors); ``generate --from-config`` reads its rope metadata
CONFIG_SUFFIXES = (".json",)

#: endings that make a name a file, never a model id (``out/pe.npy`` that does not exist yet)
_FILE_SUFFIXES = (*CONFIG_SUFFIXES, ".gguf", ".npy", ".npz", ".safetensors", ".pt", ".pth", ".bin", ".csv", ".tsv",
                  ".txt")  # fmt: skip


class CachedModelSource(SourceKind):
    """A model id (``org/name[@revision]``): its snapshot in the local Hugging Face cache, read as a model directory."""

    name = "model-id"
    options = frozenset({"length"})

    def matches(self, source: str) -> bool:
        if "/" not in source or os.path.exists(source):  # cheaply: no id, and pecli.models stays unloaded
            return False
        from pecli.models.hub_cache import is_model_id

        return is_model_id(source) and not source.lower().endswith(_FILE_SUFFIXES)

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        from pecli.models.hub_cache import resolve_model_id

        return ModelDirectorySource().load(resolve_model_id(source), request)

    def parts(self, source: str, request: SourceRequest) -> list[SourceTable] | None:
        from pecli.models.hub_cache import resolve_model_id

        return ModelDirectorySource().parts(resolve_model_id(source), request)


def _config_model(source: str, layer_type: str | None = None) -> Any:  # pecli.models.from_config.ConfigEncoding
    from pecli.models.from_config import config_encoding

    return config_encoding(source, layer_type=layer_type)


def _config_spec(model: Any, request: SourceRequest, part: str | None = None) -> Any:
    from pecli.models.from_config import config_spec

    return config_spec(model, length=request.length, scheme_params={"part": part} if part else None,
                       dtype=request.dtype)  # fmt: skip


def _holds_a_table(directory: str) -> bool:
    """Whether a model directory's weights hold a position table, 2-D or a ViT's ``(1, N, C)`` (headers only)."""
    from pecli.errors import PecliError
    from pecli.models.directory import is_table_shape, open_model_directory

    try:
        return any(is_table_shape(tensor.shape) for tensor in open_model_directory(directory).position_tensors())
    except PecliError:
        return False


def _part_names(model: Any) -> list[str]:
    """The parts of the config's table (``cos``, ``sin``), or none for a one-tensor scheme."""
    from pecli.schemes.catalog import get_scheme

    return list(get_scheme(model.encoding.scheme).parts)


def _config_label(source: str, model: Any, spec: Any, part: str | None) -> str:
    """The table's title: its scheme, the config's name and, of a model whose layer types differ, the one picked."""
    name = os.path.basename(os.path.normpath(source))
    layer_type = model.encoding.layer_type
    picked = f" ({layer_type})" if layer_type is not None else ""
    return _describe(spec.scheme, spec.metadata()) + f" — {name}{picked}" + (f" [{part}]" if part else "")


def _config_table(source: str, model: Any, request: SourceRequest, kind: str) -> SourceTable:
    """The config's table (the part ``key`` names), titled by its scheme and the config's name."""
    parts = _part_names(model)
    if request.key is not None and request.key not in parts:
        choice = f"{{key={'|'.join(parts)}}}" if parts else "no {key}"
        raise ParameterError(f"{{key}} {literal_repr(request.key)} is not a part of the table"
                             f" {literal_repr(model.config_file)} gives",
                             hint=f"give {choice}")  # fmt: skip
    spec = _config_spec(model, request, request.key)
    names = [part.params.get("part") for part in spec.parts()]
    if len(names) > 1:
        raise ParameterError(
            f"{literal_repr(model.config_file)} gives a table of several tensors"
            f" ({literal(', '.join(map(str, names)))})",
            hint=f"pick one with {{key={'|'.join(parts)}}}",
        )
    spec = spec.single()
    metadata = spec.metadata()
    return SourceTable(spec.array(), _config_label(source, model, spec, request.key), metadata, source, request.key,
                       request.dtype, kind, scheme=spec.scheme, params=dict(spec.params))  # fmt: skip


def _config_parts(source: str, model: Any, request: SourceRequest, kind: str) -> list[SourceTable] | None:
    """The config's table as its parts (RoPE's cos and sin), or None for a one-tensor scheme."""
    parts = _config_spec(model, request).parts()
    if len(parts) < 2:
        return None
    return [
        SourceTable(part.check().array(), _config_label(source, model, part, part.name), part.metadata(), source,
                    part.name, request.dtype, kind, scheme=part.scheme, params=dict(part.params))
        for part in parts
    ]  # fmt: skip


class TableFileSource(SourceKind):
    """A table file: an existing path, or a name that looks like one (a path separator or an extension)."""

    name = "file"

    def matches(self, source: str) -> bool:
        if os.path.exists(source):
            return True
        from pecli.schemes.specs import names_a_scheme

        if names_a_scheme(source):  # a spec's values may hold a dot (fairseq:base=1.5)
            return False
        return os.sep in source or "." in source

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        return _file_table(source, source, request, self.name)

    def tensors(self, source: str, request: SourceRequest) -> dict[str, tuple[tuple[int, ...], str]] | None:
        from pecli.io import read_tensors

        return read_tensors(source)[0]

    def windows(self, source: str, request: SourceRequest, hints: WindowHints) -> list[SourceTable] | None:
        """The file's 2-D real tensor read in place (.npy, .safetensors); None for any other (read whole)."""
        from pecli.io import chosen_tensor
        from pecli.io.rows import open_rows
        from pecli.io.tensor import is_real_dtype

        chosen, shape, stored = chosen_tensor(source, request.key)  # a key that picks none: refused as read_table
        readable = len(shape) == 2 and is_real_dtype(stored) and stored not in ("float128", "longdouble")
        reader = open_rows(source, chosen) if readable else None
        if reader is None:
            return None  # read whole, and refused there when it is no table
        window = RowWindow.of_file(reader, f"the table in {literal(os.path.basename(source))}", hints=hints)
        return [SourceTable(window, _file_label(source, chosen, reader.metadata), reader.metadata, source,
                            chosen or None, stored, self.name, request.key,
                            reader.metadata.get("scheme") or None)]  # fmt: skip


class SchemeSource(SourceKind):
    """A scheme spec (``sinusoidal``, ``rope:base=500000``), computed with the request's scheme options."""

    name = "scheme"
    reads_a_file = False

    def matches(self, source: str) -> bool:
        return True

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        if request.key is not None:
            raise ParameterError(f"{{key}} applies to files, but {literal_repr(source)} is a scheme", hint="drop {key}")
        spec = _scheme_spec(source, request).single().check()
        metadata = spec.metadata()
        shape, wanted = spec.shape, request.first_slices
        if wanted is not None and len(shape) == 3 and shape[0] > wanted:  # only what is used: never the rest
            from pecli.memory import check_fits_in_memory

            check_fits_in_memory(wanted * (spec.nbytes // shape[0]), hint="use a smaller {length}")
            array = LazySlices(spec, wanted)
        elif wanted is not None and len(shape) == 3 and shape[0] > 1:
            array = LazySlices(spec, shape[0])
        else:
            array = spec.array()
        return SourceTable(array, _describe(spec.scheme, metadata), metadata, source, dtype=request.dtype,
                           kind=self.name, scheme=spec.scheme, params=dict(spec.params))  # fmt: skip

    def windows(self, source: str, request: SourceRequest, hints: WindowHints) -> list[SourceTable] | None:
        """The scheme's 2-D tables (each part), a window's rows computed alone; None for a 3-D one or a key."""
        if request.key is not None:
            return None  # refused where the table is read
        spec = _scheme_spec(source, request)
        parts = [part.check() for part in spec.parts()]
        if any(len(part.shape) != 2 for part in parts):
            return None
        one = len(parts) == 1
        return [
            SourceTable(RowWindow(part.shape, part.dtype, part.rows, "the table" if one else f"part {part.name}",
                                  hints=hints, smaller="use a smaller {length}"),
                        _describe(spec.scheme, part.metadata()) if one else part.name, part.metadata(), source,
                        dtype=request.dtype, kind=self.name, scheme=spec.scheme, params=dict(spec.params))
            for part in parts
        ]  # fmt: skip


def _scheme_spec(source: str, request: SourceRequest) -> Any:  # pecli.schemes.spec.TableSpec
    """The spec of the table scheme spec ``source`` names with the request's options, computing nothing."""
    from pecli.schemes.spec import TableSpec

    _check_sizes(request.dim, request.length)
    scheme, preset, params = scheme_of_spec(source, preset=request.preset, scheme_params=request.scheme_params,
                                            length=request.length, dim=request.dim, dtype=request.dtype)  # fmt: skip
    return TableSpec.resolve(scheme, preset, params, length=request.length, dim=request.dim, dtype=request.dtype,
                             name="pe")  # fmt: skip


#: the kinds of source, in the order they are tried: the first that matches reads the source
SOURCE_KINDS: tuple[SourceKind, ...] = (
    StdinSource(),
    ModelDirectorySource(),
    ConfigSource(),
    CachedModelSource(),
    TableFileSource(),
    SchemeSource(),
)


def kind_of_source(source: str) -> SourceKind:
    """The kind that reads ``source``: the first of :data:`SOURCE_KINDS` that matches it.

    >>> [kind_of_source(source).name for source in ("-", "pe.npy", "config.json", "org/model", "rope:base=500000")]
    ['stdin', 'file', 'config', 'model-id', 'scheme']
    """
    return next(kind for kind in SOURCE_KINDS if kind.matches(source))


def reads_a_file(source: str) -> bool:
    """Whether ``source`` names a file, a directory or stdin rather than a scheme (an existing path wins).

    >>> reads_a_file("sinusoidal"), reads_a_file("pe.npy"), reads_a_file("sinusiodal")
    (False, True, False)
    """
    return kind_of_source(source).reads_a_file


def resolve(
    source: str,
    *,
    key: str | None = None,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
    stdin: Stdin = None,
    first_slices: int | None = None,
    layer_type: str | None = None,
    complex_ok: bool = False,
) -> SourceTable:
    """Read or compute the table ``source`` names, with its description.

    ``first_slices``: of a computed 3-D table (heads, len, len), compute only that many leading slices
    (what a view that draws the first few heads needs); the metadata still describes the whole table.

    Scheme options (``preset``, ``dim``, ``length``, scheme parameters) apply to a scheme only, but for
    ``length``, which also sets a model config's rows; ``key`` to a file, stdin, a model directory or
    config only (a config's part: ``cos``, ``sin``); ``layer_type`` to a model's config (or directory, or id)
    only: the layer type whose rope parameters to use where they differ by layer type.

    >>> import io, numpy as np, pecli
    >>> piped = io.BytesIO(); np.save(piped, pecli.encode("sinusoidal", length=3, dim=4))
    >>> table = resolve("-", stdin=piped.getvalue())
    >>> table.kind, table.label, np.allclose(table.array, pecli.encode("sinusoidal", length=3, dim=4))
    ('stdin', '<stdin>', True)
    """
    request = SourceRequest(key, preset, dict(scheme_params or {}), length, dim, dtype, stdin, first_slices,
                            layer_type, complex_ok)  # fmt: skip
    kind = kind_of_source(source)
    check_layer_type(source, layer_type, kind)
    _check_scheme_options(source, request, kind)
    return kind.load(source, request)


def _check_scheme_options(source: str, request: SourceRequest, kind: SourceKind) -> None:
    """Refuse scheme options given to a source that reads a file (but those it takes: a config's ``length``)."""
    given = [option for option in request.scheme_options() if option.strip("{}") not in kind.options]
    if kind.reads_a_file and given:
        one = len(given) == 1
        what = "stdin ('-') holds a table" if source == "-" else f"{literal_repr(source)} is a file"
        raise ParameterError(
            f"{', '.join(given)} appl{'ies' if one else 'y'} to a scheme, but {what}",
            hint=f"drop {'it' if one else 'them'}, or give a scheme name instead of the file",
        )


def resolve_windows(
    source: str,
    *,
    key: str | None = None,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
    hints: WindowHints = PLAIN_HINTS,
) -> list[SourceTable] | None:
    """The tables of ``source`` as :class:`~pecli.row_window.RowWindow` s, for a view of a few of their rows: a
    scheme's 2-D tables (each part), or the 2-D tensor of a .npy or .safetensors file, read in place. None for
    any other source (a 3-D table, a model, stdin, .pt or text), which :func:`resolve` reads whole. ``hints``:
    the fixes a window too large to hold names (the caller's words for fewer rows).

    >>> [(table.label, table.array.shape) for table in resolve_windows("sinusoidal", dim=4, length=10**12)]
    [('sinusoidal', (1000000000000, 4))]
    >>> [table.label for table in resolve_windows("rope", dim=4, length=10**12)]
    ['cos', 'sin']
    """
    request = SourceRequest(key, preset, dict(scheme_params or {}), length, dim, dtype)
    kind = kind_of_source(source)
    _check_scheme_options(source, request, kind)
    return kind.windows(source, request, hints)


def resolve_parts(
    source: str,
    *,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
    stdin: Stdin = None,
    layer_type: str | None = None,
) -> list[SourceTable] | None:
    """The tables of a multi-part scheme (RoPE's cos and sin) or of a file whose tensors share one 2-D shape, else None.

    >>> [table.label for table in resolve_parts("rope", dim=4, length=3)]
    ['cos', 'sin']
    """
    kind = kind_of_source(source)
    check_layer_type(source, layer_type, kind)
    if kind.options:  # a model config (or directory): its table's parts, as generate --from-config writes them
        return kind.parts(source, SourceRequest(length=length, dtype=dtype, layer_type=layer_type))
    if kind.reads_a_file:
        entries = kind.tensors(source, SourceRequest(stdin=stdin))
        if entries is None:
            return None
        shapes = {shape for shape, _ in entries.values()}
        if len(entries) < 2 or len(shapes) != 1 or len(next(iter(shapes))) != 2:
            return None
        return [resolve(source, key=name, stdin=stdin) for name in entries]
    from pecli.schemes.specs import names_a_scheme

    if not names_a_scheme(source):
        return None
    spec = _scheme_spec(source, SourceRequest(None, preset, dict(scheme_params or {}), length, dim, dtype))
    parts = spec.parts()
    if len(parts) < 2:
        return None
    return [
        SourceTable(part.check().array(), part.name, part.metadata(), source, kind=kind.name, scheme=spec.scheme,
                    params=dict(spec.params))
        for part in parts
    ]  # fmt: skip


def scheme_of_spec(
    source: str,
    *,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
) -> tuple[str, str | None, dict[str, Any]]:
    """The scheme, preset and parameters a scheme spec (``rope:base=500000``, ``fairseq``) names, merged with
    ``preset`` and ``scheme_params`` given beside it: what every command computes, as if each were an option.

    Any other source (a file, ``-``, a model's config, a misspelt name) comes back as it is. A parameter given
    both ways must agree; a value of the spec's own that its scheme refuses at these sizes is blamed in the
    spec's words (``in spec 'rope:base=0': base …``), not as an option the user did not give.

    >>> scheme_of_spec("rope:base=500000", scheme_params={"factor": 4.0})
    ('rope', None, {'base': 500000.0, 'factor': 4.0})
    >>> scheme_of_spec("fairseq"), scheme_of_spec("pe.npy")
    (('sinusoidal', 'fairseq', {}), ('pe.npy', None, {}))
    >>> try:
    ...     scheme_of_spec("rope:base=0", dim=8, length=4)
    ... except ParameterError as error:
    ...     print(error.message)
    in spec 'rope:base=0': base must be a finite number greater than 1, got 0.0
    """
    from pecli.errors import PecliError
    from pecli.schemes.specs import looks_like_spec, names_a_scheme, parse_spec

    given = dict(scheme_params or {})
    spec_like = names_a_scheme(source) or (":" in source and looks_like_spec(source))  # NAME:… names its part
    if kind_of_source(source).reads_a_file or not spec_like:
        return source, preset, given
    spec = parse_spec(source)
    scheme, preset, params = spec.merged(preset, given)
    if spec.params and "-" not in params.values():  # a value read from stdin is read once, by the command
        from pecli.schemes.spec import TableSpec

        try:
            TableSpec.resolve(scheme, preset, params, length=length, dim=dim, dtype=dtype).check()
        except ParameterError as error:
            blamed = spec.blamed(error, only=spec.params)
            if blamed is not error:
                raise blamed from None
        except PecliError:
            pass  # not the spec's values: the command says it where it computes the table
    return scheme, preset, params


def spec_rows(spec: Any, rows: range) -> Any:
    """Rows ``rows`` of ``spec``'s one table as numbers: bfloat16 as its exact float32 values, widened from the
    bits :meth:`~pecli.schemes.spec.TableSpec.stored_rows` rounds (so no ``ml_dtypes`` import: its 0.7 release
    takes 2–3 s to import), every other dtype as :meth:`~pecli.schemes.spec.TableSpec.rows` gives it.

    >>> from pecli.schemes.spec import TableSpec
    >>> spec_rows(TableSpec.resolve("sinusoidal", None, {}, length=2, dim=2, dtype="bfloat16"), range(1, 2)).tolist()
    [[0.83984375, 0.5390625]]
    """
    from pecli.dtypes import widen_bfloat16

    part = spec.single()
    return widen_bfloat16(part.stored_rows(rows)) if part.dtype == "bfloat16" else part.rows(rows)


def spec_values(spec: Any) -> Any:
    """``spec``'s whole table as numbers (:func:`spec_rows`), refused as :meth:`TableSpec.array` refuses a table
    that would not fit in memory; the dtype it is stored as is ``spec.dtype``.

    >>> from pecli.schemes.spec import TableSpec
    >>> spec_values(TableSpec.resolve("rope", None, {"part": "sin"}, length=2, dim=2, dtype="bfloat16")).tolist()
    [[0.0, 0.0], [0.83984375, 0.83984375]]
    """
    from pecli.memory import check_fits_in_memory

    part = spec.single()
    check_fits_in_memory(part.nbytes, hint=f"use a smaller {part.size_placeholders}")
    return spec_rows(part, range(part.shape[0]))


def is_config_source(source: str) -> bool:
    """Whether ``source`` names a model's config, a model directory or a model id: what ``layer_type`` applies to.

    >>> is_config_source("config.json"), is_config_source("pe.npy"), is_config_source("rope")
    (True, False, False)
    """
    return bool(kind_of_source(source).options)


def weights_beside_config(source: str) -> str | None:
    """The model directory of config file ``source`` when its config computes no table (a learned one, or a
    ViT's with no position settings) and the directory's weights hold one: the table to read; else None.

    >>> weights_beside_config("no/such/config.json") is None
    True
    """
    directory = os.path.dirname(source) or "."
    if os.path.isdir(source) or not os.path.isdir(directory) or ModelDirectorySource._formula(directory) is not None:
        return None
    if os.path.basename(source) != "config.json":
        return None  # another config file beside weights is not the one the directory is read with
    return directory if _holds_a_table(directory) else None


def config_table_spec(source: str, *, length: int | None = None, layer_type: str | None = None) -> Any:
    """The spec (:class:`~pecli.schemes.spec.TableSpec`, its first part) of the table a model's config, directory
    or id implies, computing nothing; None when ``source`` is none of them or its model learns its positions.

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
    >>> _ = open(path, "w").write(json.dumps({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    ...                                       "max_position_embeddings": 32, "rope_theta": 500000.0}))
    >>> spec = config_table_spec(path, length=8)
    >>> spec.scheme, spec.params["base"], spec.length
    ('rope', 500000.0, 8)
    """
    kind = kind_of_source(source)
    if not kind.options:
        return None
    if kind.name == "model-id":
        from pecli.models.hub_cache import resolve_model_id

        source = resolve_model_id(source)
    if os.path.isdir(source) and _holds_a_table(source):
        return None  # the table among its weights
    model = _config_model(source, layer_type)
    if not model.is_formula:
        return None
    return _config_spec(model, SourceRequest(length=length, layer_type=layer_type)).parts()[0]


def takes_layer_type(source: str, layer_type: str) -> bool:
    """Whether the model's config ``source`` (a config, directory or id) has layer types for ``layer_type`` to
    pick among: False when it has one set of rope parameters for every layer; its other errors propagate.

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
    >>> _ = open(path, "w").write(json.dumps({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    ...                                       "max_position_embeddings": 32, "rope_theta": 500000.0}))
    >>> takes_layer_type(path, "full_attention")
    False
    """
    from pecli.errors import NoLayerTypes

    if kind_of_source(source).name == "model-id":
        from pecli.models.hub_cache import resolve_model_id

        source = resolve_model_id(source)
    try:
        _config_model(source, layer_type)
    except NoLayerTypes:
        return False
    return True


def check_layer_type(source: str, layer_type: str | None, kind: SourceKind | None = None) -> None:
    """Refuse ``layer_type`` for a source that is no model's config (a table file, stdin, a scheme).

    >>> try:
    ...     check_layer_type("pe.npy", "full_attention")
    ... except ParameterError as error:
    ...     print(error.message)
    layer_type picks a layer type of a model's config; 'pe.npy' is a file
    """
    kind = kind or kind_of_source(source)
    if layer_type is None or kind.options:
        return
    what = {"stdin": "standard input", "scheme": "a scheme"}.get(kind.name, "a file")
    raise ParameterError(f"{{layer_type}} picks a layer type of a model's config; {literal_repr(source)} is {what}",
                         hint="drop {layer_type}")  # fmt: skip


def _check_sizes(dim: int | None, length: int | None) -> None:
    for name, value in (("dim", dim), ("length", length)):
        if value is not None and value <= 0:
            raise ParameterError(f"{{{name}}} must be a positive integer, got {value}", hint=f"e.g. {{{name}=512}}")


def source_tensors(source: str, *, stdin: Stdin = None) -> dict[str, tuple[tuple[int, ...], str]] | None:
    """The tensors of the file (or stdin) ``source`` names, headers only; None for a scheme or a model directory.

    >>> source_tensors("sinusoidal") is None
    True
    """
    return kind_of_source(source).tensors(source, SourceRequest(stdin=stdin))


def _describe(scheme: str, metadata: dict[str, str]) -> str:
    """``scheme (preset): param=value, …``, naming only the parameters that differ from the defaults.

    >>> _describe("alibi", {"heads": "4", "head": "null", "part": "bias", "form": "distance"})
    'alibi: heads=4, part=bias'
    """
    from pecli.render.titles import scheme_title

    return scheme_title(scheme, metadata, preset=metadata.get("preset"))
