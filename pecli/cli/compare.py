"""``pecli compare``: how two tables differ (exit 0 same, 1 different, 2 bad input, 3 failure), and property reports."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import (
    DimOpt,
    KeyOpt,
    LayerTypeOpt,
    LenOpt,
    complete_choices,
    dtype_names,
    output_options,
    output_path,
)
from pecli.cli.output import Output, printable
from pecli.errors import ExitCode, ParameterError, TableFileError

HELP = """Compare two tables, or check schemes' properties (--properties).

A and B are files, - (stdin), or scheme specs: NAME or NAME:param=value,… where NAME is a
scheme or a preset (sinusoidal:layout=split,freq_shift=1; fairseq; count). A spec takes its
shape from --d/--len or from the other table, and its dtype from --dtype or the other table.

Reports the shapes and dtypes, max and mean |A − B|, the max relative difference, the worst
position and dimension, and the per-position cosine similarity; when the tables differ only by a
column permutation (interleaved vs split layout, sin/cos order) or a row shift (an offset), says so.
By default the tolerance follows the data: row p may differ by the rounding of the lower-precision
table plus the noise of float32 arithmetic at position p (2^-23·p, as a float32 implementation
rounds the angle p·ω); --atol/--rtol (either alone) set it instead, and --exact asks for bit equality.
Exit status: 0 when |A − B| is within the tolerance everywhere, 1 when not, 2 on bad input,
3 when the figure (-o) cannot be written or another runtime failure.

A value may hold commas: a comma starts a new parameter only before param=, so
mae:grid=14,14,cls_token=true is read as grid 14,14 (grid=14x14 says the same).
SCHEME:preset=NAME,… picks one of that scheme's presets: 'sincos2d:preset=mae,grid=14x14'.

When one file is a probe (generate --probe), the other holds an engine's rotation of its q and k
(q_rotated, k_rotated): they are compared with the probe's, and the cause of a difference named.
Two probes of the same q, k and positions (the same head width, length and seed): the second's
rotation is compared with the first's, as an engine's; probes of other inputs are refused.

With --properties, each SCHEME (a spec) is checked at --d (default 64) × --len (default 512)
for the six properties of an ideal positional encoding, with the figure behind each verdict.

Examples:


  pecli compare model_pe.npy sinusoidal && echo same
  pecli compare fairseq.npy tensor2tensor --atol 1e-5
  pecli generate --d 64 --len 128 -o - | pecli compare - sinusoidal:layout=split
  pecli compare a.npy b.npy -o diff.png
  pecli compare engine_rotated.safetensors probe.safetensors
  pecli compare --properties sinusoidal count count-normalized binary --d 64 --len 512
