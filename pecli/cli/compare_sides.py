"""One side of ``pecli compare`` as it is loaded: a model's config shaped by the other side, an engine's
cache read as a RoPE pair, a pair side by side, a per-head bias cut to the other side's query rows."""

from __future__ import annotations

from typing import Any

from pecli.cli.output import Output, printable


def per_head(array: Any) -> bool:
    """Whether ``array`` is a per-head table (heads, L, L') that compare keeps 3-D (ALiBi's biases)."""
    return array.ndim == 3 and 1 not in array.shape[:2] and 0 not in array.shape


def with_heads(spec: Any, heads: int) -> Any:
    """``spec`` with its scheme's ``heads`` set to the other side's head count, when it takes heads and has none."""
    from dataclasses import replace

    from pecli.schemes.catalog import find_scheme

    scheme = find_scheme(spec.scheme)
    if scheme is None or "heads" not in scheme.defaults or spec.params.get("heads") is not None:
        return spec
    return replace(spec, params={**spec.params, "heads": heads})


def other_side(side: int, loaded: list[Any], pairs: list[Any]) -> tuple[int | None, str]:
    """The other side's rows and the dtype it was rounded to (its file's record, else what its values show)."""
    other = loaded[1 - side]
    if other is None:
        return None, "float32"
    rows = (other if pairs[1 - side] is None else pairs[1 - side][0]).array.shape[0]
    return rows, rounded_dtype(other)


def rounded_dtype(table: Any) -> str:
    """The dtype ``table`` was rounded to: its file's record, else what its values show (float32 for one pecli
    does not compute in)."""
    from pecli.analysis.value_precision import value_precision
    from pecli.dtypes import DTYPES

    found = table.metadata.get("dtype") or value_precision(_real(table.array))
    return found if found in DTYPES else "float32"


def spec_arrays(parts: list[Any]) -> tuple[list[Any], str]:
    """The tables of a spec's ``parts`` as compare reads them, and the dtype they are stored as where numpy holds
    them wider ("" for the arrays' own dtype).

    bfloat16 comes as its exact float32 values (:func:`~pecli.sources.spec_values`: no ``ml_dtypes`` import, 2–3 s
    in its 0.7 release) when those values show their rounding as compare reads a table's precision from its
    values; else (values bfloat16 holds exactly, ALiBi's power-of-two slopes) as bfloat16 arrays, whose dtype alone
    tells compare how they were rounded.

    >>> from pecli.schemes.spec import TableSpec
    >>> arrays, stored = spec_arrays(TableSpec.resolve("rope", None, {}, length=8, dim=4, dtype="bfloat16").parts())
    >>> [array.dtype.name for array in arrays], stored
    (['float32', 'float32'], 'bfloat16')
    """
    from pecli.analysis.value_precision import precision_with_rows, table_precision
    from pecli.sources import spec_values

    arrays = [spec_values(part) for part in parts]
    if any(part.dtype != "bfloat16" for part in parts):
        return arrays, ""
    if all(table_precision(precision_with_rows(None, array)) == ("bfloat16", False) for array in arrays):
        return arrays, "bfloat16"
    return [part.array() for part in parts], ""


def _real(array: Any) -> Any:
    """``array``'s real part when it is complex (its precision is that of its parts), else ``array``."""
    import numpy as np

    return array.real if np.iscomplexobj(array) else array


def last_query_rows(out: Output, array: Any, label: str, rows: int, side: str) -> tuple[Any, str]:
    """``array``'s last ``rows`` query rows, where it is a per-head bias (heads, k, k) and the other side holds
    fewer query rows than keys (an engine's bias while decoding: the last q queries over k keys), with a note;
    else ``array`` as it is."""
    if array.ndim != 3 or not rows < array.shape[1] == array.shape[2]:
        return array, label
    keys = array.shape[2]
    out.note(f"{label}: {side.upper()}'s query rows {keys - rows}..{keys - 1} of the {keys} x {keys} biases "
             f"(the other side holds the last {rows} query rows of each head)")  # fmt: skip
    return array[:, keys - rows :, :], f"{label} [query rows {keys - rows}–{keys - 1} of each head]"


