"""One resolver for every input: a source string and the key/part choice in, a table and its description out.

A source is, in this order of precedence (the first kind whose ``matches`` says yes reads it):

* ``-``: standard input, whose bytes the caller passes in (``stdin=``: bytes, a stream, or a
  function returning bytes, so a caller can read stdin once per run and only when asked);
* a model directory (``config.json`` beside safetensors weights): its one 2-D position table;
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

__all__ = [
    "SOURCE_KINDS",
    "SourceKind",
    "SourceRequest",
    "SourceTable",
    "kind_of_source",
    "reads_a_file",
    "resolve",
    "resolve_parts",
    "source_tensors",
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
        return Message(f"{{key}} {self.requested_key!r} selects the tensor {self.key!r}")


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

    def matches(self, source: str) -> bool:
        raise NotImplementedError

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        raise NotImplementedError

    def tensors(self, source: str, request: SourceRequest) -> dict[str, tuple[tuple[int, ...], str]] | None:
        """The tensors a file holds (name -> (shape, dtype), headers only); None for a source that is no one file."""
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

    table = read_table(readable, key=request.key)
    name = "<stdin>" if source == "-" else os.path.basename(source)
    label = f"{name} [{table.key}]" if table.key else name
    scheme = table.metadata.get("scheme")
    if scheme is not None:
        label = _describe(scheme, table.metadata) + f" — {label}"
    return SourceTable(table.array, label, table.metadata, source, table.key, table.dtype, kind, request.key,
                       scheme or None)  # fmt: skip


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
    """A model directory: its one 2-D position table (or the weight ``key`` names)."""

    name = "model-directory"

    def matches(self, source: str) -> bool:
        return os.path.isdir(source)

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        from pecli.models.directory import open_model_directory, shown

        tensor, array = open_model_directory(source).position_table(request.key)
        label = f"{os.path.basename(os.path.normpath(source))} [{shown(tensor.name)}]"
        return SourceTable(array, label, {}, source, tensor.name, "", self.name, request.key)


class TableFileSource(SourceKind):
    """A table file: an existing path, or a name that looks like one (a path separator or an extension)."""

    name = "file"

    def matches(self, source: str) -> bool:
        if os.path.exists(source):
            return True
        from pecli.schemes.catalog import SCHEMES

        if source.split(":", 1)[0] in SCHEMES:
            return False
        return os.sep in source or "." in source

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        return _file_table(source, source, request, self.name)

    def tensors(self, source: str, request: SourceRequest) -> dict[str, tuple[tuple[int, ...], str]] | None:
        from pecli.io import read_tensors

        return read_tensors(source)[0]


class SchemeSource(SourceKind):
    """A scheme spec (``sinusoidal``, ``rope:base=500000``), computed with the request's scheme options."""

    name = "scheme"
    reads_a_file = False

    def matches(self, source: str) -> bool:
        return True

    def load(self, source: str, request: SourceRequest) -> SourceTable:
        from pecli.schemes.spec import TableSpec

        if request.key is not None:
            raise ParameterError(f"{{key}} applies to files, but {source!r} is a scheme", hint="drop {key}")
        _check_sizes(request.dim, request.length)
        spec = TableSpec.resolve(source, request.preset, dict(request.scheme_params), length=request.length,
                                 dim=request.dim, dtype=request.dtype, name="pe").single().check()  # fmt: skip
        metadata = spec.metadata()
        return SourceTable(spec.array(), _describe(spec.scheme, metadata), metadata, source, dtype=request.dtype,
                           kind=self.name, scheme=spec.scheme, params=dict(spec.params))  # fmt: skip


#: the kinds of source, in the order they are tried: the first that matches reads the source
SOURCE_KINDS: tuple[SourceKind, ...] = (StdinSource(), ModelDirectorySource(), TableFileSource(), SchemeSource())


def kind_of_source(source: str) -> SourceKind:
    """The kind that reads ``source``: the first of :data:`SOURCE_KINDS` that matches it.

    >>> kind_of_source("-").name, kind_of_source("pe.npy").name, kind_of_source("rope:base=500000").name
    ('stdin', 'file', 'scheme')
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
) -> SourceTable:
    """Read or compute the table ``source`` names, with its description.

    Scheme options (``preset``, ``dim``, ``length``, scheme parameters) apply to a scheme only;
    ``key`` to a file, stdin or a model directory only.

    >>> import io, numpy as np, pecli
    >>> piped = io.BytesIO(); np.save(piped, pecli.encode("sinusoidal", length=3, dim=4))
    >>> table = resolve("-", stdin=piped.getvalue())
    >>> table.kind, table.label, np.allclose(table.array, pecli.encode("sinusoidal", length=3, dim=4))
    ('stdin', '<stdin>', True)
    """
    request = SourceRequest(key, preset, dict(scheme_params or {}), length, dim, dtype, stdin)
    kind = kind_of_source(source)
    given = request.scheme_options()
    if kind.reads_a_file and given:
        raise ParameterError(
            f"{', '.join(given)} apply to a scheme, but {source!r} is a file",
            hint="drop them, or give a scheme name instead of the file",
        )
    return kind.load(source, request)


def resolve_parts(
    source: str,
    *,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
    stdin: Stdin = None,
) -> list[SourceTable] | None:
    """The tables of a multi-part scheme (RoPE's cos and sin) or of a file whose tensors share one 2-D shape, else None.

    >>> [table.label for table in resolve_parts("rope", dim=4, length=3)]
    ['cos', 'sin']
    """
    kind = kind_of_source(source)
    if kind.reads_a_file:
        entries = kind.tensors(source, SourceRequest(stdin=stdin))
        if entries is None:
            return None
        shapes = {shape for shape, _ in entries.values()}
        if len(entries) < 2 or len(shapes) != 1 or len(next(iter(shapes))) != 2:
            return None
        return [resolve(source, key=name, stdin=stdin) for name in entries]
    from pecli.schemes.catalog import SCHEMES

    if source not in SCHEMES:
        return None
    _check_sizes(dim, length)
    from pecli.schemes.spec import TableSpec

    spec = TableSpec.resolve(source, preset, dict(scheme_params or {}), length=length, dim=dim, dtype=dtype, name="pe")
    parts = spec.parts()
    if len(parts) < 2:
        return None
    return [
        SourceTable(part.check().array(), part.name, part.metadata(), source, kind=kind.name, scheme=spec.scheme,
                    params=dict(spec.params))
        for part in parts
    ]  # fmt: skip


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
