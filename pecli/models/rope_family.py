"""What a model type's transformers code reads its rope settings as: the rope types its config class takes (Phi-3's
old names, Qwen2-VL's ``mrope``, rotary classes that run default rope only) and the pairing its attention rotates.

>>> pairing({"model_type": "deepseek_v3"}, "deepseek_v3")
('interleaved', "rope_interleave not given: deepseek_v3's default (true, interleaved pairs)")
>>> rope_type_of({"type": "su"}, {"type": "rope_scaling.type"}, "phi3")
'longrope'
>>> rope_type_of({"rope_type": "default", "type": "mrope"}, {}, "qwen2_vl_text")  # Qwen2VLConfig.save_pretrained's
'default'
>>> transformers_cache_layout({"model_type": "deepseek_v3", "pairing": "adjacent pairs"})[0]
{'layout': 'half'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pecli.errors import ParameterError
from pecli.models.encoding import config_bool, config_value, known_rope_type
from pecli.models.transformers_families import (
    ALWAYS_INTERLEAVED,
    IGNORES_PARTIAL,
    INTERLEAVE_SWITCH,
    REINTERLEAVED,
    TRANSFORMERS_VERSION,
    USES_PARTIAL,
)
from pecli.text import literal

__all__ = ["check_mrope_section", "pairing", "rope_type_of", "transformers_cache_layout"]

#: model types whose config class takes only default or longrope rope (``su`` and ``yarn`` are its old names)
_LONGROPE_ONLY = frozenset({"phi3", "phi4_multimodal"})

#: model types whose text rotary class computes its own unscaled frequencies and refuses any other rope_type
#: (transformers 5.23: Ernie4_5_VLMoeTextRotaryEmbedding, RecurrentGemmaRotaryEmbedding raise ValueError; the
#: text classes of scripts/rope_families.py's "own_scaled_init" list, the vision ones are 2-D and not read)
_DEFAULT_ONLY = frozenset({"ernie4_5_vl_moe", "ernie4_5_vl_moe_text", "recurrent_gemma"})

#: model types whose config class reads the legacy rope type ``mrope`` as ``default`` (transformers 5.23)
_MROPE_AS_DEFAULT = frozenset({"qwen2_vl", "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text"})

#: model types whose text rotary class splits the frequencies into ``mrope_section``'s parts (transformers 5.23:
#: ``freq.split(self.mrope_section, dim=-1)`` in Qwen2-VL's, Qwen2.5-VL's, Qwen2.5-Omni's, GLM-4.1V's, GLM-4.5V's,
#: GLM-Image's, GLM-OCR's and PaddleOCR-VL's): the sections must add up to the rotated pairs, or every forward fails
_MROPE_SPLIT = frozenset(
    {
        f"{family}{suffix}"
        for family in ("qwen2_vl", "qwen2_5_vl", "glm4v", "glm4v_moe", "glm_image", "glm_ocr", "paddleocr_vl")
        for suffix in ("", "_text")
    }
    | {"qwen2_5_omni", "qwen2_5_omni_thinker", "qwen2_5_omni_text"}
)


#: model types whose attention rotates adjacent pairs of columns (transformers: ``repeat_interleave``,
#: ``rotate_every_two``, a ``rotate_half`` over ``x[..., 0::2]``/``x[..., 1::2]`` as ERNIE 4.5 VL's, GLM-4.1V's
#: and GLM-OCR's text models and DeepSeek V4's, or the complex view of (…, d/2, 2) as Llama 4's and DeepSeek V2's
#: ``apply_rotary_emb``): pecli's ``interleaved`` layout. The families whose ``apply_rotary_pos_emb`` re-interleaves
#: the first half of the module's cos/sin (GLM, GLM-4, ERNIE 4.5, Helium, Moonshine) come from
#: transformers_families.REINTERLEAVED, and the families whose attention always calls
#: ``apply_rotary_pos_emb_interleave`` (DeepSeek V3.2, GLM-MoE-DSA, LongCat-Flash…) from ALWAYS_INTERLEAVED, both
#: read by scripts/rope_families.py from transformers' source
_INTERLEAVED = (
    REINTERLEAVED
    | ALWAYS_INTERLEAVED
    | frozenset(
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
            "glm4v",
            "glm4v_text",
        }
    )
)


def check_mrope_section(found: Mapping[str, Any], where: Mapping[str, str], model_type: str, pairs: int) -> None:
    """Refuse a multimodal rope's ``mrope_section`` that is no list of non-negative integers (transformers types it
    ``list[int]``), or, for a family that splits its ``pairs`` frequencies by it, one that does not add up to them.

    At text positions every section turns with the same position, so a valid ``mrope_section`` leaves the 1-D table
    as default rope's; an invalid one is a model that fails on its first forward (``torch.split``'s sizes must sum
    to the dimension), so pecli names the field instead of writing a table no model computes.

    >>> check_mrope_section({"mrope_section": [16, 24, 24]}, {}, "qwen2_vl_text", 64)
    >>> check_mrope_section({"mrope_section": [8, 8, 8]}, {"mrope_section": "rope_parameters.mrope_section"},
    ...     "qwen2_vl_text", 32)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: config.json: rope_parameters.mrope_section [8, 8, 8] adds up to 24, but ...
    """
    sections = found.get("mrope_section")
    if sections is None:
        return
    name = literal(where.get("mrope_section", "mrope_section"))  # a key in a template: a layer type's braces
    if not isinstance(sections, list) or not all(
        isinstance(size, int) and not isinstance(size, bool) and size >= 0 for size in sections
    ):
        raise ParameterError(
            f"config.json: {name}: expected a list of non-negative integers, got {config_value(sections)}",
            hint="one count of rotated pairs per axis (time, height, width), e.g. [16, 24, 24]",
        )
    if model_type in _MROPE_SPLIT and sum(sections) != pairs:
        raise ParameterError(
            f"config.json: {name} {config_value(sections)} adds up to {sum(sections)}, but the head rotates "
            f"{pairs} pairs of columns: {model_type}'s rotary splits its frequencies by it, so the model cannot run",
            hint=f"the sections must add up to the rotated width / 2 = {pairs}",
        )


def rope_type_of(found: Mapping[str, Any], where: Mapping[str, str], model_type: str = "") -> str:
    """``rope_type``, or the legacy ``type``; both given and different is a contradiction. Phi-3's config class
    reads its older ``su`` and ``yarn`` as ``longrope`` and refuses any type but ``default`` and ``longrope``."""
    new, old = found.get("rope_type"), found.get("type")
    for key in ("rope_type", "type"):
        if model_type and key in found and found[key] is None and (key == "rope_type" or "rope_type" not in found):
            # standardize_rope_params' setdefault keeps the null: the rotary init fails (ROPE_INIT_FUNCTIONS[None])
            raise ParameterError(
                f"config.json: {literal(where.get(key, key))} is null: transformers cannot run that rope type",
                hint=f'give {key} a rope type ("default", "linear", "yarn", …) or leave it out (default)',
            )
    if model_type in _MROPE_AS_DEFAULT:
        # Qwen2VLConfig and Qwen2_5_VLConfig read the shipped {"type": "mrope", "mrope_section": …} as default rope
        # (at text positions, t = h = w, every section turns with the same position: one 1-D table), and their
        # save_pretrained writes both, {"rope_type": "default", "type": "mrope"}: one setting, no contradiction
        new, old = ("default" if given == "mrope" else given for given in (new, old))
    if new is not None and old is not None and new != old:
        raise ParameterError(
            f"config.json: {literal(where['rope_type'])} = {config_value(new)} contradicts {literal(where['type'])} = "
            f"{config_value(old)}",
            hint="keep rope_type (type is its older name)",
        )
    given = new if new is not None else old if old is not None else "default"
    if model_type in _LONGROPE_ONLY:
        if given in ("su", "yarn"):
            return "longrope"
        if given not in ("default", "longrope"):
            key = literal(where.get("rope_type" if new is not None else "type", "rope_type"))
            raise ParameterError(
                f"config.json: {key} = {config_value(given)}: {model_type} runs longrope or default rope only",
                hint="use rope_type longrope with short_factor and long_factor, as Phi-3's config does",
            )
    if model_type in _DEFAULT_ONLY and given != "default":
        key = literal(where.get("rope_type" if new is not None else "type", "rope_type"))  # in a template
        raise ParameterError(
            f"config.json: {key} = {config_value(given)}: {model_type}'s rotary embedding runs default rope only "
            "(transformers refuses any other type), so the model has no scaled table",
            hint="drop the scaling from the config, or set rope_type default",
        )
    return known_rope_type(given)


def pairing(config: Mapping[str, Any], model_type: str) -> tuple[str, str]:
    """The column layout the model's attention applies cos and sin in, and a note when a remote-code key said so."""
    interleaved = config_bool(config, "rotary_emb_interleaved")
    if interleaved is not None:
        layout = "interleaved" if interleaved else "half"
        return (
            layout,
            f"rotary_emb_interleaved = {str(interleaved).lower()}: assumed flash-attn's rotary ({layout} pairs)",
        )
    if model_type in INTERLEAVE_SWITCH:  # DeepSeek V3's rope_interleave: weights laid out in adjacent pairs
        switch = config_bool(config, "rope_interleave")
        if switch is None:
            switch = INTERLEAVE_SWITCH[model_type]
            pairs = "interleaved" if switch else "half"
            return pairs, f"rope_interleave not given: {model_type}'s default ({str(switch).lower()}, {pairs} pairs)"
        return ("interleaved" if switch else "half"), ""
    if model_type in _INTERLEAVED:
        return "interleaved", ""
    if model_type and model_type not in _KNOWN and "auto_map" not in config:  # remote code says so elsewhere
        return "half", (
            f"model_type {config_value(model_type)} has no rotary module in transformers {TRANSFORMERS_VERSION}: "
            "read with Llama's keys and rotate_half pairs (check the model's own attention code)"
        )
    return "half", ""


