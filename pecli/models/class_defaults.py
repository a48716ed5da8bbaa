"""A config.json as it ships, with the keys its transformers config class fills in when they are left out.

Gemma 3's ``text_config`` gives no ``num_attention_heads``, ``head_dim``, ``rope_theta`` or ``layer_types``:
``Gemma3TextConfig`` takes its defaults (8 heads of 256, bases 1e6 and 1e4, every 6th layer full). pecli
reads the class's defaults from :data:`~pecli.models.transformers_families.CLASS_DEFAULTS` (written from
transformers' source by scripts/rope_families.py), filling only a key the config leaves out, each with a note.

>>> config, notes = with_class_defaults({"hidden_size": 2560, "num_hidden_layers": 4}, "gemma3_text")
>>> config["num_attention_heads"], config["head_dim"], notes[0]
(8, 256, "head_dim not given: gemma3_text's default 256")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pecli.errors import ParameterError
from pecli.models.encoding import config_int
from pecli.models.gguf import GGUF_KEYS
from pecli.models.rope_layers import nested_rope_keys
from pecli.models.transformers_families import CLASS_DEFAULTS

__all__ = [
    "CLASS_ORIGINAL_CONTEXT",
    "HEAD_DIM_IS_HIDDEN_OVER_HEADS",
    "HEAD_DIM_IS_QK_ROPE",
    "HEAD_DIM_KEYS",
    "LENGTH_KEYS",
    "with_class_defaults",
]

#: the head width, by the keys configs spell it, first found wins: transformers' rotary init reads
#: ``head_dim`` (Mistral 4 and dots3 halve or quarter it by partial_rotary_factor, and their
#: ``qk_rope_head_dim`` is that result); DeepSeek's configs as they ship have only ``qk_rope_head_dim``
#: (DeepseekV3Config sets head_dim to it); Megatron's kv_channels, …
HEAD_DIM_KEYS = ("head_dim", "qk_rope_head_dim", "attention_head_dim", "kv_channels")

#: model types whose config class declares head_dim and sets it to qk_rope_head_dim whatever config.json says
#: (multi-head latent attention: the rotary module rotates qk_rope_head_dim columns). DeepSeek V3, AXK1, Kimi
#: Linear and Youtu do the same but declare no head_dim field, so a file's head_dim is set after and wins there.
#: tests/models/test_sweep_s8.py checks the set against the installed transformers' config classes
HEAD_DIM_IS_QK_ROPE = frozenset(
    {
        "axk2",
        "bailing_hybrid",
        "deepseek_v2",
        "deepseek_v32",
        "glm5_next",
        "glm5_next_text",
        "glm_moe_dsa",
        "hy_v4",
        "minicpm3",
        "mistral_large4",
        "mistral_large4_text",
    }
)

#: model types whose config class declares head_dim and sets it to hidden_size // num_attention_heads whatever
#: config.json says (DeepSeek-OCR 2's and Unlimited-OCR's text configs): their attention and rotary module use that
#: width, so a file's differing head_dim is not read. tests/models/test_sweep_s8.py checks the set
HEAD_DIM_IS_HIDDEN_OVER_HEADS = frozenset(
    {"deepseek_ocr2", "deepseek_ocr2_text", "unlimited_ocr", "unlimited_ocr_text"}
)

#: the model width and head count, by the keys configs spell them (transformers' attribute_map aliases:
#: DBRX's n_heads, Moonshine's decoder_num_attention_heads, …)
HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
HEADS_KEYS = (
    "num_attention_heads",
    "n_head",
    "n_heads",
    "num_heads",
    "decoder_attention_heads",
    "decoder_num_attention_heads",
)

#: the context, by the keys configs spell it, first found wins
#: (RecurrentGemma's rotary module reads no length at all; its local attention's ``attention_window_size``
#: is the span the table is used over, so it is the default length)
LENGTH_KEYS = (
    "max_position_embeddings",
    "max_seq_len",
    "n_positions",
    "seq_length",
    "model_max_length",
    "attention_window_size",
)

#: model types whose config class has an ``original_max_position_embeddings`` default (Phi3Config's 4096), which
#: transformers' standardize_rope_params writes over the rope parameters' own for llama3, yarn and longrope
CLASS_ORIGINAL_CONTEXT = {
    model_type: int(values["original_max_position_embeddings"])
    for model_type, values in CLASS_DEFAULTS.items()
    if "original_max_position_embeddings" in values
}

#: model types whose config class derives ``layer_types`` when the config leaves it out (their ``__post_init__``):
#: layer i is full_attention when (i + 1) % pattern == 0, else sliding_attention; the pattern is the config's
#: ``sliding_window_pattern`` where the class reads it (Gemma 3, T5Gemma 2: default 6), else fixed (Gemma 3n: 5)
_LAYER_PATTERN: dict[str, tuple[int, bool]] = {
    "gemma3_text": (6, True),
    "t5gemma2_text": (6, True),
    "gemma3n_text": (5, False),
}


def with_class_defaults(config: Mapping[str, Any], model_type: str) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """``config`` with the keys pecli's rope reading uses that it leaves out filled from ``model_type``'s config
    class (never a key it gives, nor a key spelled another way), and a note naming each one filled.

    The context (``max_position_embeddings``) is left out: a table's length is the caller's to give unless its
    rope type reads the context (rope_config fills it then).

    A GGUF file's settings (llama.cpp's) and a remote-code config (``auto_map``: its own class) are read as given.

    >>> with_class_defaults({"num_attention_heads": 4, "rope_theta": 5.0}, "gemma3_text")[0]["num_attention_heads"]
    4
    """
    defaults = CLASS_DEFAULTS.get(model_type)
    if not defaults or GGUF_KEYS in config or config.get("auto_map") is not None:
        return config, ()
    filled = dict(config)
    notes: list[str] = []

    def fill(key: str, spellings: tuple[str, ...]) -> None:
        if key in defaults and all(config.get(name) is None for name in spellings):
            filled[key] = defaults[key]
            notes.append(f"{key} not given: {model_type}'s default {defaults[key]!r}")

    head_key = next((key for key in HEAD_DIM_KEYS if key in defaults), None)
    if head_key is not None:
        fill(head_key, HEAD_DIM_KEYS)
    fill("hidden_size", HIDDEN_KEYS)
    fill("num_attention_heads", HEADS_KEYS)
    if model_type in _LAYER_PATTERN and config.get("layer_types") is None:
        filled["layer_types"], note = _layer_types(filled, model_type, config)
        notes.append(note)
    settings = config.get("rope_parameters")
    keys = set(nested_rope_keys({**filled, "model_type": model_type}))  # transformers: keys that are layer types
    nested = bool(keys)
    flat = [config.get(name) for name in ("rope_scaling", "rope_parameters")]
    given = any(isinstance(value, dict) and value.get("rope_theta") is not None for value in flat)
    if not nested and not given:
        fill("rope_theta", ("rope_theta", "rotary_emb_base"))
        if not settings:
            fill("rope_local_base_freq", ("rope_local_base_freq",))
    elif nested and config.get("rope_theta") is None:
        # per layer type: transformers' convert_rope_params_to_dict sets a layer type's missing rope_theta from
        # default_theta (the local base for sliding_attention where the class has one)
        layers: dict[str, Any] = {}
        for name, value in settings.items():  # type: ignore[union-attr]
            if (
                name in keys
                and isinstance(value, dict)
                and value.get("rope_theta") is None
                and "rope_theta" in defaults
            ):
                local = name == "sliding_attention" and "rope_local_base_freq" in defaults
                theta = defaults["rope_local_base_freq" if local else "rope_theta"]
                value = {**value, "rope_theta": theta}
                notes.append(f"rope_parameters.{name}.rope_theta not given: {model_type}'s default {theta!r}")
            layers[name] = value
        filled["rope_parameters"] = layers
    return filled, tuple(notes)


def _layer_types(filled: Mapping[str, Any], model_type: str, config: Mapping[str, Any]) -> tuple[list[str], str]:
    """The ``layer_types`` ``model_type``'s config class derives, and a note saying how."""
    pattern, reads_key = _LAYER_PATTERN[model_type]
    spelled = reads_key and config.get("sliding_window_pattern") is not None
    if spelled:
        pattern = config_int(config, "sliding_window_pattern")
    count_given = config.get("num_hidden_layers") is not None
    if not count_given and "num_hidden_layers" not in CLASS_DEFAULTS.get(model_type, {}):
        raise ParameterError(
            "config.json has no layer_types and no num_hidden_layers to derive them from",
            hint="add layer_types (one attention type per layer) to the config",
        )
    count = config_int(config if count_given else CLASS_DEFAULTS[model_type], "num_hidden_layers")
    types = ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(count)]
    source = (
        f"sliding_window_pattern {pattern}"
        if spelled
        else f"sliding_window_pattern's default {pattern}"
        if reads_key
        else f"its fixed pattern {pattern}"
    )
    layers = f"num_hidden_layers {count}" + ("" if count_given else f" ({model_type}'s default)")
    note = (
        f"layer_types not given: {model_type} derives them from {source} over {layers}: "
        f"every {pattern}th layer full_attention, the others sliding_attention"
    )
    return types, note
