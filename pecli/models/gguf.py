"""A GGUF file's metadata (llama.cpp's format) → the transformers-style config :mod:`pecli.models.config` reads.

The keys are llama.cpp's (``gguf.constants.Keys``): ``general.architecture`` names the model
type, and under it ``ARCH.context_length``, ``ARCH.embedding_length``, ``ARCH.attention.head_count``
(``ARCH.attention.key_length`` the head width where given), ``ARCH.rope.freq_base``,
``ARCH.rope.dimension_count`` (the rotated columns) and ``ARCH.rope.scaling.*``. Frequency factors
live in tensors, as llama.cpp's ``convert_hf_to_gguf.py`` writes them:

- ``rope_freqs.weight``: one divisor per rotated pair (Llama 3.1's llama3 scaling, precomputed by
  the converter: 1 at high frequencies, ``factor`` at low ones, the smooth blend between); inv_freq
  is divided by it as is, which pecli spells as LongRoPE with equal short and long factors and no
  attention factor — the table transformers' llama3 module gives;
- ``rope_factors_long.weight`` / ``rope_factors_short.weight``: Phi-3's LongRoPE factors.

The file is read by pecli's own bounded parser (:func:`pecli.io.gguf.gguf_settings`): every length is
checked against the file's size, and only the architecture's keys are decoded — a tokenizer of
200,000 strings is skipped, where the ``gguf`` package's reader spent 35 s and 1 GB parsing it.
No package is needed.

>>> gguf_config("no/such.gguf")
Traceback (most recent call last):
...
pecli.errors.TableFileError: no such GGUF file: 'no/such.gguf' (check the path)
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from pecli.errors import ParameterError, TableFileError
from pecli.text import literal, literal_repr

__all__ = [
    "GGUF_KEYS",
    "GGUFWithoutSettings",
    "gguf_architecture",
    "gguf_config",
    "gguf_view_config",
    "has_swa_base",
    "is_gguf_path",
    "is_gguf_view",
]

#: the most a GGUF integer setting may be: what config.json's integers may be (encoding.CONFIG_INT_MAX)
_INT_MAX = 2**31 - 1
#: the widest rotary head read (as pecli.models.from_config.ROW_VALUES bounds a row): real heads are 64 to 512
_HEAD_WIDTH_MAX = 1 << 24
#: llama.cpp's architecture names that differ from the transformers model type of the same rotary
#: (gguf.constants.MODEL_ARCH_NAMES): Command R rotates adjacent pairs (transformers' CohereRotaryEmbedding,
#: llama.cpp's LLAMA_ROPE_TYPE_NORM without a converter permutation). deepseek2 holds DeepSeek V2 and V3, which
#: agree: V2's complex view and V3's rope_interleave (true by default) both rotate adjacent pairs, as NORM does.
#: The other names here are NORM architectures whose converter does not permute Q and K (llama.cpp's
#: src/llama-model.cpp, llama_model_rope_type: LLM_ARCH_ERNIE4_5_MOE, LLM_ARCH_CHATGLM, LLM_ARCH_DEEPSEEK2OCR are
#: LLAMA_ROPE_TYPE_NORM): ERNIE 4.5 MoE re-interleaves as ERNIE 4.5 does, ChatGLM's rotary is transformers' GLM
#: (adjacent pairs of x.reshape(…, rot_dim // 2, 2)), DeepSeek-OCR's language model is DeepSeek V2's. A name
#: transformers does not know would be read with rotate_half pairs, the opposite of what the file's model does.
_MODEL_TYPES = {
    "command-r": "cohere",
    "deepseek2": "deepseek_v2",
    "deepseek2-ocr": "deepseek_v2",
    "ernie4_5-moe": "ernie4_5_moe",
    "chatglm": "glm",
    "gptneox": "gpt_neox",
    "phi2": "phi",
    "qwen2moe": "qwen2_moe",
    "qwen3moe": "qwen3_moe",
    "qwen3next": "qwen3_next",
    "gpt-oss": "gpt_oss",
    "glm4moe": "glm4_moe",
    "hunyuan-dense": "hunyuan_v1_dense",
    "hunyuan-moe": "hunyuan_v1_moe",
    "falcon-h1": "falcon_h1",
    "lfm2moe": "lfm2_moe",
    "minimax-m2": "minimax_m2",
    "granitehybrid": "granitemoehybrid",
    # llama.cpp's converters register Gemma3ForCausalLM and Llama4ForConditionalGeneration: their text models
    "gemma3": "gemma3_text",
    "llama4": "llama4_text",
}
#: the architecture name llama.cpp's convert_hf_to_gguf.py writes for a transformers model type, where the two
#: differ: each converter class's model_arch (gguf.constants.MODEL_ARCH_NAMES) for the ForCausalLM class it
#: registers (GPTNeoXModel: GPTNeoXForCausalLM -> MODEL_ARCH.GPTNEOX; DeepseekV2Model: DeepseekV2ForCausalLM and
#: DeepseekV3ForCausalLM -> DEEPSEEK2; LlamaModel: MistralForCausalLM and MixtralForCausalLM -> LLAMA); the rest
#: of _MODEL_TYPES read backwards (gemma3_text -> gemma3, llama4_text -> llama4; Gemma 3's sliding layers' base is
#: rope.freq_base_swa, see swa_base_key)
_ARCHITECTURES = {
    **{model_type: arch for arch, model_type in _MODEL_TYPES.items() if arch not in ("deepseek2-ocr",)},
    "deepseek_v3": "deepseek2",
    "mistral": "llama",
    "mixtral": "llama",
}
#: llama.cpp's architectures that run without rotary embeddings (src/llama-model.cpp, llama_model_rope_type: the
#: LLAMA_ROPE_TYPE_NONE list, less GPT-J, whose transformers model rotates, and BLOOM, whose ALiBi pecli reads from
#: its head count), each with what it has instead; and StarCoder (gpt_bigcode), listed as NORM there but whose graph
#: adds its learned position_embd rows and applies no rope. Their llama.cpp names are read as no rotary settings
#: rather than as a model type pecli does not know, which would be taken for default RoPE.
_WITHOUT_ROPE = {
    **dict.fromkeys(("gpt2", "starcoder"), "learned absolute positions (its position_embd tensor)"),
    **dict.fromkeys(("mpt", "refact", "jais", "jina-bert-v2"), "ALiBi attention biases"),
    **dict.fromkeys(("t5", "t5encoder"), "T5's relative position buckets"),
    **dict.fromkeys(
        ("mamba", "mamba2", "jamba", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "nemotron_h", "nemotron_h_moe",
         "kimi-linear", "wavtokenizer-dec", "clip"),
        "no rotary position settings",
    ),
}  # fmt: skip
#: llama.cpp's rope.scaling.type values -> transformers' rope_type
_SCALING_TYPES = {"none": "default", "linear": "linear", "yarn": "yarn", "longrope": "longrope"}
#: llama.cpp's architectures whose sliding-window layers rotate with base 10000 (or rope.freq_base_swa) unscaled
_SWA_BASE_10000 = ("gemma3", "gemma3n", "gemma-embedding")
#: Phi-3's LongRoPE factor tensors (gguf.MODEL_TENSOR.ROPE_FACTORS_LONG, ROPE_FACTORS_SHORT)
_LONGROPE_TENSORS = ("rope_factors_long.weight", "rope_factors_short.weight")
#: the tensor types a factor tensor may have (pecli.io.gguf's names of ggml's F32, F16, F64, BF16)
_FLOAT_TYPES = ("float32", "float16", "float64", "bfloat16")


def gguf_architecture(model_type: str) -> str:
    """The ``general.architecture`` llama.cpp's converter writes for a transformers ``model_type``.

    >>> gguf_architecture("gpt_neox"), gguf_architecture("deepseek_v3"), gguf_architecture("llama")
    ('gptneox', 'deepseek2', 'llama')
    """
    return _ARCHITECTURES.get(model_type, model_type)


def has_swa_base(arch: str) -> bool:
    """Whether llama.cpp's ``arch`` rotates its sliding-window layers with a base of their own
    (``ARCH.rope.freq_base_swa``, default 10000) and no scaling, whatever the global layers' settings.

    >>> has_swa_base("gemma3"), has_swa_base("llama")
    (True, False)
    """
    return arch in _SWA_BASE_10000


class GGUFWithoutSettings(TableFileError):
    """A GGUF file that lacks a setting pecli needs (an architecture, a width): a file of something
    else than a model's position settings, unlike a setting that is there with a wrong value."""


