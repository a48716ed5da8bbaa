"""Two per-family facts of transformers' rotary code, read from its source: which model types' attention
re-interleaves the rotary module's cos/sin (adjacent pairs: pecli's ``interleaved`` layout), and which
model types' default rope init ignores ``partial_rotary_factor`` (the full head_dim is rotated).

For each ``*RotaryEmbedding`` class in ``transformers.models.*.modeling_*`` (its model type: the config
class its ``__init__`` is annotated with):

* re-interleave: the module's ``apply_rotary_pos_emb`` takes ``cos[..., : cos.shape[-1] // 2]`` and
  ``repeat_interleave(2, dim=-1)`` (GLM, GLM-4, ERNIE 4.5, Helium, Moonshine): its attention rotates
  (x_2i, x_2i+1) with the module's first-half frequencies.
* always interleaved: a class of the module (its attention, an indexer) calls DeepSeek's
  ``apply_rotary_pos_emb_interleave`` without a ``rope_interleave`` switch (DeepSeek V3.2, GLM-MoE-DSA,
  LongCat-Flash, AXK2, Bailing hybrid, Mistral Large 4, dots3): adjacent pairs by the first half of the
  module's cos/sin, whatever the config says; the model type is that class's config class's (and the composite
  configs' whose ``text_config`` it is). The families with the switch are ``INTERLEAVE_SWITCH``.
* partial_rotary_factor: the class's ``compute_default_rope_parameters`` (else its ``__init__``) does or
  does not spell ``partial_rotary_factor``; a model type counts as ignoring it only when every rotary class
  built on its config ignores it. The scaled rope types (``ROPE_INIT_FUNCTIONS``: linear, dynamic, yarn,
  longrope, llama3) read it for every family; the classes whose ``__init__`` does not go through
  ``ROPE_INIT_FUNCTIONS`` for them are listed.

* defaults: the config class's defaults of the keys pecli's rope reading uses (``CONFIG_KEYS``), JSON scalars
  only (a ``None`` default is derived in ``__post_init__``, so is left out), and its ``default_theta`` (what
  ``standardize_rope_params`` gives a config without ``rope_theta``): a number is ``rope_theta``; a dict
  (Gemma 3's ``{"global", "local"}``) gives ``rope_theta``, and ``rope_local_base_freq`` where the class
  reads that key.

Writes pecli/models/transformers_families.py (the sets, the defaults and the transformers version); ``--check``
only compares and exits 1 when the committed file differs.

Run: PYTHONPATH=. python scripts/rope_families.py [--check]
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from transformers_rotary import config_class, rotary_classes

TARGET = os.path.join(os.path.dirname(__file__), "..", "pecli", "models", "transformers_families.py")

#: ``cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)``, whatever the spacing
_REINTERLEAVE = re.compile(r"cos\[\s*\.\.\.\s*,\s*:\s*cos\.shape\[-1\]\s*//\s*2\s*\]\s*\.repeat_interleave\(\s*2")


def reinterleaves(module: object) -> bool:
    """Whether the module's ``apply_rotary_pos_emb`` re-interleaves the first half of cos/sin."""
    function = vars(module).get("apply_rotary_pos_emb")
    if function is None:
        return False
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    return bool(_REINTERLEAVE.search(source))


def switches_pairing(module: object) -> bool:
    """Whether the module's attention rotates adjacent pairs when ``config.rope_interleave`` is true
    (DeepSeek V3's ``apply_rotary_pos_emb_interleave``, for weights laid out in interleaved pairs)."""
    try:
        source = inspect.getsource(module)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return False
    return "config.rope_interleave" in source and "apply_rotary_pos_emb_interleave" in source


#: a call of DeepSeek's ``apply_rotary_pos_emb_interleave`` (not its ``def``)
_INTERLEAVE_CALL = re.compile(r"(?<!def )\bapply_rotary_pos_emb_interleave\(")


def always_interleaved(module: object) -> set[str]:
    """The model types whose attention calls ``apply_rotary_pos_emb_interleave`` with no ``rope_interleave``
    switch (DeepSeek V3.2, GLM-MoE-DSA, LongCat-Flash…): adjacent pairs whatever the config says. Read per class
    (an attention or indexer calling it), the model type from the config class its ``__init__`` is annotated
    with, so a composite module's other towers (dots3's audio attention, which rotates halves) are not counted."""
    found: set[str] = set()
    try:
        if not _INTERLEAVE_CALL.search(inspect.getsource(module)):  # type: ignore[arg-type]
            return found  # most modules: no call at all (reading each class's source is slow)
    except (OSError, TypeError):
        return found
    for obj in vars(module).values():
        if not isinstance(obj, type) or obj.__module__ != getattr(module, "__name__", None):
            continue
        try:
            source = inspect.getsource(obj)
        except (OSError, TypeError):
            continue
        if not _INTERLEAVE_CALL.search(source) or "rope_interleave" in source:
            continue
        config_cls = config_class(obj)
        model_type = getattr(config_cls, "model_type", "") if config_cls is not None else ""
        if model_type:
            found.add(model_type)
            found |= composites(config_cls)  # type: ignore[arg-type]
    return found


