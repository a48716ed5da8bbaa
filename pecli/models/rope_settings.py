"""Where a model's config keeps its RoPE settings: ``rope_scaling``, ``rope_parameters``, top-level keys.

transformers 5 reads a non-empty ``rope_scaling`` before ``rope_parameters`` and moves top-level keys
(``rope_theta``, ``partial_rotary_factor`` and their remote-code spellings) into them when absent; each
value comes back with the config key it was read from, so errors and provenance name that key.

>>> found, where = rope_settings({"rope_theta": 500000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
>>> found["rope_theta"], where["factor"]
(500000.0, 'rope_scaling.factor')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pecli.errors import ParameterError
from pecli.models.encoding import config_value
from pecli.models.gguf import GGUF_KEYS

__all__ = ["IMPLICIT_ROPE", "ROTARY_EMBEDDING_TYPES", "add_top_level", "class_partial", "own_spelling", "rope_settings"]

#: model types transformers reads without any rope key: (theta default, partial default, rotary width key)
IMPLICIT_ROPE = {
    "gpt_neox": (10000.0, 0.25, None),
    "gptj": (10000.0, None, "rotary_dim"),
    "codegen": (10000.0, None, "rotary_dim"),
}

#: ``position_embedding_type`` values of remote-code (nomic-bert-style) configs that mean rotary
ROTARY_EMBEDDING_TYPES = frozenset({"rope", "rotary"})


def rope_settings(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
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
    add_top_level(config, found, where)
    if config.get("position_embedding_type") in ROTARY_EMBEDDING_TYPES and "rope_theta" not in found:
        where.setdefault("position_embedding_type", "position_embedding_type")
    return found, where


#: top-level keys transformers moves into rope_parameters when they are not there, with their other spellings
_TOP_LEVEL = {
    "rope_theta": ("rope_theta", "rotary_emb_base"),
    "partial_rotary_factor": ("partial_rotary_factor", "rotary_pct", "rotary_emb_fraction"),
}

#: model types whose config class reads only its own spelling of a top-level key (GPTNeoXConfig:
#: ``rotary_emb_base`` and ``rotary_pct``; a top-level ``rope_theta`` or ``partial_rotary_factor`` is ignored)
_OWN_SPELLINGS = {
    model_type: {"rope_theta": ("rotary_emb_base",), "partial_rotary_factor": ("rotary_pct",)}
    for model_type in ("gpt_neox", "gpt_neox_japanese")
}


#: model types whose config class sets a partial_rotary_factor default (``kwargs.setdefault`` in its
#: ``__post_init__``): a config without one rotates that fraction of head_dim in transformers
_CLASS_PARTIAL = {
    **dict.fromkeys(("glm", "glm4", "glm4_moe", "glm4v_moe_text", "dots3_note", "nemotron", "persimmon", "phi"), 0.5),
    **dict.fromkeys(("recurrent_gemma",), 0.5),
    **dict.fromkeys(("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "stablelm"), 0.25),
}


def class_partial(model_type: str) -> float | None:
    """The partial_rotary_factor ``model_type``'s config class takes when a config gives none (None: 1).

    >>> class_partial("gpt_neox"), class_partial("phi"), class_partial("llama")
    (0.25, 0.5, None)
    """
    if model_type in _CLASS_PARTIAL:
        return _CLASS_PARTIAL[model_type]
    return IMPLICIT_ROPE[model_type][1] if model_type in IMPLICIT_ROPE else None


def own_spelling(model_type: str, key: str) -> str:
    """The top-level name ``model_type``'s config class reads ``key`` (rope_theta, partial_rotary_factor) by.

    >>> own_spelling("gpt_neox", "rope_theta"), own_spelling("llama", "rope_theta")
    ('rotary_emb_base', 'rope_theta')
    """
    return _OWN_SPELLINGS.get(model_type, {}).get(key, (key,))[0]


def add_top_level(config: Mapping[str, Any], found: dict[str, Any], where: dict[str, str]) -> None:
    """Move the top-level keys transformers moves (``rope_theta``, ``partial_rotary_factor``, their other spellings,
    a model type's implicit defaults) into ``found`` where it lacks them, recording each one's key in ``where``.

    >>> found, where = {}, {}
    >>> add_top_level({"rotary_pct": 0.5}, found, where)
    >>> found, where
    ({'partial_rotary_factor': 0.5}, {'partial_rotary_factor': 'rotary_pct'})
    """
    model_type = config.get("model_type")
    own = _OWN_SPELLINGS.get(model_type, {}) if isinstance(model_type, str) else {}
    for key, spellings in _TOP_LEVEL.items():
        spellings = own.get(key, spellings)
        given = [name for name in spellings if config.get(name) is not None]
        if key not in found and given:
            values = {name: config[name] for name in given}
            if len(set(map(repr, values.values()))) > 1:
                raise ParameterError(
                    f"config.json: {' and '.join(f'{n} = {config_value(v)}' for n, v in values.items())} disagree",
                    hint=f"keep one of {', '.join(given)}",
                )
            found[key], where[key] = config[given[0]], given[0]
    from_gguf = GGUF_KEYS in config  # llama.cpp's settings: head_dim is already the rotated width
    if (
        isinstance(model_type, str)
        and model_type in _CLASS_PARTIAL
        and "partial_rotary_factor" not in found
        and not from_gguf
    ):
        default = _CLASS_PARTIAL[model_type]
        found["partial_rotary_factor"] = default
        where["partial_rotary_factor"] = f"partial_rotary_factor (the {model_type} config's default {default})"
    if isinstance(model_type, str) and model_type in IMPLICIT_ROPE:
        theta, partial, _ = IMPLICIT_ROPE[model_type]
        found.setdefault("rope_theta", theta)
        if partial is not None and "partial_rotary_factor" not in found and not from_gguf:
            # GPTNeoXConfig: rotary_pct defaults to 0.25 (a GGUF file's rope.dimension_count is the rotated width)
            found["partial_rotary_factor"], where["partial_rotary_factor"] = partial, "rotary_pct (default 0.25)"