def is_gguf_path(path: str) -> bool:
    """Whether ``path`` names a GGUF file (by its extension).

    >>> is_gguf_path("model.Q4_K_M.gguf"), is_gguf_path("config.json")
    (True, False)
    """
    return path.lower().endswith(".gguf")


def gguf_config(path: str) -> dict[str, Any]:
    """The transformers-style config dict of the GGUF file at ``path`` (its position settings only).

    Missing or unreadable files, settings of the wrong type, non-finite or non-positive numbers and
    factor tensors of the wrong length are :class:`~pecli.errors.TableFileError` or
    :class:`~pecli.errors.ParameterError` naming the GGUF key.
    """
    if not os.path.isfile(path):
        _refuse_other(path)
    from pecli.io.gguf import gguf_settings
    from pecli.io.source import open_source

    # opened as the table readers open it (a file up to 16 MiB read whole): its header is parsed once per run
    handle, name, size = open_source(path)
    with handle:  # pecli's own parser: every length checked, a vocabulary skipped unread
        tensors, fields = gguf_settings(handle, literal(name), size, _is_setting)  # names in messages: templates
        return _config(literal(path), fields, tensors)  # inside: the factor tensors are read from the open file


def _refuse_other(path: str) -> None:
    """The refusal of a path that is not a regular file: missing, or a directory, FIFO or device by name."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        raise TableFileError(f"no such GGUF file: {literal_repr(path)}", hint="check the path") from None
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "not a regular file"
    )
    raise TableFileError(f"{literal_repr(path)} is {kind}, not a GGUF file", hint="give a .gguf file of a model")


def _is_setting(key: str) -> bool:
    """The metadata keys decoded: the architecture and its own keys, not the tokenizer's or general.*."""
    return key == "general.architecture" or not key.startswith(("general.", "tokenizer."))


