"""Random sweep: each transformers family with a rotary module, on perturbed configs, against pecli.

scripts/sweep_transformers_rope.py checks each family's default config; this perturbs it (seeded): rope_theta,
head_dim (or hidden_size / heads), partial_rotary_factor / rotary_pct / rotary_dim where the family has one, and
rope_parameters of each rope type (default, linear, dynamic, yarn with and without attention_factor, beta_fast /
beta_slow, truncate, mscale / mscale_all_dim, longrope, llama3), per layer type where the family keys them so.
The module's cos/sin (its own float32 arithmetic) over positions 0..L-1 are compared with pecli's table, the
same pairing the family's attention applies. Text positions only (an M-RoPE module gets the same position on
each axis). Prints one line per disagreement and the totals per family.

Run: PYTHONPATH=.:scripts python scripts/sweep_random_rope.py [--configs 10] [--seed 0] [--only NAME]
"""

from __future__ import annotations

import argparse
import copy
import inspect
import json
import random
import sys
import warnings
from typing import Any

import numpy as np
import sweep_transformers_rope as sweep
from transformers_rotary import config_class, rotary_classes

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")


#: rotary modules of an encoder inside a composite model whose config pecli does not read as that encoder's
#: (Evolla's SaProt protein encoder, built on protein_encoder_config, and dots3 note's audio encoder, on its audio
#: config: pecli reads the language model's settings)
OTHER_ENCODER = frozenset({"EvollaSaProtRotaryEmbedding", "Dots3NoteAudioRotaryEmbedding"})


def rope_settings(rng: random.Random, rope_type: str, half: int, theta: float, context: int) -> dict[str, Any]:
    """One valid rope_parameters entry of ``rope_type`` for ``half`` frequency pairs."""
    entry: dict[str, Any] = {"rope_type": rope_type, "rope_theta": theta}
    original = context // rng.choice((2, 4))
    if rope_type in ("linear", "dynamic"):
        entry["factor"] = rng.choice((1.5, 2.0, 4.0, 8.0))
    elif rope_type == "yarn":
        entry.update(factor=rng.choice((2.0, 4.0, 16.0)), original_max_position_embeddings=original)
        if rng.random() < 0.5:
            entry["attention_factor"] = rng.choice((0.8, 1.0, 1.3))
        if rng.random() < 0.5:
            entry.update(beta_fast=rng.choice((16.0, 32.0, 64.0)), beta_slow=rng.choice((0.5, 1.0, 2.0)))
        if rng.random() < 0.4:
            entry["truncate"] = rng.random() < 0.5
        if rng.random() < 0.4:
            entry.update(mscale=rng.choice((0.707, 1.0)), mscale_all_dim=rng.choice((0.0, 0.707, 1.0)))
    elif rope_type == "longrope":
        entry["original_max_position_embeddings"] = original
        entry["short_factor"] = [round(1 + rng.random(), 4) for _ in range(half)]
        entry["long_factor"] = [round(1 + 4 * rng.random(), 4) for _ in range(half)]
        if rng.random() < 0.3:
            entry["attention_factor"] = rng.choice((0.9, 1.2))
    elif rope_type == "llama3":
        entry.update(
            factor=rng.choice((8.0, 32.0)),
            low_freq_factor=rng.choice((1.0, 2.0)),
            high_freq_factor=rng.choice((4.0, 8.0)),
            original_max_position_embeddings=original,
        )
    return entry


#: sub-configs a composite config keeps its language model's settings in, in pecli's order of reading them
SUB_CONFIGS = ("text_config", "language_config", "llm_config", "thinker_config", "decoder_config", "decoder")


def text_part(config: dict[str, Any]) -> dict[str, Any]:
    """The dict that holds the rope keys: the config, or the (nested) sub-config of its language model (Dia's
    decoder_config, Qwen2.5-Omni's thinker_config.text_config, T5Gemma's decoder) that the model reads them from,
    not the outer dict, where they would be unused."""
    for key in SUB_CONFIGS:
        inner = config.get(key)
        if isinstance(inner, dict):
            found = text_part(inner)
            if any(name in found for name in ("rope_parameters", "head_dim", "hidden_size")):
                return found
    return config