def config_query_rows(
    out: Output, text: str, other: Any, *, length: int | None, dtype: str | None, layer_type: str | None
) -> tuple[Any, Any] | None:
    """A model's config's per-head bias (ALiBi: BLOOM, MPT, Falcon) at query position 0 of each head, as a
    (heads, 1, k) file holds it (squeezed to ``other``, heads × k): the scheme's ``query_row`` parameters
    (ALiBi's key form, m·j) where the config leaves them at their defaults, as a spec is compared; the
    table (an :class:`~pecli.cli.inputs.InputTable`) and its reference, or None for a config of no such bias."""
    import os

    from pecli.analysis.compare import Reference
    from pecli.cli.inputs import InputTable
    from pecli.schemes.catalog import get_scheme
    from pecli.schemes.specs import SchemeSpec
    from pecli.sources import config_table_spec

    heads, keys = other.array.shape
    keys = keys if length is None else length
    table_spec = config_table_spec(text, length=keys, layer_type=layer_type)
    if table_spec is None:
        return None
    scheme = get_scheme(table_spec.scheme)
    if not scheme.query_row or "heads" not in scheme.defaults:
        return None
    implied = {name: value for name, value in scheme.query_row.items()
               if table_spec.params.get(name) == scheme.defaults.get(name) != value}  # fmt: skip
    spec = SchemeSpec(text, table_spec.scheme, None, {**table_spec.params, **implied})
    other_dtype = rounded_dtype(other)
    found = spec.query_rows(heads=heads, length=keys, dtype=dtype or other_dtype)
    if found is None:
        return None
    array, table = found
    shown = "".join(f", {name}={value}" for name, value in implied.items())
    label = f"{printable(os.path.basename(os.path.normpath(text)))} [{table.scheme}, query 0 of each head{shown}]"
    return InputTable(array, label, table.metadata(), text), Reference(table.scheme, dict(table.params))


def load_config_side(
    out: Output,
    text: str,
    side: int,
    key: str | None,
    loaded: list[Any],
    pairs: list[Any],
    references: list[Any],
    *,
    length: int | None,
    dtype: str | None,
    layer_type: str | None = None,
) -> None:
    """A model's config (or directory) as the table generate --from-config writes for it: the other side's
    length (or --len), its dtype (or --dtype); --key picks a part, else the parts side by side; ``layer_type``
    (--layer-type) picks the layer type whose rope parameters to use where they differ by type."""
    import numpy as np

    from pecli.analysis.compare import Reference
    from pecli.cli.inputs import as_matrix, input_parts, load_input, pair_label

    rows, other_dtype = other_side(side, loaded, pairs)
    other = loaded[1 - side]
    #: a per-head file (heads, q, k): the config's (heads, k, k) biases, its last q query rows compared
    query_rows = other.array.shape[1] if other is not None and per_head(other.array) else None
    rows = length if length is not None else (other.array.shape[2] if query_rows is not None else rows)
    table_dtype = dtype or other_dtype
    if key is None:
        parts = input_parts(out, text, length=rows, dtype=table_dtype, layer_type=layer_type)
        if parts is not None and len(parts) == 2:
            other_pair = pairs[1 - side]
            params = dict(parts[0].params or {})
            if other_pair is not None:
                params.update(_in_module_layout(out, text, parts, other_pair, pair_label(*other_pair)))
            pairs[side] = parts
            loaded[side] = side_by_side(*parts)
            other = loaded[1 - side]
            if other is not None and pairs[1 - side] is None:  # the other side one table: an engine's cache?
                one_part = f"--key-{'ab'[side]} cos"
                cache = engine_cache(out, other, parts[0].array, parts[1].array, as_one_part=one_part)
                loaded[1 - side] = cache or other
            if parts[0].scheme is not None:
                references[side] = parts_reference(parts[0].scheme, params, ["cos", "sin"])
            return
    elif pairs[1 - side] is not None:  # the other side's tensor of the part the key names
        loaded[1 - side] = dict(zip(("cos", "sin"), pairs[1 - side], strict=True)).get(key, loaded[1 - side])
    table = load_input(out, text, key=key, length=rows, dtype=table_dtype, layer_type=layer_type)
    if query_rows is not None and per_head(table.array):  # per-head biases stay 3-D, as the file's
        table.array, table.label = last_query_rows(out, table.array, table.label, query_rows, "ab"[side])
    else:
        table.array, note = as_matrix(table.array, table.label)
        if note:
            out.note(note)
    loaded[side] = table
    params = dict(table.params)
    other = loaded[1 - side]
    if key is not None and other is not None and np.ndim(other.array) == 2:  # one part against the other's
        params.update(_in_module_layout(out, text, [table], [other], other.label))
    if table.scheme is not None:
        references[side] = Reference(table.scheme, params)