def is_gguf_view(document: Any) -> bool:
    """Whether a JSON document is pecli's GGUF-keys view of a config (``pecli info CONFIG --as gguf``).

    >>> is_gguf_view({"metadata": {"general.architecture": "llama"}, "tensors": {}, "notes": []})
    True
    >>> is_gguf_view({"model_type": "llama"})
    False
    """
    return (
        isinstance(document, dict)
        and "model_type" not in document
        and isinstance(document.get("metadata"), dict)
        and "general.architecture" in document["metadata"]
    )


def gguf_view_config(path: str, document: dict[str, Any]) -> dict[str, Any]:
    """The config of pecli's GGUF-keys view (:func:`is_gguf_view`): read as the .gguf file it describes would be.

    Its ``metadata`` are GGUF keys, its ``tensors`` the factor tensors as lists of numbers; a context
    length may be absent (the config gave none), as in the config it came from.

    >>> view = {"metadata": {"general.architecture": "llama", "llama.embedding_length": 64,
    ...     "llama.attention.head_count": 1, "llama.rope.freq_base": 500.0}, "tensors": {}, "notes": []}
    >>> config = gguf_view_config("g.json", view)
    >>> config["rope_parameters"], "max_position_embeddings" in config
    ({'rope_type': 'default', 'rope_theta': 500.0}, False)
    """
    tensors = document.get("tensors", {})
    path = literal(path)  # the file in messages, which are templates
    if not isinstance(tensors, dict):
        raise ParameterError(f"{path}: tensors: expected an object of factor lists, got {_shown(tensors)}")
    lists: dict[str, Any] = {}
    for name, values in tensors.items():
        if not isinstance(values, list) or not all(
            isinstance(value, (int, float)) and not isinstance(value, bool) for value in values
        ):
            raise ParameterError(f"{path}: tensors.{literal(name)}: expected a list of numbers, got {_shown(values)}")
        lists[name] = values
    return _config(path, document["metadata"], lists, view=True)


