"""A config's positional encoding written as the settings another tool takes: transformers 4's top-level
``rope_theta`` + ``rope_scaling`` (``hf-v4``), transformers 5's nested ``rope_parameters`` (``hf-v5``, per
layer type where they differ) or llama.cpp's GGUF metadata keys and factor tensors (``gguf``, the names
:mod:`pecli.models.gguf` reads). Each one read back by pecli gives the same table as the config it came from.

>>> import json, os, tempfile
>>> from pecli.models.info import describe_config
>>> path = os.path.join(tempfile.mkdtemp(), "config.json")
>>> with open(path, "w") as file:
...     json.dump({"model_type": "llama", "head_dim": 64, "max_position_embeddings": 4096,
...                "rope_parameters": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0}}, file)
>>> settings = tool_settings(describe_config(path), "hf-v4")
>>> settings["rope_theta"], settings["rope_scaling"]
(10000.0, {'rope_type': 'linear', 'factor': 2.0})
>>> tool_settings(describe_config(path), "gguf")["metadata"]["llama.rope.scaling.type"]
'linear'
"""

from __future__ import annotations

import math
from typing import Any

from pecli.errors import ParameterError
from pecli.models.gguf import gguf_architecture, has_swa_base
from pecli.models.info import ConfigInfo, LayerInfo, head_width, is_rotary
from pecli.models.rope_config import ROPE_TYPE_SCALING
from pecli.models.rope_layers import FILLS_LAYER_TYPES, TYPES_WITHOUT_ROPE
from pecli.models.rope_settings import class_partial, own_spelling
from pecli.text import literal, literal_repr

__all__ = ["TOOLS", "tool_settings"]

#: the settings formats pecli writes
TOOLS = ("hf-v4", "hf-v5", "gguf")

#: pecli's scaling -> transformers' rope_type: the reading's table, turned around
_ROPE_TYPE = {scaling: rope_type for rope_type, scaling in ROPE_TYPE_SCALING.items()}
#: pecli parameters written under the same name in rope parameters
_SAME_NAME = ("low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim")
#: rope types whose original context transformers takes from a top-level original_max_position_embeddings first
#: (standardize_rope_params; Phi3Config's class default 4096 wins over the rope parameters' own)
_ORIGINAL_CONTEXT = ("yarn", "longrope", "llama3")
#: transformers 4 config classes that spell the two layer types' bases their own way (full, sliding)
_V4_LAYER_BASES = dict.fromkeys(("modernbert", "modernbert-decoder"), ("global_rope_theta", "local_rope_theta"))


def tool_settings(info: ConfigInfo, tool: str) -> dict[str, Any]:
    """The position settings of ``info`` (:func:`pecli.models.info.describe_config`) as ``tool`` takes them."""
    if tool not in TOOLS:
        raise ParameterError(f"no settings format {literal_repr(tool)}", hint=f"pecli writes {', '.join(TOOLS)}")
    if info.problem is not None:
        raise ParameterError(literal(info.problem))  # already filled: any braces left are a name's
    rope = [layer for layer in info.layers if is_rotary(layer.encoding)]
    if not rope or len(rope) != len(info.layers):
        scheme = info.layers[0].encoding.scheme or "learned" if info.layers else "none"
        raise ParameterError(
            f"{literal(info.config_file)}: its positional encoding is {scheme}, not RoPE",
            hint="hf-v4, hf-v5 and gguf settings describe rotary position embeddings",
        )
    if tool == "gguf":
        return _gguf(info, rope)
    first = rope[0].encoding
    sizes: dict[str, Any] = {
        "model_type": first.model_type.split("/")[-1],
        "max_position_embeddings": info.length,
        "head_dim": head_width(first),
    }
    if info.length is None:  # the config gives no context: none is invented (a null would not load)
        del sizes["max_position_embeddings"]
    if info.nope_layers:
        sizes["no_rope_layers"] = [int(index not in info.nope_layers) for index in range(max(info.nope_layers) + 1)]
    if info.layer_types:
        sizes["layer_types"] = list(info.layer_types)
    model_type = sizes["model_type"]
    if tool == "hf-v5":
        if len(rope) == 1 and model_type in FILLS_LAYER_TYPES:
            # Gemma 3's config class keys rope_parameters by layer type whatever is given: a flat set is not read
            kinds = sorted(set(info.layer_types or ()) - TYPES_WITHOUT_ROPE) or ["full_attention", "sliding_attention"]
            return sizes | {"rope_parameters": {kind: _rope_parameters(rope[0], model_type) for kind in kinds}}
        if len(rope) == 1:
            parameters = _rope_parameters(rope[0], model_type)
            return sizes | _original_context(parameters) | {"rope_parameters": parameters}
        return sizes | {"rope_parameters": {layer.layer_type: _rope_parameters(layer, model_type) for layer in rope}}
    return sizes | _hf_v4(info, rope, model_type)


