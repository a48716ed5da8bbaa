"""A RoPE model's config → pecli's ``rope`` parameters, as transformers 5's ``modeling_rope_utils.py`` reads it.

``rope_parameters`` (transformers 5), or the older ``rope_theta`` + ``rope_scaling``; every
``rope_type`` maps to pecli's ``scaling`` with the parameters its rotary module uses. A rope_type or
option the registry cannot compute yet is a one-line :class:`~pecli.errors.ParameterError`.

>>> encoding = rope_encoding({"hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 4096,
...     "rope_theta": 10000.0, "rope_scaling": {"type": "linear", "factor": 4.0}}, "llama")
>>> encoding.params["scaling"], encoding.params["factor"], encoding.dim
('linear', 4.0, 32)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pecli.errors import NoLayerTypes, ParameterError, did_you_mean
from pecli.models.class_defaults import (
    CLASS_ORIGINAL_CONTEXT,
    HEAD_DIM_IS_HIDDEN_OVER_HEADS,
    HEAD_DIM_IS_QK_ROPE,
    HEAD_DIM_KEYS,
    HEADS_KEYS,
    HIDDEN_KEYS,
    LENGTH_KEYS,
    with_class_defaults,
)
from pecli.models.encoding import ModelEncoding, config_int, config_number, config_value
from pecli.models.gguf import GGUF_KEYS
from pecli.models.rope_family import check_mrope_section, pairing, rope_type_of
from pecli.models.rope_layers import (
    TYPES_WITHOUT_ROPE,
    check_layer_count,
    class_layer_rope,
    flat_rope_note,
    layer_config,
    layer_type_names,
    modernbert_layers,
    nested_settings,
    unread_rope_keys,
    with_layers,
)
from pecli.models.rope_settings import IMPLICIT_ROPE, ROTARY_EMBEDDING_TYPES, rope_settings
from pecli.models.transformers_families import (
    CLASS_DEFAULTS,
    IGNORES_PARTIAL,
    TRANSFORMERS_VERSION,
)
from pecli.text import literal, literal_repr

__all__ = ["ROPE_TYPE_SCALING", "config_head_dim", "has_rope", "rope_encoding"]

#: transformers' rope_type -> pecli's scaling (tool_settings writes it back the other way)
ROPE_TYPE_SCALING = {
    "default": "none",
    "linear": "linear",
    "dynamic": "dynamic",
    "yarn": "yarn",
    "longrope": "longrope",
    "llama3": "llama3",
    "proportional": "proportional",
}

#: config keys whose pecli parameter has another name
_PARAMETER_OF = {"rope_theta": "base", "original_max_position_embeddings": "original_max_position"}


def has_rope(config: Mapping[str, Any], model_type: str) -> bool:
    """Whether ``config`` carries RoPE settings pecli reads (any spelling of them).

    >>> has_rope({"rotary_emb_base": 10000}, "nomic_bert"), has_rope({"hidden_size": 8}, "bert")
    (True, False)
    """
    keys = ("rope_parameters", "rope_theta", "rope_scaling", "rotary_emb_base", "rotary_pct", "rotary_emb_fraction")
    return (
        any(config.get(key) is not None for key in keys)
        or model_type in IMPLICIT_ROPE
        or model_type in ("modernbert", "modernbert-decoder")
        or config.get("position_embedding_type") in ROTARY_EMBEDDING_TYPES
    )


#: what a family's table leaves out, as transformers 5.23 runs it: one note with every description of the config
FAMILY_NOTES = {
    # MistralLarge4TextRotaryEmbedding.forward: inv_freq * alpha.exp(), alpha a buffer loaded with the weights
    **dict.fromkeys(
        ("mistral_large4", "mistral_large4_text"),
        "the table assumes the learned alpha is 0: the model multiplies its rotary frequencies by exp(alpha), "
        "a buffer (rotary_emb.alpha) loaded with the weights, not in config.json",
    ),
    # DeepseekV32Indexer calls apply_rotary_pos_emb (rotate_half); the MLA attention apply_rotary_pos_emb_interleave
    "deepseek_v32": "the table is the main attention's (adjacent pairs); the sparse-attention indexer rotates the "
    "same angles as halves (rotate_half)",
}


def rope_encoding(config: Mapping[str, Any], model_type: str, *, layer_type: str | None = None) -> ModelEncoding:
    """The ``rope`` scheme, parameters and sizes of a RoPE model's ``config``, with each value's config key.

    ``rope_parameters`` keyed by layer type (Gemma 3's ``sliding_attention``/``full_attention``) need
    ``layer_type`` unless every layer type has the same settings; the encoding of each layer type is in
    :attr:`~pecli.models.encoding.ModelEncoding.layers` when they differ and none is picked.
    """
    config, layers_filled = class_layer_rope(modernbert_layers(config, model_type), model_type)
    config, filled = with_class_defaults(config, model_type)
    filled = (*layers_filled, *filled)
    encoding = _rope_encoding(config, model_type, layer_type)
    family = (FAMILY_NOTES[model_type],) if model_type in FAMILY_NOTES else ()
    if filled or family:
        encoding = replace(encoding, notes=(*filled, *encoding.notes, *family))
    return encoding


def _rope_encoding(config: Mapping[str, Any], model_type: str, layer_type: str | None) -> ModelEncoding:
    layer_types = layer_type_names(config)  # checked first, whatever the layer type asked for
    check_layer_count(config)
    nested = nested_settings(config)
    if nested is None:
        if layer_type is not None and not layer_types:
            raise NoLayerTypes(
                "config.json has one set of rope parameters for every layer, so no layer type "
                f"{literal_repr(layer_type)}",
                hint="drop {layer_type}",
            )
        if layer_type is not None and layer_type not in layer_types:
            shown = config_value(layer_type)
            raise ParameterError(
                f"config.json has no layer type {shown} in layer_types", hint=did_you_mean(shown, layer_types)
            )
        if layer_type is not None and layer_type in TYPES_WITHOUT_ROPE:
            raise ParameterError(
                f"config.json: layers of type {literal_repr(layer_type)} have no positional encoding, so no rope table",
                hint=did_you_mean("", [name for name in layer_types if name not in TYPES_WITHOUT_ROPE]),
            )
        encoding = _one_encoding(config, model_type, *rope_settings(config))
        unread = flat_rope_note(config)
        return with_layers(replace(encoding, notes=(*encoding.notes, unread)) if unread else encoding, config)
    unread = unread_rope_keys(config)
    encodings = {
        name: _one_encoding(layer_config(config, name), model_type, *settings, nested=True)
        for name, settings in nested.items()
    }
    if unread:
        encodings = {name: replace(e, notes=(*e.notes, unread)) for name, e in encodings.items()}
    names = list(encodings)
    if layer_type is not None:
        if layer_type not in encodings:
            shown = config_value(layer_type)
            if layer_type in (config.get("rope_parameters") or {}) and layer_type not in layer_types:
                raise ParameterError(
                    f"config.json: rope_parameters has {shown}, but no layer of that type in layer_types, "
                    "so transformers reads no rope parameters for it",
                    hint=did_you_mean(shown, names),
                )
            raise ParameterError(
                f"config.json has no layer type {shown} in rope_parameters", hint=did_you_mean(shown, names)
            )
        chosen = encodings[layer_type]
        return with_layers(replace(chosen, layer_type=layer_type), config)
    if not names:
        raise ParameterError(
            "config.json: rope_parameters gives every layer type null, so no layer has rotary position embeddings",
            hint="give a layer type its rope parameters, or read the model as one without positional encoding",
        )
    first = encodings[names[0]]
    if all(e.params == first.params and e.dim == first.dim for e in encodings.values()):
        note = f"every layer type ({', '.join(names)}) has the same rope parameters"
        return with_layers(replace(first, notes=(*first.notes, note)), config)
    return with_layers(replace(first, layers=tuple(encodings.items())), config)


def _one_encoding(
    config: Mapping[str, Any], model_type: str, found: dict[str, Any], where: dict[str, str], *, nested: bool = False
) -> ModelEncoding:
    """The encoding of one set of rope parameters ``found`` (each one's key in ``where``); ``nested``: one layer
    type's, from ``rope_parameters`` keyed by layer type."""
    notes: list[str] = []
    if nested and "truncate" in found:
        # transformers' yarn reads config.rope_parameters.get("truncate", True): the outer dict, keyed by layer type
        notes.append(f"{where.get('truncate', 'truncate')} is not read for a layer type: yarn truncates")
        found = {key: value for key, value in found.items() if key != "truncate"}
    # a GGUF file's settings are llama.cpp's, read as they are: no transformers config class rewrites them
    config_class = "" if GGUF_KEYS in config else model_type
    rope_type = rope_type_of(found, where, config_class)
    length_key = next((key for key in LENGTH_KEYS if config.get(key) is not None), "max_position_embeddings")
    # with no context in the config (transformers takes its config class's default, LlamaConfig's 2048), a
    # rope type whose frequencies do not depend on it is still a table: its length is the caller's to give
    reads_context = (
        rope_type == "dynamic"
        or (
            rope_type in ("llama3", "yarn", "longrope")
            and config.get("original_max_position_embeddings") is None
            and found.get("original_max_position_embeddings") is None
        )
        or (rope_type in ("yarn", "longrope") and found.get("factor") is None)
    )
    length: int | None = None
    class_context = CLASS_DEFAULTS.get(config_class, {}).get("max_position_embeddings")
    if reads_context and config.get(length_key) is None and class_context is not None:
        # transformers reads its config class's default context (LlamaConfig's 2048)
        config = {**config, length_key: class_context}
        notes.append(f"{length_key} not given: {model_type}'s default {class_context!r}, read by {rope_type!r}")
    if config.get(length_key) is not None or reads_context:
        if config.get(length_key) is None:
            raise ParameterError(
                f"config.json has no max_position_embeddings, which its rope_type {literal_repr(rope_type)} reads",
                hint="add max_position_embeddings (the model's context) to the config",
            )
        length = config_int(config, length_key)
    if rope_type in ("llama3", "yarn", "longrope"):
        # transformers' standardize_rope_params: for one set of parameters (not per layer type) the config
        # object's original_max_position_embeddings wins, the config's own or its class's default (Phi-3's 4096)
        top, top_key = config.get("original_max_position_embeddings"), "original_max_position_embeddings"
        if top is None and config_class in CLASS_ORIGINAL_CONTEXT:
            top = CLASS_ORIGINAL_CONTEXT[model_type]
            top_key = f"original_max_position_embeddings (the {model_type} config's default {top})"
        if top is not None and not nested:
            found["original_max_position_embeddings"] = top
            where["original_max_position_embeddings"] = top_key
        elif "original_max_position_embeddings" not in found:
            found["original_max_position_embeddings"] = length
            where["original_max_position_embeddings"] = length_key
    head_dim, head_dim_key = config_head_dim(config)
    partial = _number(found, where, "partial_rotary_factor", 1.0)
    if not 0 < partial <= 1:
        key = literal(where.get("partial_rotary_factor", "partial_rotary_factor"))  # in a template
        raise ParameterError(f"config.json: {key}: expected a number in (0, 1], got {literal_repr(partial)}")
    partial_key = where.get("partial_rotary_factor", "partial_rotary_factor")
    remote_code = config.get("auto_map") is not None or partial_key in ("rotary_emb_fraction", "rotary_pct")
    if partial != 1.0 and rope_type == "default" and config_class in IGNORES_PARTIAL and not remote_code:
        # the family's compute_default_rope_parameters reads head_dim only: the whole head is rotated (a
        # remote-code config, auto_map or nomic-bert's rotary_emb_fraction, runs its own code: read as given)
        notes.append(
            f"{partial_key} = {partial!r} is not read by "
            f"{model_type}'s default rope (transformers {TRANSFORMERS_VERSION}): the full head_dim is rotated"
        )
        partial = 1.0
    # the rotary module's cos and sin cover the rotated columns only: int(head_dim · partial_rotary_factor)
    dim = head_dim if rope_type == "proportional" else int(head_dim * partial)
    # the keys in messages (templates): a layer type from the config may hold braces
    dim_field = literal(head_dim_key[0] + (f" × {where['partial_rotary_factor']}" if partial != 1.0 else ""))
    rotary_key = next((key for key in ("rotary_dim",) if config.get(key) is not None), None)
    if rotary_key is not None and rope_type != "proportional":
        rotary = config_int(config, rotary_key)
        if partial != 1.0 and rotary != dim:
            raise ParameterError(
                f"config.json: {rotary_key} = {rotary} contradicts {dim_field} = {head_dim_key[1]} "
                f"× {literal_repr(partial)}"
                f" = {dim} rotary columns",
                hint=f"keep one of {rotary_key} and {literal(where['partial_rotary_factor'])}",
            )
        if rotary > head_dim and head_dim_key[0] != "rotary_dim":
            raise ParameterError(
                f"config.json: {rotary_key} = {rotary} is wider than the head ({head_dim_key[0]} = {head_dim_key[1]})"
            )
        dim, dim_field = rotary, rotary_key
    if dim < 2:
        source = f"{head_dim_key[0]} = {head_dim_key[1]}" + (f" × {partial!r}" if partial != 1.0 else "")
        raise ParameterError(f"config.json: {source} leaves {dim} rotary columns", hint="rotary needs at least 2")
    odd_width = None
    if dim % 2:  # transformers: ⌈dim/2⌉ frequencies over dim, cat(freqs, freqs) = dim + 1 cos/sin columns
        if dim + 1 > head_dim:
            raise ParameterError(
                f"config.json: {dim_field} gives {dim} rotary columns, an odd width: transformers computes "
                f"{(dim + 1) // 2} frequencies over {dim} and writes {dim + 1} cos/sin columns, but the head has "
                f"{head_dim}, so the model cannot apply them (apply_rotary_pos_emb fails: {head_dim} vs {dim + 1})",
                hint="a model runs with an even head_dim, or a partial rotary width below it",
            )
        odd_width, dim = dim, dim + 1
    check_mrope_section(found, where, model_type, dim // 2)
    layout, layout_note = pairing(config, model_type)
    if layout_note:
        notes.append(layout_note)
    params: dict[str, Any] = {"base": _number(found, where, "rope_theta", 10000.0), "layout": layout}
    scaling, used = _scaling_parameters(rope_type, found, where, length, odd_width or dim)
    params.update(scaling)
    if rope_type == "llama3" and params["high_freq_factor"] <= params["low_freq_factor"]:
        # transformers only warns here and computes a step (no blend band) at original/low_freq_factor; pecli's
        # rope takes no such pair from any caller yet, so the config's table is refused, saying why
        high, low = (literal(where.get(key, key)) for key in ("high_freq_factor", "low_freq_factor"))
        step = params["original_max_position"] / params["low_freq_factor"]
        raise ParameterError(
            f"config.json: {high} = {literal_repr(params['high_freq_factor'])} is not greater than {low} = "
            f"{literal_repr(params['low_freq_factor'])}: transformers warns and divides every "
            f"wavelength above {step:g} "
            "positions by factor, with no blend; pecli does not compute that table yet",
            hint=f"Llama 3.1's are {high} = 4, {low} = 1",
        )
    if odd_width is not None:
        params["rotary_dim"] = odd_width
    if rope_type == "proportional":
        params["partial_rotary_factor"] = partial
    provenance: dict[str, tuple[str, Any]] = {"length": (length_key, length), "dim": head_dim_key}
    if rotary_key is not None and dim_field == rotary_key:
        provenance["dim"] = (rotary_key, dim)
    used = ["rope_theta", *(["partial_rotary_factor"] if partial != 1.0 else []), *used]
    provenance.update({key: (where[key], found[key]) for key in used if key in found and key in where})
    _check_supported(rope_type, params)
    fields = {_PARAMETER_OF.get(key, key): where.get(key, key) for key in used if key in where}
    fields.update(dim=dim_field, length=length_key)
    if rope_type == "dynamic":  # its original context is max_position_embeddings
        fields["original_max_position"] = length_key
    if odd_width is not None:
        fields["rotary_dim"] = dim_field
    if rope_type == "proportional":
        fields["partial_rotary_factor"] = where.get("partial_rotary_factor", "partial_rotary_factor")
    notes.extend(_remote_code_notes(where))
    return ModelEncoding(
        model_type, "rope", params, length=length, dim=dim, provenance=provenance, fields=fields, notes=tuple(notes)
    )


def _remote_code_notes(where: Mapping[str, str]) -> list[str]:
    """Which convention pecli assumed for keys of remote-code models (nomic-bert and GPT-NeoX spellings)."""
    assumed = {
        "rotary_emb_base": "rotary_emb_base read as rope_theta",
        "rotary_emb_fraction": "rotary_emb_fraction read as partial_rotary_factor (nomic-bert's convention)",
        "rotary_pct": "rotary_pct read as partial_rotary_factor (GPT-NeoX's convention)",
        "rotary_scaling_factor": "rotary_scaling_factor read as dynamic NTK scaling (nomic-bert's convention)",
        "position_embedding_type": "position_embedding_type 'rope' read with transformers' defaults (base 10000)",
    }
    return [text for key, text in assumed.items() if key in where.values()]


def _scaling_parameters(
    rope_type: str, found: Mapping[str, Any], where: Mapping[str, str], length: int | None, dim: int
) -> tuple[dict[str, Any], list[str]]:
    """pecli's scaling parameters for ``rope_type`` (as its ``_compute_*_parameters`` reads them), and the keys used."""
    params: dict[str, Any] = {} if rope_type == "default" else {"scaling": ROPE_TYPE_SCALING[rope_type]}
    used: list[str] = []

    def take(key: str, default: float | None = None) -> None:
        params[key] = _number(found, where, key, default)
        used.append(key)

    if rope_type in ("linear", "dynamic", "llama3", "proportional"):
        take("factor", default=1.0 if rope_type == "proportional" else None)
    if rope_type == "dynamic":
        # _compute_dynamic_ntk_parameters: the original context is config.max_position_embeddings
        params["original_max_position"] = length
    if rope_type in ("yarn", "longrope", "llama3"):
        key = "original_max_position_embeddings"
        params["original_max_position"] = config_int(found, key, name=where.get(key, key))
        used.append("original_max_position_embeddings")
    if rope_type == "llama3":
        take("low_freq_factor")
        take("high_freq_factor")
    if rope_type in ("yarn", "longrope"):
        # DeepSeek-V3 and Phi-3 leave factor out: max_position_embeddings / original_max_position_embeddings
        take("factor", default=None if length is None else length / params["original_max_position"])
        params["apply_attention_factor"] = True
        if found.get("attention_factor") is not None:
            take("attention_factor")
    if rope_type == "yarn":
        params.update(beta_fast=32.0, beta_slow=1.0)  # transformers reads `beta_fast or 32`, `beta_slow or 1`
        for key in ("beta_fast", "beta_slow"):
            value = found.get(key)
            zero = isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0
            if value is not None and not zero:  # any other value not a number ({}, "32") is refused naming it
                take(key)
        if found.get("mscale") and found.get("mscale_all_dim") and "attention_factor" not in params:
            take("mscale")
            take("mscale_all_dim")
        if found.get("truncate") is False:
            params["truncate"] = False
            used.append("truncate")
    if rope_type == "longrope":
        for key in ("short_factor", "long_factor"):
            params[key] = _factor_list(found, where, key, dim)
            used.append(key)
    return params, used


def config_head_dim(config: Mapping[str, Any]) -> tuple[int, tuple[str, Any]]:
    """The width of one attention head, and the config key (or keys) it was read from.

    >>> config_head_dim({"hidden_size": 4096, "num_attention_heads": 32})
    (128, ('hidden_size/num_attention_heads', '4096/32'))
    >>> config_head_dim({"model_type": "deepseek_v2", "head_dim": 16, "qk_rope_head_dim": 64})
    (64, ('qk_rope_head_dim', 64))
    >>> ocr = {"model_type": "deepseek_ocr2_text", "head_dim": 32, "hidden_size": 4096, "num_attention_heads": 32}
    >>> config_head_dim(ocr)
    (128, ('hidden_size/num_attention_heads', '4096/32'))
    """
    keys: tuple[str, ...] = HEAD_DIM_KEYS
    if config.get("model_type") in HEAD_DIM_IS_QK_ROPE and config.get("qk_rope_head_dim") is not None:
        keys = ("qk_rope_head_dim",)  # their config class writes head_dim over with it, whatever the file says
    elif config.get("model_type") in HEAD_DIM_IS_HIDDEN_OVER_HEADS:
        keys = ()  # their config class writes head_dim over with hidden_size // num_attention_heads
    for key in keys:
        if config.get(key) is not None:
            head_dim = config_int(config, key)
            return head_dim, (key, head_dim)
    hidden_key = next((k for k in HIDDEN_KEYS if config.get(k) is not None), "hidden_size")
    heads_key = next((k for k in HEADS_KEYS if config.get(k) is not None), "num_attention_heads")
    hidden, heads = config_int(config, hidden_key), config_int(config, heads_key)
    if hidden < heads:
        raise ParameterError(
            f"config.json: {hidden_key}/{heads_key} = {hidden}/{heads} leaves no column per head",
            hint=f"{hidden_key} must be at least {heads_key}",
        )
    return hidden // heads, (f"{hidden_key}/{heads_key}", f"{hidden}/{heads}")


def _number(found: Mapping[str, Any], where: Mapping[str, str], key: str, default: float | None) -> float:
    value = default if found.get(key) is None else found[key]
    if value is None:
        # named where the config keeps its rope parameters (rope_parameters.full_attention.rope_type, rope_scaling.type)
        type_key = next((k for k in ("rope_type", "type") if k in where), "rope_type")
        type_field = literal(where.get(type_key, type_key))  # in the message (a template): a layer type's braces
        container = type_field.rpartition(".")[0]
        field = f"{container}.{key}" if container else key
        raise ParameterError(
            f"config.json: {type_field} {config_value(found.get(type_key))} needs {field}, which the config lacks",
            hint=f"add {key} to {container or 'the rope parameters'}",
        )
    return config_number(value, where.get(key, key))


def _factor_list(found: Mapping[str, Any], where: Mapping[str, str], key: str, dim: int) -> str:
    """LongRoPE's per-pair divisors as pecli's comma-separated text; their count must be the rotary dim / 2."""
    values = found.get(key)
    name = where.get(key, key)
    if not isinstance(values, list):
        raise ParameterError(f"config.json: {literal(name)}: expected a list of numbers, got {config_value(values)}")
    values = [config_number(value, f"{name}[{index}]", positive=True) for index, value in enumerate(values)]
    if len(values) != dim // 2:
        raise ParameterError(
            f"config.json: {literal(name)} has {len(values)} values, but longrope needs head_dim/2 = {dim // 2}",
            hint="one divisor per rotated pair of columns",
        )
    return ",".join(repr(float(value)) for value in values)


def _check_supported(rope_type: str, params: Mapping[str, Any]) -> None:
    """A ParameterError when the ``rope`` registry entry does not take a scaling or parameter this config needs."""
    from pecli.schemes.catalog import get_scheme

    rope = get_scheme("rope")
    scalings = rope.choices.get("scaling", ())
    missing = [name for name in params if name not in rope.defaults]
    if params.get("scaling", "none") not in scalings or missing:
        with_options = f" with {', '.join(missing)}" if missing and params.get("scaling") in scalings else ""
        supported = ", ".join(rope_type for rope_type, scaling in ROPE_TYPE_SCALING.items() if scaling in scalings)
        raise ParameterError(
            f"rope_type {literal_repr(rope_type)}{with_options} is not supported yet",
            hint=f"pecli computes {supported}",
        )