def perturb(rng: random.Random, saved: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(saved)
    part = text_part(config)
    heads = part.get("num_attention_heads")
    head_dim = rng.choice((16, 32, 48, 64))
    if isinstance(part.get("head_dim"), int):
        part["head_dim"] = head_dim
    elif isinstance(heads, int) and isinstance(part.get("hidden_size"), int):
        part["hidden_size"] = heads * head_dim
    for key, choices in (
        ("partial_rotary_factor", (0.25, 0.5, 0.75, 1.0)),
        ("rotary_pct", (0.25, 0.5, 1.0)),
        ("rotary_dim", (8, 16)),
    ):
        if isinstance(part.get(key), (int, float)) and not isinstance(part.get(key), bool):
            part[key] = rng.choice(choices)
    context = rng.choice((64, 128))
    if "max_position_embeddings" in part:
        part["max_position_embeddings"] = context
    if part.get("model_type") in sweep.ROTARY_SWITCH:
        part["position_embedding_type"] = sweep.ROTARY_SWITCH[part["model_type"]]
    settings = part.get("rope_parameters")
    if "rope_parameters" not in part and "rope_theta" in part:
        # a config class with a top-level rope_theta and no rope_parameters (ESM): its module computes the
        # default rope of that base and reads no rope_parameters a file might hold
        part["rope_theta"] = rng.choice((10000.0, 500000.0, 1000000.0, 12345.6))
        return config
    half = head_dim // 2
    if isinstance(part.get("partial_rotary_factor"), (int, float)):
        half = max(1, int(head_dim * part["partial_rotary_factor"]) // 2)
    rope_type = rng.choice(ROPE_TYPES)
    theta = rng.choice((10000.0, 500000.0, 1000000.0, 12345.6))
    if isinstance(settings, dict) and any(isinstance(v, dict) for v in settings.values()):
        for name, value in settings.items():
            if isinstance(value, dict):
                kind = rng.choice(("default", rope_type))
                # LongRoPE's factors: one per rotated pair of this layer type's own partial width
                pairs = max(1, int(head_dim * value.get("partial_rotary_factor", 1.0)) // 2)
                pairs = half if "partial_rotary_factor" not in value else pairs
                new = rope_settings(rng, kind, pairs, rng.choice((theta, 10000.0)), context)
                for key in ("partial_rotary_factor",):
                    if key in value:
                        new[key] = value[key]
                settings[name] = new
    else:
        partial = None
        if isinstance(settings, dict) and "partial_rotary_factor" in settings:
            partial = rng.choice((0.25, 0.5, 1.0))
            half = max(1, int(head_dim * partial) // 2)
        new = rope_settings(rng, rope_type, half, theta, context)
        if partial is not None:
            new["partial_rotary_factor"] = partial
        part["rope_parameters"] = new
    return config


def check(config_cls: type, rotary_cls: type, config: dict[str, Any], length: int) -> tuple[str, str]:
    from pecli.errors import PecliError

    try:
        built = config_cls.from_dict(copy.deepcopy(config))
    except Exception as error:
        return "invalid", f"transformers refuses: {type(error).__name__}: {error}"[:120]
    sweep.POSITIONS = length
    expected = {}
    try:
        for layer_type in sweep.layer_types_of(text_part(config)):
            try:
                rotary = rotary_cls(built)
            except AttributeError:
                rotary = rotary_cls(built.get_text_config(decoder=True))
            dim = int(getattr(rotary, "inv_freq", np.zeros(64)).shape[-1]) * 2 or 64
            expected[layer_type] = sweep.module_tables(rotary, built, dim, layer_type)
    except Exception as error:
        return "module fails", f"{type(error).__name__}: {error}"[:120]
    try:
        got = {}
        for layer_type in expected:
            got.update(sweep.pecli_tables(config, layer_type))
        error = max(sweep.compare(expected[name], got[name]) for name in expected)
    except PecliError as refusal:
        return "refused", str(refusal).splitlines()[0][:160]
    except Exception as failure:
        return "fail", f"{type(failure).__name__}: {failure}"[:160]
    tolerance = 1e-5 * max(1.0, length / 16)
    return ("pass", f"{error:.1e}") if error <= tolerance else ("fail", f"max diff {error:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only")
    parser.add_argument("--packages")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    totals: dict[str, int] = {}
    for package, name, cls in rotary_classes():
        if args.only and args.only not in package:
            continue
        if args.packages and package not in args.packages.split(","):
            continue
        if name in OTHER_ENCODER:
            continue
        config_cls = config_class(cls)
        if config_cls is None or len(inspect.signature(cls.forward).parameters) <= 2:
            continue
        try:
            saved = config_cls().to_dict()
        except Exception:
            continue
        rng = random.Random(f"{args.seed}/{package}/{name}")
        counts: dict[str, int] = {}
        for index in range(args.configs):
            config = perturb(rng, saved)
            length = rng.choice((16, 48, 200))
            status, detail = check(config_cls, cls, config, length)
            counts[status] = counts.get(status, 0) + 1
            if status in ("fail", "refused") or (status in ("invalid", "module fails") and args.only):
                print(f"  {package}:{name} #{index} L={length} {status}: {detail}", flush=True)
                print(f"    rope={json.dumps(text_part(config).get('rope_parameters'))[:400]}", flush=True)
                keys = ("head_dim", "hidden_size", "num_attention_heads", "partial_rotary_factor", "rotary_pct")
                print(f"    {json.dumps({k: text_part(config).get(k) for k in keys})}", flush=True)
        for status, count in counts.items():
            totals[status] = totals.get(status, 0) + count
        print(f"{package:<32} {counts}", flush=True)
    print("totals", totals)


if __name__ == "__main__":
    sys.exit(main())