#: the model types transformers has a rotary module for (a GGUF's llama.cpp name, mapped to its transformers
#: name where they differ, is one of them or not)
_KNOWN = IGNORES_PARTIAL | USES_PARTIAL | _INTERLEAVED


def transformers_cache_layout(metadata: Mapping[str, str]) -> tuple[dict[str, Any], str] | None:
    """Where transformers' rotary module returns a config's cos and sin in another layout than the pairing its
    attention rotates: the scheme parameters of the table in the module's layout, and how the attention uses it.

    DeepSeek V3's family (``rope_interleave``), the families that always call its ``apply_rotary_pos_emb_interleave``
    (DeepSeek V3.2, GLM-MoE-DSA, LongCat-Flash…) and the re-interleaving families (GLM, ERNIE 4.5, Helium…) rotate
    adjacent pairs, but their rotary module returns ``cat(freqs, freqs)``: halves. Both are real engine layouts of
    one rotation (a cos/sin table does not carry which columns of q it multiplies). ``metadata`` is a config
    table's (:meth:`~pecli.models.encoding.ModelEncoding.metadata`); None where the layouts agree.

    >>> transformers_cache_layout({"model_type": "glm", "pairing": "adjacent pairs"})[1][:47]
    "transformers' glm rotary module returns cos and"
    >>> transformers_cache_layout({"model_type": "llama", "pairing": "halves (rotate_half)"}) is None
    True
    """
    # a composite config's table is its text model's: "mistral_large4/mistral_large4_text"
    model_type = metadata.get("model_type", "").rsplit("/", 1)[-1]
    if metadata.get("pairing") != "adjacent pairs" or "config.rotary_emb_interleaved" in metadata:
        return None
    if model_type in INTERLEAVE_SWITCH or model_type in ALWAYS_INTERLEAVED:
        how = (
            "its apply_rotary_pos_emb_interleave rotates q's and k's even columns with their odd ones by the "
            "first half (the pairs de-interleaved before rotate_half)"
        )
    elif model_type in REINTERLEAVED:
        how = "its apply_rotary_pos_emb re-interleaves the first half (repeat_interleave) to rotate adjacent pairs"
    else:
        return None
    return {"layout": "half"}, (
        f"transformers' {model_type} rotary module returns cos and sin in halves (cat(freqs, freqs)); {how}"
    )
