"""Table inputs shared by plot, distance, compare and identify: a file, ``-``, or a scheme.

An existing path wins over a scheme name; a scheme, or a spec (``rope:base=500000``), takes the
generate options (``--d``, ``--len``, ``--preset``, ``--base``…). :func:`table_view` then makes any input a 2-D view
(1-D as one row, ``(1, L, d)`` and ``(L, 1, d)`` squeezed) and applies ``--rows``/``--cols``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pecli.cli.options import flag_for, parse_int
from pecli.cli.output import Output, printable
from pecli.cli.stdin import stdin_file_params, stdin_table  # noqa: F401  (the commands' stdin, read once)
from pecli.errors import ParameterError, PecliError, TableFileError
from pecli.row_window import WindowHints
from pecli.text import literal, literal_repr

if TYPE_CHECKING:
    from pecli.sources import SourceTable as InputTable


def _sources() -> Any:
    """The resolver (:mod:`pecli.sources`), imported when a table is read."""
    import pecli.sources

    return pecli.sources


def __getattr__(name: str) -> Any:
    """``InputTable``: a resolved input (:class:`pecli.sources.SourceTable`), the resolver imported on first use
    (a command's options and ``--help`` do not need it)."""
    if name == "InputTable":
        from pecli.sources import SourceTable

        return SourceTable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def key_for_scheme(source: str, key: str | None, scheme_params: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """``--key`` for a scheme that reads a table of its own (T5's ``--bias-from``): the tensor in that file.

    The key and the scheme parameters as the input needs them: unchanged for a file input or a
    scheme that reads no file; else the key moves into ``bias_key``.

    >>> key_for_scheme("t5", "relative_attention_bias", {"bias_from": "t5.safetensors"})
    (None, {'bias_from': 't5.safetensors', 'bias_key': 'relative_attention_bias'})
    """
    if key is None or "bias_from" not in scheme_params or is_file_input(source):
        return key, scheme_params
    if "bias_key" in scheme_params:
        raise ParameterError("--key and --bias-key both name the bias tensor", hint="give one of them")
    return None, {**scheme_params, "bias_key": key}


def scheme_input(
    source: str,
    *,
    preset: str | None,
    scheme_params: dict[str, Any] | None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
) -> tuple[str, str | None, dict[str, Any]]:
    """A command's INPUT (or SCHEME), ``--preset`` and scheme options, a spec's parameters among them.

    ``rope:base=500000 --factor 4`` is ``rope --base 500000 --factor 4`` from here on
    (:func:`pecli.sources.scheme_of_spec`); a file, ``-`` or a model's config is passed on as it is.

    >>> scheme_input("sincos2d:preset=mae,grid=14x14", preset=None, scheme_params={"cls_token": True})
    ('sincos2d', 'mae', {'grid': '14x14', 'cls_token': True})
    >>> scheme_input("pe.npy", preset=None, scheme_params=None)
    ('pe.npy', None, {})
    """
    return _sources().scheme_of_spec(source, preset=preset, scheme_params=scheme_params, length=length, dim=dim,
                                     dtype=dtype)  # fmt: skip


def is_file_input(source: str) -> bool:
    """Whether ``source`` names a file (or stdin) rather than a scheme (an existing path wins).

    >>> is_file_input("sinusoidal"), is_file_input("pe.npy"), is_file_input("sinusiodal")
    (False, True, False)
    """
    return _sources().reads_a_file(source)


def require_table(command: str, source: str) -> None:
    """Refuse, for a command that reads a table (identify, resample), a scheme or a name that is no file.

    >>> require_table("identify", "sinusoidal")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: identify reads a table, but 'sinusoidal' names a scheme (write it first: ...)
    >>> require_table("resample", "nope")
    Traceback (most recent call last):
    pecli.errors.TableFileError: no such file: 'nope' (resample reads a table file, a model directory, or - for stdin)
    """
    if is_file_input(source):
        return
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.presets import preset_names

    name = source.partition(":")[0]
    if name in SCHEMES or name in preset_names():
        raise ParameterError(
            f"{command} reads a table, but {literal_repr(source)} names a scheme",
            hint=f"write it first: {generate_command(source)}",
        )
    raise TableFileError(
        f"no such file: {literal_repr(source)}",
        hint=f"{command} reads a table file, a model directory, or - for stdin",
    )


#: the sizes tried, fewest first, for an example that generates a scheme's table: a bias's (len × len, per
#: head: a shorter len keeps it small), a sequence's, an odd width (fourier's 2·L + 1), a grid's, a width
#: beside the spec's own grid
_EXAMPLE_SIZES: tuple[dict[str, Any], ...] = (
    {"length": 1024},
    {"heads": 8, "length": 1024},
    {"dim": 512, "length": 2048},
    {"dim": 513, "length": 2048},
    {"grid": "14,14"},
    {"dim": 768, "grid": "14,14"},
    {"dim": 768},
)


def generate_command(source: str) -> str:
    """A ``pecli generate`` command that writes the table scheme spec ``source`` names: sizes it takes, a file
    that holds its parts. A template: the sizes are spelled as the user's command line writes options.

    >>> from pecli.errors import name_parameters
    >>> flags = {"dim": "--d", "length": "--len"}
    >>> name_parameters(generate_command("sinusoidal"), lambda name: flags.get(name, "--" + name))
    'pecli generate sinusoidal --d 512 --len 2048 -o pe.npy'
    >>> name_parameters(generate_command("mae"), lambda name: "--" + name)
    'pecli generate mae --dim 768 --grid 14,14 -o pe.npy'
    >>> name_parameters(generate_command("diffusers"), lambda name: "--" + name)
    'pecli generate sinusoidal:preset=diffusers --dim 512 --length 2048 -o pe.npy'
    """
    from pecli.schemes.presets import preset_schemes
    from pecli.schemes.spec import TableSpec
    from pecli.schemes.specs import parse_spec

    try:
        spec = parse_spec(source)
    except ParameterError:
        owners = preset_schemes(source.partition(":")[0])
        if not owners:
            raise
        name, _, rest = source.partition(":")
        source = f"{owners[0]}:preset={name}" + (f",{rest}" if rest else "")  # a preset several schemes share
        spec = parse_spec(source)
    for sizes in _EXAMPLE_SIZES:
        given = {name: value for name, value in sizes.items() if name not in ("dim", "length")}
        try:
            scheme, preset, params = spec.merged(None, given)
            table = TableSpec.resolve(scheme, preset, params, length=sizes.get("length"), dim=sizes.get("dim"))
            parts = len(list(table.check().parts()))
        except PecliError:
            continue
        flags = " ".join(f"{{{name}={value}}}" for name, value in sizes.items())
        return f"pecli generate {literal(source)} {flags} -o pe.{'npy' if parts == 1 else 'safetensors'}"
    spec.resolved()  # no size fits a bad value (rope:layout=yarn): that value is the error
    return f"pecli generate {literal(source)} {{dim=512}} {{length=2048}} -o pe.npy"


def load_input(
    out: Output,
    source: str,
    *,
    key: str | None = None,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
    first_slices: int | None = None,
    layer_type: str | None = None,
    complex_ok: bool = False,
) -> InputTable:
    """The table ``source`` names, through the one resolver (:func:`pecli.sources.resolve`), with ``out``'s
    stdin read once per run, a note of the tensor a part of its name chose, and a terminal-safe title.

    ``first_slices``: of a computed 3-D table, only that many leading slices (heads) are computed;
    ``layer_type`` (``--layer-type``): a model's config's layer type, where its rope parameters differ by type;
    ``complex_ok``: a file's complex tensor is read, not refused (compare reads it as an engine's freqs_cis)."""
    table = _sources().resolve(source, key=key, preset=preset, scheme_params=scheme_params, length=length, dim=dim,
                               dtype=dtype, stdin=lambda: stdin_table(out), first_slices=first_slices,
                               layer_type=layer_type, complex_ok=complex_ok)  # fmt: skip
    return _shown(out, source, table)


def _shown(out: Output, source: str, table: InputTable) -> InputTable:
    """``table`` as a command shows it: a note of the tensor a part of its name chose, a terminal-safe title (of a
    file's), and the file named as read."""
    if table.key_note is not None:
        out.note(table.key_note.spelled(flag_for))
    if _sources().reads_a_file(source):
        table.label = printable(table.label)  # titles: text from the file
        out.read_from(source)
    return table


def input_parts(
    out: Output,
    source: str,
    *,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
    layer_type: str | None = None,
) -> list[InputTable] | None:
    """The tables of a multi-part scheme or of a file (or stdin) whose tensors share one 2-D shape; else None.

    A RoPE file's ``cos`` and ``sin``, or a file of one table per layer, read as one table each
    (:func:`pecli.sources.resolve_parts`), with file titles made terminal-safe.
    """
    tables = _sources().resolve_parts(source, preset=preset, scheme_params=scheme_params, length=length, dim=dim,
                                      dtype=dtype, stdin=lambda: stdin_table(out), layer_type=layer_type)  # fmt: skip
    if tables is not None and _sources().reads_a_file(source):
        out.read_from(source)
        for table in tables:
            table.label = printable(table.label)
    return tables


_NAME_PARTS = re.compile(r"([._/-])")


def _pair_part(name: str) -> tuple[str, tuple[str, ...]] | None:
    """``name``'s one ``cos`` or ``sin`` part (between separators ``.``, ``_``, ``/``, ``-``), with the name
    around it (that part blanked); None where it has none, or more than one."""
    pieces = _NAME_PARTS.split(name)
    found = [index for index, piece in enumerate(pieces) if piece.lower() in ("cos", "sin")]
    if len(found) != 1:
        return None
    index = found[0]
    return pieces[index].lower(), (*pieces[:index], "", *pieces[index + 1 :])


def rope_pair_names(entries: dict[str, Any]) -> tuple[str, str] | None:
    """The names of a RoPE table's (cos, sin) when a file's tensors (name -> (shape, dtype)) are just those two.

    ``cos``/``sin`` as ``pecli generate rope`` writes them, or as engines name their caches (``freqs_cos``,
    ``rope.cos``, ``cos_cached``, ``cos_cache``): two names that differ only in one part, ``cos`` in one and
    ``sin`` in the other, of one 2-D shape (behind leading axes of 1: old GPT-NeoX caches are (1, 1, L, d));
    None for any other file (``acos``/``asin`` are no pair).

    >>> rope_pair_names({"sin": ((4, 2), "float32"), "cos": ((4, 2), "float32")})
    ('cos', 'sin')
    >>> rope_pair_names({"sin_cached": ((4, 2), "float32"), "cos_cached": ((4, 2), "float32")})
    ('cos_cached', 'sin_cached')
    >>> rope_pair_names({"acos": ((4, 2), "float32"), "asin": ((4, 2), "float32")}) is None
    True
    >>> rope_pair_names({"cos": ((4, 2), "float32"), "sin": ((4, 3), "float32")}) is None
    True
    >>> rope_pair_names({"cos_cached": ((1, 1, 4, 2), "float32"), "sin_cached": ((1, 1, 4, 2), "float32")})
    ('cos_cached', 'sin_cached')
    >>> rope_pair_names({"cos_cached": ((2, 1, 4, 2), "float32"), "sin_cached": ((2, 1, 4, 2), "float32")}) is None
    True
    """
    if len(entries) != 2:
        return None
    parts = {name: _pair_part(name) for name in entries}
    by_part = {part[0]: (name, part[1]) for name, part in parts.items() if part is not None}
    if set(by_part) != {"cos", "sin"} or by_part["cos"][1] != by_part["sin"][1]:
        return None
    cos, sin = by_part["cos"][0], by_part["sin"][0]
    (cos_shape, _), (sin_shape, _) = entries[cos], entries[sin]
    return (cos, sin) if _is_table_shape(cos_shape) and tuple(cos_shape) == tuple(sin_shape) else None


def _is_table_shape(shape: Any) -> bool:
    """Whether ``shape`` is a 2-D table's, behind any number of leading axes of 1."""
    return len(shape) >= 2 and all(side == 1 for side in shape[:-2])


def rope_pair(out: Output, source: str) -> tuple[InputTable, InputTable] | None:
    """A file's (or stdin's) RoPE table stored as its cos and sin tensors, read as two tables; None otherwise."""
    entries = _sources().source_tensors(source, stdin=lambda: stdin_table(out))
    if entries is None:
        return None
    names = rope_pair_names(entries)
    if names is None:
        return None
    cos, sin = (load_input(out, source, key=name) for name in names)
    for part in (cos, sin):  # (1, 1, L, d): the L × d table
        part.array, note = as_matrix(part.array, part.label)
        if note and part is cos:
            out.note(note.replace(f"[{cos.key}]", f"[{cos.key}, {sin.key}]"))
    return cos, sin


def pair_label(cos: InputTable, sin: InputTable) -> str:
    """The title of a RoPE pair: its cos part's, naming both tensors.

    >>> from pecli.cli.inputs import InputTable
    >>> pair_label(InputTable(None, "rope — r.safetensors [cos]", key="cos"), InputTable(None, "", key="sin"))
    'rope — r.safetensors [cos, sin]'
    >>> pair_label(InputTable(None, "rope: part=cos, base=2 — m [cos]", key="cos"), InputTable(None, "", key="sin"))
    'rope: base=2 — m [cos, sin]'
    >>> pair_label(InputTable(None, "rope: part=cos — m [cos]", key="cos"), InputTable(None, "", key="sin"))
    'rope — m [cos, sin]'
    >>> pair_label(InputTable(None, "rope: base=1e6, part=cos — c [cos]", key="cos"), InputTable(None, "", key="sin"))
    'rope: base=1e6 — c [cos, sin]'
    """
    label = cos.label.replace(f"[{cos.key}]", f"[{cos.key}, {sin.key}]")
    part = rf"\bpart={re.escape(str(cos.key))}\b"  # both parts are read, not the cos part
    label = re.sub(rf"{part}(, )?|, {part}", "", label)
    return re.sub(r":\s+—", " —", label)


_RANGE = re.compile(r"^\s*(-?\d+)?\s*:\s*(-?\d+)?\s*$")


def parse_range(text: str, size: int, *, flag: str, what: str) -> range:
    """The indices ``A:B`` selects from ``size`` (Python slice rules: ``A:``, ``:B``, negatives).

    >>> parse_range("10:20", 100, flag="--rows", what="rows"), parse_range("-4:", 100, flag="--rows", what="rows")
    (range(10, 20), range(96, 100))
    """
    match = _RANGE.match(text)
    if match is None:
        raise ParameterError(
            f"{flag} takes A:B, got {literal_repr(text)}", hint=f"e.g. {flag} 0:128 (A: or :B leave a side open)"
        )
    start, stop = (None if bound is None else parse_int(bound, flag=flag, example="0:128") for bound in match.groups())
    selected = range(size)[slice(start, stop)]
    if len(selected) == 0:
        raise ParameterError(
            f"{flag} {literal(text)} selects no {what} of the table's {size}", hint=f"choose a range within 0:{size}"
        )
    return selected


@dataclass
class TableView:
    """A 2-D table ready to draw or compare, and where it sits in the input."""

    values: Any  #: np.ndarray, 2-D: rows are positions, columns dimensions
    row_start: int = 0  #: index of the first row in the input (after --rows)
    col_start: int = 0  #: index of the first column in the input (after --cols)
    notes: list[str] = field(default_factory=list)  #: what was done to the input, for stderr


def as_matrix(array: Any, label: str) -> tuple[Any, str | None]:
    """``array`` as 2-D: 1-D becomes one row, ``(1, L, d)`` and ``(L, 1, d)`` are squeezed (with a note), and
    so are more leading axes of 1 (an old GPT-NeoX cache's ``(1, 1, L, d)``).

    >>> import numpy as np
    >>> matrix, note = as_matrix(np.zeros((1, 5, 3)), "x.npy")
    >>> matrix.shape, note
    ((5, 3), 'x.npy: squeezed shape (1, 5, 3) to 5 × 3')
    >>> as_matrix(np.arange(4.0), "v.npy")[0].shape
    (1, 4)
    >>> as_matrix(np.zeros((1, 1, 5, 3)), "cache.safetensors [cos_cached]")[1]
    'cache.safetensors [cos_cached]: squeezed shape (1, 1, 5, 3) to 5 × 3'
    """
    shape = tuple(array.shape)
    if array.ndim == 2:
        matrix, note = array, None
    elif array.ndim == 1:
        matrix, note = array.reshape(1, -1), None
    elif array.ndim == 3 and 1 in shape[:2]:
        matrix = array[0] if shape[0] == 1 else array[:, 0]
        note = f"{label}: squeezed shape {shape} to {matrix.shape[0]} × {matrix.shape[1]}"
    elif array.ndim > 3 and _is_table_shape(shape):
        matrix = array.reshape(shape[-2:])
        note = f"{label}: squeezed shape {shape} to {matrix.shape[0]} × {matrix.shape[1]}"
    else:
        raise TableFileError(
            f"{literal(label)} has shape {shape}; pecli takes a 1-D or 2-D table (or (L, 1, d), or one behind "
            "leading axes of 1: (1, L, d), (1, 1, L, d))",
            # a .npy holds one unnamed array: no --key picks another
            hint=("save the table, not one number" if array.ndim == 0 else "save a 2-D slice of it")
            + ("" if label.lower().endswith(".npy") else ", or choose a 2-D tensor with --key"),
        )
    if 0 in matrix.shape:
        raise TableFileError(f"{literal(label)} is empty (shape {shape})", hint="give a table with at least one value")
    return matrix, note


def table_view(table: InputTable, *, rows: str | None = None, cols: str | None = None) -> TableView:
    """The 2-D view of ``table`` that ``--rows A:B`` and ``--cols A:B`` select (no copy).

    >>> import numpy as np
    >>> from pecli.cli.inputs import InputTable
    >>> view = table_view(InputTable(np.zeros((1, 50, 8)), "x.npy"), rows="10:20", cols="4:")
    >>> view.values.shape, view.row_start, view.col_start, view.notes
    ((10, 4), 10, 4, ['x.npy: squeezed shape (1, 50, 8) to 50 × 8'])
    """
    matrix, note = as_matrix(table.array, table.label)
    row_count, col_count = matrix.shape
    row_range = range(row_count) if rows is None else parse_range(rows, row_count, flag="--rows", what="rows")
    col_range = range(col_count) if cols is None else parse_range(cols, col_count, flag="--cols", what="columns")
    values = matrix[row_range.start : row_range.stop, col_range.start : col_range.stop]
    return TableView(values, row_range.start, col_range.start, [note] if note else [])


#: the fixes a refused window of rows names: fewer rows, as the command line asks for them
_ROW_HINTS = WindowHints(narrower="use a narrower {rows}", few_rows="show a few rows with {rows}")


def load_row_window(
    out: Output,
    source: str,
    *,
    key: str | None = None,
    preset: str | None = None,
    scheme_params: dict[str, Any] | None = None,
    length: int | None = None,
    dim: int | None = None,
    dtype: str = "float32",
) -> list[InputTable] | None:
    """The tables of ``source`` as lazy row windows, for a view of a few of their rows (``--rows``): a scheme's
    2-D tables (each part), or a file's 2-D tensor read in place (:func:`pecli.sources.resolve_windows`); None
    for any other source, which :func:`load_input` reads whole.

    >>> tables = load_row_window(Output(), "sinusoidal", dim=4, length=10**12)
    >>> [(table.label, table.array.shape) for table in tables], table_view(tables[0], rows="1:2").values.shape
    ([('sinusoidal', (1000000000000, 4))], (1, 4))
    """
    tables = _sources().resolve_windows(source, key=key, preset=preset, scheme_params=scheme_params, length=length,
                                        dim=dim, dtype=dtype, hints=_ROW_HINTS)  # fmt: skip
    for table in tables or ():
        _shown(out, source, table)
    return tables