def _original_context(parameters: dict[str, Any]) -> dict[str, Any]:
    """The top-level ``original_max_position_embeddings`` of one set of rope parameters that read it: transformers
    puts a config's own (or its class's default) before the rope parameters' one."""
    if parameters["rope_type"] in _ORIGINAL_CONTEXT:
        return {"original_max_position_embeddings": parameters["original_max_position_embeddings"]}
    return {}


def _rope_parameters(layer: LayerInfo, model_type: str) -> dict[str, Any]:
    """transformers 5's rope parameters of one layer type (what its rope init reads, nothing else)."""
    params = layer.encoding.params
    scaling = params.get("scaling", "none")
    rope: dict[str, Any] = {"rope_type": _ROPE_TYPE[scaling], "rope_theta": params["base"]}
    if "factor" in params and scaling != "none":
        rope["factor"] = params["factor"]
    if scaling in ("yarn", "longrope", "llama3"):
        rope["original_max_position_embeddings"] = params["original_max_position"]
    rope.update({name: params[name] for name in _SAME_NAME if params.get(name) is not None})
    if params.get("attention_factor") is not None:
        rope["attention_factor"] = params["attention_factor"]
    if params.get("truncate") is False:
        rope["truncate"] = False
    for name in ("short_factor", "long_factor"):
        if name in params:
            rope[name] = [float(value) for value in str(params[name]).split(",")]
    partial = layer.to_json()["partial_rotary_factor"]
    if partial != 1 or class_partial(model_type) is not None:  # a family's own default is not 1
        rope["partial_rotary_factor"] = partial
    return rope


def _hf_v4(info: ConfigInfo, rope: list[LayerInfo], model_type: str) -> dict[str, Any]:
    """Top-level ``rope_theta`` (and ``partial_rotary_factor``) with a ``rope_scaling`` object, or null; per
    layer type Gemma 3's ``rope_local_base_freq`` for the sliding layers (ModernBERT's global_/local_rope_theta)."""
    bases = _V4_LAYER_BASES.get(model_type)
    if len(rope) == 1 and rope[0].layer_type is None and len(set(info.layer_types or ())) == 1:
        rope = [LayerInfo(info.layer_types[0], rope[0].encoding)]  # every layer of one type: named by it
    if len(rope) == 1 and rope[0].layer_type != "sliding_attention" and bases is None:
        settings = _rope_parameters(rope[0], model_type)
        top: dict[str, Any] = {own_spelling(model_type, "rope_theta"): settings.pop("rope_theta")}
        if "partial_rotary_factor" in settings:
            top[own_spelling(model_type, "partial_rotary_factor")] = settings.pop("partial_rotary_factor")
        top |= _original_context(settings)
        top["rope_scaling"] = settings if settings["rope_type"] != "default" else None
        return top
    by_name = {layer.layer_type: _rope_parameters(layer, model_type) for layer in rope}
    full, sliding = by_name.get("full_attention"), by_name.get("sliding_attention")
    partials = {str(settings.get("partial_rotary_factor")) for settings in by_name.values()}
    plain = [{key: value for key, value in settings.items() if key != "partial_rotary_factor"} for settings in
             ([sliding] if sliding else []) + ([full] if full and bases else [])]  # fmt: skip
    if (
        set(by_name) - {"full_attention", "sliding_attention"}
        or len(partials) > 1
        or any(set(settings) != {"rope_type", "rope_theta"} or settings["rope_type"] != "default" for settings in plain)
    ):
        names = literal(", ".join(str(name) for name in by_name))  # layer types from the config
        raise ParameterError(
            f"{literal(info.config_file)}: the layer types {names} have different rope parameters, which hf-v4 "
            "settings cannot hold",
            hint="write them as hf-v5 (rope_parameters per layer type)",
        )
    if bases is not None:  # ModernBERT: one base per layer type, no scaling
        top = {name: settings["rope_theta"] for name, settings in zip(bases, (full, sliding), strict=True) if settings}
        return top | ({"partial_rotary_factor": rope[0].to_json()["partial_rotary_factor"]} if partials != {"None"}
                      else {})  # fmt: skip
    # Gemma 3 before transformers 5: the global layers' settings, and rope_local_base_freq for the sliding ones
    assert sliding is not None
    global_layers = [layer for layer in rope if layer.layer_type == "full_attention"] or [
        LayerInfo("full_attention", next(layer for layer in rope if layer.layer_type == "sliding_attention").encoding)
    ]
    return _hf_v4(info, global_layers, model_type) | {"rope_local_base_freq": sliding["rope_theta"]}