def composites(text_config: type) -> set[str]:
    """The model types of the composite configs (``mistral_large4``, ``dots3_note``) whose ``text_config`` is
    ``text_config``: a config.json of theirs that spells the rope keys at its top runs the same attention."""
    module = sys.modules.get(text_config.__module__)
    found = set()
    for obj in vars(module).values() if module is not None else ():
        sub = getattr(obj, "sub_configs", None) if isinstance(obj, type) else None
        if isinstance(sub, dict) and sub.get("text_config") is text_config and getattr(obj, "model_type", ""):
            found.add(obj.model_type)
    return found


def text_configs(config_cls: type) -> list[type]:
    """The text config class of a composite config class (its ``sub_configs["text_config"]``), with a model type.

    Qwen2-VL's rotary module is annotated with the composite ``Qwen2VLConfig``, but its text model builds it with
    its text config, whose model type (``qwen2_vl_text``) is the one a config.json's ``text_config`` names: the
    module's facts are that model type's too.
    """
    sub = getattr(config_cls, "sub_configs", None)
    text = sub.get("text_config") if isinstance(sub, dict) else None
    return [text] if isinstance(text, type) and getattr(text, "model_type", "") else []


def reads_partial(rotary: type) -> bool:
    """Whether the class's default rope init reads ``partial_rotary_factor``."""
    function = getattr(rotary, "compute_default_rope_parameters", None) or rotary.__init__
    return "partial_rotary_factor" in inspect.getsource(function)


#: config keys pecli's rope reading (pecli/models/rope_config.py, rope_settings.py, rope_layers.py) uses
CONFIG_KEYS = (
    "head_dim",
    "qk_rope_head_dim",
    "num_attention_heads",
    "hidden_size",
    "num_hidden_layers",
    "max_position_embeddings",
    "original_max_position_embeddings",
    "partial_rotary_factor",
    "rotary_dim",
)

#: a dict default_theta's keys, as the config keys they stand for
_THETA_KEYS = {
    "global": "rope_theta",
    "full_attention": "rope_theta",
    "local": "rope_local_base_freq",
    "sliding_attention": "rope_local_base_freq",
}


def _scalar(value: object) -> bool:
    return isinstance(value, (bool, int, float, str))


def class_defaults(config_cls: type) -> dict[str, object]:
    """The config class's defaults of ``CONFIG_KEYS`` and its ``default_theta``, JSON scalars only."""
    found: dict[str, object] = {}
    for key in CONFIG_KEYS:
        value = getattr(config_cls, key, None)
        if _scalar(value) and not isinstance(value, bool):
            found[key] = value
    theta = getattr(config_cls, "default_theta", None)
    if isinstance(theta, dict):
        # the local base is rope_local_base_freq only for the classes that read that key (Gemma 3, 3n, T5Gemma 2)
        reads_local = "rope_local_base_freq" in inspect.getsource(config_cls)
        for name, value in theta.items():
            key = _THETA_KEYS.get(name)
            if key is not None and _scalar(value) and (key == "rope_theta" or reads_local):
                found[key] = float(value)
    elif _scalar(theta) and not isinstance(theta, bool):
        found["rope_theta"] = float(theta)  # type: ignore[arg-type]
    return found


def scan() -> dict[str, object]:
    import transformers

    pairs: dict[str, set[bool]] = {}
    partial: dict[str, set[bool]] = {}
    own_scaled: set[str] = set()
    switch: dict[str, bool] = {}
    defaults: dict[str, dict[str, object]] = {}
    always: set[str] = set()
    rotaries = [(name, rotary, config_class(rotary)) for _package, name, rotary in rotary_classes()]
    own = {getattr(config_cls, "model_type", "") for _name, _rotary, config_cls in rotaries if config_cls is not None}
    for name, rotary, annotated in rotaries:
        if not getattr(annotated, "model_type", "") or annotated is None:
            continue
        module = sys.modules[rotary.__module__]
        always |= always_interleaved(module)
        # the annotated config's model type, and its text config's where no rotary class is annotated with that
        for config_cls in (annotated, *(text for text in text_configs(annotated) if text.model_type not in own)):
            model_type = config_cls.model_type
            if model_type not in defaults:
                defaults[model_type] = class_defaults(config_cls)
            pairs.setdefault(model_type, set()).add(reinterleaves(module))
            if switches_pairing(module):
                switch[model_type] = bool(getattr(config_cls, "rope_interleave", False))
            partial.setdefault(model_type, set()).add(reads_partial(rotary))
            if "ROPE_INIT_FUNCTIONS" not in inspect.getsource(rotary.__init__):
                own_scaled.add(f"{model_type} ({name})")
    return {
        "version": transformers.__version__,
        "reinterleave": sorted(t for t, seen in pairs.items() if seen == {True}),
        "mixed_pairs": sorted(t for t, seen in pairs.items() if len(seen) > 1),
        "ignores_partial": sorted(t for t, seen in partial.items() if seen == {False}),
        "reads_partial": sorted(t for t, seen in partial.items() if True in seen),
        "own_scaled_init": sorted(own_scaled),
        "interleave_switch": dict(sorted(switch.items())),
        "always_interleaved": sorted(always - set(switch)),
        "defaults": {model_type: values for model_type, values in sorted(defaults.items()) if values},
    }


