"""A model's ``config.json`` as ``save_pretrained`` writes it → the pecli scheme, parameters and sizes of
its position encoding, and the config keys each value came from.

RoPE follows transformers 5's ``modeling_rope_utils.py`` (``rope_parameters``, or the older
``rope_theta`` + ``rope_scaling``; head dimension ``head_dim`` or ``hidden_size / num_attention_heads``;
``partial_rotary_factor`` rotates ``int(head_dim · factor)`` columns, the width of the module's cos and
sin). ALiBi models (BLOOM, MPT, Falcon with ``alibi: true``) map to ``alibi``, fairseq-style sinusoidal
models to their preset, and learned positions to the weight that holds the table.

>>> encoding = model_encoding({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
...     "max_position_embeddings": 128, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}})
>>> encoding.scheme, encoding.dim, encoding.length, encoding.params
('rope', 16, 128, {'base': 500000.0, 'layout': 'half'})
>>> encoding.provenance["rope_theta"]
('rope_parameters.rope_theta', 500000.0)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pecli.errors import ParameterError, TableFileError
from pecli.models.encoding import (
    CONFIG_INT_MAX,
    ROPE_TYPES,
    ModelEncoding,
    config_int,
    config_object,
    config_value,
    known_rope_type,
)
from pecli.models.rope_config import has_rope, rope_encoding
from pecli.models.transformers_families import CLASS_DEFAULTS
from pecli.text import literal, literal_repr

__all__ = [
    "ROPE_TYPES",
    "LengthSetting",
    "ModelEncoding",
    "config_int",
    "image_size_takes_pair",
    "known_rope_type",
    "length_setting",
    "model_encoding",
    "read_config",
    "stale_image_size",
    "stale_length_setting",
]

#: fairseq-style sinusoidal tables (transformers' ``*SinusoidalPositionalEmbedding``): model_type ->
#: (preset, config key of the length); these offset positions by padding_idx + 1
_FAIRSEQ_SINUSOIDAL = {
    "m2m_100": "max_position_embeddings",
    "fsmt": "max_position_embeddings",
    "speech_to_text": "max_source_positions",
}

#: learned absolute positions: model_type -> (length key, width key, the weight holding the table,
#: rows before the first token — OPT's OPTLearnedPositionalEmbedding offsets by 2)
_LEARNED = {
    "bert": ("max_position_embeddings", "hidden_size", "embeddings.position_embeddings.weight", 0),
    "roberta": ("max_position_embeddings", "hidden_size", "embeddings.position_embeddings.weight", 0),
    "gpt2": ("n_positions", "n_embd", "wpe.weight", 0),
    "opt": ("max_position_embeddings", "hidden_size", "decoder.embed_positions.weight", 2),
    "esm": ("max_position_embeddings", "hidden_size", "embeddings.position_embeddings.weight", 0),
}


#: learned tables sized by one config key that another table shares (transformers' BartLearnedPositionalEmbedding:
#: the encoder's and the decoder's tables both hold max_position_embeddings + 2 rows): model_type -> (length key,
#: the weights, rows before the first token)
_SHARED_LENGTH = {
    model_type: ("max_position_embeddings", ("encoder.embed_positions.weight", "decoder.embed_positions.weight"), 2)
    for model_type in ("bart", "mbart")
}


@dataclass(frozen=True)
class LengthSetting:
    """The config key sizing a learned table: its value as stated, the rows before the first token (OPT's and
    BART's offset of 2), and the other weights the same key sizes (BART's other table), named as in the file."""

    key: str
    stated: int
    offset: int
    siblings: tuple[str, ...] = ()

    def needed(self, rows: int) -> int:
        """The value a table of ``rows`` rows needs."""
        return rows - self.offset


def length_setting(config: Mapping[str, Any], tensor: str) -> LengthSetting | None:
    """How ``config`` sizes learned weight ``tensor`` (None when it does not, or its value is no integer).

    >>> length_setting({"model_type": "bart", "max_position_embeddings": 16}, "model.encoder.embed_positions.weight")
    ... # doctest: +NORMALIZE_WHITESPACE
    LengthSetting(key='max_position_embeddings', stated=16, offset=2,
                  siblings=('model.decoder.embed_positions.weight',))
    """
    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        return None
    if model_type in _LEARNED:
        length_key, _, weight, offset = _LEARNED[model_type]
        weights: tuple[str, ...] = (weight,)
    elif model_type in _SHARED_LENGTH:
        length_key, weights, offset = _SHARED_LENGTH[model_type]
    else:
        return None
    stated = config.get(length_key)
    match = next((weight for weight in weights if tensor == weight or tensor.endswith("." + weight)), None)
    if match is None or type(stated) is not int:
        return None
    prefix = tensor[: len(tensor) - len(match)]
    return LengthSetting(length_key, stated, offset, tuple(prefix + weight for weight in weights if weight != match))


def stale_length_setting(config: Mapping[str, Any], tensor: str, rows: int) -> tuple[str, int, int] | None:
    """The key of a learned-position ``config`` that sizes weight ``tensor``, its value and the value a table of
    ``rows`` rows needs, when they differ (a resampled copy whose config still states the old length, which
    transformers refuses to load); None when they agree or the config does not size that tensor.

    >>> stale_length_setting({"model_type": "bert", "max_position_embeddings": 40},
    ...                      "embeddings.position_embeddings.weight", 64)
    ('max_position_embeddings', 40, 64)
    >>> stale_length_setting({"model_type": "opt", "max_position_embeddings": 40}, "decoder.embed_positions.weight", 66)
    ('max_position_embeddings', 40, 64)
    >>> stale_length_setting({"model_type": "bart", "max_position_embeddings": 16}, "encoder.embed_positions.weight",
    ...                      34)
    ('max_position_embeddings', 16, 32)
    >>> stale_length_setting({"model_type": "gpt2", "n_positions": 64}, "wpe.weight", 64) is None
    True
    """
    setting = length_setting(config, tensor)
    if setting is None or setting.stated == setting.needed(rows):
        return None
    return setting.key, setting.stated, setting.needed(rows)


#: vision families whose patch embedding reads image_size and patch_size as one number or a (height, width) pair
#: (transformers' ViTPatchEmbeddings and its copies); CLIP's and SigLIP's compute (image_size // patch_size) ** 2
#: from one number, a square grid only
_IMAGE_SIZE_PAIRS = frozenset({"vit", "deit", "dinov2", "beit", "vit_mae", "vit_msn", "data2vec-vision"})


def _pair(value: Any) -> tuple[int, int] | None:
    """An image_size or patch_size as (height, width): one positive int, or a list of two."""
    if type(value) is int:
        return (value, value) if value > 0 else None
    if isinstance(value, list) and len(value) == 2 and all(type(v) is int and v > 0 for v in value):
        return value[0], value[1]
    return None


def stale_image_size(
    config: Mapping[str, Any], positions: int, grid: tuple[int, int]
) -> tuple[str, int | list[int], int | list[int]] | None:
    """A vision config's ``image_size`` that sized a table of ``positions`` patches (image_size / patch_size per
    axis), its value and the value a ``grid`` (height, width) of patches needs, when they differ (a ViT's resampled
    ``pos_embed`` copy); None when they agree, or the config does not size this table so. A square grid keeps
    a number a number; any other needs the (height, width) pair ViT's config takes.

    >>> stale_image_size({"image_size": 224, "patch_size": 16}, 196, (24, 24))
    ('image_size', 224, 384)
    >>> stale_image_size({"image_size": 224, "patch_size": 16}, 196, (24, 32))
    ('image_size', 224, [384, 512])
    >>> stale_image_size({"image_size": [224, 320], "patch_size": 16}, 280, (14, 14))
    ('image_size', [224, 320], [224, 224])
    >>> stale_image_size({"image_size": 224, "patch_size": 16}, 196, (14, 14)) is None
    True
    >>> stale_image_size({"image_size": 224, "patch_size": 16}, 100, (24, 24)) is None  # 224/16 is not this grid
    True
    """
    stated: Any = config.get("image_size")
    size, patch = _pair(stated), _pair(config.get("patch_size"))
    if size is None or patch is None or (size[0] // patch[0]) * (size[1] // patch[1]) != positions:
        return None
    needed = [grid[0] * patch[0], grid[1] * patch[1]]
    if type(stated) is int and needed[0] == needed[1]:
        return None if needed[0] == stated else ("image_size", stated, needed[0])
    if needed == [size[0], size[1]]:
        return None
    return "image_size", stated, needed


def image_size_takes_pair(config: Mapping[str, Any]) -> bool:
    """Whether ``config``'s model reads an image_size pair (ViT and its copies), so can state a non-square grid.

    >>> image_size_takes_pair({"model_type": "vit"}), image_size_takes_pair({"model_type": "clip_vision_model"})
    (True, False)
    """
    return config.get("model_type") in _IMAGE_SIZE_PAIRS


#: families whose model applies rotary only when ``position_embedding_type`` says so, whatever rope keys the file
#: holds (EsmConfig's to_dict writes rope_theta even for an absolute model): model_type -> (the config class's
#: default, the value that means rotary)
_ROTARY_GATED: dict[str, tuple[str | None, str]] = {"esm": ("absolute", "rotary"), "granitemoehybrid": (None, "rope")}


def read_config(path: str) -> dict[str, Any]:
    """The JSON object in ``path`` (a ``config.json``, or a directory holding one), or a ``.gguf`` file's settings.

    >>> read_config("no/such/dir")
    Traceback (most recent call last):
    ...
    pecli.errors.TableFileError: no such config: 'no/such/dir' (give a config.json or a model directory holding one)
