"""What a model's config says of its position encoding: :class:`ModelEncoding`, and the checked reads of
config values that :mod:`pecli.models.config` and :mod:`pecli.models.rope_config` share.

>>> ModelEncoding("bloom", "alibi", {"heads": 4}).scheme
'alibi'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pecli.errors import ParameterError, did_you_mean
from pecli.text import literal

__all__ = [
    "CONFIG_INT_MAX",
    "ROPE_TYPES",
    "ModelEncoding",
    "config_int",
    "config_number",
    "config_object",
    "config_value",
    "known_rope_type",
]

#: every rope_type transformers 5 knows (``ROPE_INIT_FUNCTIONS`` plus the unscaled ``default``)
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")


@dataclass(frozen=True)
class ModelEncoding:
    """The position encoding a config implies: a pecli scheme and its arguments, or a learned weight."""

    model_type: str
    scheme: str | None  #: None: learned positions (see :attr:`learned_weight`)
    params: dict[str, Any] = field(default_factory=dict)
    preset: str | None = None
    length: int | None = None  #: the model's context (max_position_embeddings)
    dim: int | None = None
    #: what -> (the config key it came from, the config's value)
    provenance: dict[str, tuple[str, Any]] = field(default_factory=dict)
    learned_weight: str | None = None  #: the weight that holds a learned table
    #: pecli parameter (``base``, ``dim``, ``length``…) -> the config field that set it, for messages
    fields: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: the layer type these settings are of (``rope_parameters`` keyed by layer type), None for all layers
    layer_type: str | None = None
    #: per layer type, its encoding, when the layer types differ and none was picked
    layers: tuple[tuple[str, ModelEncoding], ...] = ()
    #: the layers with no positional encoding (Llama 4's ``no_rope_layers``)
    nope_layers: tuple[int, ...] = ()

    def metadata(self, source: str) -> dict[str, str]:
        """String pairs recording the config file, its model type and each value with its key.

        >>> ModelEncoding("bloom", "alibi", {"heads": 4}, provenance={"heads": ("n_head", 4)}).metadata("c.json")
        {'from_config': 'c.json', 'model_type': 'bloom', 'config.n_head': '4'}
        """
        meta = {"from_config": source, "model_type": self.model_type}
        for encoding in [layer for _, layer in self.layers] or [self]:  # per layer type: each one's keys
            meta.update({f"config.{key}": json.dumps(value) for key, value in encoding.provenance.values()})
        if self.layer_type is not None:
            meta["layer_type"] = self.layer_type
        if self.nope_layers:
            meta["nope_layers"] = json.dumps(list(self.nope_layers))
        if self.params.get("layout") is not None:
            meta["pairing"] = "adjacent pairs" if self.params["layout"] == "interleaved" else "halves (rotate_half)"
        return meta


#: the largest integer a config field may hold: every size pecli computes from a config (a context,
#: a width, a head count) is below 2^31 in any model; larger values are a broken or hostile config
CONFIG_INT_MAX = 2**31 - 1


def config_value(value: Any) -> str:
    """A config value as a message shows it: short, one line, control characters escaped.

    >>> config_value(float("nan")), config_value("x" * 100)[-12:], config_value([1] * 100)[:12]
    ('NaN', 'xxxxxxxxx...', 'list of 100 ')
    """
    if isinstance(value, float) and not math.isfinite(value) and type(value) is float:
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    elif isinstance(value, (dict, list)):
        text = json.dumps(value)[:60] if len(value) < 64 else type(value).__name__ + f" of {len(value)} items"
    else:
        text = repr(value)
    text = text if len(text) <= 60 else text[:50] + "..."
    return literal(text if text.isprintable() else text.encode("unicode_escape").decode("ascii"))  # in templates


def config_int(config: Mapping[str, Any], key: str, *, name: str | None = None) -> int:
    """``config[key]`` as a positive integer; a ParameterError naming the key (or ``name``) otherwise.

    >>> config_int({"n_head": 4}, "n_head")
    4
    >>> config_int({"n_head": float("inf")}, "n_head")
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: config.json: n_head: expected a positive integer, got Infinity
    """
    name = literal(name or key)  # a key from the config (a layer type's) in messages, which are templates
    value = config.get(key)
    if value is None:
        raise ParameterError(f"config.json has no {name}", hint=f"add {name} to the config")
    integral = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and (isinstance(value, int) or (math.isfinite(value) and value == math.floor(value)))
    )
    if not integral or value <= 0:
        raise ParameterError(f"config.json: {name}: expected a positive integer, got {config_value(value)}")
    if value > CONFIG_INT_MAX:
        raise ParameterError(
            f"config.json: {name}: expected a positive integer up to 2^31 - 1, got {config_value(value)}",
            hint="no model's config holds a size this large",
        )
    return int(value)


def config_number(value: Any, name: str, *, positive: bool = False) -> float:
    """A config's finite number ``value`` as a float; a ParameterError naming field ``name`` otherwise.

    >>> config_number(4, "factor"), config_number(0.5, "factor", positive=True)
    (4.0, 0.5)
    >>> config_number("4", "rope_scaling.factor")
    Traceback (most recent call last):
    ...
    pecli.errors.ParameterError: config.json: rope_scaling.factor: expected a finite number, got '4'
    """
    kind = "a positive finite number" if positive else "a finite number"
    name = literal(name)  # a key from the config in messages, which are templates
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"config.json: {name}: expected {kind}, got {config_value(value)}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond float range
        number = math.inf
    if not math.isfinite(number) or (positive and number <= 0):
        raise ParameterError(f"config.json: {name}: expected {kind}, got {config_value(value)}")
    return number


def config_object(config: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``config[key]`` when it is a JSON object, ``{}`` when absent or null; a ParameterError otherwise.

    >>> config_object({"attn_config": {"alibi": True}}, "attn_config"), config_object({}, "attn_config")
    ({'alibi': True}, {})
    """
    value = config.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParameterError(f"config.json: {key}: expected an object, got {config_value(value)}")
    return value


def config_bool(config: Mapping[str, Any], key: str) -> bool | None:
    """``config[key]`` when it is true or false, None when absent or null; a ParameterError otherwise.

    >>> config_bool({"rope_interleave": False}, "rope_interleave"), config_bool({}, "rope_interleave")
    (False, None)
    """
    value = config.get(key)
    if value is not None and not isinstance(value, bool):
        raise ParameterError(f"config.json: {key}: expected true or false, got {config_value(value)}")
    return value


def known_rope_type(rope_type: Any) -> str:
    """``rope_type`` if transformers knows it; a ParameterError listing the known ones otherwise.

    >>> known_rope_type("yarn")
    'yarn'
    """
    if not isinstance(rope_type, str) or rope_type not in ROPE_TYPES:
        shown = config_value(rope_type)
        raise ParameterError(f"config.json: unknown rope_type {shown}", hint=did_you_mean(shown, ROPE_TYPES))
    return rope_type