def _frozenset(name: str, doc: str, values: list[str]) -> str:
    lines = [f"#: {doc}", f"{name} = frozenset(", "    {"]
    lines += [f'        "{value}",' for value in values]
    lines += ["    }", ")", ""]
    return "\n".join(lines)


def _entry(name: str, values: dict[str, object]) -> str:
    """One model type's defaults, a key a line (ruff's line length)."""
    lines = [f'    "{name}": {{'] + [f'        "{key}": {value!r},' for key, value in values.items()] + ["    },"]
    return "\n".join(lines)


def render(found: dict[str, object]) -> str:
    version = found["version"]
    return "\n".join(
        [
            f'"""Per-family facts of transformers {version}\'s rotary code, written by scripts/rope_families.py',
            "(do not edit: run it again on a new transformers). Read from the modeling modules' source.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "__all__ = [",
            '    "ALWAYS_INTERLEAVED",',
            '    "CLASS_DEFAULTS",',
            '    "IGNORES_PARTIAL",',
            '    "INTERLEAVE_SWITCH",',
            '    "REINTERLEAVED",',
            '    "TRANSFORMERS_VERSION",',
            '    "USES_PARTIAL",',
            "]",
            "",
            f'TRANSFORMERS_VERSION = "{version}"',
            "",
            _frozenset(
                "REINTERLEAVED",
                "model types whose apply_rotary_pos_emb re-interleaves the first half of cos/sin: adjacent pairs",
                found["reinterleave"],  # type: ignore[arg-type]
            ),
            "#: model types whose attention rotates adjacent pairs when the config's rope_interleave is true (their",
            "#: apply_rotary_pos_emb_interleave), each with its config class's default for a config without the key",
            "INTERLEAVE_SWITCH = {",
            *[f'    "{name}": {value},' for name, value in found["interleave_switch"].items()],  # type: ignore[attr-defined]
            "}",
            "",
            _frozenset(
                "ALWAYS_INTERLEAVED",
                "model types whose attention always rotates adjacent pairs (apply_rotary_pos_emb_interleave with no\n"
                "#: rope_interleave switch); their rotary module returns halves, cat(freqs, freqs)",
                found["always_interleaved"],  # type: ignore[arg-type]
            ),
            _frozenset(
                "IGNORES_PARTIAL",
                "model types whose default rope init rotates the full head_dim whatever partial_rotary_factor says",
                found["ignores_partial"],  # type: ignore[arg-type]
            ),
            _frozenset(
                "USES_PARTIAL",
                "model types whose default rope init rotates int(head_dim * partial_rotary_factor) columns",
                found["reads_partial"],  # type: ignore[arg-type]
            ),
            "#: per model type, its config class's defaults of the keys pecli's rope reading uses (JSON scalars; a",
            "#: None default, derived in __post_init__, is left out); rope_theta (and rope_local_base_freq) from its",
            "#: default_theta: what transformers gives a config.json that leaves the key out",
            "CLASS_DEFAULTS: dict[str, dict[str, int | float | str]] = {",
            *[_entry(name, values) for name, values in found["defaults"].items()],  # type: ignore[attr-defined]
            "}",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    found = scan()
    print(f"defaults ({len(found['defaults'])} model types)")  # type: ignore[arg-type]
    keys = ("reinterleave", "always_interleaved", "mixed_pairs", "ignores_partial", "reads_partial", "own_scaled_init")
    for key in keys:
        values = found[key]
        print(f"{key} ({len(values)}): {', '.join(values)}")  # type: ignore[arg-type]
    text = render(found)
    if args.check:
        with open(TARGET) as file:
            sys.exit(0 if file.read() == text else 1)
    with open(TARGET, "w") as file:
        file.write(text)
    print(f"wrote {os.path.relpath(TARGET)} (transformers {found['version']})")


if __name__ == "__main__":
    main()