"""
    from pecli.models.gguf import gguf_config, is_gguf_path
    from pecli.models.hub_cache import is_model_id, resolve_model_id

    if path == "-" and not os.path.exists(path):  # the other inputs' spelling of standard input
        raise TableFileError(
            "a model's config is read from a file or a model directory, not from standard input ('-')",
            hint="save it to a file first, e.g. config.json, and give its path",
        )
    if is_gguf_path(path) and not os.path.isdir(path):  # llama.cpp's GGUF: its metadata as a config
        return gguf_config(path)
    if is_model_id(path):  # org/name[@revision]: its snapshot in the local Hugging Face cache
        path = resolve_model_id(path)
    file = os.path.join(path, "config.json") if os.path.isdir(path) else path
    if not os.path.exists(file):
        if os.path.isdir(path):
            raise TableFileError(
                f"{literal(path)} has no config.json", hint="give a model directory as save_pretrained writes it"
            )
        raise TableFileError(
            f"no such config: {literal_repr(path)}", hint="give a config.json or a model directory holding one"
        )
    from pecli.io.bounded import read_small_json

    config = read_small_json(file, what="config.json")
    if not isinstance(config, dict):
        raise TableFileError(f"{config_value(file)} holds no JSON object", hint="give a model's config.json")
    from pecli.models.gguf import gguf_view_config, is_gguf_view

    if is_gguf_view(config):  # `pecli info CONFIG --as gguf` read back: as the .gguf it describes
        return gguf_view_config(file, config)
    return config


#: model types of vision encoders whose rotary embedding is 2-D over patch rows and columns (transformers
#: 5.23's vision rotary classes: scripts/rope_families.py's "own_scaled_init" vision entries, and DINOv3's)
VISION_ROPE = frozenset(
    {
        "cohere_compass_vision",
        "dinov3_vit",
        "dots3_note_vision_encoder",
        "edgetam_video",
        "eomt_dinov3",
        "ernie4_5_vl_moe_vision",
        "exaone4_5_vision",
        "gemma4_vision",
        "glm4v_moe_vision",
        "glm4v_vision",
        "glm5_next_vision",
        "glm_ocr_vision",
        "inkling2_vision",
        "kimi_k25_vision",
        "lfm3_vl_vision",
        "llama4_vision_model",
        "minimax_m3_vl_vision",
        "mlcd_vision_model",
        "muse_glimmer_vision",
        "muse_spark_vision",
        "paddleocr_vl_vision",
        "pixtral",
        "qwen2_5_omni_vision_encoder",
        "qwen2_5_vl_vision",
        "qwen2_vl_vision",
        "qwen3_5_moe_vision",
        "qwen3_5_vision",
        "qwen3_omni_moe_vision_encoder",
        "qwen3_vl_moe_vision",
        "qwen3_vl_vision",
        "qwen4_exp_vision",
        "sam2_video",
        "sam3_tracker_video",
        "sam3_vit_model",
        "step3p5_vision",
        "video_llama_3_vision",
    }
)


#: sub-configs a composite (multimodal, omni, encoder-decoder) model keeps its text model's settings in
_TEXT_CONFIGS = ("text_config", "language_config", "llm_config", "thinker_config", "decoder_config", "decoder")


def model_encoding(
    config: Mapping[str, Any], *, source: str = "config.json", layer_type: str | None = None
) -> ModelEncoding:
    """The position encoding ``config`` (a parsed ``config.json``) implies; see the module's doc.

    A config without position settings, an unknown ``rope_type`` or inconsistent values is a
    :class:`~pecli.errors.ParameterError` whose message names ``source``, the file the config came from.
    A composite config (a multimodal model's) is read through its ``text_config``; ``layer_type``
    picks one layer type's settings of per-layer ``rope_parameters``.

    >>> model_encoding({"model_type": "llava", "text_config": {"model_type": "llama", "head_dim": 8,
    ...     "max_position_embeddings": 16, "rope_theta": 10000.0}}).fields["base"]
    'text_config.rope_theta'
    """
    try:
        encoding = _model_encoding(config, layer_type, depth=0)
    except ParameterError as error:
        message, hint = error._templates
        if source != "config.json" and message.startswith("config.json"):
            raise type(error)(literal(source) + message.removeprefix("config.json"), hint=hint) from None
        raise
    from pecli.models.gguf import GGUF_KEYS

    gguf_keys = config.get(GGUF_KEYS)
    return encoding if not isinstance(gguf_keys, dict) else _renamed(encoding, gguf_keys)


def _renamed(encoding: ModelEncoding, names: Mapping[str, str]) -> ModelEncoding:
    """``encoding`` with each parameter's field named as ``names`` maps it (a .gguf's config keys to its GGUF keys),
    so that a value the scheme refuses is blamed on the key in the file.

    >>> encoding = ModelEncoding("llama", "rope", fields={"base": "rope_parameters.rope_theta", "dim": "head_dim"})
    >>> _renamed(encoding, {"rope_parameters.rope_theta": "llama.rope.freq_base"}).fields
    {'base': 'llama.rope.freq_base', 'dim': 'head_dim'}
    """
    return replace(
        encoding,
        fields={what: names.get(key, key) for what, key in encoding.fields.items()},
        layers=tuple((name, _renamed(layer, names)) for name, layer in encoding.layers),
    )


def _model_encoding(config: Mapping[str, Any], layer_type: str | None, *, depth: int) -> ModelEncoding:
    model_type = "" if config.get("model_type") is None else config["model_type"]
    if not isinstance(model_type, str):
        raise ParameterError(f"config.json: model_type: expected a string, got {config_value(model_type)}")
    if model_type == "falcon" and config.get("alibi"):
        return _falcon_alibi(config)
    if model_type == "bloom":
        return _alibi(config, model_type, ("n_head", "num_attention_heads"))
    if model_type == "mpt" and config_object(config, "attn_config").get("alibi", True):
        return _alibi(config, model_type, ("n_heads",))
    if model_type in T5_BUCKETS:
        return _t5(config, model_type, layer_type)
    if model_type in VISION_ROPE:
        raise ParameterError(
            f"config.json: model_type {config_value(model_type)} is a vision encoder: its rope turns over the "
            "image's patch rows and columns (2-D), so it has no 1-D table of positions",
            hint="pecli's rope2d scheme computes 2-D rope; a text model's table is read from the full model's "
            "config.json (its text_config)",
        )
    rotary_off = False
    if model_type in _ROTARY_GATED:
        default, rotary = _ROTARY_GATED[model_type]
        kind = config.get("position_embedding_type", default)
        rotary_off = kind != rotary
        if rotary_off and not (model_type in _LEARNED and kind == "absolute"):
            raise ParameterError(
                f"config.json: position_embedding_type {config_value(kind)}: {literal(model_type)} applies no rotary "
                "embedding and no table of positions",
                hint=(
                    f"its rope keys are unused; position_embedding_type {literal_repr(rotary)} is "
                    f"a rotary {literal(model_type)}"
                ),
            )
    if has_rope(config, model_type) and not rotary_off:
        return rope_encoding(config, model_type, layer_type=layer_type)
    for key in _TEXT_CONFIGS:  # a sub-config of the wrong JSON type is named, not passed over as absent
        config_object(config, key)
    sub = next((key for key in _TEXT_CONFIGS if isinstance(config.get(key), dict)), None)
    if sub is None and isinstance(config.get("vision_config"), dict):
        raise ParameterError(
            f"config.json (model_type {config_value(model_type)}) holds vision_config only: a vision encoder's "
            "positions are over the image's patches (2-D), not a 1-D table",
            hint="a text model's table is read from a config with text_config (or the text model's own settings)",
        )
    if sub is not None and depth < 2:
        try:
            inner = _model_encoding(config[sub], layer_type, depth=depth + 1)
        except ParameterError as error:  # named where it is: the sub-config's head_dim, not a top-level one
            message, hint = error._templates
            if not message.startswith("config.json"):
                raise
            raise type(error)(f"config.json's {sub}" + message.removeprefix("config.json"), hint=hint) from None
        return _prefixed(inner, sub, model_type)
    if model_type == "marian":
        return _sinusoidal(config, model_type, "marian", "max_position_embeddings", offset=None)
    if model_type == "whisper":
        # WhisperEncoder's embed_positions is sinusoids(max_source_positions, d_model): split [sin | cos],
        # log-timescale step ln(10000)/(d/2 − 1) — tensor2tensor's table; the decoder's positions are learned
        return _sinusoidal(
            config, model_type, "tensor2tensor", "max_source_positions", offset=None, note="the encoder's table"
        )
    if model_type in _FAIRSEQ_SINUSOIDAL:
        return _sinusoidal(config, model_type, "fairseq", _FAIRSEQ_SINUSOIDAL[model_type], offset="pad_token_id")
    if model_type in _LEARNED:
        length_key, width_key, weight, offset = _LEARNED[model_type]
        length = config_int(config, length_key)
        return ModelEncoding(
            model_type,
            None,
            length=length + offset,
            dim=config_int(config, width_key),
            provenance={"length": (length_key, length), "dim": (width_key, config[width_key])},
            learned_weight=weight,
        )
    if model_type in CLASS_DEFAULTS and config.get("auto_map") is None:
        # a rotary family's config that spells no rope key (huggyllama/llama-7b predates rope_theta): transformers
        # runs its config class's defaults, which rope_encoding fills, each with a note
        return rope_encoding(config, model_type, layer_type=layer_type)
    raise ParameterError(
        f"config.json (model_type {config_value(model_type)}) has no position settings pecli knows",
        hint="pecli reads rope_parameters/rope_theta, ALiBi (BLOOM, MPT, Falcon), T5's relative buckets (T5, mT5, "
        "UMT5, LongT5, Pop2Piano, SwitchTransformers), sinusoidal (Marian, M2M100, FSMT, "
        "Whisper, Speech2Text) and learned (BERT, RoBERTa, GPT-2, OPT, ESM) configs",
    )


def _prefixed(encoding: ModelEncoding, sub: str, model_type: str) -> ModelEncoding:
    """``encoding`` of sub-config ``sub``, its fields and provenance named from the top of the file."""
    import dataclasses

    def named(key: str) -> str:
        return " × ".join(f"{sub}.{part}" for part in key.split(" × "))

    return dataclasses.replace(
        encoding,
        model_type=f"{model_type}/{encoding.model_type}" if model_type else encoding.model_type,
        provenance={what: (named(key), value) for what, (key, value) in encoding.provenance.items()},
        fields={what: named(key) for what, key in encoding.fields.items()},
        layers=tuple((name, _prefixed(layer, sub, model_type)) for name, layer in encoding.layers),
    )


def _alibi(config: Mapping[str, Any], model_type: str, head_keys: tuple[str, ...]) -> ModelEncoding:
    key = next((k for k in head_keys if k in config), head_keys[0])
    heads = config_int(config, key)
    length_key = next((k for k in ("max_seq_len", "max_position_embeddings") if k in config), None)
    length = config_int(config, length_key) if length_key else None
    provenance = {"heads": (key, heads)} | ({"length": (length_key, length)} if length_key else {})
    fields = {"heads": key} | ({"length": length_key} if length_key else {})
    return ModelEncoding(model_type, "alibi", {"heads": heads}, length=length, provenance=provenance, fields=fields)


def _falcon_alibi(config: Mapping[str, Any]) -> ModelEncoding:
    """Falcon with ``alibi: true``: FalconModel's bias ``build_alibi_tensor(...) / math.sqrt(head_dim)``.

    Its ``build_alibi_tensor`` is BLOOM's slopes times the key position j, in bfloat16
    (``slopes[..., None].bfloat16() * arange_tensor``); the model divides it by √(hidden_size // heads)
    and passes it as the attention mask SDPA adds to q·k/√head_dim. FalconConfig maps ``n_head`` to
    ``num_attention_heads`` and reads ``n_embed`` for ``hidden_size``; absent keys take its defaults.

    >>> encoding = _falcon_alibi({"model_type": "falcon", "alibi": True, "n_head": 32, "hidden_size": 2048})
    >>> encoding.params, encoding.provenance["head_dim"]
    ({'heads': 32, 'form': 'key', 'arithmetic': 'bfloat16', 'head_dim': 64}, ('hidden_size // n_head', 64))
    """
    defaults = CLASS_DEFAULTS["falcon"]
    notes: list[str] = []

    def value(keys: tuple[str, ...]) -> tuple[str, int]:
        key = next((k for k in keys if config.get(k) is not None), None)
        if key is None:
            notes.append(f"{keys[0]} not in config.json: FalconConfig's default {defaults[keys[0]]}")
            return keys[0], int(defaults[keys[0]])
        return key, config_int(config, key)

    heads_key, heads = value(("num_attention_heads", "n_head"))
    width_key, width = value(("hidden_size", "n_embed"))
    if width < heads:
        raise ParameterError(
            f"config.json: {width_key}: {width} is less than {heads_key} {heads}, so the head dimension "
            f"{width_key} // {heads_key} is 0",
            hint=f"a Falcon config's {width_key} is a multiple of its {heads_key}",
        )
    head_dim = width // heads
    encoding = _alibi(config, "falcon", (heads_key,))
    return replace(
        encoding,
        params={**encoding.params, "form": "key", "arithmetic": "bfloat16", "head_dim": head_dim},
        provenance={**encoding.provenance, "head_dim": (f"{width_key} // {heads_key}", head_dim)},
        fields={**encoding.fields, "head_dim": f"{width_key} // {heads_key}"},
        notes=(*encoding.notes, *notes),
    )


#: models whose attention adds a learned bias per relative-position bucket (transformers'
#: ``T5Attention._relative_position_bucket`` and its copies): the encoder's buckets are bidirectional,
#: the decoder's causal
T5_BUCKETS = frozenset({"t5", "mt5", "umt5", "longt5", "pop2piano", "switch_transformers"})


def _t5(config: Mapping[str, Any], model_type: str, layer_type: str | None) -> ModelEncoding:
    """T5's bucket tables: one per layer type, ``encoder`` (bidirectional) and ``decoder`` (causal)."""
    provenance: dict[str, tuple[str, Any]] = {}
    params: dict[str, Any] = {}
    for what, key, default in (
        ("num_buckets", "relative_attention_num_buckets", 32),
        ("max_distance", "relative_attention_max_distance", 128),
    ):  # T5Config's defaults when the config leaves them out
        params[what] = config_int(config, key) if key in config else default
        provenance[what] = (key, params[what])
    fields = {what: key for what, (key, _) in provenance.items()}
    encodings = {
        name: ModelEncoding(
            model_type,
            "t5",
            params | {"bidirectional": name == "encoder"},
            provenance=provenance,
            fields=fields,
            layer_type=name,
            notes=(f"the {name}'s self-attention buckets ({'bidirectional' if name == 'encoder' else 'causal'})",),
        )
        for name in ("encoder", "decoder")
    }
    if layer_type is not None:
        if layer_type not in encodings:
            raise ParameterError(
                f"config.json: {literal(model_type)} has the layer types encoder and decoder,"
                f" not {config_value(layer_type)}",
                hint="pick {layer_type=encoder} or {layer_type=decoder}",
            )
        return encodings[layer_type]
    return replace(encodings["encoder"], layer_type=None, notes=(), layers=tuple(encodings.items()))


def _sinusoidal(
    config: Mapping[str, Any], model_type: str, preset: str, length_key: str, *, offset: str | None, note: str = ""
) -> ModelEncoding:
    provenance: dict[str, tuple[str, Any]] = {
        "dim": ("d_model", config_int(config, "d_model")),
        "length": (length_key, config_int(config, length_key)),
    }
    params: dict[str, Any] = {}
    if offset is not None:
        # fairseq's make_positions: the first token is position padding_idx + 1 (2 for padding_idx 1)
        pad = config.get(offset, 1)
        if not isinstance(pad, int) or isinstance(pad, bool) or not 0 <= pad < CONFIG_INT_MAX:
            raise ParameterError(f"config.json: {offset}: expected a non-negative integer, got {config_value(pad)}")
        params["offset"] = pad + 1
        provenance["offset"] = (offset, pad)
    return ModelEncoding(
        model_type,
        "sinusoidal",
        params,
        preset=preset,
        length=provenance["length"][1],
        dim=provenance["dim"][1],
        provenance=provenance,
        notes=(note,) if note else (),
        fields={"dim": "d_model", "length": length_key} | ({"offset": offset} if offset is not None else {}),
    )