def _config(path: str, fields: dict[str, Any], tensors: dict[str, Any], *, view: bool = False) -> dict[str, Any]:
    # path: the file as messages name it, made literal (messages are templates)
    arch = fields.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise GGUFWithoutSettings(f"{path} has no general.architecture", hint="give a GGUF file of a model")
    if arch in _WITHOUT_ROPE:
        raise GGUFWithoutSettings(
            f"{path} is a {arch} model, which llama.cpp runs without RoPE: it has {_WITHOUT_ROPE[arch]}",
            hint="read its position settings from the model's config.json",
        )

    def key(name: str) -> str:
        return f"{arch}.{name}"

    def integer(name: str, required: bool = True) -> int | None:
        value = fields.get(key(name))
        if isinstance(value, list) and value and (name == "attention.head_count" or all(v == value[0] for v in value)):
            # a per-layer list (head counts of OpenELM, DeciLM): llama.cpp sizes the head by layer 0's count
            # (load_hparams: n_embd_head_k = n_embd / n_head(), n_head(il = 0)); another per-layer list of one value
            value = value[0]
        if value is None and not required:
            return None
        if value is None:
            # with rope settings beside it the file is a model's whose settings are broken, not one without any
            has_rope = any(isinstance(field, str) and field.startswith(key("rope.")) for field in fields)
            raise (TableFileError if has_rope else GGUFWithoutSettings)(
                f"{path} has no {literal(key(name))}", hint="pecli needs it to size the table"
            )
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _INT_MAX:
            raise ParameterError(
                f"{path}: {literal(key(name))}: expected an integer from 1 to {_INT_MAX}, got {_shown(value)}"
            )
        return value

    def real(name: str) -> float | None:
        """A finite number of either sign (yarn_ext_factor's negative value means llama.cpp's default)."""
        value = fields.get(key(name))
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(f"{path}: {literal(key(name))}: expected a number, got {_shown(value)}")
        if not math.isfinite(value):
            raise ParameterError(f"{path}: {literal(key(name))}: expected a finite number, got {_shown(value)}")
        return float(value)

    def number(name: str) -> float | None:
        value = fields.get(key(name))
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(f"{path}: {literal(key(name))}: expected a number, got {_shown(value)}")
        if not math.isfinite(value) or value <= 0:
            raise ParameterError(
                f"{path}: {literal(key(name))}: expected a positive finite number, got {_shown(value)}"
            )
        return float(value)

    hidden, heads = integer("embedding_length"), integer("attention.head_count")
    assert hidden is not None and heads is not None  # required
    head_dim = integer("attention.key_length", required=False) or hidden // heads
    rotated = integer("rope.dimension_count", required=False) or head_dim
    # named by the key that gave it, not as the config's head_dim pecli builds from it
    given = (
        key("rope.dimension_count")
        if fields.get(key("rope.dimension_count")) is not None
        else key("attention.key_length")
        if fields.get(key("attention.key_length")) is not None
        else f"{literal(key('embedding_length'))} / {literal(key('attention.head_count'))}"
    )
    if rotated < 2 or rotated % 2:
        raise ParameterError(
            f"{path}: {literal(given)} gives {rotated} rotated columns; rotary needs an even number, at least 2",
            hint="the file's attention settings are corrupt",
        )
    if rotated > _HEAD_WIDTH_MAX:
        raise ParameterError(
            f"{path}: {literal(given)} gives {rotated:,} rotated columns; no model's head is that wide",
            hint="the file's attention settings are corrupt",
        )
    if rotated > head_dim:
        raise ParameterError(
            f"{path}: {literal(key('rope.dimension_count'))} = {rotated} exceeds the head width {head_dim}",
            hint="the file's attention settings contradict each other",
        )
    context = integer("context_length", required=not view)  # the view leaves out a context the config lacked
    config: dict[str, Any] = {
        "model_type": _MODEL_TYPES.get(arch, arch),
        "hidden_size": hidden,
        "num_attention_heads": heads,
        # the rotated columns are the table's width; head_dim as the rotary module sees it
        "head_dim": rotated,
        "max_position_embeddings": context,
    }
    if context is None:
        del config["max_position_embeddings"]
    base = number("rope.freq_base")
    if base is not None and base <= 1:  # named here: the config key pecli builds is not in the file
        raise ParameterError(
            f"{path}: {literal(key('rope.freq_base'))}: expected a base greater than 1, got {_shown(base)}",
            hint="rotary frequencies base^(-2i/d) need a base above 1; llama.cpp's default is 10000",
        )
    rope: dict[str, Any] = {"rope_type": "default", "rope_theta": base or 10000.0}
    # llama.cpp's default type is linear, not none (src/llama-model.cpp, llama_model::load_hparams:
    # `std::string rope_scaling("linear")`): a rope.scaling.factor without a type scales the positions
    scaling = fields.get(key("rope.scaling.type"), "linear")
    if not isinstance(scaling, str) or scaling not in _SCALING_TYPES:  # a list or a number is no type name
        raise ParameterError(
            f"{path}: {literal(key('rope.scaling.type'))} {_shown(scaling)} is not one pecli reads",
            hint=f"pecli reads {', '.join(_SCALING_TYPES)}",
        )
    rope["rope_type"] = _SCALING_TYPES[scaling]
    # Phi-3's converter writes no rope.scaling.type: its LongRoPE shows in the factor tensors, beside
    # rope.scaling.original_context_length and rope.scaling.attn_factor (convert_hf_to_gguf.py, Phi3MiniModel)
    long_rope = scaling in ("yarn", "longrope") or any(name in tensors for name in _LONGROPE_TENSORS)
    factor, factor_key = number("rope.scaling.factor"), key("rope.scaling.factor")
    if factor is None:  # load_hparams: "try the old key name" LLM_KV_ROPE_SCALE_LINEAR
        factor, factor_key = number("rope.scale_linear"), key("rope.scale_linear")
    if factor is not None and scaling != "none":  # llama_context: "never scale if scaling type is none"
        rope["factor"] = factor
    if scaling == "linear" and factor is None and key("rope.scaling.type") not in fields:
        rope["rope_type"] = "default"  # linear by 1: no scaling given at all
    original = integer("rope.scaling.original_context_length", required=False)
    if original is not None and long_rope:
        rope["original_max_position_embeddings"] = original
    if "factor" in rope:
        _check_factor(path, literal(factor_key), rope["factor"], original or context or 1)
    attention = number("rope.scaling.attn_factor")
    if scaling == "yarn":
        for gguf_key, hf_key in (("yarn_beta_fast", "beta_fast"), ("yarn_beta_slow", "beta_slow")):
            value = number(f"rope.scaling.{gguf_key}")
            if value is not None:
                rope[hf_key] = value
        log_multiplier = number("rope.scaling.yarn_log_multiplier")
        if log_multiplier is not None:
            # the converter writes 0.1 · mscale_all_dim; llama.cpp divides it back out (load_hparams,
            # TAG_DEEPSEEK2_YARN_LOG_MUL_FIX) and, in llama_context's constructor, sets the attention factor
            # get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) with mscale = mscale_all_dim for
            # LLM_ARCH_DEEPSEEK2 only and mscale = 1 for every other architecture
            rope["mscale_all_dim"] = log_multiplier / 0.1
            # (views written before pecli wrote llama.cpp's names named it by its transformers model type)
            rope["mscale"] = rope["mscale_all_dim"] if arch in ("deepseek2", "deepseek_v2", "deepseek_v3") else 1.0
        for unsupported in ("yarn_ext_factor", "yarn_attn_factor"):
            value = real(f"rope.scaling.{unsupported}")  # a string or a list is named, not compared with 1
            if value is not None and value != 1 and not (unsupported == "yarn_ext_factor" and value < 0):
                raise ParameterError(
                    f"{path}: {literal(key('rope.scaling.' + unsupported))} = {_shown(value)} is not supported yet",
                    hint="pecli computes transformers' YaRN (extrapolation and attention factors of 1)",
                )
    if attention is not None and scaling == "yarn":
        # llama_context's constructor: cparams.yarn_attn_factor = get_mscale(...) (1 + 0.1·ln factor without a
        # log multiplier), times 1 / (1 + 0.1·ln factor) (cancelling ggml's rope_yarn, which multiplies it back),
        # then `*= hparams.rope_attn_factor`: the file's attn_factor multiplies YaRN's own, not replaces it
        scale = rope.get("factor", 1.0)
        own = _mscale(scale, rope.get("mscale", 1.0)) / _mscale(scale, rope.get("mscale_all_dim", 1.0))
        if "mscale_all_dim" not in rope:
            own = _mscale(scale, 1.0)
        rope["attention_factor"] = own * attention
    elif attention is not None and long_rope:
        rope["attention_factor"] = attention
    elif attention is not None and attention != 1:
        # ggml's rope (ggml-cpu ops.cpp, rope_yarn) multiplies cos and sin by attn_factor whatever the scaling:
        # transformers' default and linear rotaries have no such factor
        raise ParameterError(
            f"{path}: {literal(key('rope.scaling.attn_factor'))} = {_shown(attention)}"
            f" with {scaling} scaling is not supported",
            hint="llama.cpp scales cos and sin by it; pecli reads it with yarn and longrope scaling only",
        )
    _factor_tensors(path, tensors, rope, rotated, context, key)
    config["rope_parameters"] = rope
    swa_base = number("rope.freq_base_swa")
    if arch in _SWA_BASE_10000:
        # llama.cpp's Gemma 3 loaders set rope_freq_base_train_swa = 10000 and rope_freq_scale_train_swa = 1 for
        # the sliding layers, whatever the global base and scaling (src/llama-model.cpp, load_hparams,
        # LLM_ARCH_GEMMA3 / GEMMA3N / GEMMA_EMBEDDING); newer loaders read rope.freq_base_swa where given
        config["rope_local_base_freq"] = swa_base or 10000.0
    elif swa_base is not None and swa_base != rope["rope_theta"]:
        # other architectures' sliding layers keep the global scaling with this base (rope_freq_scale_train_swa =
        # rope_freq_scale_train): a table pecli has no config for
        raise ParameterError(
            f"{path}: {literal(key('rope.freq_base_swa'))} = {_shown(swa_base)}"
            f" differs from {literal(key('rope.freq_base'))} "
            f"for a {literal(arch)} model, which pecli does not read yet",
            hint="its sliding-window layers rotate with their own base; read the model's config.json instead",
        )
    config[GGUF_KEYS] = _key_names(fields, tensors, rope, key)
    return config