def _gguf(info: ConfigInfo, rope: list[LayerInfo], *, global_layers: bool = False) -> dict[str, Any]:
    """llama.cpp's metadata keys (``ARCH.rope.freq_base``…) and the factor tensors its converter writes.

    Gemma 3's two layer types are llama.cpp's global settings (the full-attention layers') and
    ``rope.freq_base_swa`` (the sliding layers': their base, unscaled), when the sliding layers' rope is that;
    ``global_layers``: ``rope`` is those global layers' alone."""
    swa_base = _swa_base(rope)
    if swa_base is not None:
        full = next(layer for layer in rope if layer.layer_type == "full_attention")
        written = _gguf(info, [full], global_layers=True)
        arch = written["metadata"]["general.architecture"]
        written["metadata"][f"{arch}.rope.freq_base_swa"] = swa_base
        return written
    arch = gguf_architecture(rope[0].encoding.model_type.split("/")[-1])
    if len(rope) == 1 and has_swa_base(arch) and not global_layers:
        # llama.cpp's Gemma 3 runs sliding and global layers, the sliding ones unscaled with rope.freq_base_swa
        kinds = set(info.layer_types or ()) or {"sliding_attention", "full_attention"}
        if kinds != {"sliding_attention", "full_attention"} or rope[0].encoding.params.get("scaling", "none") != "none":
            raise ParameterError(
                f"{literal(info.config_file)}: llama.cpp's {literal(arch)} runs sliding layers unscaled beside global "
                f"ones, which these layer types ({literal(', '.join(sorted(kinds)))}) and rope parameters are not",
                hint="write them as hf-v5 (rope_parameters per layer type)",
            )
        written = _gguf(
            info, [LayerInfo("full_attention", rope[0].encoding), LayerInfo("sliding_attention", rope[0].encoding)]
        )
        return written
    if len(rope) > 1:
        names = literal(", ".join(str(layer.layer_type) for layer in rope))  # from the config
        raise ParameterError(
            f"{literal(info.config_file)}: the layer types {names} have different rope parameters, which the GGUF keys "
            "pecli reads cannot hold",
            hint="write them as hf-v5 (rope_parameters per layer type)",
        )
    encoding = rope[0].encoding
    params, scaling = encoding.params, encoding.params.get("scaling", "none")
    arch = gguf_architecture(encoding.model_type.split("/")[-1])  # llama.cpp's name: gptneox, deepseek2
    head = head_width(encoding)
    heads = info.settings.get("num_attention_heads")
    heads = heads if isinstance(heads, int) and not isinstance(heads, bool) and heads > 0 else 1
    metadata: dict[str, Any] = {
        "general.architecture": arch,
        f"{arch}.context_length": info.length,
        f"{arch}.embedding_length": head * heads,
        f"{arch}.attention.head_count": heads,
        f"{arch}.attention.key_length": head,
        f"{arch}.rope.dimension_count": encoding.dim,
        f"{arch}.rope.freq_base": params["base"],
    }
    if info.length is None:
        del metadata[f"{arch}.context_length"]
    tensors: dict[str, list[float]] = {}
    unsupported = [name for name in ("truncate",) if name in params] + (
        [scaling] if scaling in ("dynamic", "proportional") else []
    )
    if unsupported:
        raise ParameterError(
            f"{literal(info.config_file)}: {', '.join(unsupported)} has no GGUF key pecli reads",
            hint="write the settings as hf-v5",
        )
    if scaling == "llama3":  # the converter precomputes Llama 3.1's factors into rope_freqs
        tensors["rope_freqs.weight"] = _llama3_factors(encoding.dim, params)
    elif scaling == "longrope":
        tensors["rope_factors_long.weight"] = [float(value) for value in str(params["long_factor"]).split(",")]
        tensors["rope_factors_short.weight"] = [float(value) for value in str(params["short_factor"]).split(",")]
        metadata[f"{arch}.rope.scaling.type"] = "longrope"
        metadata[f"{arch}.rope.scaling.factor"] = params["factor"]
        metadata[f"{arch}.rope.scaling.original_context_length"] = params["original_max_position"]
        if params.get("attention_factor") is not None:
            metadata[f"{arch}.rope.scaling.attn_factor"] = params["attention_factor"]
    elif scaling in ("linear", "yarn"):
        metadata[f"{arch}.rope.scaling.type"] = scaling
        metadata[f"{arch}.rope.scaling.factor"] = params["factor"]
    if scaling == "yarn":
        metadata[f"{arch}.rope.scaling.original_context_length"] = params["original_max_position"]
        metadata[f"{arch}.rope.scaling.yarn_beta_fast"] = params["beta_fast"]
        metadata[f"{arch}.rope.scaling.yarn_beta_slow"] = params["beta_slow"]
        mscale, all_dim = params.get("mscale"), params.get("mscale_all_dim")
        deepseek = arch == "deepseek2"  # llama.cpp's mscale = all_dim there only
        if params.get("attention_factor") is None and mscale and mscale == all_dim and deepseek:
            metadata[f"{arch}.rope.scaling.yarn_log_multiplier"] = 0.1 * all_dim  # the converter's spelling
        elif params.get("attention_factor") is not None or (mscale and all_dim):
            # llama.cpp multiplies YaRN's own 1 + 0.1·ln(factor) by this key (llama-context.cpp: yarn_attn_factor
            # *= hparams.rope_attn_factor): the key is the attention factor divided by it
            own = 1.0 if params["factor"] <= 1 else 1.0 + 0.1 * math.log(params["factor"])
            metadata[f"{arch}.rope.scaling.attn_factor"] = rope[0].to_json()["attention_factor"] / own
    notes = []
    if info.nope_layers:
        notes.append(f"layers {', '.join(map(str, info.nope_layers))} use no positional encoding: no GGUF key says so")
    if params.get("layout") == "interleaved":
        notes.append(f"adjacent-pair rotation: llama.cpp takes it from the architecture ({arch})")
    return {"metadata": metadata, "tensors": tensors, "notes": notes}