def _in_module_layout(out: Output, text: str, tables: list[Any], others: list[Any], other_label: str) -> dict[str, Any]:
    """The config's ``tables`` relaid in place as its model's rotary module returns them, where the other side's
    are so (:func:`~pecli.analysis.engine_cache.in_module_layout`), retitled, with a note: the parameters that
    changed; else none. A cos/sin table does not carry which columns of q it turns: the note says so and
    how to check that."""
    import numpy as np

    from pecli.analysis.engine_cache import in_module_layout
    from pecli.models.rope_family import transformers_cache_layout
    from pecli.render.titles import scheme_title

    scheme = tables[0].scheme
    if scheme is None:
        return {}
    arrays = [None if other is None else np.asarray(other.array) for other in others]
    relaid = in_module_layout(transformers_cache_layout(tables[0].metadata), [t.array for t in tables], arrays)
    if relaid is None:
        return {}
    for table, array in zip(tables, relaid.tables, strict=True):
        title = scheme_title(scheme, table.metadata, preset=table.metadata.get("preset"))
        table.metadata = {**table.metadata, **{name: str(value) for name, value in relaid.changed.items()}}
        relaid_title = scheme_title(scheme, table.metadata, preset=table.metadata.get("preset"))
        table.label = table.label.replace(title, relaid_title, 1)
        table.array = array
    out.note(
        f"{other_label} is in transformers' layout, compared with {text} in it: {relaid.how}; a cos/sin table does "
        f"not say which columns of q it turns: pecli generate --from-config {text} --probe checks the "
        "engine's rotation itself"
    )
    return dict(relaid.changed)


def engine_cache(out: Output, table: Any, cos: Any, sin: Any, *, as_one_part: str) -> Any:
    """``table`` (one tensor) read as an engine's cache of a RoPE pair ``cos``, ``sin`` (vLLM's cos_sin_cache, a
    complex freqs_cis), its frequencies placed as the pair places them and its cos and sin side by side, with a
    note (``as_one_part``: how to compare it with one part instead); None when it is not one (another shape, or
    a pair with no single placement)."""
    import numpy as np

    from pecli.analysis.engine_cache import engine_cache_as_pair
    from pecli.cli.inputs import InputTable

    if table.array.ndim != 2 or cos.shape != sin.shape:
        return None
    cache = engine_cache_as_pair(table.array, cos)
    if cache is None:
        return None
    one_part = f"; {as_one_part} compares it as the cos alone" if cache.layout == "cos_sin_cache" else ""
    out.note(f"{table.label}: {cache.describe()}{one_part}")
    array = np.hstack([cache.cos, cache.sin])
    dtype = str(cache.cos.dtype) if np.iscomplexobj(table.array) else table.dtype  # complex64: float32 parts
    label = table.label if table.label.endswith(f"[{cache.layout}]") else f"{table.label} [{cache.layout}]"
    return InputTable(array, label, table.metadata, table.source, dtype=dtype)


def parts_reference(scheme: str, params: Any, parts: list[str]) -> Any:
    """The reference of a table that holds its scheme's ``parts`` side by side (RoPE's cos, then its sin)."""
    from pecli.analysis.compare import Reference

    return Reference(scheme, {name: value for name, value in params.items() if name != "part"}, parts=tuple(parts))


def side_by_side(cos: Any, sin: Any) -> Any:
    """A RoPE pair as one table: its cos columns, then its sin columns."""
    import numpy as np

    from pecli.cli.inputs import InputTable, pair_label

    array = np.hstack([cos.array, sin.array])
    return InputTable(array, pair_label(cos, sin), cos.metadata, cos.source, dtype=cos.dtype)