"""

#: the defaults of the property report's shape, as in the issue's example
PROPERTY_DIM, PROPERTY_LEN = 64, 512


def register(app: typer.Typer) -> None:
    app.command("compare", help=HELP)(compare)


@output_options
def compare(
    tables: Annotated[
        list[str],
        typer.Argument(metavar="A B", help="Two tables (file, - or scheme spec); with --properties, schemes."),
    ],
    key: KeyOpt = None,
    key_a: Annotated[Optional[str], typer.Option("--key-a", help="Tensor to read from A.", metavar="NAME")] = None,
    key_b: Annotated[Optional[str], typer.Option("--key-b", help="Tensor to read from B.", metavar="NAME")] = None,
    atol: Annotated[
        Optional[float],
        typer.Option(
            "--atol",
            help="Absolute tolerance (default: per row, the lower-precision table's rounding plus float32"
            " arithmetic noise).",
            metavar="FLOAT",
        ),
    ] = None,
    rtol: Annotated[float, typer.Option("--rtol", help="Relative tolerance (of |B|).", metavar="FLOAT")] = 0.0,
    exact: Annotated[bool, typer.Option("--exact", help="Agree only when every value is equal, bit for bit.")] = False,
    d: DimOpt = None,
    length: LenOpt = None,
    dtype: Annotated[
        Optional[str],
        typer.Option(
            "--dtype",
            help="dtype of a scheme spec's table (default: the other table's precision).",
            metavar="DTYPE",
            autocompletion=complete_choices(dtype_names),
        ),
    ] = None,
    properties: Annotated[
        bool, typer.Option("--properties", help="Report the six properties of each SCHEME instead.")
    ] = False,
    output: Annotated[
        Optional[str],
        typer.Option(
            "-o",
            "--output",
            help="Figure of A, B and A − B side by side (.png, .svg, .pdf).",
            metavar="PATH",
            callback=output_path,
        ),
    ] = None,
    layer_type: LayerTypeOpt = None,
    *,
    out: Output,
) -> None:
    from pecli.analysis.compare import check_tolerances

    check_tolerances(0.0 if atol is None else atol, rtol)  # before any table is read or computed
    if exact and (atol is not None or rtol):
        raise ParameterError("--exact asks for bit equality; it cannot go with --atol or --rtol", hint="drop one")
    if atol is None and rtol:
        atol = 0.0  # --rtol alone replaces the data-driven tolerance too, as --atol does
    from pecli.schemes.specs import looks_like_spec

    for text in (text for text in tables if looks_like_spec(text)):  # before any spec is read (rope's pairs too)
        _size_in_spec(text, {"--d": d, "--len": length, "--dtype": dtype})
    if properties:
        given = (("-o", output), ("--key", key or key_a or key_b), ("--layer-type", layer_type))
        extra = [flag for flag, value in given if value]
        if extra:
            verb = "does" if len(extra) == 1 else "do"
            raise ParameterError(f"{', '.join(extra)} {verb} not apply to --properties",
                                 hint="drop it" if len(extra) == 1 else "drop them")  # fmt: skip
        _property_report(
            out,
            tables,
            dim=d,
            length=length,
        )
        return
    if len(tables) != 2:
        raise ParameterError(
            f"compare takes two tables, got {len(tables)}", hint="pecli compare A B, or pecli compare --properties S …"
        )
    for text in tables:  # both inputs, before either is read: an error about B's tensor is not led by A's name
        out.read_from(text)
    if key is not None and (key_a is not None or key_b is not None):
        raise ParameterError("--key sets both keys; it cannot go with --key-a or --key-b", hint="use one or the other")
    if layer_type is not None:  # a model's config's option: it applies to each side that is one, and needs one
        from pecli.sources import check_layer_type, is_config_source

        if not any(is_config_source(text) for text in tables):
            check_layer_type(tables[0], layer_type)
    from pecli.cli.relative_compare import compare_rope_specs

    same_rope = compare_rope_specs(out, tables, dim=d, length=length)
    if same_rope is not None:
        if not same_rope:
            raise typer.Exit(int(ExitCode.NO_MATCH))
        return
    from pecli.probe_check import compare_probe_files

    rotated = None if key or key_a or key_b else compare_probe_files(tables, atol=atol)  # an engine against a probe
    if rotated is not None:
        if output is not None:
            raise ParameterError("-o draws two tables; a probe's rotated q and k have no figure", hint="drop -o")
        out.show(rotated)
        if not rotated.agree:
            raise typer.Exit(int(ExitCode.NO_MATCH))
        return
    if output is not None:
        _check_figure_path(output)
    streamed = _large_files(tables, (key_a or key, key_b or key))  # -o too: its figure is drawn from the chunks
    streamed_spec = (
        None
        if streamed is not None
        else _large_file_and_spec(tables, (key_a or key, key_b or key), (key_a, key_b), d=d, length=length, dtype=dtype)
    )
    if streamed is not None:
        first, second = streamed
        result = _compare_streamed(first, second, atol=atol, rtol=rtol, exact=exact)
        if not result.agree:  # two large files: what each is, read on its first rows (a per-head one if small)
            from pecli.analysis.readings import with_readings

            keys = (key_a or key, key_b or key)
            result = with_readings(
                result, [_first_rows(table, name) for table, name in zip(streamed, keys, strict=True)]
            )
    elif streamed_spec is not None:
        (first, second), reference, side = streamed_spec
        result = _compare_streamed(
            first, second, atol=atol, rtol=rtol, exact=exact, reference=reference, reference_side="ab"[side]
        )
    else:
        references: list[Any] = [None, None]
        query_rows = [False, False]
        partial: list[Any] = []
        side_parts: list[str] = []  # the parts a file's tensors name, compared side by side (cos, sin)
        paired = [False, False]  # a side read as its file's cos and sin, side by side
        first, second = _load_pair(
            out,
            tables,
            (key_a or key, key_b or key),
            key_given=(key_a, key_b),
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
        named = [found for found in partial if found.finding is not None]
        if named and not result.agree:  # the width mistake first (the diagnosis at one width may name it too)
            dropped = {named[0].finding.code, *named[0].supersedes}  # and none it explains better
            others = [found for found in result.diagnosis if found.code not in dropped]
            result = replace(result, diagnosis=[named[0].finding, *others])
        if not any(references) and all(_source_kind(text) in ("file", "stdin") for text in tables):
            from pecli.analysis.readings import with_readings  # two files: what each one is, after the diagnosis

            result = with_readings(result, [
                {"values": table.array, "metadata": table.metadata, "dtype": table.dtype_name, "key": table.key,
                 "paired": pair} for table, pair in zip((first, second), paired, strict=True)
            ])  # fmt: skip
    if output is not None:
        _save_difference_figure(output, first, second)
        out.note(f"wrote {output}")
    from pecli.analysis.compare_report import CompareReport, Side

    side_a, side_b = (Side(table.label, *_shape_and_dtype(table)) for table in (first, second))
    out.show(CompareReport(side_a, side_b, result))
    if not result.agree:
        raise typer.Exit(int(ExitCode.NO_MATCH))


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
                loaded[side] = _side_by_side(*pairs[side])
                if paired is not None:
                    paired[side] = True
                continue
            table = load_input(out, texts[side], key=keys[side], complex_ok=True)  # freqs_cis: read below
            if np.iscomplexobj(table.array) and table.array.ndim != 2:
                _refuse_complex(table)
            #: (heads, 1, L): one query row per head (HF BLOOM's build_alibi_tensor), squeezed to heads × L
            query_rows[side] = table.array.ndim == 3 and table.array.shape[1] == 1 and table.array.shape[0] > 1
            one_head[side] = table.array.ndim == 3 and table.array.shape[0] == 1
            if not _per_head(table.array):  # (heads, L, L) biases stay 3-D: compared and diagnosed per head
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
            found = _config_query_rows(out, texts[side], loaded[1 - side], length=length, dtype=dtype,
                                       layer_type=layer_types[side])  # fmt: skip
            if found is not None:
                loaded[side], references[side] = found
                continue
        _load_config_side(out, texts[side], side, keys[side], loaded, pairs, references, length=length, dtype=dtype,
                          layer_type=layer_types[side])  # fmt: skip
        if references[side] is not None:  # what the config says beyond the table's parameters, for the diagnosis
            from pecli.models.from_config import with_config_facts

            references[side] = with_config_facts(references[side], texts[side], layer_type=layer_types[side])
    for side, spec in enumerate(specs):
        if spec is None:
            continue
        other = loaded[1 - side]
        if other is not None and _per_head(other.array):  # a per-head spec (alibi): heads and length from B
            heads, rows, cols = other.array.shape
            spec = _with_heads(spec, heads)
            other_dtype = _rounded_dtype(other)
            table = spec.table(length=cols if length is None else length, dim=d, dtype=dtype or other_dtype)
            array, label = _last_query_rows(out, table.array(), spec.text, rows, "ab"[side])
            loaded[side] = InputTable(array, label, table.metadata(), spec.text)
            references[side] = Reference(table.scheme, dict(table.params))
            continue
        per_head_rows = (
            spec.query_rows(
                heads=other.array.shape[0],
                length=other.array.shape[1] if length is None else length,
                dtype=dtype or _other_side(side, loaded, pairs)[1],
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
            spec = _with_heads(spec, 1)
        if other is not None:
            rows, cols = (other if pairs[1 - side] is None else pairs[1 - side][0]).array.shape
            cols *= 2 if np.iscomplexobj(other.array) else 1  # freqs_cis: one complex column per rotary pair
            other_dtype = _rounded_dtype(other)
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
            cache = _engine_cache(out, other, *pair, as_one_part="part=cos in the spec")
            if cache is not None:
                loaded[1 - side] = cache
                loaded[side] = InputTable(np.hstack(pair), f"{spec.text} [{', '.join(p.name for p in parts)}]",
                                          table.metadata(), spec.text)  # fmt: skip
                references[side] = _parts_reference(table.scheme, table.params, [part.name for part in parts])
                continue
        if pairs[1 - side] is not None and len(parts) > 1:  # the spec's parts side by side, as the file's
            array = np.hstack([part.array() for part in parts])
            names = ", ".join(part.name for part in parts)
            loaded[side] = InputTable(array, f"{spec.text} [{names}]", table.metadata(), spec.text)
            references[side] = _parts_reference(table.scheme, table.params, [part.name for part in parts])
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
    assumed), both brought to one width in ``loaded`` with a note; the shape-mismatch error, its widths in words,
    when the mistake does not reproduce the engine's table; None when the widths match or no width applies."""
    import numpy as np

    from pecli.analysis.compare import value_precision
    from pecli.analysis.partial_width import partial_width
    from pecli.cli.inputs import InputTable
    from pecli.dtypes import DTYPES

    for side in (0, 1):
        reference, mine, engine = references[side], loaded[side], loaded[1 - side]
        if reference is None or references[1 - side] is not None or mine is None or engine is None:
            continue
        if engine.array.shape == mine.array.shape and not np.iscomplexobj(engine.array):
            return None
        dtype = mine.metadata.get("dtype") or value_precision(mine.array)
        found = partial_width(
            reference, mine.array, engine.array, engine_pair=pairs[1 - side] is not None,
            dtype=dtype if dtype in DTYPES else "float32", engine_side="AB"[1 - side],
        )  # fmt: skip
        if found is None:
            return None
        if found.finding is None:
            shapes = [" × ".join(map(str, table.array.shape)) for table in loaded]
            raise TableFileError(
                f"shape mismatch: A is {shapes[0]}, B is {shapes[1]} ({found.widths}), and partial rotary does not "
                "explain the difference",
                hint="compare tables of one head width (a config's or spec's rotary columns: check its "
                "partial rotary and head_dim)",
            )
        out.note(found.words)
        width = found.reference_table.shape[1] // max(1, len(reference.parts))
        at = f"at {width} columns a part" if reference.parts else f"at {width} columns"
        loaded[side] = InputTable(found.reference_table, f"{mine.label} [{at}]", mine.metadata,
                                  mine.source)  # fmt: skip
        if found.engine_table is not engine.array:
            loaded[1 - side] = InputTable(found.engine_table, f"{engine.label} [{at}]",
                                          engine.metadata, engine.source,
                                          dtype=str(found.engine_table.dtype) if np.iscomplexobj(engine.array)
                                          else engine.dtype)  # fmt: skip
        references[side] = found.reference
        return found
    return None


