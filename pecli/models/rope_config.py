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
from typing import Any

from pecli.errors import ParameterError
from pecli.models.encoding import ModelEncoding, config_int, config_number, config_value, known_rope_type

__all__ = ["rope_encoding"]

#: rope_type -> pecli scaling
_SCALING = {
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

#: keys of the top level that transformers moves into rope_parameters when they are not there
_TOP_LEVEL_KEYS = ("rope_theta", "partial_rotary_factor")


def rope_encoding(config: Mapping[str, Any], model_type: str) -> ModelEncoding:
    """The ``rope`` scheme, parameters and sizes of a RoPE model's ``config``, with each value's config key."""
    found, where = _rope_settings(config)
    rope_type = known_rope_type(found.get("rope_type", found.get("type", "default")))
    if rope_type in ("llama3", "yarn", "longrope"):
        # transformers' standardize_rope_params: a top-level original_max_position_embeddings (Phi-3) wins
        if config.get("original_max_position_embeddings") is not None:
            found["original_max_position_embeddings"] = config["original_max_position_embeddings"]
            where["original_max_position_embeddings"] = "original_max_position_embeddings"
        elif "original_max_position_embeddings" not in found:
            found["original_max_position_embeddings"] = config.get("max_position_embeddings")
            where["original_max_position_embeddings"] = "max_position_embeddings"
    length = config_int(config, "max_position_embeddings")
    head_dim, head_dim_key = _head_dim(config)
    partial = _number(found, where, "partial_rotary_factor", 1.0)
    # the rotary module's cos and sin cover the rotated columns only: int(head_dim · partial_rotary_factor)
    if not 0 < partial <= 1:
        raise ParameterError(
            f"config.json: {where.get('partial_rotary_factor')}: expected a number in (0, 1], got {partial!r}"
        )
    dim = head_dim if rope_type == "proportional" else int(head_dim * partial)
    if dim < 2:
        source = f"{head_dim_key[0]} = {head_dim_key[1]}" + (f" × {partial!r}" if partial != 1.0 else "")
        raise ParameterError(f"config.json: {source} leaves {dim} rotary columns", hint="rotary needs at least 2")
    params: dict[str, Any] = {"base": _number(found, where, "rope_theta", 10000.0), "layout": "half"}
    scaling, used = _scaling_parameters(rope_type, found, where, length, dim)
    params.update(scaling)
    if rope_type == "proportional":
        params["partial_rotary_factor"] = partial
    provenance: dict[str, tuple[str, Any]] = {"length": ("max_position_embeddings", length), "dim": head_dim_key}
    used = ["rope_theta", *(["partial_rotary_factor"] if partial != 1.0 else []), *used]
    provenance.update({key: (where[key], found[key]) for key in used if key in found and key in where})
    _check_supported(rope_type, params)
    fields = {_PARAMETER_OF.get(key, key): where.get(key, key) for key in used if key in where}
    dim_field = head_dim_key[0] + (f" × {where['partial_rotary_factor']}" if partial != 1.0 else "")
    fields.update(dim=dim_field, length="max_position_embeddings")
    if rope_type == "proportional":
        fields["partial_rotary_factor"] = where.get("partial_rotary_factor", "partial_rotary_factor")
    return ModelEncoding(model_type, "rope", params, length=length, dim=dim, provenance=provenance, fields=fields)


def _scaling_parameters(
    rope_type: str, found: Mapping[str, Any], where: Mapping[str, str], length: int, dim: int
) -> tuple[dict[str, Any], list[str]]:
    """pecli's scaling parameters for ``rope_type`` (as its ``_compute_*_parameters`` reads them), and the keys used."""
    params: dict[str, Any] = {} if rope_type == "default" else {"scaling": _SCALING[rope_type]}
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
        take("factor", default=length / params["original_max_position"])
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
    """The rope parameters (``rope_parameters``, else ``rope_scaling``, plus top-level keys) and each one's key."""
    for container in ("rope_parameters", "rope_scaling"):
        settings = config.get(container)
        if settings is None:
            continue
        if not isinstance(settings, dict):
            raise ParameterError(f"config.json: {container} must be an object, got {type(settings).__name__}")
        if any(isinstance(value, dict) for value in settings.values()):
            raise ParameterError(
                f"config.json: per-layer {container} ({config_value(list(settings))}) are not supported yet",
                hint="give a config with one set of rope parameters",
            )
        if settings:
            found, where = dict(settings), {key: f"{container}.{key}" for key in settings}
            break
    else:
        found, where = {}, {}
    for key in _TOP_LEVEL_KEYS:
        if key not in found and config.get(key) is not None:
            found[key], where[key] = config[key], key
    return found, where


def _head_dim(config: Mapping[str, Any]) -> tuple[int, tuple[str, Any]]:
    if config.get("head_dim") is not None:
        head_dim = config_int(config, "head_dim")
        return head_dim, ("head_dim", head_dim)
    hidden, heads = config_int(config, "hidden_size"), config_int(config, "num_attention_heads")
    if hidden < heads:
        raise ParameterError(
            f"config.json: hidden_size/num_attention_heads = {hidden}/{heads} leaves no column per head",
            hint="hidden_size must be at least num_attention_heads",
        )
    return hidden // heads, ("hidden_size/num_attention_heads", f"{hidden}/{heads}")


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
        supported = ", ".join(rope_type for rope_type, scaling in _SCALING.items() if scaling in scalings)
        raise ParameterError(
            f"rope_type {rope_type!r}{with_options} is not supported yet", hint=f"pecli computes {supported}"
        )
