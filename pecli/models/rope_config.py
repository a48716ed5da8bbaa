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

from pecli.errors import ParameterError, did_you_mean
from pecli.models.encoding import ModelEncoding, config_int, config_number, config_value, known_rope_type

__all__ = ["ROPE_TYPE_SCALING", "has_rope", "rope_encoding"]

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


#: model types whose attention rotates adjacent pairs of columns (transformers: ``repeat_interleave``,
#: ``rotate_every_two``, a ``rotate_half`` over ``x[..., 0::2]``/``x[..., 1::2]`` as ERNIE 4.5 VL's and
#: GLM-OCR's text models and DeepSeek V4's, or the complex view of (…, d/2, 2) as Llama 4's and DeepSeek V2's
#: ``apply_rotary_emb``): pecli's ``interleaved`` layout
_INTERLEAVED = frozenset(
    {
        "cohere",
        "cohere2",
        "cohere2_moe",
        "llama4",
        "llama4_text",
        "gptj",
        "codegen",
        "deepseek_v2",
        "deepseek_v4",
        "ernie4_5_vl_moe",
        "ernie4_5_vl_moe_text",
        "glm_ocr",
        "glm_ocr_text",
    }
)

#: model types transformers reads without any rope key: (theta default, partial default, rotary width key)
_IMPLICIT_ROPE = {
    "gpt_neox": (10000.0, 0.25, None),
    "gptj": (10000.0, None, "rotary_dim"),
    "codegen": (10000.0, None, "rotary_dim"),
}

#: ``position_embedding_type`` values of remote-code (nomic-bert-style) configs that mean rotary
_ROTARY_EMBEDDING_TYPES = frozenset({"rope", "rotary"})

#: the context, by the keys configs spell it, first found wins
#: (RecurrentGemma's rotary module reads no length at all; its local attention's ``attention_window_size``
#: is the span the table is used over, so it is the default length)
_LENGTH_KEYS = (
    "max_position_embeddings",
    "max_seq_len",
    "n_positions",
    "seq_length",
    "model_max_length",
    "attention_window_size",
)


def has_rope(config: Mapping[str, Any], model_type: str) -> bool:
    """Whether ``config`` carries RoPE settings pecli reads (any spelling of them).

    >>> has_rope({"rotary_emb_base": 10000}, "nomic_bert"), has_rope({"hidden_size": 8}, "bert")
    (True, False)
    """
    keys = ("rope_parameters", "rope_theta", "rope_scaling", "rotary_emb_base", "rotary_pct", "rotary_emb_fraction")
    return (
        any(config.get(key) is not None for key in keys)
        or model_type in _IMPLICIT_ROPE
        or config.get("position_embedding_type") in _ROTARY_EMBEDDING_TYPES
    )


def rope_encoding(config: Mapping[str, Any], model_type: str, *, layer_type: str | None = None) -> ModelEncoding:
    """The ``rope`` scheme, parameters and sizes of a RoPE model's ``config``, with each value's config key.

    ``rope_parameters`` keyed by layer type (Gemma 3's ``sliding_attention``/``full_attention``) need
    ``layer_type`` unless every layer type has the same settings; the encoding of each layer type is in
    :attr:`~pecli.models.encoding.ModelEncoding.layers` when they differ and none is picked.
    """
    layer_types = _layer_type_names(config)  # checked first, whatever the layer type asked for
    nested = _nested_settings(config)
    if nested is None:
        if layer_type is not None and not layer_types:
            raise ParameterError(
                f"config.json has one set of rope parameters for every layer, so no layer type {layer_type!r}",
                hint="drop {layer_type}",
            )
        return _with_layers(_one_encoding(config, model_type, *_rope_settings(config)), config)
    encodings = {
        name: _one_encoding(_layer_config(config, name), model_type, *settings) for name, settings in nested.items()
    }
    names = list(encodings)
    if layer_type is not None:
        if layer_type not in encodings:
            shown = config_value(layer_type)
            raise ParameterError(
                f"config.json has no layer type {shown} in rope_parameters", hint=did_you_mean(shown, names)
            )
        chosen = encodings[layer_type]
        return _with_layers(replace(chosen, layer_type=layer_type), config)
    used = [name for name in names if name in layer_types]
    if used and len(used) < len(names):
        # Laguna and Mellum keep sliding_attention's settings with every layer full: no layer uses them
        unused = [name for name in names if name not in used]
        note = f"rope_parameters.{', '.join(unused)}: no layer of that type in layer_types, so no table"
        encodings = {name: replace(encodings[name], notes=(*encodings[name].notes, note)) for name in used}
        names = used
    first = encodings[names[0]]
    if all(e.params == first.params and e.dim == first.dim for e in encodings.values()):
        note = f"every layer type ({', '.join(names)}) has the same rope parameters"
        return _with_layers(replace(first, notes=(*first.notes, note)), config)
    return _with_layers(replace(first, layers=tuple(encodings.items())), config)