def _refuse_complex(table: Any) -> None:
    """A complex table that is not an engine's freqs_cis of a RoPE reference's pair: refused."""
    raise ParameterError(
        f"{table.label} holds a complex table ({table.array.dtype}, shape {tuple(table.array.shape)}), which compares "
        "only as an engine's freqs_cis (positions × frequencies) with a RoPE reference of both parts",
        hint="compare it with a model's config or a rope spec, or save its real part",
    )


def _real(array: Any) -> Any:
    """``array``'s real part when it is complex (its precision is that of its parts), else ``array``."""
    import numpy as np

    return array.real if np.iscomplexobj(array) else array


#: the options that set a spec's table size and dtype, and the names a spec might give them by (issue 30)
_SIZE_OPTIONS = {"dim": "--d", "d": "--d", "length": "--len", "len": "--len", "dtype": "--dtype"}


def _size_in_spec(text: str, given: dict[str, Any]) -> None:
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


def _last_query_rows(out: Output, array: Any, label: str, rows: int, side: str) -> tuple[Any, str]:
    """``array``'s last ``rows`` query rows, where it is a per-head bias (heads, k, k) and the other side holds
    fewer query rows than keys (an engine's bias while decoding: the last q queries over k keys), with a note;
    else ``array`` as it is."""
    if array.ndim != 3 or not rows < array.shape[1] == array.shape[2]:
        return array, label
    keys = array.shape[2]
    out.note(f"{label}: {side.upper()}'s query rows {keys - rows}..{keys - 1} of the {keys} x {keys} biases "
             f"(the other side holds the last {rows} query rows of each head)")  # fmt: skip
    return array[:, keys - rows :, :], f"{label} [query rows {keys - rows}–{keys - 1} of each head]"


