"""The two sides of ``pecli compare`` loaded whole and paired: files, stdin, scheme specs shaped by the
other side, models' configs (:mod:`pecli.cli.compare_sides`), then compared."""

from __future__ import annotations

import contextlib
from typing import Any

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
    with_heads,
)
from pecli.cli.output import Output
from pecli.errors import ParameterError


def compare_loaded(
    out: Output,
    texts: list[str],
    keys: tuple[str | None, str | None],
    key_given: tuple[str | None, str | None],
    *,
    d: int | None,
    length: int | None,
    dtype: str | None,
    layer_type: str | None,
    atol: float | None,
    rtol: float,
    exact: bool,
) -> tuple[Any, Any, Any]:
    """Both tables loaded whole and paired (:func:`_load_pair`), and compared: the two tables and the
    :class:`~pecli.analysis.compare.Comparison`, a width mistake first in its diagnosis and, for two files that
    differ, what each one is."""
    references: list[Any] = [None, None]
    query_rows = [False, False]
    partial: list[Any] = []
    side_parts: list[str] = []  # the parts a file's tensors name, compared side by side (cos, sin)
    paired = [False, False]  # a side read as its file's cos and sin, side by side
    first, second = _load_pair(
        out,
        texts,
        keys,
        key_given=key_given,
        d=d,
        length=length,
        dtype=dtype,
        references=references,
        query_rows=query_rows,
        layer_type=layer_type,
        partial=partial,
        side_parts=side_parts,
        paired=paired,
    )
    from pecli.analysis.compare import compare_tables, recorded_positions
    from pecli.cli.relative_compare import bias_view

    side = 0 if references[0] is not None or references[1] is None else 1
    table_a, table_b, axes = bias_view(first.array, second.array, references, query_rows)
    plain_rows = table_a.ndim == 2 and axes is None
    result = compare_tables(
        table_a,
        table_b,
        atol=atol,
        rtol=rtol,
        exact=exact,
        reference=references[side],
        reference_side="ab"[side],
        axes=axes,
        positions=recorded_positions((first.metadata, second.metadata), len(first.array)) if plain_rows else None,
        parts=tuple(side_parts),
    )
    from pecli.analysis.compare_widths import width_finding_first

    result = width_finding_first(result, partial[0] if partial else None)
    if not any(references) and all(_source_kind(text) in ("file", "stdin") for text in texts):
        from pecli.analysis.readings import with_readings  # two files: what each one is, after the diagnosis

        result = with_readings(result, [
            {"values": table.array, "metadata": table.metadata, "dtype": table.dtype_name, "key": table.key,
             "paired": pair} for table, pair in zip((first, second), paired, strict=True)
        ])  # fmt: skip
    return first, second, result


