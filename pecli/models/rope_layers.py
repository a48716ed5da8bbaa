"""Per-layer RoPE in a model's config: layer types with their own rope parameters, overrides, NoPE layers.

transformers 5 keys ``rope_parameters`` by layer type (Gemma 3's ``sliding_attention``/``full_attention``),
merges a top-level ``rope_scaling`` into some of them, lets ``per_layer_config`` override keys layer by
layer, and marks layers without positional encoding (Llama 4's ``no_rope_layers``, linear-attention layers).

>>> sorted(nested_settings({"layer_types": ["sliding_attention", "full_attention"], "rope_parameters": {
...     "full_attention": {"rope_theta": 1e6}, "sliding_attention": {"rope_theta": 1e4}}}))
['full_attention', 'sliding_attention']

Keys that are no layer type of the config are no layer type's parameters (transformers reads the set as flat):

>>> nested_settings({"rope_parameters": {"full_attention": {"rope_theta": 1e6}}}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pecli.errors import ParameterError
from pecli.models.encoding import ModelEncoding, config_value
from pecli.models.gguf import GGUF_KEYS
from pecli.models.rope_settings import add_top_level, rope_settings
from pecli.models.transformers_families import CLASS_DEFAULTS
from pecli.text import literal, literal_repr

__all__ = [
    "FILLS_LAYER_TYPES",
    "KNOWN_LAYER_TYPES",
    "MAX_LAYER_TYPES",
    "ROPE_TYPE_LABELS",
    "TYPES_WITHOUT_ROPE",
    "check_layer_count",
    "class_layer_rope",
    "flat_rope_note",
    "layer_config",
    "layer_type_names",
    "modernbert_layers",
    "nested_rope_keys",
    "nested_settings",
    "unread_rope_keys",
    "with_layers",
]

#: the most layer types with their own rope parameters pecli reads from one config (each is a table to compute
#: and write, ≈ 13 ms at 64 rows): transformers' models have 1 to 3
MAX_LAYER_TYPES = 64

#: model types whose config class names its per-layer rope entries other than by ``layer_types`` (transformers
#: 5.23's ``_rope_type_labels``: DeepSeek V4's ``main``/``compress``, LFM3's attention types);
#: tests/models/test_layer_types_s13.py checks them against the installed transformers
ROPE_TYPE_LABELS: dict[str, tuple[str, ...]] = {
    "deepseek_v4": ("main", "compress"),
    "lfm3": ("full_attention", "sliding_attention"),
}


def nested_rope_keys(config: Mapping[str, Any]) -> list[str]:
    """The keys ``rope_parameters`` is nested under, as transformers' ``nested_rope_parameter_keys`` decides: the
    keys that are layer types of the config (or its class's rope labels); none, a flat set, when it declares none.

    >>> nested_rope_keys({"layer_types": ["full_attention"], "rope_parameters": {"full_attention": {}, "x": {}}})
    ['full_attention']
    >>> nested_rope_keys({"rope_parameters": {"rope_type": "yarn", "beta_slow": {}}})
    []
    """
    settings = config.get("rope_parameters")
    if not isinstance(settings, dict):
        return []
    labels = set(ROPE_TYPE_LABELS.get(str(config.get("model_type"))) or layer_type_names(config))
    return [key for key in settings if key in labels]


def unread_rope_keys(config: Mapping[str, Any]) -> str:
    """A note naming the keys of per-layer-type ``rope_parameters`` that are no layer type, which transformers does
    not read (Laguna and Mellum keep sliding_attention's settings with every layer full); "" when there are none."""
    settings = config.get("rope_parameters")
    keys = nested_rope_keys(config)
    if not keys or not isinstance(settings, dict):
        return ""
    objects = [key for key in settings if key not in keys and isinstance(settings[key], dict)]
    others = [key for key in settings if key not in keys and key not in objects]
    notes = []
    if objects:
        notes.append(f"rope_parameters.{', '.join(objects)}: no layer of that type in layer_types, so no table")
    if others:
        notes.append(f"rope_parameters.{', '.join(others)}: not read beside the parameters of each layer type")
    return "; ".join(notes)


def flat_rope_note(config: Mapping[str, Any]) -> str:
    """A note naming the objects in a flat ``rope_parameters`` that look like a layer type's parameters but name no
    layer type of the config, which transformers does not read (it warns of unrecognized keys); "" when none."""
    settings = config.get("rope_parameters")
    if not isinstance(settings, dict) or nested_rope_keys(config):
        return ""
    objects = [key for key in settings if isinstance(settings[key], dict) and key not in _ROPE_PARAMETER_KEYS]
    if not objects:
        return ""
    declared = (
        "layer_types does not name it" if config.get("layer_types") is not None else "the config has no layer_types"
    )
    return f"rope_parameters.{', '.join(objects)}: not read ({declared}): one set of rope parameters for every layer"


#: the keys of one set of rope parameters (transformers' RopeParameters, and the older ``type``): a wrong value of
#: one of them is refused naming it, not taken for a layer type's parameters
_ROPE_PARAMETER_KEYS = frozenset(
    {
        "rope_theta", "rope_type", "type", "partial_rotary_factor", "factor", "original_max_position_embeddings",
        "attention_factor", "beta_fast", "beta_slow", "short_factor", "long_factor", "low_freq_factor",
        "high_freq_factor", "mscale", "mscale_all_dim", "truncate", "mrope_section",
    }
)  # fmt: skip


#: model types whose config class fills full_attention's and sliding_attention's rope parameters when a
#: ``rope_parameters`` object lacks them (their ``convert_rope_params_to_dict``), with the top-level key the
#: sliding layers' base is read from (OLMo 3: none; its rope_theta is taken by full_attention first)
FILLS_LAYER_TYPES: dict[str, str | None] = {
    "gemma3_text": "rope_local_base_freq",
    "gemma3n_text": "rope_local_base_freq",
    "t5gemma2_text": "rope_local_base_freq",
    "olmo3": None,
}


def class_layer_rope(config: Mapping[str, Any], model_type: str) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """``config`` with the per-layer-type rope parameters ``model_type``'s config class fills when its
    ``rope_parameters`` lacks them (Gemma 3: ``{"rope_type": "default", "rope_theta": rope_theta or 1e6}`` for
    full_attention, ``rope_local_base_freq or 1e4`` for sliding_attention), and a note for each.

    >>> config, notes = class_layer_rope({"rope_parameters": {"sliding_attention": {}}}, "gemma3_text")
    >>> config["rope_parameters"]
    {'sliding_attention': {'rope_theta': 10000.0}, 'full_attention': {'rope_type': 'default', 'rope_theta': 1000000.0}}
    """
    settings = config.get("rope_parameters")
    if (
        model_type not in FILLS_LAYER_TYPES
        or not isinstance(settings, dict)
        or GGUF_KEYS in config
        or config.get("auto_map") is not None
    ):
        return config, ()
    defaults = CLASS_DEFAULTS[model_type]
    local = FILLS_LAYER_TYPES[model_type]
    layers = dict(settings)
    sources: dict[str, dict[str, str]] = {}
    notes = []
    for name, key in (("full_attention", "rope_theta"), ("sliding_attention", local)):
        entry = layers.get(name)
        if entry is not None and not isinstance(entry, dict):
            continue  # refused naming it where it is read
        # OLMo 3's sliding_attention: the top-level rope_theta was taken (popped) by full_attention before it
        given = key if key is not None and config.get(key) is not None else None
        theta = config[given] if given is not None else defaults[key or "rope_theta"]
        source = given or f"{model_type}'s default"
        if entry is None:
            layers[name] = {"rope_type": "default", "rope_theta": theta}
            notes.append(f"rope_parameters.{name} not given: {source} (rope_type default, rope_theta {theta!r})")
            not_given = f"rope_parameters.{name} (not given: {source})"
            sources[name] = {"rope_type": not_given, "rope_theta": given or not_given}
        elif "rope_theta" not in entry:
            layers[name] = {**entry, "rope_theta": theta}
            not_given = f"rope_parameters.{name}.rope_theta (not given: {source})"
            sources[name] = {"rope_theta": given or not_given}
            notes.append(f"rope_parameters.{name}.rope_theta not given: {source} {theta!r}")
    if not notes:
        return config, ()
    merged = {name: {**config.get(_SOURCES, {}).get(name, {}), **where} for name, where in sources.items()}
    return {**config, "rope_parameters": layers, _SOURCES: {**config.get(_SOURCES, {}), **merged}}, tuple(notes)


def layer_config(config: Mapping[str, Any], layer_type: str) -> Mapping[str, Any]:
    """``config`` as the layers of ``layer_type`` see it: with their ``per_layer_config`` overrides.

    transformers' heterogeneous configs (Gemma 4's ``global_head_dim`` is saved as ``head_dim`` 512 for
    each full-attention layer) keep a sparse map from layer index to the keys that differ; the rotary
    init reads ``config.per_layer_config[layer_type]``, the overrides of the layers of that type, which
    must agree. A rope key that is not a layer type (DeepSeek V4's ``main``/``compress``) has none.

    >>> layer_config({"head_dim": 256, "layer_types": ["sliding", "full"],
    ...     "per_layer_config": {"01": {"head_dim": 512}}}, "full")["head_dim"]
    512
    """
    overrides = config.get("per_layer_config")
    if not overrides or layer_type not in layer_type_names(config):
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
            f"config.json: per_layer_config gives layers {indices[0]} and {differing}, both "
            f"{literal_repr(layer_type)}, different {', '.join(keys)}: one rope table per layer type cannot hold them",
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


def with_layers(encoding: ModelEncoding, config: Mapping[str, Any]) -> ModelEncoding:
    """``encoding`` with the layers that have no positional encoding (Llama 4's ``no_rope_layers``) recorded,
    and a note on the layers whose type has no attention to rotate (Qwen3-Next's ``linear_attention``)."""
    types = config.get("layer_types")
    types = types if isinstance(types, list) else []
    without = [index for index, name in enumerate(types) if name in TYPES_WITHOUT_ROPE]
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
TYPES_WITHOUT_ROPE = frozenset({"linear_attention", "conv"})


#: model types whose config class derives ``no_rope_layers`` from ``no_rope_layer_interval`` when it is left out
#: (Llama 4 also when it is empty), with their class's default number of layers
_NOPE_INTERVAL = {"llama4_text": 48, "smollm3": 36}


def _nope_layers(config: Mapping[str, Any]) -> list[int]:
    """Indices of the layers without RoPE: Llama 4's ``no_rope_layers`` (0 = no rope), or a 0 in ``use_rope_layers``."""
    flags = config.get("no_rope_layers")
    model_type = config.get("model_type")
    if model_type in _NOPE_INTERVAL and (not flags if model_type == "llama4_text" else flags is None):
        # Llama4TextConfig / SmolLM3Config: every no_rope_layer_interval-th layer (1-based) without rope
        from pecli.models.encoding import config_int

        layers = (
            config_int(config, "num_hidden_layers")
            if config.get("num_hidden_layers") is not None
            else _NOPE_INTERVAL[model_type]
        )
        every = config_int(config, "no_rope_layer_interval") if "no_rope_layer_interval" in config else 4
        flags = [int((index + 1) % every != 0) for index in range(layers)]
    if flags is None:
        return []
    if not isinstance(flags, list) or not all(value in (0, 1) and not isinstance(value, float) for value in flags):
        raise ParameterError(f"config.json: no_rope_layers: expected a list of 0 and 1, got {config_value(flags)}")
    return [index for index, value in enumerate(flags) if not value]


def layer_type_names(config: Mapping[str, Any]) -> list[str]:
    """The distinct names in the config's ``layer_types``, a list of one name per layer.

    >>> layer_type_names({"layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})
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


#: the names transformers allows in ``layer_types`` (5.23's ``ALLOWED_LAYER_TYPES``, attention and MLP layers), the
#: legacy names it renames to them first (``_LEGACY_LAYER_TYPE_REMAP``: "attention", "mamba"…) and Nemotron-H's "mlp"
#: (its own ``validate_layer_type``); tests/models/test_attack_fixes_s16.py checks them against the installed
#: transformers. A name past these is refused, as transformers refuses it: which layers have which rope is unknown.
KNOWN_LAYER_TYPES = frozenset(
    {
        "full_attention", "sliding_attention", "chunked_attention", "window_attention", "indexed_attention",
        "compressed_sparse_attention", "heavily_compressed_attention", "minimax_m3_sparse", "conv", "moe", "hybrid",
        "hybrid_sliding", "reference_sliding_attention", "linear_attention", "sparse", "dense",
        "mamba", "attention", "deepseek_sparse_attention", "qwen_sparse_attention", "mlp",
    }
)  # fmt: skip


def check_layer_count(config: Mapping[str, Any]) -> None:
    """Refuse a ``layer_types`` that does not list one type per layer (``num_hidden_layers``), or names a layer type
    transformers does not know (:data:`KNOWN_LAYER_TYPES`) and ``rope_parameters`` gives no parameters of its own, as
    transformers' ``PreTrainedConfig.validate_layer_type`` does: which rope such layers have is unknown (pecli would
    otherwise give them the class's defaults for its own layer types).

    >>> check_layer_count({"layer_types": ["full_attention"], "num_hidden_layers": 2})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: config.json: layer_types lists 1 layer type but num_hidden_layers is 2 ...
    >>> check_layer_count({"layer_types": ["banana", "full_attention"]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: config.json: layer_types: 'banana' is no layer type transformers knows ...
    """
    keys = nested_rope_keys(config)
    _check_layer_type_cap(keys)  # the count of tables first, whatever their names
    types, layers = config.get("layer_types"), config.get("num_hidden_layers")
    listed = types if isinstance(types, list) else []
    given = {*KNOWN_LAYER_TYPES, *keys}  # a name with rope parameters of its own has them, not a class default's
    unknown = sorted({name for name in listed if isinstance(name, str) and name not in given})
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        named = ", ".join(literal_repr(name) for name in unknown[:3]) + more
        raise ParameterError(
            f"config.json: layer_types: {named} {'is no layer type' if len(unknown) == 1 else 'are no layer types'}"
            " transformers knows (transformers refuses the config)",
            hint=f"name each layer's type as one of {', '.join(sorted(KNOWN_LAYER_TYPES))}",
        )
    if not isinstance(types, list) or not isinstance(layers, int) or isinstance(layers, bool) or layers == len(types):
        return
    raise ParameterError(
        f"config.json: layer_types lists {len(types)} layer type{'' if len(types) == 1 else 's'} but"
        f" num_hidden_layers is {layers} (transformers refuses the config)",
        hint="give layer_types one entry per layer, as many as num_hidden_layers",
    )


def _check_layer_type_cap(keys: list[str]) -> None:
    """Refuse more than :data:`MAX_LAYER_TYPES` layer types with their own rope parameters (``keys``): each is a
    table computed and written, so they are refused before any is."""
    if len(keys) > MAX_LAYER_TYPES:
        raise ParameterError(
            f"config.json: rope_parameters gives {len(keys)} layer types their own rope parameters; pecli reads at "
            f"most {MAX_LAYER_TYPES} (models have 1 to 3)",
            hint="give the layers that share rope parameters one layer type",
        )


def nested_settings(config: Mapping[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, str]]] | None:
    """Per layer type: its rope settings and each one's key, when ``rope_parameters`` is keyed by layer type.

    transformers' ``nested_rope_parameter_keys``: the keys that are layer types of the config (a flat set with
    an object among its values is still flat). A layer type of ``layer_types`` with no entry is refused, as
    transformers' per-layer rotary module fails on it. The older ``rope_local_base_freq`` (Gemma 3 before
    transformers 5) gives the sliding layers their own base.
    """
    settings = config.get("rope_parameters")
    keys = nested_rope_keys(config)
    _check_layer_type_cap(keys)
    if keys and isinstance(settings, dict):
        scaling_into = _scaling_layer_types(config)
        if scaling_into is None:  # transformers' `rope_scaling or rope_parameters`: one flat set for every layer
            return None
        if str(config.get("model_type")) not in ROPE_TYPE_LABELS:
            missing = [
                name for name in layer_type_names(config) if name not in settings and name not in TYPES_WITHOUT_ROPE
            ]
            if missing:
                raise ParameterError(
                    f"config.json: layer_types has {config_value(missing[0])} but rope_parameters has no entry for "
                    f"it (rope_parameters is keyed by layer type: {', '.join(map(config_value, keys))}); "
                    f"transformers' rotary module fails on it (KeyError)",
                    hint="add that layer type's rope parameters to rope_parameters (null: its layers have no rope)",
                )
        nested = {}
        for name in keys:
            value = settings[name]
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ParameterError(
                    f"config.json: rope_parameters.{literal(name)}: expected an object (the rope parameters of "
                    f"layer type {literal_repr(name)}), got {config_value(value)}",
                    hint="per-layer rope_parameters hold one object per layer type",
                )
            found, where = dict(value), {key: f"rope_parameters.{name}.{key}" for key in value}
            where.update(config.get(_SOURCES, {}).get(name, {}))
            if name in scaling_into:  # Gemma3Config.convert_rope_params_to_dict: `[name].update(rope_scaling)`
                found.update(config["rope_scaling"])
                where.update({key: f"rope_scaling.{key}" for key in config["rope_scaling"]})
            add_top_level(config, found, where)
            nested[name] = (found, where)
        return nested
    if config.get("rope_local_base_freq") is not None:
        found, where = rope_settings(config)
        local = dict(found, rope_type="default", rope_theta=config["rope_local_base_freq"])
        local = {k: v for k, v in local.items() if k not in _SCALING_KEYS}
        local_where = {k: where.get(k, k) for k in local} | {"rope_theta": "rope_local_base_freq"}
        local_where["rope_type"] = "rope_local_base_freq"
        both = {"full_attention": (found, where), "sliding_attention": (local, local_where)}
        declared = layer_type_names(config)  # transformers 5 converts both, then reads the layer types declared
        return {name: both[name] for name in both if name in declared} or both
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


#: model types whose config class derives ``layer_types`` from ``global_attn_every_n_layers`` and each layer
#: type's base from ``global_rope_theta``/``local_rope_theta`` (transformers 5's ModernBertConfig.__post_init__
#: and convert_rope_params_to_dict: the configs on the Hub still spell them so), with their class defaults
_MODERNBERT = ("modernbert", "modernbert-decoder")
#: the key of a filled config under which :func:`modernbert_layers` records the keys a filled value came from
_SOURCES = "\0pecli rope sources"


def modernbert_layers(config: Mapping[str, Any], model_type: str) -> Mapping[str, Any]:
    """A ModernBERT ``config`` as its config class reads it: ``layer_types`` (every n-th layer full, the rest
    sliding) and per-layer-type ``rope_parameters`` (bases 160000 full, 10000 sliding, unless given).

    >>> config = modernbert_layers({"num_hidden_layers": 4, "local_rope_theta": 5.0}, "modernbert")
    >>> config["layer_types"], config["rope_parameters"]["sliding_attention"]["rope_theta"]
    (['full_attention', 'sliding_attention', 'sliding_attention', 'full_attention'], 5.0)
    """
    from pecli.models.encoding import config_int

    settings = config.get("rope_parameters")
    if model_type not in _MODERNBERT or not (settings is None or isinstance(settings, dict)):
        return config
    filled = dict(config)
    if config.get("layer_types") is None:
        layers = config_int(config, "num_hidden_layers") if config.get("num_hidden_layers") is not None else 22
        every = config_int(config, "global_attn_every_n_layers") if "global_attn_every_n_layers" in config else 3
        filled["layer_types"] = ["sliding_attention" if i % every else "full_attention" for i in range(layers)]
    nested = dict(settings or {})
    sources: dict[str, dict[str, str]] = {}
    if nested and not all(isinstance(value, dict) or value is None for value in nested.values()):
        return filled  # a flat set: read as it is
    for name, key, base in (("full_attention", "global_rope_theta", 160_000.0),
                            ("sliding_attention", "local_rope_theta", 10_000.0)):  # fmt: skip
        layer = dict(nested.get(name) or {"rope_type": "default"})
        if "rope_theta" not in layer:
            given = config.get(key) is not None
            layer["rope_theta"] = config[key] if given else base
            sources[name] = {"rope_theta": key if given else f"{key} (not given: {model_type}'s default)"}
        nested[name] = layer
    filled["rope_parameters"] = nested
    filled[_SOURCES] = sources
    return filled
