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

__all__ = ["ROPE_TYPES", "ModelEncoding", "config_int", "known_rope_type"]

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
    notes: tuple[str, ...] = ()

    def metadata(self, source: str) -> dict[str, str]:
        """String pairs recording the config file, its model type and each value with its key.

        >>> ModelEncoding("bloom", "alibi", {"heads": 4}, provenance={"heads": ("n_head", 4)}).metadata("c.json")
        {'from_config': 'c.json', 'model_type': 'bloom', 'config.n_head': '4'}
        """
        meta = {"from_config": source, "model_type": self.model_type}
        meta.update({f"config.{key}": json.dumps(value) for key, value in self.provenance.values()})
        return meta


def config_int(config: Mapping[str, Any], key: str) -> int:
    """``config[key]`` as a positive integer; a ParameterError naming the key otherwise.

    >>> config_int({"n_head": 4}, "n_head")
    4
    """
    value = config.get(key)
    if value is None:
        raise ParameterError(f"config.json has no {key}", hint=f"add {key} to the config")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or value != math.floor(value):
        raise ParameterError(f"config.json: {key} must be a positive integer, got {value!r}")
    return int(value)


def known_rope_type(rope_type: Any) -> str:
    """``rope_type`` if transformers knows it; a ParameterError listing the known ones otherwise.

    >>> known_rope_type("yarn")
    'yarn'
    """
    if rope_type not in ROPE_TYPES:
        raise ParameterError(f"unknown rope_type {rope_type!r}", hint=did_you_mean(str(rope_type), ROPE_TYPES))
    return rope_type