def _load_pair(
    out: Output,
    texts: list[str],
    keys: tuple[str | None, str | None],
    *,
    key_given: tuple[str | None, str | None],
    d: int | None,
    length: int | None,
    dtype: str | None,
    references: list[Any] | None = None,
    query_rows: list[bool] | None = None,
    layer_type: str | None = None,
    partial: list[Any] | None = None,
    side_parts: list[str] | None = None,
    paired: list[bool] | None = None,
) -> list[Any]:
    """Both tables: files first, then scheme specs shaped like the file (or by --d/--len); a spec's
    scheme and parameters go to ``references`` (a list of two), for the diagnosis; ``query_rows`` (a list of
    two) says which side is a (heads, 1, L) file, one query row per head, squeezed to heads × L; ``partial``
    (a list) gets the :class:`~pecli.analysis.partial_width.PartialWidth` of a RoPE reference and an engine's table of
    another width, both brought to one width; ``side_parts`` (a list) gets the parts a side's tensors name when
    they are compared side by side (a file's cos and sin: the diagnosis names them, where no reference does);
    ``paired`` (a list of two) says which side is such a file's cos and sin, side by side."""
    import numpy as np

    from pecli.analysis.compare import Reference
    from pecli.cli.common import require_shape
    from pecli.cli.inputs import InputTable, as_matrix, load_input, rope_pair
    from pecli.schemes.catalog import get_scheme
    from pecli.schemes.specs import looks_like_spec, parse_spec
    from pecli.sources import kind_of_source

    if texts == ["-", "-"]:
        raise ParameterError("A and B cannot both be - (stdin holds one table)", hint="save one of them to a file")
    specs = [parse_spec(text) if looks_like_spec(text) else None for text in texts]
    for side, (spec, given) in enumerate(zip(specs, key_given, strict=True)):
        if spec is not None and given is not None:
            flag = "--key-a" if side == 0 else "--key-b"
            raise ParameterError(f"{flag} applies to files, but {spec.text!r} is a scheme spec", hint=f"drop {flag}")
    #: a model's config (or model directory): the table generate --from-config writes, shaped by the other side
    configs = [spec is None and bool(kind_of_source(text).options) for spec, text in zip(specs, texts, strict=True)]
    shaped = d is not None or length is not None or dtype is not None
    if all(spec is None for spec in specs) and shaped and (d is not None or not any(configs)):
        shapes = "a scheme spec (a model's config: --len, --dtype)" if any(configs) else "a scheme spec"
        raise ParameterError(f"--d, --len and --dtype shape {shapes}, but A and B are files", hint="drop them")
    loaded: list[Any] = [None, None]
    references = references if references is not None else [None, None]
    #: a file side that holds a RoPE table as its cos and sin: the two tables, compared side by side
    pairs: list[Any] = [None, None]
    query_rows = query_rows if query_rows is not None else [False, False]
    #: a (1, L, L') file squeezed to L × L': one head's bias (ALiBi with heads=1), or a batch of one table
    one_head = [False, False]
    for side, spec in enumerate(specs):
        if spec is None and not configs[side]:
            pairs[side] = rope_pair(out, texts[side]) if keys[side] is None else None
            if pairs[side] is not None:
                loaded[side] = side_by_side(*pairs[side])
                if paired is not None:
                    paired[side] = True
                continue
            table = load_input(out, texts[side], key=keys[side], complex_ok=True)  # freqs_cis: read below
            if np.iscomplexobj(table.array) and table.array.ndim != 2:
                _refuse_complex(table)
            #: (heads, 1, L): one query row per head (HF BLOOM's build_alibi_tensor), squeezed to heads × L
            query_rows[side] = table.array.ndim == 3 and table.array.shape[1] == 1 and table.array.shape[0] > 1
            one_head[side] = table.array.ndim == 3 and table.array.shape[0] == 1
            if not per_head(table.array):  # (heads, L, L) biases stay 3-D: compared and diagnosed per head
                table.array, note = as_matrix(table.array, table.label)  # (1, L, d) and (L, 1, d) squeezed
                if note:
                    out.note(note)
            loaded[side] = table
    layer_types = [layer_type, layer_type]
    if layer_type is not None and all(configs):  # a config with one rope set for every layer: the other's layer type
        from pecli.sources import takes_layer_type

        takes = [takes_layer_type(text, layer_type) for text in texts]
        for side in (side for side in (0, 1) if any(takes) and not takes[side]):
            layer_types[side] = None
            out.note(f"{texts[side]} has one set of rope parameters for every layer: --layer-type picks the other's")
    for side in (side for side in (0, 1) if configs[side]):
        if query_rows[1 - side] and keys[side] is None:  # BLOOM's (heads, 1, k): the config's bias at query 0
            found = config_query_rows(out, texts[side], loaded[1 - side], length=length, dtype=dtype,
                                       layer_type=layer_types[side])  # fmt: skip
            if found is not None:
                loaded[side], references[side] = found
                continue
        load_config_side(out, texts[side], side, keys[side], loaded, pairs, references, length=length, dtype=dtype,
                          layer_type=layer_types[side])  # fmt: skip
        if references[side] is not None:  # what the config says beyond the table's parameters, for the diagnosis
            from pecli.models.from_config import with_config_facts

            references[side] = with_config_facts(references[side], texts[side], layer_type=layer_types[side])
    for side, spec in enumerate(specs):
        if spec is None:
            continue
        other = loaded[1 - side]
        if other is not None and per_head(other.array):  # a per-head spec (alibi): heads and length from B
            heads, rows, cols = other.array.shape
            spec = with_heads(spec, heads)
            other_dtype = rounded_dtype(other)
            table = spec.table(length=cols if length is None else length, dim=d, dtype=dtype or other_dtype)
            array, label = last_query_rows(out, table.array(), spec.text, rows, "ab"[side])
            loaded[side] = InputTable(array, label, table.metadata(), spec.text)
            references[side] = Reference(table.scheme, dict(table.params))
            continue
        per_head_rows = (
            spec.query_rows(
                heads=other.array.shape[0],
                length=other.array.shape[1] if length is None else length,
                dtype=dtype or other_side(side, loaded, pairs)[1],
            )
            if other is not None and query_rows[1 - side]
            else None
        )
        if per_head_rows is not None:  # the spec's bias at one query row per head, as the file holds it
            array, table = per_head_rows
            implied = [f"{name}={value}" for name, value in table.params.items() if name not in spec.params
                       and name in get_scheme(table.scheme).query_row]  # fmt: skip
            label = f"{spec.text} [query 0 of each head{''.join(', ' + text for text in implied)}]"
            loaded[side] = InputTable(array, label, table.metadata(), spec.text)
            references[side] = Reference(table.scheme, dict(table.params))
            continue
        if other is not None and one_head[1 - side]:  # the file's one head: heads=1, unless the spec says
            spec = with_heads(spec, 1)
        if other is not None:
            rows, cols = (other if pairs[1 - side] is None else pairs[1 - side][0]).array.shape
            cols *= 2 if np.iscomplexobj(other.array) else 1  # freqs_cis: one complex column per rotary pair
            other_dtype = rounded_dtype(other)
            # a bias over query and key positions (alibi, t5) has no dimension: the other table's columns are keys
            takes_dim = d is not None or spec.resolved()[0].takes_dim
            # a spec whose grid sets its token count takes no length from the other table: a mismatch is
            # then the tables' shapes, not a --len the user never typed (issue 30, class 3)
            takes_length = length is not None or not _grid_sets_rows(spec)
            shape = (
                (rows if length is None else length) if takes_length else None,
                (cols if d is None else d) if takes_dim else None,
            )
        else:
            other_dtype = "float32"
            # a spec whose grid sets its rows needs no --len (issue 30: 'missing --len', told to run generate)
            grid_rows = length is None and _grid_sets_rows(spec)
            if d is None and not spec.resolved()[0].takes_dim:  # a bias (alibi, t5, kerple): len × len, no --d
                shape = (None if grid_rows else require_shape(length, 1)[0], None)  # (issue 30: 'missing --d')
            else:
                shape = (None, require_shape(1, d)[1]) if grid_rows else require_shape(length, d)
        from pecli.memory import check_fits_in_memory

        # the sizes the spec takes from the other table, not from --d/--len: an error about one names that table
        sizes = (("dim", "width", d, shape[1]), ("length", "length", length, shape[0]))
        taken = {
            name: f"{'AB'[1 - side]}'s {noun}"
            for name, noun, given, size in sizes
            if other is not None and given is None and size is not None
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
        table = _spec_table(spec, shape[0], shape[1], dtype or other_dtype, taken)
        parts = table.parts()
        if other is not None and pairs[1 - side] is None and len(parts) == 2:  # an engine's cache of both parts?
            pair = [part.array() for part in parts]
            cache = engine_cache(out, other, *pair, as_one_part="part=cos in the spec")
            if cache is not None:
                loaded[1 - side] = cache
                loaded[side] = InputTable(np.hstack(pair), f"{spec.text} [{', '.join(p.name for p in parts)}]",
                                          table.metadata(), spec.text)  # fmt: skip
                references[side] = parts_reference(table.scheme, table.params, [part.name for part in parts])
                continue
        if pairs[1 - side] is not None and len(parts) > 1:  # the spec's parts side by side, as the file's
            array = np.hstack([part.array() for part in parts])
            names = ", ".join(part.name for part in parts)
            loaded[side] = InputTable(array, f"{spec.text} [{names}]", table.metadata(), spec.text)
            references[side] = parts_reference(table.scheme, table.params, [part.name for part in parts])
            continue
        if pairs[1 - side] is not None:  # the spec names one part: the file's tensor of that part
            part = table.params.get("part")
            by_part = dict(zip(("cos", "sin"), pairs[1 - side], strict=True))
            loaded[1 - side] = by_part.get(part, loaded[1 - side])
        with spec.blaming():  # a scheme of several tensors (rope) compared as one: the spec's part=, not --part
            array = table.array()
        if other is not None and one_head[1 - side] and array.ndim == 3 and array.shape[0] == 1:
            array = array[0]  # one head's (1, L, L) bias, as the file's (1, L, L) was squeezed (issue 30)
        if other is not None and array.ndim == 1 and other.array.ndim == 2 and other.array.shape[0] == 1:
            array = array[None, :]  # a vector (ALiBi's slopes) as one row, as the file's vector was read (issue 30)
        loaded[side] = InputTable(array, spec.text, table.metadata(), spec.text)
        references[side] = Reference(table.scheme, dict(table.params))
    found = _partial_width(out, loaded, pairs, references)
    if found is not None and partial is not None:
        partial.append(found)
    for table in loaded:
        if table is not None and np.iscomplexobj(table.array):
            _refuse_complex(table)
    for side, pair in enumerate(pairs):
        if pair is not None and all(loaded[side] is not part for part in pair):
            if side_parts is not None and not side_parts:
                side_parts.extend(("cos", "sin"))  # a pair is read as its cos, then its sin (rope_pair, input_parts)
            cols = loaded[side].array.shape[1] // 2  # a pair brought to another width has its columns
            out.note(
                f"{loaded[side].label}: cos and sin compared side by side "
                f"(columns 0–{cols - 1} cos, {cols}–{2 * cols - 1} sin; --key-{'ab'[side]} takes one)"
            )
    return loaded


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
                f"{shown} in spec {text!r} and {option} {given[option]} both set the table's "
                f"{'dtype' if option == '--dtype' else 'size'}",
                hint=f"give it once, as {option}: drop {shown} from the spec",
            )
        raise ParameterError(
            f"{shown} in spec {text!r}: a spec's table takes its {'dtype' if option == '--dtype' else 'size'} "
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