def _swa_base(rope: list[LayerInfo]) -> float | None:
    """The sliding layers' base, where the layer types are llama.cpp's sliding and global layers of an
    architecture with ``rope.freq_base_swa`` (Gemma 3): the sliding layers unscaled, over the same columns."""
    by_type = {layer.layer_type: layer.encoding for layer in rope}
    if set(by_type) != {"sliding_attention", "full_attention"}:
        return None
    sliding, full = by_type["sliding_attention"], by_type["full_attention"]
    if not has_swa_base(gguf_architecture(full.model_type.split("/")[-1])):
        return None
    plain = {key: value for key, value in sliding.params.items() if key != "base"}
    global_plain = {key: full.params[key] for key in plain if key in full.params}
    # unscaled, and otherwise as the global layers (columns, layout, offset): the one base apart
    if sliding.params.get("scaling", "none") != "none" or sliding.dim != full.dim:
        return None
    if {k: v for k, v in plain.items() if k != "scaling"} != {k: v for k, v in global_plain.items() if k != "scaling"}:
        return None
    return float(sliding.params["base"])


def _llama3_factors(dim: int, params: dict[str, Any]) -> list[float]:
    """The per-pair divisors llama3 scaling applies to inv_freq (what llama.cpp's converter stores)."""
    from pecli.schemes.rope_scaling import rope_frequencies

    names = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position")
    scaled = rope_frequencies(dim, base=params["base"], scaling="llama3", **{name: params[name] for name in names})
    plain = rope_frequencies(dim, base=params["base"])
    return [float(value) for value in plain / scaled]