#: the config entry that maps the config keys pecli builds to the GGUF keys and tensors they came from
GGUF_KEYS = "_gguf_keys"


def _check_factor(path: str, name: str, factor: float, context: int) -> None:
    """Refuse a scaling factor that stretches the context past any position a model is run at.

    A factor scales a context of ``context`` positions (the original one, else the file's) to ``factor · context``;
    llama.cpp's positions are 32-bit, so a factor that reaches past 2^31 − 1 is corrupt, not a model: 1e308 gave
    cos values of ±71.9 (YaRN's attention factor 0.1·ln(factor) + 1) and exit 0. The rule is
    :func:`~pecli.schemes.rope_scaling.stretches_past_last_position`, shared with configs and specs.

    >>> _check_factor("m.gguf", "llama.rope.scaling.factor", 40.0, 4096)
    >>> _check_factor("m.gguf", "llama.rope.scaling.factor", 1e308, 4096)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: m.gguf: llama.rope.scaling.factor = 1e+308 stretches the context of 4,096 positions...
    """
    from pecli.schemes.rope_scaling import LAST_POSITION, stretches_past_last_position

    if stretches_past_last_position(factor, context):
        does = (
            f"stretches the context of {context:,} positions"
            if factor > 1
            else f"multiplies the frequencies by {1 / factor:.6g}, as if it stretched positions"
        )
        raise ParameterError(
            f"{path}: {name} = {factor:.6g} {does} past the last position "
            f"llama.cpp can give ({LAST_POSITION:,}: llama_pos is a 32-bit integer)",
            hint="the file's scaling settings are corrupt",
        )