def _layer_config(config: Mapping[str, Any], layer_type: str) -> Mapping[str, Any]:
    """``config`` as the layers of ``layer_type`` see it: with their ``per_layer_config`` overrides.

    transformers' heterogeneous configs (Gemma 4's ``global_head_dim`` is saved as ``head_dim`` 512 for
    each full-attention layer) keep a sparse map from layer index to the keys that differ; the rotary
    init reads ``config.per_layer_config[layer_type]``, the overrides of the layers of that type, which
    must agree. A rope key that is not a layer type (DeepSeek V4's ``main``/``compress``) has none.

    >>> _layer_config({"head_dim": 256, "layer_types": ["sliding", "full"],
    ...     "per_layer_config": {"01": {"head_dim": 512}}}, "full")["head_dim"]
    512
    """
    overrides = config.get("per_layer_config")
    if not overrides or layer_type not in _layer_type_names(config):
        return config
    types = config["layer_types"]
    if not isinstance(overrides, dict) or not all(isinstance(value, dict) for value in overrides.values()):
        raise ParameterError(
            "config.json: per_layer_config: expected an object of layer index → overrides, "
            f"got {config_value(overrides)}"
        )
    by_index: dict[int, dict[str, Any]] = {}
    for key, value in overrides.items():
        try:
            by_index[int(key)] = value
        except (TypeError, ValueError):
            raise ParameterError(
                f"config.json: per_layer_config: {config_value(key)} is not a layer index",
                hint='per_layer_config is keyed by layer index ("05")',
            ) from None
    indices = [index for index, name in enumerate(types) if name == layer_type]

    def rope_overrides(index: int) -> dict[str, Any]:  # a sliding_window that differs is no matter to the table
        return {key: value for key, value in by_index.get(index, {}).items() if key in _ROPE_CONFIG_KEYS}

    first = rope_overrides(indices[0])
    differing = next((index for index in indices if rope_overrides(index) != first), None)
    if differing is not None:
        keys = sorted(
            set(first) ^ set(rope_overrides(differing))
            | {k for k in first if first[k] != rope_overrides(differing).get(k)}
        )
        raise ParameterError(
            f"config.json: per_layer_config gives layers {indices[0]} and {differing}, both {layer_type!r}, "
            f"different {', '.join(keys)}: one rope table per layer type cannot hold them",
            hint="give the layers of one type the same rope settings",
        )
    return {**config, **first}


#: the config keys a rope table depends on (per_layer_config overrides of other keys are ignored)
_ROPE_CONFIG_KEYS = frozenset(
    {
        "head_dim",
        "qk_rope_head_dim",
        "attention_head_dim",
        "kv_channels",
        "hidden_size",
        "num_attention_heads",
        "rotary_dim",
        "partial_rotary_factor",
        "rope_parameters",
        "rope_scaling",
        "rope_theta",
        "max_position_embeddings",
        "original_max_position_embeddings",
    }
)