def _per_head(array: Any) -> bool:
    """Whether ``array`` is a per-head table (heads, L, L') that compare keeps 3-D (ALiBi's biases)."""
    return array.ndim == 3 and 1 not in array.shape[:2] and 0 not in array.shape


def _with_heads(spec: Any, heads: int) -> Any:
    """``spec`` with its scheme's ``heads`` set to the other side's head count, when it takes heads and has none."""
    from dataclasses import replace

    from pecli.schemes.catalog import find_scheme

    scheme = find_scheme(spec.scheme)
    if scheme is None or "heads" not in scheme.defaults or spec.params.get("heads") is not None:
        return spec
    return replace(spec, params={**spec.params, "heads": heads})


def _other_side(side: int, loaded: list[Any], pairs: list[Any]) -> tuple[int | None, str]:
    """The other side's rows and the dtype it was rounded to (its file's record, else what its values show)."""
    other = loaded[1 - side]
    if other is None:
        return None, "float32"
    rows = (other if pairs[1 - side] is None else pairs[1 - side][0]).array.shape[0]
    return rows, _rounded_dtype(other)


def _rounded_dtype(table: Any) -> str:
    """The dtype ``table`` was rounded to: its file's record, else what its values show (float32 for one pecli
    does not compute in)."""
    from pecli.analysis.compare import value_precision
    from pecli.dtypes import DTYPES

    found = table.metadata.get("dtype") or value_precision(_real(table.array))
    return found if found in DTYPES else "float32"