def _key_names(fields: dict[str, Any], tensors: dict[str, Any], rope: dict[str, Any], key: Any) -> dict[str, str]:
    """Each config key pecli built (``rope_parameters.rope_theta``) -> the GGUF key or tensor it came from."""
    names = {
        "max_position_embeddings": key("context_length"),
        "head_dim": key("rope.dimension_count")
        if fields.get(key("rope.dimension_count")) is not None
        else key("attention.key_length")
        if fields.get(key("attention.key_length")) is not None
        else f"{literal(key('embedding_length'))}/{literal(key('attention.head_count'))}",
        "rope_parameters.rope_theta": key("rope.freq_base"),
        "rope_parameters.factor": key("rope.scaling.factor"),
        "rope_parameters.original_max_position_embeddings": key("rope.scaling.original_context_length"),
        "rope_parameters.attention_factor": key("rope.scaling.attn_factor"),
        "rope_parameters.beta_fast": key("rope.scaling.yarn_beta_fast"),
        "rope_parameters.beta_slow": key("rope.scaling.yarn_beta_slow"),
        "rope_parameters.mscale": key("rope.scaling.yarn_log_multiplier"),
        "rope_parameters.mscale_all_dim": key("rope.scaling.yarn_log_multiplier"),
        "rope_parameters.long_factor": "rope_factors_long.weight",
        "rope_parameters.short_factor": "rope_factors_short.weight",
    }
    if "rope_freqs.weight" in tensors:  # Llama 3.1's factors, read as LongRoPE with equal factors
        names.update({
            "rope_parameters.long_factor": "rope_freqs.weight",
            "rope_parameters.short_factor": "rope_freqs.weight",
            "rope_parameters.factor": "rope_freqs.weight (read as longrope: factor)",
            "rope_parameters.original_max_position_embeddings": key("context_length"),
        })  # fmt: skip
    elif key("rope.scaling.original_context_length") not in fields:  # taken from the context
        names["rope_parameters.original_max_position_embeddings"] = key("context_length")
    if key("rope.scaling.factor") not in fields and key("rope.scale_linear") in fields:
        names["rope_parameters.factor"] = key("rope.scale_linear")
    names["rope_local_base_freq"] = (
        key("rope.freq_base_swa")
        if key("rope.freq_base_swa") in fields
        else f"{literal(key('rope.freq_base_swa'))} (absent: llama.cpp's default 10000)"
    )
    if key("rope.freq_base") not in fields:
        names["rope_parameters.rope_theta"] = f"{literal(key('rope.freq_base'))} (absent: llama.cpp's default)"
    return names