def _with_layers(encoding: ModelEncoding, config: Mapping[str, Any]) -> ModelEncoding:
    """``encoding`` with the layers that have no positional encoding (Llama 4's ``no_rope_layers``) recorded,
    and a note on the layers whose type has no attention to rotate (Qwen3-Next's ``linear_attention``)."""
    types = config.get("layer_types")
    types = types if isinstance(types, list) else []
    without = [index for index, name in enumerate(types) if name in _TYPES_WITHOUT_ROPE]
    if without:
        names = ", ".join(sorted({types[index] for index in without}))
        shown = ", ".join(map(str, without[:12])) + (f" and {len(without) - 12} more" if len(without) > 12 else "")
        note = f"layer_types: layers {shown} are {names}, without positional encoding: this table is for the others"
        encoding = replace(encoding, notes=(*encoding.notes, note))
    nope = _nope_layers(config)
    if not nope:
        return encoding
    shown = ", ".join(map(str, nope[:12])) + (f" and {len(nope) - 12} more" if len(nope) > 12 else "")
    note = f"layers {shown} use no positional encoding (NoPE): this table is for the other layers"
    return replace(encoding, nope_layers=tuple(nope), notes=(*encoding.notes, note))


#: layer types without rotary attention: Qwen3-Next's and MiniMax's linear attention (Gated DeltaNet, lightning
#: attention), LFM2's short convolutions
_TYPES_WITHOUT_ROPE = frozenset({"linear_attention", "conv"})


def _nope_layers(config: Mapping[str, Any]) -> list[int]:
    """Indices of the layers without RoPE: Llama 4's ``no_rope_layers`` (0 = no rope), or a 0 in ``use_rope_layers``."""
    flags = config.get("no_rope_layers")
    if flags is None:
        return []
    if not isinstance(flags, list) or not all(value in (0, 1) and not isinstance(value, float) for value in flags):
        raise ParameterError(f"config.json: no_rope_layers: expected a list of 0 and 1, got {config_value(flags)}")
    return [index for index, value in enumerate(flags) if not value]


def _layer_type_names(config: Mapping[str, Any]) -> list[str]:
    """The distinct names in the config's ``layer_types``, a list of one name per layer.

    >>> _layer_type_names({"layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})
    ['full_attention', 'sliding_attention']
    """
    types = config.get("layer_types")
    if types is None:
        return []
    if not isinstance(types, list) or not all(isinstance(name, str) for name in types):
        raise ParameterError(
            f"config.json: layer_types: expected a list of layer-type names, one per layer, got {config_value(types)}",
            hint='layer_types lists each layer\'s attention type ("full_attention", "sliding_attention")',
        )
    return sorted(set(types))


def _nested_settings(config: Mapping[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, str]]] | None:
    """Per layer type: its rope settings and each one's key, when ``rope_parameters`` is keyed by layer type.

    transformers' ``nested_rope_parameter_keys``: the keys whose value is an object. The older
    ``rope_local_base_freq`` (Gemma 3 before transformers 5) gives the sliding layers their own base.
    """
    settings = config.get("rope_parameters")
    if isinstance(settings, dict) and any(isinstance(value, dict) for value in settings.values()):
        scaling_into = _scaling_layer_types(config)
        if scaling_into is None:  # transformers' `rope_scaling or rope_parameters`: one flat set for every layer
            return None
        nested = {}
        for name, value in settings.items():
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ParameterError(
                    f"config.json: rope_parameters.{name}: expected an object (the rope parameters of layer type "
                    f"{name!r}), got {config_value(value)}",
                    hint="per-layer rope_parameters hold one object per layer type",
                )
            found, where = dict(value), {key: f"rope_parameters.{name}.{key}" for key in value}
            if name in scaling_into:  # Gemma3Config.convert_rope_params_to_dict: `[name].update(rope_scaling)`
                found.update(config["rope_scaling"])
                where.update({key: f"rope_scaling.{key}" for key in config["rope_scaling"]})
            _add_top_level(config, found, where)
            nested[name] = (found, where)
        return nested
    if config.get("rope_local_base_freq") is not None:
        found, where = _rope_settings(config)
        local = dict(found, rope_type="default", rope_theta=config["rope_local_base_freq"])
        local = {k: v for k, v in local.items() if k not in _SCALING_KEYS}
        local_where = {k: where.get(k, k) for k in local} | {"rope_theta": "rope_local_base_freq"}
        local_where["rope_type"] = "rope_local_base_freq"
        return {"full_attention": (found, where), "sliding_attention": (local, local_where)}
    return None


