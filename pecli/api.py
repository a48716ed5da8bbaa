"""The inspecting half as Python: identify, compare, a model's config and a figure, without the shell.

Each function takes tables as numpy arrays (or anything ``numpy.asarray`` takes: a torch tensor on
the CPU, a list), or as the sources the CLI reads: a file path, a scheme spec (``"rope:base=500000"``),
a config.json, a model directory, a .gguf file or a cached model id. Results are the objects the CLI
prints: ``print(result)`` shows the CLI's text, ``result.to_json()`` its ``--json``, and a notebook
shows them by themselves.

>>> import pecli
>>> table = pecli.encode(None, 64, 32, preset="fairseq")
>>> print(pecli.identify(table).found.best.describe())
sinusoidal (preset fairseq): layout=split freq_shift=1.0 offset=2
>>> pecli.compare(table, "fairseq").agree
True
>>> result = pecli.compare(table, "sinusoidal:layout=split,freq_shift=1")
>>> result.agree, [finding.code for finding in result.result.diagnosis]
(False, ['positions_shifted'])
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.arguments import as_array, check_flag, check_tolerance, source_text
from pecli.errors import ParameterError
from pecli.text import literal_repr

if TYPE_CHECKING:
    from pecli.analysis.compare_report import CompareReport
    from pecli.analysis.identify.report import IdentifyReport
    from pecli.sources import SourceTable

__all__ = ["compare", "figure", "from_config", "identify"]


def _table(value: Any, *, key: str | None = None, length: int | None = None, dim: int | None = None,
           dtype: str = "float32", label: str = "table", key_name: str = "key") -> SourceTable:  # fmt: skip
    """``value`` as a resolved table: an array as it is, a string through the CLI's source resolver
    (``key_name``: the caller's parameter that gave ``key``, for the message refusing it)."""
    from pecli.sources import SourceTable, resolve

    value = source_text(value, label)
    if isinstance(value, str):
        from pecli.schemes.specs import looks_like_spec, parse_spec

        if looks_like_spec(value):  # a scheme or a preset, with parameters: computed at the shape asked for
            from pecli.schemes.catalog import resolve as resolve_scheme
            from pecli.schemes.spec import TableSpec

            spec = parse_spec(value)
            with spec.blaming():  # a bad value is named as the spec writes it: "in spec 'rope:base=0': base …"
                if dim is not None and not resolve_scheme(spec.scheme, spec.preset, spec.params)[0].takes_dim:
                    dim = None  # a bias over query and key positions (t5, alibi): the other side's columns are keys
                table = TableSpec.resolve(spec.scheme, spec.preset, spec.params, length=length, dim=dim, dtype=dtype)
                table = table.single().check()
            return SourceTable(table.array(), value, table.metadata(), value, dtype=dtype, kind="scheme",
                               scheme=table.scheme, params=dict(table.params))  # fmt: skip
        return resolve(value, key=key, length=length, dtype=dtype)
    if key is not None:
        raise ParameterError(f"{key_name} applies to a file or a config, not to an array", hint=f"drop {key_name}")
    array, stored = as_array(value, label)
    if array.dtype.kind in "cOSU":  # complex, strings, objects (bfloat16, kind V, is a number): refused by name
        raise ParameterError(
            f"{label} has dtype {array.dtype}, which is not a real number type",
            hint="pass a float or integer array (np.real(a) if the imaginary parts are 0)",
        )
    return SourceTable(array, label, kind="array", dtype=stored)


def identify(table: Any, *, key: str | None = None) -> IdentifyReport:
    """Which known convention produced ``table`` (an array, or a file), and how to write it again.

    >>> import pecli
    >>> found = pecli.identify(pecli.encode("rope", 32, 16, base=500000.0, part="cos"))
    >>> found.found.level, found.found.best.params["base"]
    ('exact', 500000.0)
    """
    from pecli.analysis.identify import identify_table
    from pecli.analysis.identify.report import IdentifyReport

    _check_values_fit(table)
    resolved = _table(table, key=key)
    return IdentifyReport(identify_table(np.asarray(resolved.array), dtype=resolved.dtype_name), resolved.label)


def compare(
    a: Any,
    b: Any,
    *,
    key: str | None = None,
    key_b: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    exact: bool = False,
) -> CompareReport:
    """How table ``b`` differs from ``a``, with the causes that explain it (``result.result.diagnosis``).

    Either side may be a scheme spec or a model's config (the table ``generate --from-config``
    writes): its shape and dtype follow the other side. ``key``/``key_b`` pick a file's tensor (or a
    config's part, ``cos``/``sin``) on side A / B.

    >>> import pecli
    >>> ours = pecli.encode("rope", 128, 64, part="cos")  # the engine forgot the scaling
    >>> report = pecli.compare("rope:part=cos,scaling=linear,factor=2", ours)
    >>> report.agree, report.result.diagnosis[0].code
    (False, 'unscaled')
    """
    from pecli.analysis.compare import Reference, compare_tables, recorded_positions
    from pecli.analysis.compare_report import CompareReport, Side

    check_tolerance("atol", atol)
    check_tolerance("rtol", rtol)
    exact = check_flag("exact", exact)
    a, b = source_text(a, "A"), source_text(b, "B")
    computed = [isinstance(side, str) and _is_computed(side) for side in (a, b)]
    if all(computed):
        raise ParameterError(
            "compare needs one table to take the shape from", hint="give an array or a file as one side"
        )
    first = None if computed[0] else _table(a, key=key, label="A")
    second = None if computed[1] else _table(b, key=key_b, label="B", key_name="key_b")
    first, second = (_as_rows(side) for side in (first, second))
    shaped = first if first is not None else second
    assert shaped is not None
    rows, width = np.asarray(shaped.array).shape[0], np.asarray(shaped.array).shape[-1]
    dtype = shaped.dtype_name if shaped.dtype_name in ("float16", "bfloat16", "float32", "float64") else "float64"
    if first is None:
        first = _table(a, key=key, length=rows, dim=width, dtype=dtype, label="A")
    if second is None:
        second = _table(b, key=key_b, length=rows, dim=width, dtype=dtype, label="B", key_name="key_b")
    known = [Reference(t.scheme, t.params) if t.scheme and t.params else None for t in (first, second)]
    for index, (text, table) in enumerate(((a, first), (b, second))):
        reference = known[index]
        if reference is not None and table.kind in ("config", "model-directory", "model-id"):
            from pecli.models.from_config import with_config_facts  # the head_dim the config sets, …

            known[index] = with_config_facts(reference, text)
    arrays = [np.asarray(first.array), np.asarray(second.array)]
    labels = [first.label, second.label]
    from pecli.analysis.compare_widths import compared_at, one_width, width_finding_first

    widths = one_width(known, arrays, [table.metadata.get("dtype") for table in (first, second)])
    if widths is not None:  # a RoPE reference and an engine's table of another width: compared at one width
        width_side, found = widths
        labels[width_side] += f" [{compared_at(found)}]"
        if found.engine_table is not arrays[1 - width_side]:  # the engine's table placed otherwise (a cache)
            labels[1 - width_side] += f" [{compared_at(found)}]"
        arrays[width_side], arrays[1 - width_side] = found.reference_table, found.engine_table
        known[width_side] = found.reference
    side = 0 if known[0] is not None or known[1] is None else 1
    positions = recorded_positions((first.metadata, second.metadata), len(arrays[0])) if arrays[0].ndim == 2 else None
    result = compare_tables(*arrays, atol=atol, rtol=rtol or 0.0, exact=exact, reference=known[side],
                            reference_side="ab"[side], positions=positions)  # fmt: skip
    result = width_finding_first(result, widths[1] if widths is not None else None)
    sides = [Side(label, array.shape, t.dtype_name) for label, array, t in zip(labels, arrays, (first, second),
                                                                                 strict=True)]  # fmt: skip
    return CompareReport(sides[0], sides[1], result)


def _check_values_fit(value: Any, label: str = "table") -> None:
    """Refuse, before any work, an array whose values identify would have to make: a view holding fewer
    values than it shows (``np.broadcast_to``, ``as_strided``, a torch ``expand``), or a dtype read as a
    float64 copy (integers, float16; a torch bfloat16 tensor is first copied to float32). The same table
    from a file is refused as it is read; an array whose values are already in memory is not counted again.

    >>> import numpy as np
    >>> _check_values_fit(np.broadcast_to(np.zeros(8, np.float32), (10**12, 8)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: the table of shape (1000000000000, 8) (float32) would take 29.1 TiB...
    """
    import math

    from pecli.memory import check_fits_in_memory

    if hasattr(value, "detach") and hasattr(value, "stride") and hasattr(value, "element_size"):  # torch
        shape, itemsize = tuple(value.shape), int(value.element_size())
        strides = tuple(int(stride) * itemsize for stride in value.stride())
        name = str(value.dtype).removeprefix("torch.")
        widened = 4 if name == "bfloat16" else 8 if (not value.is_floating_point() or itemsize < 4) else 0
    elif isinstance(value, np.ndarray):
        shape, itemsize, strides, name = value.shape, value.itemsize, value.strides, value.dtype.name
        widened = 8 if value.dtype.kind in "biu" or (value.dtype.kind == "f" and itemsize < 4) else 0
    else:  # a list or a path: its values are read (and checked) as they are made
        return
    count = math.prod(shape)
    if count <= 1:
        return
    # the bytes between the first and the last value the view reaches: fewer than its values take when
    # some of them are one value seen twice (a stride of 0, or overlapping rows)
    reach = sum((extent - 1) * abs(stride) for extent, stride in zip(shape, strides, strict=True)) + itemsize
    held = reach >= count * itemsize
    if held and not widened:
        return
    check_fits_in_memory(
        count * (widened or itemsize),
        what=f"{label} of shape {shape} ({name})",
        hint="identify a slice of its rows, e.g. table[:4096]",
    )


def _as_rows(side: SourceTable | None) -> SourceTable | None:
    """A 1-D table as one row (the CLI reads a file's vector so); a 0-d or empty one refused by name."""
    if side is None or side.kind != "array":
        return side
    array = np.asarray(side.array)
    if array.ndim == 0 or array.size == 0:
        raise ParameterError(f"{side.label} has shape {array.shape}: no values to compare",
                             hint="pass a (len, d) table, or a vector")  # fmt: skip
    if array.ndim == 1:
        return dataclasses.replace(side, array=array[None, :])
    return side


def _is_computed(text: str) -> bool:
    """Whether ``text`` names a table computed at the other side's shape (a scheme spec, a model's config or
    directory, a cached model id), not a table read as it is (a file, stdin)."""
    from pecli.sources import kind_of_source

    return kind_of_source(text).name not in ("file", "stdin")


def from_config(source: str, *, length: int | None = None, layer_type: str | None = None,
                dtype: str = "float32") -> dict[str, np.ndarray]:  # fmt: skip
    """The tables ``pecli generate --from-config`` writes for a model: ``{name: array}``.

    ``source``: a config.json, a model directory, a .gguf file or a cached model id. A model whose
    layer types differ (Gemma 3) gives each type's tensors (``full_attention.cos`` …) unless
    ``layer_type`` picks one.

    >>> import json, os, tempfile, pecli
    >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
    >>> with open(path, "w") as file:
    ...     json.dump({"model_type": "llama", "head_dim": 8, "max_position_embeddings": 16, "rope_theta": 1e4}, file)
    >>> tables = pecli.from_config(path)
    >>> {name: table.shape for name, table in tables.items()}
    {'cos': (16, 8), 'sin': (16, 8)}
    """
    from pecli.models.from_config import config_encoding, config_spec

    source = source_text(source, "source", expected="a path or a model id",
                         hint="pass a config.json, a model directory, a .gguf file or a cached model id")  # fmt: skip
    model = config_encoding(source, layer_type=layer_type, per_layer=True)
    spec = config_spec(model, length=length, dtype=dtype)
    return {part.name: part.array() for part in spec.parts()}


def figure(table: Any, *, key: str | None = None, title: str | None = None, **style: Any) -> Any:
    """The heatmap ``pecli plot -o`` saves, as a matplotlib Figure (``figure.savefig(...)`` to keep it).

    ``style``: :func:`pecli.render.image.save_heatmap`'s options (``cmap``, ``vmin``, ``vmax``,
    ``robust``, ``figsize``, ``dpi``, ``x_label``, ``y_label``).

    >>> import pecli
    >>> fig = pecli.figure(pecli.encode("sinusoidal", 128, 64), title="sinusoidal")
    >>> fig.get_axes()[0].get_title()
    'sinusoidal'
    """
    from pecli.render.image import heatmap_figure

    unknown = sorted(set(style) - set(_FIGURE_STYLE))
    if unknown:
        raise ParameterError(
            f"figure() got an unexpected keyword argument {literal_repr(unknown[0])}",
            hint=f"valid: key, title, {', '.join(_FIGURE_STYLE)}",
        )
    if title is not None and not isinstance(title, str):
        raise ParameterError(f"title must be a str, got {type(title).__name__}", hint="pass title=str(...)")
    figsize = style.get("figsize")
    if figsize is not None and not (
        isinstance(figsize, (tuple, list)) and len(figsize) == 2
        and all(isinstance(side, (int, float)) and not isinstance(side, bool) for side in figsize)
    ):  # fmt: skip
        raise ParameterError(
            f"figsize must be (width, height) in inches, got {literal_repr(figsize)}", hint="e.g. figsize=(8, 6)"
        )
    resolved = _table(table, key=key)
    values = np.asarray(resolved.array, dtype=np.float64)
    if values.ndim != 2:
        raise ParameterError(f"figure draws a 2-D table, got shape {values.shape}", hint="pick a 2-D slice")
    if not values.size:
        raise ParameterError(f"figure draws a non-empty table, got shape {values.shape}", hint="pass the table's rows")
    drawn, _ = heatmap_figure(values, title=title if title is not None else resolved.label, **style)
    return drawn


#: the style options :func:`figure` passes on to the heatmap (the rest of its options are internal)
_FIGURE_STYLE = ("cmap", "vmin", "vmax", "robust", "figsize", "dpi", "x_label", "y_label")