def _factor_tensors(
    path: str, tensors: dict[str, Any], rope: dict[str, Any], rotated: int, context: int | None, key: Any
) -> None:
    """Read the converter's frequency-factor tensors into ``rope`` (llama3's rope_freqs, Phi-3's long/short)."""
    freqs = tensors.get("rope_freqs.weight")
    long, short = tensors.get("rope_factors_long.weight"), tensors.get("rope_factors_short.weight")
    if freqs is not None:
        if rope["rope_type"] != "default":
            raise ParameterError(
                f"{path}: a rope_freqs tensor with {literal(key('rope.scaling.type'))} {rope['rope_type']}"
                " is not supported yet",
                hint="pecli reads rope_freqs (Llama 3.1's factors) without another scaling",
            )
        factors = _factors(path, "rope_freqs.weight", freqs, rotated)
        # inv_freq / factors and no attention factor: LongRoPE with equal factors, factor 1
        rope.update(
            rope_type="longrope",
            short_factor=factors,
            long_factor=factors,
            factor=1.0,
            original_max_position_embeddings=context,
        )
        if context is None:  # the view of a config without a context: equal factors need none
            del rope["original_max_position_embeddings"]
    elif rope["rope_type"] == "longrope" and long is None and short is None:
        raise TableFileError(
            f"{path}: {literal(key('rope.scaling.type'))} longrope, but the file has no rope_factors_long and "
            "rope_factors_short tensors",
            hint="LongRoPE's factors are those tensors, one per rotated pair, as convert_hf_to_gguf.py writes them",
        )
    elif long is not None or short is not None:
        if long is None or short is None:
            raise TableFileError(
                f"{path} has only one of rope_factors_long and rope_factors_short", hint="the file is incomplete"
            )
        rope.update(
            rope_type="longrope",
            long_factor=_factors(path, "rope_factors_long.weight", long, rotated),
            short_factor=_factors(path, "rope_factors_short.weight", short, rotated),
        )
        rope.setdefault("original_max_position_embeddings", context)


