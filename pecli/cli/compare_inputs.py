"""The two sides of ``pecli compare`` loaded whole and paired: files, stdin, scheme specs shaped by the
other side, models' configs (:mod:`pecli.cli.compare_sides`), then compared."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from pecli.cli.compare_request import CompareRequest
from pecli.cli.compare_sides import (
    config_query_rows,
    engine_cache,
    last_query_rows,
    load_config_side,
    other_side,
    parts_reference,
    per_head,
    rounded_dtype,
    side_by_side,
    spec_arrays,
    with_heads,
)
from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr


@dataclass
class _Sides:
    """Both sides while they are loaded, each list A's then B's: the tables, the references (a spec's or a
    config's scheme and parameters, for the diagnosis), a file's RoPE table read as its cos and sin, and what
    a file's shape said of it."""

    loaded: list[Any] = field(default_factory=lambda: [None, None])
    references: list[Any] = field(default_factory=lambda: [None, None])
    #: a file side that holds a RoPE table as its cos and sin: the two tables, compared side by side
    pairs: list[Any] = field(default_factory=lambda: [None, None])
    #: (heads, 1, L): one query row per head (HF BLOOM's build_alibi_tensor), squeezed to heads × L
    query_rows: list[bool] = field(default_factory=lambda: [False, False])
    #: a (1, L, L') file squeezed to L × L': one head's bias (ALiBi with heads=1), or a batch of one table
    one_head: list[bool] = field(default_factory=lambda: [False, False])
    #: a side read as its file's cos and sin, side by side
    paired: list[bool] = field(default_factory=lambda: [False, False])


@dataclass(frozen=True)
class LoadedPair:
    """Both tables loaded whole and paired (:func:`_load_pair`), with what their comparison takes from the
    loading."""

    tables: tuple[Any, Any]  #: A's and B's :class:`~pecli.cli.inputs.InputTable`
    references: tuple[Any, Any]  #: a spec's or a config's scheme and parameters, for the diagnosis
    query_rows: tuple[bool, bool]  #: a (heads, 1, L) file, one query row per head, squeezed to heads × L
    paired: tuple[bool, bool]  #: a side read as its file's cos and sin, side by side
    parts: tuple[str, ...] = ()  #: the parts a file's tensors name, compared side by side (cos, sin)
    #: the :class:`~pecli.analysis.partial_width.PartialWidth` of a RoPE reference and an engine's table of
    #: another width, both brought to one width
    partial: Any = None


def compare_loaded(out: Output, request: CompareRequest) -> tuple[Any, Any, Any]:
    """Both tables loaded whole and paired (:func:`_load_pair`), and compared: the two tables and the
    :class:`~pecli.analysis.compare.Comparison`, a width mistake first in its diagnosis and, for two files that
    differ, what each one is."""
    pair = _load_pair(out, request)
    first, second = pair.tables
    from pecli.analysis.compare import compare_tables, recorded_positions
    from pecli.cli.relative_compare import bias_view

    references = list(pair.references)
    side = 0 if references[0] is not None or references[1] is None else 1
    table_a, table_b, axes = bias_view(first.array, second.array, references, list(pair.query_rows))
    plain_rows = table_a.ndim == 2 and axes is None
    result = compare_tables(
        table_a,
        table_b,
        **request.tolerances,
        reference=references[side],
        reference_side="ab"[side],
        axes=axes,
        positions=recorded_positions((first.metadata, second.metadata), len(first.array)) if plain_rows else None,
        parts=pair.parts,
    )
    from pecli.analysis.compare_widths import width_finding_first

    result = width_finding_first(result, pair.partial)
    if not any(references) and all(_source_kind(text) in ("file", "stdin") for text in request.texts):
        from pecli.analysis.readings import with_readings  # two files: what each one is, after the diagnosis

        result = with_readings(result, [
            {"values": table.array, "metadata": table.metadata, "dtype": table.dtype_name, "key": table.key,
             "paired": paired} for table, paired in zip(pair.tables, pair.paired, strict=True)
        ])  # fmt: skip
    return first, second, result


def _load_pair(out: Output, request: CompareRequest) -> LoadedPair:
    """Both tables: files first, then models' configs and scheme specs shaped like the file (or by --d/--len),
    then brought to one width where a RoPE reference and an engine's table differ in it."""
    specs, configs = _sources(request)
    sides = _Sides()
    for side in (side for side in (0, 1) if specs[side] is None and not configs[side]):
        _load_file(out, request, side, sides)
    _load_configs(out, request, configs, sides)
    for side, spec in enumerate(specs):
        if spec is not None:
            _load_spec(out, request, side, spec, sides)
    return _paired(out, sides)


def _sources(request: CompareRequest) -> tuple[list[Any], list[bool]]:
    """Each side's scheme spec (None for a file) and whether it is a model's config (or model directory): the
    table generate --from-config writes, shaped by the other side; the options that do not apply refused."""
    from pecli.schemes.specs import looks_like_spec, parse_spec
    from pecli.sources import kind_of_source

    texts = request.texts
    if texts == ("-", "-"):
        raise ParameterError("A and B cannot both be - (stdin holds one table)", hint="save one of them to a file")
    specs = [parse_spec(text) if looks_like_spec(text) else None for text in texts]
    for side, (spec, given) in enumerate(zip(specs, request.key_given, strict=True)):
        if spec is not None and given is not None:
            flag = "--key-a" if side == 0 else "--key-b"
            raise ParameterError(
                f"{flag} applies to files, but {literal_repr(spec.text)} is a scheme spec", hint=f"drop {flag}"
            )
    configs = [spec is None and bool(kind_of_source(text).options) for spec, text in zip(specs, texts, strict=True)]
    if all(spec is None for spec in specs) and request.shaped and (request.d is not None or not any(configs)):
        if any(configs):  # a model's config takes --len and --dtype; its width is its own
            raise ParameterError(f"--d sets a scheme spec's width, but {_sides_in_words(texts)}: a model's config "
                                 "sets its own width (--len and --dtype apply to it)", hint="drop --d")  # fmt: skip
        raise ParameterError(f"--d, --len and --dtype shape a scheme spec, but {_sides_in_words(texts)}",
                             hint="drop them")  # fmt: skip
    return specs, configs


#: each kind of source (:data:`pecli.sources.SOURCE_KINDS`) in words
_KIND_WORDS = {"stdin": "standard input", "model-directory": "a model directory", "config": "a model's config",
               "model-id": "a model id", "file": "a file"}  # fmt: skip


def _sides_in_words(texts: tuple[str, str]) -> str:
    """What A and B are, in words.

    >>> _sides_in_words(("a.npy", "b.npy")), _sides_in_words(("config.json", "-"))
    ('A and B are files', "A is a model's config, B standard input")
    """
    from pecli.sources import kind_of_source

    kinds = [kind_of_source(text).name for text in texts]
    if kinds == ["file", "file"]:
        return "A and B are files"
    words = [_KIND_WORDS.get(kind, "a file") for kind in kinds]
    return f"A is {words[0]}, B {words[1]}"


def _load_file(out: Output, request: CompareRequest, side: int, sides: _Sides) -> None:
    """A file side (or stdin): a RoPE table's cos and sin side by side, else its tensor as a matrix (a per-head
    (heads, L, L) bias stays 3-D; a complex one is read as an engine's freqs_cis, below)."""
    import numpy as np

    from pecli.cli.inputs import as_matrix, load_input, rope_pair

    text, key = request.texts[side], request.keys[side]
    sides.pairs[side] = rope_pair(out, text) if key is None else None
    if sides.pairs[side] is not None:
        sides.loaded[side] = side_by_side(*sides.pairs[side])
        sides.paired[side] = True
        return
    table = load_input(out, text, key=key, complex_ok=True)  # freqs_cis: read below
    if np.iscomplexobj(table.array) and table.array.ndim != 2:
        _refuse_complex(table)
    sides.query_rows[side] = table.array.ndim == 3 and table.array.shape[1] == 1 and table.array.shape[0] > 1
    sides.one_head[side] = table.array.ndim == 3 and table.array.shape[0] == 1
    if not per_head(table.array):  # (heads, L, L) biases stay 3-D: compared and diagnosed per head
        table.array, note = as_matrix(table.array, table.label)  # (1, L, d) and (L, 1, d) squeezed
        if note:
            out.note(note)
    sides.loaded[side] = table


def _load_configs(out: Output, request: CompareRequest, configs: list[bool], sides: _Sides) -> None:
    """Each model's config side, as the table generate --from-config writes, shaped by the other side."""
    texts, layer_type = request.texts, request.layer_type
    layer_types = [layer_type, layer_type]
    if layer_type is not None and all(configs):  # a config with one rope set for every layer: the other's layer type
        from pecli.sources import takes_layer_type

        takes = [takes_layer_type(text, layer_type) for text in texts]
        for side in (side for side in (0, 1) if any(takes) and not takes[side]):
            layer_types[side] = None
            out.note(f"{texts[side]} has one set of rope parameters for every layer: --layer-type picks the other's")
    for side in (side for side in (0, 1) if configs[side]):
        if sides.query_rows[1 - side] and request.keys[side] is None:  # BLOOM's (heads, 1, k): the bias at query 0
            found = config_query_rows(out, texts[side], sides.loaded[1 - side], length=request.length,
                                      dtype=request.dtype, layer_type=layer_types[side])  # fmt: skip
            if found is not None:
                sides.loaded[side], sides.references[side] = found
                continue
        load_config_side(out, texts[side], side, request.keys[side], sides.loaded, sides.pairs, sides.references,
                         length=request.length, dtype=request.dtype, layer_type=layer_types[side])  # fmt: skip
        if sides.references[side] is not None:  # what the config says beyond the table's parameters, for the diagnosis
            from pecli.models.from_config import with_config_facts

            sides.references[side] = with_config_facts(sides.references[side], texts[side],
                                                        layer_type=layer_types[side])  # fmt: skip


def _load_spec(out: Output, request: CompareRequest, side: int, spec: Any, sides: _Sides) -> None:
    """A scheme spec's side, shaped like the other side (a per-head bias: its heads and length; a file of one
    query row per head: those rows) or by --d/--len, its scheme and parameters the side's reference."""
    other = sides.loaded[1 - side]
    if other is not None and per_head(other.array):  # a per-head spec (alibi): heads and length from B
        _per_head_spec(out, request, side, spec, sides)
        return
    if other is not None and sides.query_rows[1 - side] and _query_row_spec(request, side, spec, sides):
        return
    if other is not None and sides.one_head[1 - side]:  # the file's one head: heads=1, unless the spec says
        spec = with_heads(spec, 1)
    table = _sized_spec_table(request, side, spec, sides)
    _place_spec(out, side, spec, table, sides)


def _per_head_spec(out: Output, request: CompareRequest, side: int, spec: Any, sides: _Sides) -> None:
    """A per-head spec (alibi) against a per-head table: its heads and length, its last query rows where the
    other holds fewer."""
    from pecli.analysis.compare import Reference
    from pecli.cli.inputs import InputTable

    other = sides.loaded[1 - side]
    heads, rows, cols = other.array.shape
    spec = with_heads(spec, heads)
    other_dtype = rounded_dtype(other)
    table = spec.table(length=cols if request.length is None else request.length, dim=request.d,
                       dtype=request.dtype or other_dtype)  # fmt: skip
    (array,), stored = spec_arrays([table])
    array, label = last_query_rows(out, array, spec.text, rows, "ab"[side])
    sides.loaded[side] = InputTable(array, label, table.metadata(), spec.text, dtype=stored)
    sides.references[side] = Reference(table.scheme, dict(table.params))


def _query_row_spec(request: CompareRequest, side: int, spec: Any, sides: _Sides) -> bool:
    """The spec's bias at one query row per head, as the other side's (heads, 1, L) file holds it; False when
    the spec has no such rows."""
    from pecli.analysis.compare import Reference
    from pecli.cli.inputs import InputTable
    from pecli.schemes.catalog import get_scheme

    other = sides.loaded[1 - side]
    found = spec.query_rows(
        heads=other.array.shape[0],
        length=other.array.shape[1] if request.length is None else request.length,
        dtype=request.dtype or other_side(side, sides.loaded, sides.pairs)[1],
    )
    if found is None:
        return False
    array, table = found
    implied = [f"{name}={value}" for name, value in table.params.items() if name not in spec.params
               and name in get_scheme(table.scheme).query_row]  # fmt: skip
    label = f"{spec.text} [query 0 of each head{''.join(', ' + text for text in implied)}]"
    sides.loaded[side] = InputTable(array, label, table.metadata(), spec.text)
    sides.references[side] = Reference(table.scheme, dict(table.params))
    return True


def _spec_shape(request: CompareRequest, side: int, spec: Any, sides: _Sides) -> tuple[tuple[Any, Any], str]:
    """The rows and columns of the spec's table (None: the spec's own) and its dtype: the other table's, where
    there is one, else --d/--len and float32."""
    import numpy as np

    from pecli.cli.common import require_shape

    d, length = request.d, request.length
    other = sides.loaded[1 - side]
    if other is None:
        # a spec whose grid sets its rows needs no --len (issue 30: 'missing --len', told to run generate)
        grid_rows = length is None and _grid_sets_rows(spec)
        if d is None and not spec.resolved()[0].takes_dim:  # a bias (alibi, t5, kerple): len × len, no --d
            return (None if grid_rows else require_shape(length, 1)[0], None), "float32"  # (issue 30: 'missing --d')
        return ((None, require_shape(1, d)[1]) if grid_rows else require_shape(length, d)), "float32"
    rows, cols = (other if sides.pairs[1 - side] is None else sides.pairs[1 - side][0]).array.shape
    cols *= 2 if np.iscomplexobj(other.array) else 1  # freqs_cis: one complex column per rotary pair
    # a bias over query and key positions (alibi, t5) has no dimension: the other table's columns are keys
    takes_dim = d is not None or spec.resolved()[0].takes_dim
    # a spec whose grid sets its token count takes no length from the other table: a mismatch is
    # then the tables' shapes, not a --len the user never typed (issue 30, class 3)
    takes_length = length is not None or not _grid_sets_rows(spec)
    shape = (
        (rows if length is None else length) if takes_length else None,
        (cols if d is None else d) if takes_dim else None,
    )
    return shape, rounded_dtype(other)


def _sized_spec_table(request: CompareRequest, side: int, spec: Any, sides: _Sides) -> Any:
    """The spec's table at its shape (:func:`_spec_shape`), once it is known to fit in memory; an error about a
    size taken from the other table names that table."""
    from pecli.memory import check_fits_in_memory

    shape, other_dtype = _spec_shape(request, side, spec, sides)
    # the sizes the spec takes from the other table, not from --d/--len: an error about one names that table
    sizes = (("dim", "width", request.d, shape[1]), ("length", "length", request.length, shape[0]))
    taken = {
        name: f"{'AB'[1 - side]}'s {noun}"
        for name, noun, given, size in sizes
        if sides.loaded[1 - side] is not None and given is None and size is not None
    }
    # the spec's grid sets its rows (values checked, nothing computed)
    rows = _spec_table(spec, None, shape[1], "float64", taken).shape[-2] if shape[0] is None else shape[0]
    shape = (rows, shape[1])
    # before any work: the spec's table is computed in float64 (issue 30: --d 2**63 was a ValueError)
    width = rows if shape[1] is None else shape[1]  # a bias: at least one len × len matrix
    check_fits_in_memory(
        _WORKING_COPIES * 8 * rows * width,
        what=f"comparison with the {rows} × {width} table of {spec.text}",
        hint="compare at a smaller --len or --d",
    )
    return _spec_table(spec, shape[0], shape[1], request.dtype or other_dtype, taken)


def _place_spec(out: Output, side: int, spec: Any, table: Any, sides: _Sides) -> None:
    """The spec's ``table`` as its side: its parts side by side where the other side is an engine's cache of
    both or a file's cos and sin (one part: the file's tensor of it), else its one table shaped as the other."""
    import numpy as np

    from pecli.analysis.compare import Reference
    from pecli.cli.inputs import InputTable

    other, other_pair = sides.loaded[1 - side], sides.pairs[1 - side]
    parts = table.parts()
    names = [part.name for part in parts]
    if other is not None and other_pair is None and len(parts) == 2:  # an engine's cache of both parts?
        pair, stored = spec_arrays(parts)
        cache = engine_cache(out, other, *pair, as_one_part="part=cos in the spec")
        if cache is not None:
            sides.loaded[1 - side] = cache
            sides.loaded[side] = InputTable(np.hstack(pair), f"{spec.text} [{', '.join(names)}]",
                                            table.metadata(), spec.text, dtype=stored)  # fmt: skip
            sides.references[side] = parts_reference(table.scheme, table.params, names)
            return
    if other_pair is not None and len(parts) > 1:  # the spec's parts side by side, as the file's
        arrays, stored = spec_arrays(parts)
        sides.loaded[side] = InputTable(np.hstack(arrays), f"{spec.text} [{', '.join(names)}]", table.metadata(),
                                        spec.text, dtype=stored)  # fmt: skip
        sides.references[side] = parts_reference(table.scheme, table.params, names)
        return
    if other_pair is not None:  # the spec names one part: the file's tensor of that part
        by_part = dict(zip(("cos", "sin"), other_pair, strict=True))
        sides.loaded[1 - side] = by_part.get(table.params.get("part"), sides.loaded[1 - side])
    with spec.blaming():  # a scheme of several tensors (rope) compared as one: the spec's part=, not --part
        (array,), stored = spec_arrays([table])
    if other is not None and sides.one_head[1 - side] and array.ndim == 3 and array.shape[0] == 1:
        array = array[0]  # one head's (1, L, L) bias, as the file's (1, L, L) was squeezed (issue 30)
    if other is not None and array.ndim == 1 and other.array.ndim == 2 and other.array.shape[0] == 1:
        array = array[None, :]  # a vector (ALiBi's slopes) as one row, as the file's vector was read (issue 30)
    sides.loaded[side] = InputTable(array, spec.text, table.metadata(), spec.text, dtype=stored)
    sides.references[side] = Reference(table.scheme, dict(table.params))


def _paired(out: Output, sides: _Sides) -> LoadedPair:
    """Both loaded sides brought to one width (:func:`_partial_width`), a complex table that is no engine's
    freqs_cis refused, and a file's cos and sin compared side by side noted: the :class:`LoadedPair`."""
    import numpy as np

    found = _partial_width(out, sides.loaded, sides.pairs, sides.references)
    for table in sides.loaded:
        if table is not None and np.iscomplexobj(table.array):
            _refuse_complex(table)
    parts: tuple[str, ...] = ()
    for side, pair in enumerate(sides.pairs):
        if pair is not None and all(sides.loaded[side] is not part for part in pair):
            parts = ("cos", "sin")  # a pair is read as its cos, then its sin (rope_pair, input_parts)
            cols = sides.loaded[side].array.shape[1] // 2  # a pair brought to another width has its columns
            out.note(
                f"{sides.loaded[side].label}: cos and sin compared side by side "
                f"(columns 0–{cols - 1} cos, {cols}–{2 * cols - 1} sin; --key-{'ab'[side]} takes one)"
            )
    loaded, references, query_rows, paired = sides.loaded, sides.references, sides.query_rows, sides.paired
    return LoadedPair(
        (loaded[0], loaded[1]), (references[0], references[1]), (query_rows[0], query_rows[1]),
        (paired[0], paired[1]), parts, found,
    )  # fmt: skip


def _spec_table(spec: Any, length: int | None, dim: int | None, dtype: str, taken: dict[str, str]) -> Any:
    """``spec``'s table at ``length`` × ``dim``; ``taken``: the sizes among them taken from the other table,
    not from --d/--len (their name, ``dim`` or ``length``, and how to call them, ``A's width``).

    A spec that sets such a size itself (fourier:num_freqs=3 its width) is computed at its own: the shapes
    then differ, and compare says so. A size the spec cannot take is named as the other table's, never as
    the --d or --len the user did not give.
    """
    from pecli.errors import names_a_parameter, respelled

    try:
        return spec.table(length=length, dim=dim, dtype=dtype)
    except ParameterError as error:
        template = " ".join(text for text in error._templates if text is not None)
        named = [name for name in taken if names_a_parameter(template, [name])]
        if not named:
            raise
        with contextlib.suppress(ParameterError):  # the spec sets it: its own size
            return spec.table(length=None if "length" in named else length, dim=None if "dim" in named else dim,
                              dtype=dtype)  # fmt: skip

        def spell(name: str, example: str | None) -> str | None:
            if name not in taken:
                return None  # a flag the user gave stays a placeholder, for the CLI to spell
            return taken[name] if example is None else f"{taken[name]} {example}"

        message, hint = respelled(error, spell)
        raise ParameterError(message, hint=hint) from None


def _partial_width(out: Output, loaded: list[Any], pairs: list[Any], references: list[Any]) -> Any:
    """A RoPE reference (a config, a spec) and an engine's table of another width (partial rotary ignored, or
    assumed), both brought to one width in ``loaded`` (:func:`~pecli.analysis.compare_widths.one_width`) with a
    note and relabelled; None when the widths match or no width applies."""
    import numpy as np

    from pecli.analysis.compare_widths import compared_at, one_width
    from pecli.cli.inputs import InputTable

    if any(table is None for table in loaded):
        return None
    one = one_width(
        references,
        [table.array for table in loaded],
        [table.metadata.get("dtype") for table in loaded],
        engine_pairs=[pair is not None for pair in pairs],
    )
    if one is None:
        return None
    side, found = one
    mine, engine = loaded[side], loaded[1 - side]
    out.note(found.words)
    at = compared_at(found)
    loaded[side] = InputTable(found.reference_table, f"{mine.label} [{at}]", mine.metadata, mine.source)
    if found.engine_table is not engine.array:
        loaded[1 - side] = InputTable(found.engine_table, f"{engine.label} [{at}]", engine.metadata, engine.source,
                                      dtype=str(found.engine_table.dtype) if np.iscomplexobj(engine.array)
                                      else engine.dtype)  # fmt: skip
    references[side] = found.reference
    return found


def _refuse_complex(table: Any) -> None:
    """A complex table that is not an engine's freqs_cis of a RoPE reference's pair: refused."""
    raise ParameterError(
        f"{table.label} holds a complex table ({table.array.dtype}, shape {tuple(table.array.shape)}), which compares "
        "only as an engine's freqs_cis (positions × frequencies) with a RoPE reference of both parts",
        hint="compare it with a model's config or a rope spec, or save its real part",
    )


#: the options that set a spec's table size and dtype, and the names a spec might give them by (issue 30)
_SIZE_OPTIONS = {"dim": "--d", "d": "--d", "length": "--len", "len": "--len", "dtype": "--dtype"}


def check_size_in_spec(text: str, given: dict[str, Any]) -> None:
    """Refuse a spec that names its table's size or dtype (``rope:dim=64``): no scheme takes it, --d, --len and
    --dtype (or the other table) set it; one line naming both where the option is given too (issue 30)."""
    import re

    _, _, rest = text.partition(":")
    for item in re.split(r",(?=\s*[A-Za-z_][\w-]*\s*=)", rest) if rest else []:
        key, equals, value = item.partition("=")
        option = _SIZE_OPTIONS.get(key.strip().replace("-", "_")) if equals else None
        if option is None:
            continue
        shown = f"{key.strip()}={value.strip()}"
        if given[option] is not None:
            raise ParameterError(
                f"{shown} in spec {literal_repr(text)} and {option} {given[option]} both set the table's "
                f"{'dtype' if option == '--dtype' else 'size'}",
                hint=f"give it once, as {option}: drop {shown} from the spec",
            )
        raise ParameterError(
            f"{shown} in spec {literal_repr(text)}: a spec's table takes its "
            f"{'dtype' if option == '--dtype' else 'size'} "
            f"from {option} or the other table, not from the spec",
            hint=f"drop {shown} from the spec; give {option} {value.strip()}",
        )


def _grid_sets_rows(spec: Any) -> bool:
    """Whether ``spec`` sets its own row count by a grid (``sincos2d:grid=3x3``): no length comes from elsewhere."""
    return spec.resolved()[1].get("grid") is not None


def _source_kind(text: str) -> str:
    """What reads ``text``: file, stdin, config, model-id, scheme (:func:`pecli.sources.kind_of_source`)."""
    from pecli.sources import kind_of_source

    return kind_of_source(text).name


#: float64 tables a comparison with a spec holds at once (both sides, their difference, a variant)
_WORKING_COPIES = 4