def _config_query_rows(
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
    other_dtype = _rounded_dtype(other)
    found = spec.query_rows(heads=heads, length=keys, dtype=dtype or other_dtype)
    if found is None:
        return None
    array, table = found
    shown = "".join(f", {name}={value}" for name, value in implied.items())
    label = f"{printable(os.path.basename(os.path.normpath(text)))} [{table.scheme}, query 0 of each head{shown}]"
    return InputTable(array, label, table.metadata(), text), Reference(table.scheme, dict(table.params))


def _load_config_side(
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

    rows, other_dtype = _other_side(side, loaded, pairs)
    other = loaded[1 - side]
    #: a per-head file (heads, q, k): the config's (heads, k, k) biases, its last q query rows compared
    query_rows = other.array.shape[1] if other is not None and _per_head(other.array) else None
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
            loaded[side] = _side_by_side(*parts)
            other = loaded[1 - side]
            if other is not None and pairs[1 - side] is None:  # the other side one table: an engine's cache?
                one_part = f"--key-{'ab'[side]} cos"
                cache = _engine_cache(out, other, parts[0].array, parts[1].array, as_one_part=one_part)
                loaded[1 - side] = cache or other
            if parts[0].scheme is not None:
                references[side] = _parts_reference(parts[0].scheme, params, ["cos", "sin"])
            return
    elif pairs[1 - side] is not None:  # the other side's tensor of the part the key names
        loaded[1 - side] = dict(zip(("cos", "sin"), pairs[1 - side], strict=True)).get(key, loaded[1 - side])
    table = load_input(out, text, key=key, length=rows, dtype=table_dtype, layer_type=layer_type)
    if query_rows is not None and _per_head(table.array):  # per-head biases stay 3-D, as the file's
        table.array, table.label = _last_query_rows(out, table.array, table.label, query_rows, "ab"[side])
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


def _engine_cache(out: Output, table: Any, cos: Any, sin: Any, *, as_one_part: str) -> Any:
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


def _parts_reference(scheme: str, params: Any, parts: list[str]) -> Any:
    """The reference of a table that holds its scheme's ``parts`` side by side (RoPE's cos, then its sin)."""
    from pecli.analysis.compare import Reference

    return Reference(scheme, {name: value for name, value in params.items() if name != "part"}, parts=tuple(parts))


def _side_by_side(cos: Any, sin: Any) -> Any:
    """A RoPE pair as one table: its cos columns, then its sin columns."""
    import numpy as np

    from pecli.cli.inputs import InputTable, pair_label

    array = np.hstack([cos.array, sin.array])
    return InputTable(array, pair_label(cos, sin), cos.metadata, cos.source, dtype=cos.dtype)


#: float64 tables a comparison with a spec holds at once (both sides, their difference, a variant)
_WORKING_COPIES = 4
#: two files whose tables together pass this in float64 are compared in row chunks, never loaded whole
STREAM_BYTES = 1 << 30
#: the same for per-head (heads, L, L') tables, compared head by head: the loading path holds about 12 copies
STREAM_HEAD_BYTES = 1 << 26
#: rows of each table held at once while streaming (float64 bytes of one chunk)
_STREAM_CHUNK_BYTES = 8 << 20
#: a streamed disagreement is diagnosed on this many leading rows
_STREAM_DIAGNOSE_ROWS = 4096
#: a streamed per-head disagreement is diagnosed on the first rows of each head, this many values in all
_STREAM_DIAGNOSE_HEAD_VALUES = 1 << 20


@dataclass
class _StreamedTable:
    """A side of a streamed comparison: the file's rows, read chunk by chunk (a per-head table's heads stacked)."""

    rows: Any  # pecli.io.rows.RowReader, or _SpecRows: shape, tensor_shape, heads, dtype and chunks(step)
    label: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.rows.tensor_shape)

    @property
    def dtype(self) -> str:
        return self.rows.dtype


def _streams(shape: tuple[int, ...]) -> bool:
    """Whether two tables of ``shape`` (2-D, or per-head 3-D) are large enough to compare chunk by chunk."""
    import math

    return 2 * 8 * math.prod(shape) >= (STREAM_HEAD_BYTES if len(shape) == 3 else STREAM_BYTES)


def _large_files(texts: list[str], keys: tuple[str | None, str | None]) -> list[_StreamedTable] | None:
    """Both tables as row readers when both are large .npy/.safetensors files of one shape (2-D, or per-head
    (heads, L, L') read head by head), else None."""
    import os

    from pecli.io.rows import open_rows
    from pecli.sources import kind_of_source

    if len(texts) != 2 or not all(kind_of_source(text).name == "file" for text in texts):
        return None
    opened = [open_rows(text, key, heads=True) for text, key in zip(texts, keys, strict=True)]
    readers = [reader for reader in opened if reader is not None]
    if len(readers) != 2 or readers[0].tensor_shape != readers[1].tensor_shape:
        return None
    if not _streams(readers[0].tensor_shape):
        return None
    labels = [printable(os.path.basename(text)) for text in texts]  # names from the filesystem: escaped
    return [_StreamedTable(reader, label) for reader, label in zip(readers, labels, strict=True)]


class _SpecRows:
    """A scheme spec's table computed block by block of rows, as :class:`~pecli.io.rows.RowReader` reads a file;
    a per-head (heads, L, L') table as its heads' rows stacked, computed a block of one head's rows at a time."""

    def __init__(self, table: Any) -> None:
        import math

        self.table = table
        self.tensor_shape: tuple[int, ...] = tuple(int(n) for n in table.shape)
        self.heads: int | None = self.tensor_shape[0] if len(self.tensor_shape) == 3 else None
        self.shape: tuple[int, int] = (math.prod(self.tensor_shape[:-1]), self.tensor_shape[-1])
        self.dtype: str = table.dtype
        self._head: tuple[int, Any] | None = None  # a scheme without ``head``: the last head computed whole

    def chunks(self, step: int, *, reuse: bool = False) -> Any:
        """The rows, ``step`` at a time, each computed afresh (``reuse``: as a file's, which the caller allows)."""
        import numpy as np

        for start in range(0, self.shape[0], step):
            stop = min(start + step, self.shape[0])
            if self.heads is None:
                yield self.table.rows(range(start, stop))
                continue
            per_head, pieces = self.tensor_shape[1], []
            for head in range(start // per_head, (stop - 1) // per_head + 1):
                first, last = max(start - head * per_head, 0), min(stop - head * per_head, per_head)
                pieces.append(self._head_rows(head, range(first, last)))
            yield pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def _head_rows(self, head: int, rows: range) -> Any:
        """Rows ``rows`` of head ``head``: the scheme computes one head's rows when it takes ``head`` (ALiBi)."""
        from dataclasses import replace

        if "head" in self.table.params:
            return replace(self.table, params={**self.table.params, "head": head}).rows(rows)
        if self._head is None or self._head[0] != head:
            self._head = head, self.table.rows(range(head, head + 1))[0]
        return self._head[1][rows.start : rows.stop]


def _large_file_and_spec(
    texts: list[str],
    keys: tuple[str | None, str | None],
    key_given: tuple[str | None, str | None],
    *,
    d: int | None,
    length: int | None,
    dtype: str | None,
) -> tuple[list[_StreamedTable], Any, int] | None:
    """A large .npy/.safetensors file's table and a spec's table of its shape, both read block by block of rows
    (a per-head (heads, L, L') file against a per-head spec such as alibi: head by head), with the spec's
    scheme and parameters (for the diagnosis) and its side; None when either cannot stream."""
    import os

    from pecli.analysis.compare import Reference, value_precision_of_chunks
    from pecli.dtypes import DTYPES
    from pecli.io import read_tensors
    from pecli.io.rows import open_rows
    from pecli.schemes.specs import looks_like_spec, parse_spec
    from pecli.sources import kind_of_source

    if len(texts) != 2:
        return None
    is_spec = [looks_like_spec(text) for text in texts]
    if sum(is_spec) != 1:
        return None
    side = is_spec.index(True)
    path, file_key = texts[1 - side], keys[1 - side]
    if key_given[side] is not None or kind_of_source(path).name != "file":
        return None  # a key for the spec is refused on the loading path, with its message
    reader = open_rows(path, file_key, heads=True)
    if reader is None or (file_key is None and len(read_tensors(path)[0]) != 1):
        return None  # a pair of tensors (RoPE's cos and sin) is compared side by side on the loading path
    spec = parse_spec(texts[side])
    if reader.heads is not None:  # a per-head spec: heads and length from the file, as the loading path takes them
        shape: tuple[int, ...] = reader.tensor_shape
        spec, spec_length, spec_dim = _with_heads(spec, reader.heads), shape[2] if length is None else length, d
    else:
        rows, cols = reader.shape
        shape = (rows if length is None else length, cols if d is None else d)
        spec_length, spec_dim = shape
    if shape != reader.tensor_shape or not _streams(shape):
        return None
    step = max(64, _STREAM_CHUNK_BYTES // (8 * reader.shape[1]))
    other_dtype = reader.metadata.get("dtype") or value_precision_of_chunks(reader.chunks(step, reuse=True))
    other_dtype = other_dtype if other_dtype in DTYPES else "float32"
    table = spec.table(length=spec_length, dim=spec_dim, dtype=dtype or other_dtype)
    parts = table.parts()
    if len(parts) != 1 or tuple(parts[0].shape) != shape:
        return None
    pair = [_StreamedTable(reader, printable(os.path.basename(path))), _StreamedTable(_SpecRows(parts[0]), spec.text)]
    if side == 0:
        pair.reverse()
    return pair, Reference(table.scheme, dict(table.params)), side


def _first_rows(table: _StreamedTable, key: str | None) -> dict[str, Any] | None:
    """A streamed file's first rows, as many as :func:`pecli.analysis.readings.read_table` reads, and its record;
    a per-head table whole when it is read at all (else None)."""
    import numpy as np

    from pecli.analysis.readings import readable, rows_to_read

    reader = table.rows
    if reader.heads is None:
        rows = rows_to_read(*reader.shape)
        values = np.array(next(iter(reader.chunks(rows)))[:rows])
    elif readable(reader.tensor_shape):
        values = np.concatenate(list(reader.chunks(reader.shape[0]))).reshape(reader.tensor_shape)
    else:
        return None
    return {
        "values": values,
        "metadata": reader.metadata,
        "dtype": reader.dtype,
        "key": key,
        "total_rows": len(values) if reader.heads is not None else reader.shape[0],
    }


def _compare_streamed(first: _StreamedTable, second: _StreamedTable, **tolerances: Any) -> Any:
    from pecli.analysis.compare import DIAGNOSE_VALUES, compare_row_chunks

    heads, cols = first.rows.heads, first.rows.shape[1]
    step = max(1, _STREAM_CHUNK_BYTES // (8 * cols))
    # a per-head table: the first rows of each head, enough to fit each head's slope and name its formula
    # a wide table: as many rows as compare_tables diagnoses of a loaded one (72 × 10^6 diagnosed whole took 3.5 GB)
    wide_rows = max(2, DIAGNOSE_VALUES // cols)
    diagnose_rows = (
        min(_STREAM_DIAGNOSE_ROWS, wide_rows)
        if heads is None
        else max(1, _STREAM_DIAGNOSE_HEAD_VALUES // (heads * cols))
    )
    return compare_row_chunks(
        lambda: zip(first.rows.chunks(step, reuse=True), second.rows.chunks(step, reuse=True), strict=True),
        diagnose_rows=diagnose_rows,
        heads=heads,
        **tolerances,
    )


def _source_kind(text: str) -> str:
    """What reads ``text``: file, stdin, config, model-id, scheme (:func:`pecli.sources.kind_of_source`)."""
    from pecli.sources import kind_of_source

    return kind_of_source(text).name


def _shape_and_dtype(table: Any) -> tuple[tuple[int, ...], str]:
    if isinstance(table, _StreamedTable):
        return table.shape, table.dtype
    return table.array.shape, table.dtype_name  # as stored: a bfloat16 file is bfloat16, not its float32 values


def _property_report(out: Output, texts: list[str], *, dim: int | None, length: int | None) -> None:
    from pecli.analysis.properties import check_properties
    from pecli.cli.common import check_sizes_positive
    from pecli.schemes.specs import looks_like_spec, parse_spec

    check_sizes_positive(length, dim)
    if not texts:
        raise ParameterError("--properties needs at least one scheme", hint="e.g. --properties sinusoidal count")
    specs = []
    for text in texts:
        if not looks_like_spec(text):
            raise ParameterError(
                f"--properties measures schemes, but {text!r} is a file", hint="give scheme names or specs"
            )
        specs.append(parse_spec(text))
    from pecli.cli.relative_compare import relative_checks
    from pecli.schemes import get_scheme

    shown_dim = PROPERTY_DIM if dim is None else dim  # the report's heading: what was given, else the defaults
    shown_length = PROPERTY_LEN if length is None else length
    reports = []
    for spec in specs:
        table = _property_table(spec, length, dim)
        checks = relative_checks(spec.text, length=table.length, dim=table.dim)
        if checks is None and not get_scheme(table.scheme).takes_dim:
            raise ParameterError(
                f"--properties measures position vectors and the scores of rope and alibi; {spec.text!r} is a "
                "table over query and key positions",
                hint=f"drop {spec.text} from --properties",
            )
        other_size = table.length != shown_length or table.dim not in (None, shown_dim)  # a grid's tokens: say so
        shown = f"{spec.text} ({table.length} × {table.dim})" if other_size else spec.text
        if checks is None:
            with spec.blaming():  # rope2d's parts: "pick one with part=cos|sin|angle", as the spec writes it
                checks = check_properties(table)
        reports.append((shown, checks))
    from pecli.analysis.properties import PropertyReport

    out.show(PropertyReport(shown_dim, shown_length, reports))


def _property_table(spec: Any, length: int | None, dim: int | None) -> Any:
    """``spec``'s table at the sizes --properties measures: --len and --d where given; else what the spec
    sets itself (a grid's tokens; a bias has no dimension), else :data:`PROPERTY_LEN` and :data:`PROPERTY_DIM`.
    A size the user did not give is never blamed: its default is tried only after the spec's own."""
    from pecli.errors import names_a_parameter

    # a bias over query and key positions (alibi) has no dimension: a given --d is for the others listed
    takes_dim = spec.resolved()[0].takes_dim
    lengths = [length] if length is not None else [None, PROPERTY_LEN]
    dims = [None] if not takes_dim else [dim] if dim is not None else [None, PROPERTY_DIM]
    defaulted = [name for name, sizes in (("length", lengths), ("dim", dims)) if len(sizes) > 1]
    tries = [(l_, d_) for l_ in lengths for d_ in dims]
    for number, (try_length, try_dim) in enumerate(tries, start=1):
        try:
            return spec.table(length=try_length, dim=try_dim, dtype="float64")
        except ParameterError as error:
            if not names_a_parameter(error._templates[0], defaulted):
                raise
            if number == len(tries):  # the defaults do not suit it either: say they were defaults
                sizes = " and ".join(f"{{{name}}} {PROPERTY_LEN if name == 'length' else PROPERTY_DIM}"
                                     for name in defaulted)  # fmt: skip
                message, hint = error._templates
                raise ParameterError(f"at the default {sizes} of --properties: {message}", hint=hint) from None
    raise AssertionError("unreachable")  # the last try returns or raises


def _check_figure_path(path: str) -> None:
    import os

    from pecli.io import check_output_path

    if os.path.splitext(path)[1].lower() not in (".png", ".svg", ".pdf"):
        raise ParameterError(f"compare draws a figure; {path!r} is not .png, .svg or .pdf", hint="e.g. -o diff.png")
    check_output_path(path)


def _save_difference_figure(path: str, first: Any, second: Any) -> None:
    """A, B and A − B: the one rendering step of compare (:func:`pecli.render.charts.save_difference`)."""
    import math

    from pecli.render.charts import MOST_DIFFERENCE_ROWS, save_difference

    shape = first.shape if isinstance(first, _StreamedTable) else first.array.shape
    if len(shape) > 2 and math.prod(shape[:-2]) > MOST_DIFFERENCE_ROWS:
        raise ParameterError(
            f"-o draws one row of panels per head, at most {MOST_DIFFERENCE_ROWS}; the tables hold "
            f"{math.prod(shape[:-2])} of {shape[-2]} × {shape[-1]}",
            hint="compare them without -o, or write fewer heads",
        )
    if isinstance(first, _StreamedTable):  # block means summed chunk by chunk: never both tables whole
        from pecli.render.charts import save_difference_chunks

        step = max(1, _STREAM_CHUNK_BYTES // (8 * first.rows.shape[1]))

        def pairs() -> Any:
            return zip(first.rows.chunks(step, reuse=True), second.rows.chunks(step, reuse=True), strict=True)

        save_difference_chunks(pairs, shape, path, labels=(first.label, second.label))
        return
    a, b = first.array, second.array
    if a.ndim == 2 and 1 not in a.shape and a.size > _FIGURE_WHOLE_VALUES:  # drawn from float64 row chunks
        from pecli.render.charts import save_difference_chunks

        step = max(1, _STREAM_CHUNK_BYTES // (8 * a.shape[1]))
        save_difference_chunks(
            lambda: ((a[start : start + step], b[start : start + step]) for start in range(0, len(a), step)),
            a.shape, path, labels=(first.label, second.label),
        )  # fmt: skip
        return
    save_difference(a, b, path, labels=(first.label, second.label))


#: a loaded 2-D table of more values is drawn from row chunks: its float64 A, B and A − B whole were 1.5 GB at 64 × 10^6
_FIGURE_WHOLE_VALUES = 1 << 22