def _mscale(scale: float, mscale: float) -> float:
    """llama_context's get_mscale (and transformers' yarn get_mscale): 1 + 0.1·mscale·ln(scale) above 1, else 1."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _factors(path: str, name: str, tensor: Any, rotated: int) -> list[float]:
    if isinstance(tensor, list):  # the view's factors: numbers already
        values = np.asarray(tensor, dtype=np.float64).reshape(-1)
    else:
        if tensor.dtype not in _FLOAT_TYPES:
            raise TableFileError(
                f"{path}: tensor {literal_repr(name)} has ggml type {tensor.dtype}, not a float type",
                hint="frequency factors are stored as F32",
            )
        values = np.asarray(tensor.load(), dtype=np.float64)
        if values.ndim != 1:
            raise TableFileError(
                f"{path}: tensor {literal_repr(name)} has shape {list(values.shape)}; frequency factors are one list",
                hint=f"one factor per rotated pair: [{rotated // 2}]",
            )
    if values.size != rotated // 2:
        raise TableFileError(
            f"{path}: tensor {literal_repr(name)} holds {values.size} factors, but {rotated} "
            f"rotated columns need {rotated // 2}",
            hint="one factor per rotated pair",
        )
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise TableFileError(
            f"{path}: tensor {literal_repr(name)} holds a factor that is not positive and finite",
            hint="the file is corrupt",
        )
    return [float(value) for value in values]


def _shown(value: Any) -> str:
    """A value from the file for a message (a template): its repr, cut at 40 characters, made literal."""
    text = repr(value)
    return literal(text if len(text) <= 40 else text[:37] + "...")