#: model types whose config class merges a top-level ``rope_scaling`` into some per-layer-type rope parameters
#: (their ``convert_rope_params_to_dict``, transformers 5): Gemma 3, Gemma 3n, OLMo 3 and T5Gemma 2 into
#: ``full_attention``; ModernBERT into both layer types
_SCALING_INTO_LAYER_TYPES = {
    **dict.fromkeys(("gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "olmo3", "t5gemma2"), ("full_attention",)),
    **dict.fromkeys(("modernbert", "modernbert-decoder"), ("full_attention", "sliding_attention")),
}


def _scaling_layer_types(config: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The layer types a non-empty top-level ``rope_scaling`` is merged into beside per-layer-type
    ``rope_parameters``: none when there is no ``rope_scaling``; ``None`` when it replaces them all
    (``PreTrainedConfig.convert_rope_params_to_dict``: ``rope_scaling or rope_parameters``).

    >>> nested = {"full_attention": {"rope_type": "default"}}
    >>> _scaling_layer_types({"model_type": "gemma3_text", "rope_parameters": nested, "rope_scaling": {"factor": 8}})
    ('full_attention',)
    >>> _scaling_layer_types({"model_type": "llama", "rope_parameters": nested, "rope_scaling": {"factor": 8}})
    >>> _scaling_layer_types({"model_type": "llama", "rope_parameters": nested})
    ()
    """
    scaling = config.get("rope_scaling")
    if scaling is None or scaling == {}:
        return ()
    if not isinstance(scaling, dict):
        raise ParameterError(f"config.json: rope_scaling must be an object, got {config_value(scaling)}")
    return _SCALING_INTO_LAYER_TYPES.get(str(config.get("model_type")))


#: the keys of a scaling, which a layer type with the default rope_type does not take from the global one
_SCALING_KEYS = frozenset(
    {
        "type",
        "factor",
        "original_max_position_embeddings",
        "low_freq_factor",
        "high_freq_factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "attention_factor",
        "short_factor",
        "long_factor",
        "truncate",
    }
)


def _one_encoding(
    config: Mapping[str, Any], model_type: str, found: dict[str, Any], where: dict[str, str]
) -> ModelEncoding:
    """The encoding of one set of rope parameters ``found`` (each one's key in ``where``)."""
    notes: list[str] = []
    rope_type = _rope_type(found, where)
    length_key = next((key for key in _LENGTH_KEYS if config.get(key) is not None), "max_position_embeddings")
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
    if config.get(length_key) is not None or reads_context:
        if config.get(length_key) is None:
            raise ParameterError(
                f"config.json has no max_position_embeddings, which its rope_type {rope_type!r} reads",
                hint="add max_position_embeddings (the model's context) to the config",
            )
        length = config_int(config, length_key)
    if rope_type in ("llama3", "yarn", "longrope"):
        # transformers' standardize_rope_params: a top-level original_max_position_embeddings (Phi-3) wins
        if config.get("original_max_position_embeddings") is not None:
            found["original_max_position_embeddings"] = config["original_max_position_embeddings"]
            where["original_max_position_embeddings"] = "original_max_position_embeddings"
        elif "original_max_position_embeddings" not in found:
            found["original_max_position_embeddings"] = length
            where["original_max_position_embeddings"] = length_key
    head_dim, head_dim_key = _head_dim(config)
    partial = _number(found, where, "partial_rotary_factor", 1.0)
    if not 0 < partial <= 1:
        raise ParameterError(
            f"config.json: {where.get('partial_rotary_factor')}: expected a number in (0, 1], got {partial!r}"
        )
    # the rotary module's cos and sin cover the rotated columns only: int(head_dim · partial_rotary_factor)
    dim = head_dim if rope_type == "proportional" else int(head_dim * partial)
    dim_field = head_dim_key[0] + (f" × {where['partial_rotary_factor']}" if partial != 1.0 else "")
    rotary_key = next((key for key in ("rotary_dim",) if config.get(key) is not None), None)
    if rotary_key is not None and rope_type != "proportional":
        rotary = config_int(config, rotary_key)
        if partial != 1.0 and rotary != dim:
            raise ParameterError(
                f"config.json: {rotary_key} = {rotary} contradicts {dim_field} = {head_dim_key[1]} × {partial!r}"
                f" = {dim} rotary columns",
                hint=f"keep one of {rotary_key} and {where['partial_rotary_factor']}",
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
    layout, layout_note = _layout(config, model_type)
    if layout_note:
        notes.append(layout_note)
    params: dict[str, Any] = {"base": _number(found, where, "rope_theta", 10000.0), "layout": layout}
    scaling, used = _scaling_parameters(rope_type, found, where, length, odd_width or dim)
    params.update(scaling)
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
    if odd_width is not None:
        fields["rotary_dim"] = dim_field
    if rope_type == "proportional":
        fields["partial_rotary_factor"] = where.get("partial_rotary_factor", "partial_rotary_factor")
    notes.extend(_remote_code_notes(where))
    return ModelEncoding(
        model_type, "rope", params, length=length, dim=dim, provenance=provenance, fields=fields, notes=tuple(notes)
    )


def _rope_type(found: Mapping[str, Any], where: Mapping[str, str]) -> str:
    """``rope_type``, or the legacy ``type``; both given and different is a contradiction."""
    new, old = found.get("rope_type"), found.get("type")
    if new is not None and old is not None and new != old:
        raise ParameterError(
            f"config.json: {where['rope_type']} = {config_value(new)} contradicts {where['type']} = "
            f"{config_value(old)}",
            hint="keep rope_type (type is its older name)",
        )
    return known_rope_type(new if new is not None else old if old is not None else "default")


def _layout(config: Mapping[str, Any], model_type: str) -> tuple[str, str]:
    """The column layout the model's attention applies cos and sin in, and a note when a remote-code key said so."""
    interleaved = config.get("rotary_emb_interleaved")
    if interleaved is not None:
        if not isinstance(interleaved, bool):
            raise ParameterError(
                f"config.json: rotary_emb_interleaved: expected true or false, got {config_value(interleaved)}"
            )
        layout = "interleaved" if interleaved else "half"
        return (
            layout,
            f"rotary_emb_interleaved = {str(interleaved).lower()}: assumed flash-attn's rotary ({layout} pairs)",
        )
    return ("interleaved" if model_type in _INTERLEAVED else "half"), ""


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
            if found.get(key):
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


def _rope_settings(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The rope parameters (a non-empty ``rope_scaling``, else ``rope_parameters``, plus top-level keys) and each
    one's key: transformers 5 reads ``rope_scaling`` first when a config gives both (``convert_rope_params_to_dict``:
    ``rope_scaling or rope_parameters``)."""
    found: dict[str, Any] = {}
    where: dict[str, str] = {}
    for container in ("rope_scaling", "rope_parameters"):
        settings = config.get(container)
        if settings is None:
            continue
        if not isinstance(settings, dict):
            raise ParameterError(f"config.json: {container} must be an object, got {config_value(settings)}")
        if settings:
            found, where = dict(settings), {key: f"{container}.{key}" for key in settings}
            break
    if config.get("rotary_scaling_factor") is not None and "type" not in found and "rope_type" not in found:
        # nomic-bert: NomicBertDynamicNTKRotaryEmbedding over max_trained_positions
        found.update(rope_type="dynamic", factor=config["rotary_scaling_factor"])
        where.update(rope_type="rotary_scaling_factor", factor="rotary_scaling_factor")
    _add_top_level(config, found, where)
    if config.get("position_embedding_type") in _ROTARY_EMBEDDING_TYPES and "rope_theta" not in found:
        where.setdefault("position_embedding_type", "position_embedding_type")
    return found, where


#: top-level keys transformers moves into rope_parameters when they are not there, with their other spellings
_TOP_LEVEL = {
    "rope_theta": ("rope_theta", "rotary_emb_base"),
    "partial_rotary_factor": ("partial_rotary_factor", "rotary_pct", "rotary_emb_fraction"),
}


def _add_top_level(config: Mapping[str, Any], found: dict[str, Any], where: dict[str, str]) -> None:
    for key, spellings in _TOP_LEVEL.items():
        given = [name for name in spellings if config.get(name) is not None]
        if key not in found and given:
            values = {name: config[name] for name in given}
            if len(set(map(repr, values.values()))) > 1:
                raise ParameterError(
                    f"config.json: {' and '.join(f'{n} = {config_value(v)}' for n, v in values.items())} disagree",
                    hint=f"keep one of {', '.join(given)}",
                )
            found[key], where[key] = config[given[0]], given[0]
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in _IMPLICIT_ROPE:
        theta, partial, _ = _IMPLICIT_ROPE[model_type]
        found.setdefault("rope_theta", theta)
        if partial is not None and "partial_rotary_factor" not in found:
            # GPTNeoXConfig: rotary_pct defaults to 0.25
            found["partial_rotary_factor"], where["partial_rotary_factor"] = partial, "rotary_pct (default 0.25)"


#: the head width, by the keys configs spell it, first found wins: transformers' rotary init reads
#: ``head_dim`` (Mistral 4 and dots3 halve or quarter it by partial_rotary_factor, and their
#: ``qk_rope_head_dim`` is that result); DeepSeek's configs as they ship have only ``qk_rope_head_dim``
#: (DeepseekV3Config sets head_dim to it); Megatron's kv_channels, …
_HEAD_DIM_KEYS = ("head_dim", "qk_rope_head_dim", "attention_head_dim", "kv_channels")


def _head_dim(config: Mapping[str, Any]) -> tuple[int, tuple[str, Any]]:
    for key in _HEAD_DIM_KEYS:
        if config.get(key) is not None:
            head_dim = config_int(config, key)
            return head_dim, (key, head_dim)
    hidden_key = next((k for k in ("hidden_size", "n_embd", "d_model") if config.get(k) is not None), "hidden_size")
    heads_key = next(
        (
            k
            # DBRX's n_heads, Moonshine's decoder_num_attention_heads (transformers' attribute_map aliases)
            for k in (
                "num_attention_heads",
                "n_head",
                "n_heads",
                "num_heads",
                "decoder_attention_heads",
                "decoder_num_attention_heads",
            )
            if config.get(k) is not None
        ),
        "num_attention_heads",
    )
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
        raise ParameterError(f"config.json: rope_type needs {key}", hint=f"add {key} to the rope parameters")
    return config_number(value, where.get(key, key))


def _factor_list(found: Mapping[str, Any], where: Mapping[str, str], key: str, dim: int) -> str:
    """LongRoPE's per-pair divisors as pecli's comma-separated text; their count must be the rotary dim / 2."""
    values = found.get(key)
    name = where.get(key, key)
    if not isinstance(values, list):
        raise ParameterError(f"config.json: {name}: expected a list of numbers, got {config_value(values)}")
    values = [config_number(value, f"{name}[{index}]", positive=True) for index, value in enumerate(values)]
    if len(values) != dim // 2:
        raise ParameterError(
            f"config.json: {where.get(key, key)} has {len(values)} values, but longrope needs head_dim/2 = {dim // 2}",
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
            f"rope_type {rope_type!r}{with_options} is not supported yet", hint=f"pecli computes {supported}"
        )
