"""Attack on a model's config as the reference (issue 30): ``pecli compare MODEL_DIR engine.npy``."""

from __future__ import annotations

from pecli.models.info import config_warnings


def test_info_reads_a_flat_rope_set_with_an_object_among_its_values_as_flat() -> None:
    # transformers' nested_rope_parameter_keys: only keys that are layer types nest; "foo" is an unread key
    config = {"model_type": "llama", "rope_scaling": {"rope_type": "linear", "factor": 2, "bad_key": 1, "foo": {}}}
    assert config_warnings(config) == [
        "rope_scaling.bad_key, rope_scaling.foo: transformers' linear RoPE never reads them"
    ]


def test_info_names_no_key_inside_an_object_rope_type() -> None:
    # a rope_type that is no string is refused where it is read; its inner keys are no set of rope parameters
    config = {"model_type": "llama", "rope_scaling": {"rope_type": {"x": 1}, "factor": 2, "bad_key": 1}}
    assert not any("rope_type.x" in warning for warning in config_warnings(config))
