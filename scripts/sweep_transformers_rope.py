"""Sweep: every transformers architecture with a rotary module, against pecli's ``--from-config`` core.

For each ``*RotaryEmbedding`` class in ``transformers.models.*.modeling_*``: build its config class's
default config, save it with ``save_pretrained``, read it back as pecli reads a config.json, compute
pecli's tables in-process (``pecli.models.model_encoding`` → ``TableSpec``) and compare them with the
module's own cos/sin over the first ``POSITIONS`` positions (float32 tolerance): for a module whose
``apply_rotary_pos_emb`` re-interleaves them (GLM, GLM-4, ERNIE 4.5, Helium, Moonshine:
``cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)``), or whose attention calls
``apply_rotary_pos_emb_interleave`` (DeepSeek V3 with rope_interleave, V3.2, GLM-MoE-DSA, LongCat-Flash…), the
cos/sin its attention applies. Prints one line per
architecture — pass / fail (max error) / refused (pecli's message) / cannot check (why) — and the totals.

``--write-corpus`` also writes tests/data/sweep/: each checkable architecture's config.json and the
module's cos/sin (float32, ``POSITIONS`` rows), the transformers version and the architectures that
passed, which tests/models/test_sweep.py checks without transformers.

``--write-corpus --packages A,B`` rewrites those architectures' entries only, keeping the rest of the corpus.

Run: PYTHONPATH=. python scripts/sweep_transformers_rope.py [--write-corpus] [--only NAME] [--packages A,B]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
import warnings
from typing import Any

import numpy as np
from transformers_rotary import config_class, rotary_classes

POSITIONS = 16
#: float32 tolerance on cos/sin (values in [-1, 1], attention factors up to a few)
ATOL = 1e-5
#: a config whose JSON is larger than this is not committed to the corpus
MAX_CONFIG_BYTES = 20_000
CORPUS = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "sweep")


#: model types whose attention applies rotary only with this position_embedding_type (not their default)
ROTARY_SWITCH = {"esm": "rotary", "granitemoehybrid": "rope"}


def module_tables(rotary: Any, config: Any, dim_hint: int, layer_type: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The module's cos and sin over positions 0..POSITIONS-1, as (POSITIONS, width) float32 arrays."""
    import torch

    positions = torch.arange(POSITIONS)[None]
    x = torch.zeros(1, POSITIONS, dim_hint, dtype=torch.float32)
    kwargs = {"layer_type": layer_type} if layer_type is not None else {}
    with torch.no_grad():
        try:
            out = rotary(x, positions, **kwargs)
        except Exception:
            out = rotary(x, positions[None].expand(3, 1, POSITIONS), **kwargs)
    if torch.is_tensor(out) and out.is_complex():  # Llama 4: freqs_cis, one complex value per pair
        cos, sin = torch.repeat_interleave(out.real, 2, -1), torch.repeat_interleave(out.imag, 2, -1)
    else:
        cos, sin = out[0], out[1]
        if cos.shape[-2] != POSITIONS:
            raise ValueError("the module returns frequencies, not cos and sin per position")
    cos, sin = (t.float().reshape(-1, POSITIONS, t.shape[-1])[0].numpy() for t in (cos, sin))
    from rope_families import always_interleaved, reinterleaves, switches_pairing

    module = sys.modules[type(rotary).__module__]
    # DeepSeek V3's rope_interleave: apply_rotary_pos_emb_interleave rotates adjacent pairs by the first half
    interleaved_weights = switches_pairing(module) and bool(
        getattr(getattr(rotary, "config", None), "rope_interleave", False)
    )
    # DeepSeek V3.2, GLM-MoE-DSA, LongCat-Flash…: their attention calls it whatever the config says
    always = getattr(getattr(rotary, "config", None), "model_type", "") in always_interleaved(module)
    if reinterleaves(module) or interleaved_weights or always:
        # what the attention applies: the first half of each, every column twice (adjacent pairs)
        cos, sin = (np.repeat(t[:, : t.shape[1] // 2], 2, axis=1) for t in (cos, sin))
    return cos, sin


def pecli_tables(config: dict[str, Any], layer_type: str | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """pecli's cos and sin per layer type (key None: one set for every layer), POSITIONS rows, float32."""
    from pecli.models import model_encoding
    from pecli.schemes.spec import TableSpec

    encoding = model_encoding(config, layer_type=layer_type)
    if encoding.scheme != "rope":
        raise ValueError(f"pecli reads scheme {encoding.scheme!r}, not rope")
    encodings = dict(encoding.layers) if encoding.layers else {layer_type: encoding}
    tables = {}
    for name, one in encodings.items():
        spec = TableSpec.resolve(one.scheme, one.preset, one.params, length=POSITIONS, dim=one.dim)
        parts = {part.name: np.asarray(part.array(), dtype=np.float32) for part in spec.parts()}
        tables[name] = (parts["cos"], parts["sin"])
    return tables


def compare(expected: tuple[np.ndarray, np.ndarray], got: tuple[np.ndarray, np.ndarray]) -> float:
    """Max |pecli − module| over cos and sin; a module that returns one half (gpt-oss) is compared with it."""
    error = 0.0
    for want, have in zip(expected, got, strict=True):
        if want.shape[1] * 2 == have.shape[1]:
            # a module of one half: gpt-oss's (half layout: the first half), DeepSeek V4's (each column twice)
            have = have[:, ::2] if np.array_equal(have[:, ::2], have[:, 1::2]) else have[:, : want.shape[1]]
        if want.shape != have.shape:
            raise ValueError(f"module width {want.shape[1]}, pecli width {have.shape[1]}")
        error = max(error, float(np.abs(want.astype(np.float64) - have).max()))
    return error


def layer_types_of(config: dict[str, Any]) -> list[str | None]:
    """The layer types whose rope differs (rope_parameters keyed by layer type, those that layers have), else [None]."""
    settings = config.get("rope_parameters")
    if isinstance(settings, dict) and any(isinstance(v, dict) for v in settings.values()):
        names = [name for name, value in settings.items() if isinstance(value, dict)]
        # a rope entry no layer has (Laguna's sliding_attention with every layer full) has no module buffer
        used = [name for name in names if name in (config.get("layer_types") or ())]
        return used or names
    return [None]


def sweep_one(key: str, rotary_cls: type, corpus: dict[str, Any] | None) -> tuple[str, str]:
    """(status, detail) of one architecture; ``corpus`` collects what --write-corpus commits."""
    from pecli.errors import PecliError

    config_cls = config_class(rotary_cls)
    if config_cls is None:
        return "cannot check", "no config class in the rotary module's signature"
    try:
        config = config_cls()
    except Exception as error:
        return "cannot check", f"default {config_cls.__name__}() fails: {type(error).__name__}"
    if getattr(config, "model_type", None) in ROTARY_SWITCH:
        # the default is a model without rotary (ESM's absolute, Granite 4 hybrid's none): switch it on, as the
        # module's table is what attention applies only then
        config.position_embedding_type = ROTARY_SWITCH[config.model_type]
    with tempfile.TemporaryDirectory() as directory:
        config.save_pretrained(directory)
        with open(os.path.join(directory, "config.json")) as file:
            text = file.read()
    saved = json.loads(text)
    expected: dict[str | None, tuple[np.ndarray, np.ndarray]] = {}
    if len(inspect.signature(rotary_cls.forward).parameters) <= 2:
        return "cannot check", "forward takes a length or grid, not positions (a vision/2-D rotary module)"
    try:
        for layer_type in layer_types_of(saved):
            try:
                rotary = rotary_cls(config)
            except AttributeError:  # a composite config: the module is built on its text sub-config
                rotary = rotary_cls(config.get_text_config(decoder=True))
            dim = int(getattr(rotary, "inv_freq", np.zeros(64)).shape[-1]) * 2 or 64
            expected[layer_type] = module_tables(rotary, config, dim, layer_type)
    except Exception as error:
        return "cannot check", f"the module does not run on its default config: {type(error).__name__}: {error}"[:160]
    if corpus is not None and len(text) <= MAX_CONFIG_BYTES:
        corpus[key] = {"config": saved, "tables": expected}
    try:
        got = {}
        for layer_type in expected:
            got.update(pecli_tables(saved, layer_type))
        error = max(compare(expected[name], got[name]) for name in expected)
    except PecliError as refusal:
        return "refused", str(refusal).splitlines()[0][:160]
    except Exception as failure:
        return "fail", f"{type(failure).__name__}: {failure}"[:160]
    return ("pass", f"max error {error:.2e}") if error <= ATOL else ("fail", f"max error {error:.3g}")


def write_corpus(
    corpus: dict[str, Any], results: dict[str, tuple[str, str]], version: str, *, merge: bool = False
) -> None:
    """Write tests/data/sweep/; ``merge``: replace only the entries of ``results``' architectures."""
    os.makedirs(CORPUS, exist_ok=True)
    arrays = {}
    if merge:
        with np.load(os.path.join(CORPUS, "tables.npz")) as old:
            arrays.update({key: old[key] for key in old.files if key.split("/")[0] not in results})
        with open(os.path.join(CORPUS, "configs.json")) as file:
            configs = {key: {"config": value, "tables": {}} for key, value in json.load(file).items()}
        with open(os.path.join(CORPUS, "record.json")) as file:
            old_record = json.load(file)
        corpus = {**{k: v for k, v in configs.items() if k not in results}, **corpus}
        passed_before = {p for p in old_record["passed"] if p not in results}
        results = {**{k: tuple(v) for k, v in old_record["results"].items() if k not in results}, **results}
    for package, entry in corpus.items():
        for layer_type, (cos, sin) in entry["tables"].items():
            arrays[f"{package}/{layer_type or ''}/cos"] = cos.astype(np.float32)
            arrays[f"{package}/{layer_type or ''}/sin"] = sin.astype(np.float32)
    np.savez_compressed(os.path.join(CORPUS, "tables.npz"), **arrays)
    with open(os.path.join(CORPUS, "configs.json"), "w") as file:
        json.dump({package: entry["config"] for package, entry in sorted(corpus.items())}, file, sort_keys=True)
    applied_pairs = reinterleaved_packages()  # once: it imports every modeling module
    record = {
        "transformers": version,
        "positions": POSITIONS,
        "atol": ATOL,
        "written_by": "scripts/sweep_transformers_rope.py --write-corpus",
        "passed": sorted(p for p in corpus if results[p][0] == "pass" or (merge and p in passed_before)),
        "reinterleaved": sorted(
            p for p in corpus if p in applied_pairs or corpus[p]["config"].get("rope_interleave") is True
        ),
        "results": {package: list(result) for package, result in sorted(results.items())},
    }
    with open(os.path.join(CORPUS, "record.json"), "w") as file:
        json.dump(record, file, indent=1, sort_keys=True)
        file.write("\n")


def reinterleaved_packages() -> set[str]:
    """The packages whose apply_rotary_pos_emb re-interleaves cos/sin, or whose attention always calls
    apply_rotary_pos_emb_interleave (the sweep compares what it applies: adjacent pairs)."""
    from rope_families import always_interleaved, reinterleaves

    found = set()
    for package, _name, cls in rotary_classes():
        module = sys.modules[cls.__module__]
        config_cls = config_class(cls)
        always = getattr(config_cls, "model_type", "") in always_interleaved(module)
        if reinterleaves(module) or always:
            found.add(package)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-corpus", action="store_true", help="write tests/data/sweep/")
    parser.add_argument("--only", help="sweep the packages whose name contains this")
    parser.add_argument("--packages", help="sweep these packages only (comma-separated, exact names)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    corpus: dict[str, Any] | None = {} if args.write_corpus else None
    results: dict[str, tuple[str, str]] = {}
    for package, name, cls in rotary_classes():
        if args.only and args.only not in package:
            continue
        if args.packages and package not in args.packages.split(","):
            continue
        key = package if package not in results else f"{package}:{name}"
        results[key] = sweep_one(key, cls, corpus)
        print(f"{key:<36} {results[key][0]:<13} {results[key][1]}", flush=True)
    counts = {status: sum(r[0] == status for r in results.values()) for status in ("pass", "fail", "refused")}
    checkable = sum(counts.values())
    unchecked = len(results) - checkable
    print(
        f"\n{counts['pass']} of {checkable} checkable pass ({100 * counts['pass'] / max(1, checkable):.0f} %); "
        f"{counts['fail']} fail, {counts['refused']} refused, {unchecked} cannot be checked "
        f"(transformers {transformers.__version__})"
    )
    if corpus is not None:
        write_corpus(corpus, results, transformers.__version__, merge=bool(args.packages))


if __name__ == "__main__":
    main()
