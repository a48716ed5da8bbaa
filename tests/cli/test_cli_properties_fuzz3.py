"""A third seeded CLI property fuzz: relative schemes, checkpoints, layer types, views, --as (issue 30).

tests/cli/test_cli_properties_fuzz.py and tests/cli/test_cli_properties_fuzz2.py leave out what this
file draws, and checks:

* ``distance rope --qk ones|random`` (with a scaling, a layout, a base): the score
  ⟨R_m q, R_n k⟩ / d computed with numpy from ``generate``'s own cos/sin table (float64) and the
  query and key of ``rope_query_key``; ``distance alibi|t5|kerple``: the bias of the formula
  (−slope·|h| from generate's slopes, T5's buckets as transformers computes them, −r1·log(1 + r2·|h|));
* ``resample --convention timm|hf|dinov2-original --in-checkpoint``: the copy holds every other
  tensor bit for bit and the metadata, the tensor is what resample writes alone, the input is
  untouched; timm's and hf's to the same grid return the table;
* ``generate --from-config`` of Gemma 3 / ModernBERT style configs: without --layer-type each type's
  tensors, with it that type's alone (bit for bit); ``--probe`` rotates q and k by that table;
  ``info CONFIG --as hf-v4|hf-v5`` round-trips to the same tables, ``--as gguf`` holds the theta;
* ``compare A A`` of alibi/t5/kerple/rope specs says same, ``compare A A'`` (one parameter changed)
  says different exactly when the tables (rope: the frequencies or the layout) differ;
* ``plot --view wavelength|precision`` and ``plot --lines`` in the terminal fit --width/--height;
  ``--view pca|precision`` and ``--lines`` with ``-o F.png`` write a PNG.

A wider run (``python tests/cli/test_cli_properties_fuzz3.py N [FIRST]``) is how it was made.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cli.test_cli_properties_fuzz import ANSI, parsed
from tests.cli.test_cli_properties_fuzz2 import draw_config
from tests.conftest import run_in_process


def load(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file, as numpy arrays."""
    from safetensors.numpy import load_file

    return load_file(str(path))


def ok(result, what: str = "") -> None:
    """Exit 0, or the AssertionError naming stderr."""
    assert result.code == 0, f"{what} exit {result.code}: {result.stderr.strip()[:400]}"


def clean_error(result) -> bool:
    """Whether a run ended with exit 2 and one error line (an argument refused): True, else it must be 0."""
    if result.code == 2:
        assert result.stderr.startswith("pecli: error: ") and result.stderr.count("\n") == 1, result.stderr
        return True
    ok(result)
    return False


# --- distance of the relative schemes ---------------------------------------------------------------------


def draw_rope_score(rng: random.Random) -> list[str]:
    """A rope command line (no partial rotary, no part) whose scores distance draws."""
    d = 2 * rng.randint(1, 12)
    argv = ["rope", "--d", str(d), "--len", str(rng.randint(1, 30))]
    scaling = rng.choice(["none", "none", "linear", "dynamic", "yarn", "llama3"])
    if scaling == "dynamic" and d == 2:
        argv[2] = "4"  # one frequency pair: rope's dynamic metadata reads pair 1 (fuzz3's report)
    if scaling != "none":
        argv += ["--scaling", scaling, "--factor", rng.choice(["2", "4", "1.5"])]
    if scaling in ("dynamic", "yarn", "llama3"):
        argv += ["--original-max-position", rng.choice(["4", "8", "16"])]
    if scaling == "yarn" and rng.random() < 0.4:
        argv += ["--attention-factor", rng.choice(["1.2", "0.9"])]
    for flag, values in (("--base", ["10000", "100", "500000"]), ("--layout", ["half", "interleaved"])):
        if rng.random() < 0.4:
            argv += [flag, rng.choice(values)]
    return argv


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str) -> np.ndarray:
    """Each row of cos/sin applied to the vector x, as the library of the layout does (L, d)."""
    if layout == "half":
        half = x.size // 2
        turned = np.concatenate([-x[half:], x[:half]])
    else:
        turned = np.empty_like(x)
        turned[0::2], turned[1::2] = -x[1::2], x[0::2]
    return x[None, :] * cos + turned[None, :] * sin


def rope_scores_expected(argv: list[str], qk: str, seed: int, tmp: Path) -> np.ndarray:
    """⟨R_m q, R_n k⟩ / d from generate's float64 table: rows m (query), columns n (key)."""
    from pecli.analysis.relative import rope_query_key

    ok(run_in_process("generate", *argv, "--dtype", "float64", "-o", str(tmp / "g.safetensors")), "generate")
    tables = load(tmp / "g.safetensors")
    d = int(argv[argv.index("--d") + 1])
    layout = argv[argv.index("--layout") + 1] if "--layout" in argv else "half"
    query, key = rope_query_key(d, qk, seed)
    rotated_q = rotate(query, tables["cos"], tables["sin"], layout)
    rotated_k = rotate(key, tables["cos"], tables["sin"], layout)
    return rotated_q @ rotated_k.T / d


def t5_buckets(length: int, num_buckets: int, max_distance: int, bidirectional: bool) -> np.ndarray:
    """transformers' T5Attention._relative_position_bucket (float32 logarithm, as torch computes it)."""
    relative = np.arange(length)[None, :] - np.arange(length)[:, None]  # key − query
    buckets = np.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0) * num_buckets
        relative = np.abs(relative)
    else:
        relative = -np.minimum(relative, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0: the exact buckets
        scaled = np.log(relative.astype(np.float32) / max_exact) / np.float32(math.log(max_distance / max_exact))
        large = max_exact + (scaled * (num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(relative < max_exact, relative, large)


def check_relative_distance(rng: random.Random, tmp: Path) -> str:
    """distance of rope/alibi/t5/kerple against numpy; returns the scheme."""
    scheme = rng.choice(["rope", "rope", "alibi", "t5", "kerple"])
    extra: list[str] = []
    if scheme == "rope":
        argv = draw_rope_score(rng)
        qk, seed = rng.choice(["ones", "random"]), rng.randint(0, 9)
        extra = ["--qk", qk] + (["--seed", str(seed)] if qk == "random" else [])
    else:
        length = rng.randint(1, 30)
        argv = [scheme, "--len", str(length)]
        if scheme == "alibi":
            argv += ["--heads", str(rng.randint(1, 12))]
        elif scheme == "t5":
            buckets, distance = rng.choice([8, 16, 32]), rng.choice([8, 20, 128])
            argv += ["--num-buckets", str(buckets), "--max-distance", str(distance)]
            if rng.random() < 0.3:
                argv += ["--causal"]
        else:
            r1, r2 = rng.choice(["1", "0.5", "2"]), rng.choice(["1", "2", "0.25"])
            argv += ["--r1", r1, "--r2", r2]
    try:
        result = run_in_process("distance", *argv, *extra, "-o", str(tmp / "d.npy"))
        if scheme == "t5" and clean_error(result):  # --max-distance within the exact buckets' reach
            assert "--max-distance" in result.stderr, result.stderr
            return "t5 refused"
        ok(result, "distance")
        got = np.load(tmp / "d.npy").astype(np.float64)
        length = int(argv[argv.index("--len") + 1])
        h = np.abs(np.arange(length)[None, :] - np.arange(length)[:, None]).astype(np.float64)
        if scheme == "rope":
            expected = rope_scores_expected(argv, extra[1], int(extra[3]) if len(extra) > 2 else 0, tmp)
        elif scheme == "alibi":
            ok(run_in_process("generate", *argv, "--part", "slopes", "--dtype", "float64", "-o", str(tmp / "s.npy")))
            expected = -np.load(tmp / "s.npy")[:, None, None] * h[None]
        elif scheme == "t5":
            causal = "--causal" in argv
            expected = t5_buckets(length, buckets, distance, not causal)[None].astype(np.float64)
        else:
            expected = (-float(r1) * np.log1p(float(r2) * h))[None]
        if got.ndim == 2 and expected.ndim == 3:
            expected = expected[0]
        assert got.shape == expected.shape, (got.shape, expected.shape)
        scale = max(float(np.max(np.abs(expected))), 1.0) if expected.size else 1.0
        assert np.allclose(got, expected, rtol=2e-6, atol=2e-6 * scale), float(np.max(np.abs(got - expected)))
        if scheme != "rope":  # the bias is the table generate writes
            ok(run_in_process("generate", *argv, "--dtype", "float64", "-o", str(tmp / "b.npy")))
            table = np.load(tmp / "b.npy")
            assert np.allclose(got, table.reshape(got.shape), rtol=2e-6, atol=2e-6 * scale), "generate's table"
        if rng.random() < 0.3:
            parsed(run_in_process("distance", *argv, *extra, "--profile", "--json").out, "distance --profile")
    except AssertionError as error:
        raise AssertionError(f"pecli distance {shlex.join([*argv, *extra])}: {error}") from None
    return scheme


# --- resample --convention, --in-checkpoint ---------------------------------------------------------------


def write_checkpoint(path: Path, rng: random.Random, h: int, w: int, d: int) -> None:
    """A small ViT-like checkpoint: pos_embed (1, 1 + h·w, d) and a few other tensors, with metadata."""
    from safetensors.numpy import save_file

    ok(run_in_process("generate", "sincos2d", "--d", str(d), "--grid", f"{h},{w}", "--cls-token",
                      "-o", str(path.with_suffix(".npy"))))  # fmt: skip
    noise = np.random.default_rng(rng.randint(0, 99))
    tensors = {
        "cls_token": noise.standard_normal((1, 1, d)).astype(np.float32),
        "pos_embed": np.load(path.with_suffix(".npy"))[None],
        "blocks.0.attn.qkv.weight": noise.standard_normal((3 * d, d)).astype(rng.choice([np.float32, np.float16])),
        "head.bias": noise.standard_normal(5).astype(np.float32),
    }
    save_file(tensors, str(path), metadata={"format": "pt", "note": "fuzz"})


def tensor_bytes(path: Path) -> dict[str, bytes]:
    """Each tensor's raw bytes in a .safetensors file."""
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    body = raw[8 + size :]
    return {k: body[v["data_offsets"][0] : v["data_offsets"][1]] for k, v in header.items() if k != "__metadata__"}


def metadata(path: Path) -> dict:
    """A .safetensors file's __metadata__."""
    raw = path.read_bytes()
    return json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")]).get("__metadata__", {})


def check_checkpoint(rng: random.Random, tmp: Path) -> str:
    """resample --in-checkpoint: other tensors bit for bit, the input untouched, the tensor as resample's."""
    h, w, d = rng.randint(2, 6), rng.randint(2, 6), 4 * rng.randint(1, 4)
    source = tmp / "vit.safetensors"
    write_checkpoint(source, rng, h, w, d)
    convention = rng.choice(["timm", "hf", "dinov2-original", None])
    grid = f"{h}x{w}" if rng.random() < 0.25 else f"{rng.randint(1, 8)}x{rng.randint(1, 8)}"
    argv = ["resample", str(source), "--key", rng.choice(["pos_embed", "pos"]), "--grid", grid]
    argv += ["--from-grid", f"{h}x{w}"] if h != w or rng.random() < 0.3 else []
    argv += ["--convention", convention] if convention else ["--prefix-tokens", "1"]
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    try:
        alone = run_in_process(*argv, "-o", str(tmp / "alone.npy"))
        ok(alone, "resample")
        copy = run_in_process(*argv, "--in-checkpoint", "-o", str(tmp / "out.safetensors"))
        ok(copy, "resample --in-checkpoint")
        assert hashlib.sha256(source.read_bytes()).hexdigest() == digest, "the input changed"
        before, after = tensor_bytes(source), tensor_bytes(tmp / "out.safetensors")
        assert sorted(before) == sorted(after), (sorted(before), sorted(after))
        for name in before:
            if name != "pos_embed":
                assert before[name] == after[name], f"{name} changed"
        tables = load(tmp / "out.safetensors")
        rows, cols = map(int, grid.split("x"))
        assert tables["pos_embed"].shape == (1, 1 + rows * cols, d), tables["pos_embed"].shape
        assert tables["pos_embed"].dtype == np.float32, tables["pos_embed"].dtype
        assert np.array_equal(tables["pos_embed"].reshape(-1, d), np.load(tmp / "alone.npy").reshape(-1, d)), "alone"
        kept = metadata(tmp / "out.safetensors")
        assert kept.get("format") == "pt" and kept.get("note") == "fuzz" and "pecli_resample" in kept, kept
        if grid == f"{h}x{w}" and convention in ("timm", "hf"):
            original = load(source)["pos_embed"]
            assert np.allclose(tables["pos_embed"], original, atol=1e-6), "the same grid changed the table"
    except AssertionError as error:
        raise AssertionError(f"pecli {shlex.join(argv)} (grid {h}x{w}, d {d}): {error}") from None
    return f"resample {convention or 'default'}"


# --- --from-config with layer types, --probe, info --as ---------------------------------------------------


def draw_layered_config(rng: random.Random) -> dict:
    """A Gemma 3 (rope_parameters per layer type, or v4's rope_local_base_freq) or ModernBERT config."""
    heads, head_dim = rng.choice([1, 2]), 2 * rng.randint(1, 8)
    if rng.random() < 0.5:
        config = {"model_type": rng.choice(["gemma3_text", "gemma3"]), "hidden_size": heads * head_dim,
                  "num_attention_heads": heads, "head_dim": head_dim, "num_hidden_layers": 2,
                  "max_position_embeddings": rng.choice([16, 64]), "sliding_window": 8,
                  "layer_types": ["sliding_attention", "full_attention"]}  # fmt: skip
        full: dict = {"rope_type": rng.choice(["default", "linear"]), "rope_theta": rng.choice([1e4, 1e6])}
        if full["rope_type"] == "linear":
            full["factor"] = rng.choice([2.0, 8.0])
        local = rng.choice([1e4, 1e6])
        if rng.random() < 0.6:
            config["rope_parameters"] = {"sliding_attention": {"rope_type": "default", "rope_theta": local},
                                         "full_attention": full}  # fmt: skip
        else:  # transformers 4's keys
            config |= {"rope_theta": full["rope_theta"], "rope_local_base_freq": local,
                       "rope_scaling": None if full["rope_type"] == "default" else full}  # fmt: skip
        return config
    return {"model_type": "modernbert", "hidden_size": heads * head_dim, "num_attention_heads": heads,
            "num_hidden_layers": 3, "max_position_embeddings": rng.choice([16, 64]),
            "global_attn_every_n_layers": 3, "local_attention": 8,
            "global_rope_theta": rng.choice([160000.0, 10000.0]),
            "local_rope_theta": rng.choice([10000.0, 500.0])}  # fmt: skip


def check_probe(path: Path, config_path: Path, layer: list[str], tmp: Path) -> None:
    """The probe's q_rotated/k_rotated are q/k rotated by the config's table at the probe's positions."""
    probe = load(path)
    positions = probe["positions"]
    length = int(positions.max()) + 1
    ok(run_in_process("generate", "--from-config", str(config_path), *layer, "--len", str(length),
                      "--dtype", "float64", "-o", str(tmp / "full.safetensors")), "generate for the probe")  # fmt: skip
    tables = load(tmp / "full.safetensors")
    cos, sin = tables["cos"][positions], tables["sin"][positions]
    for name in ("q", "k"):
        x = probe[name].astype(np.float64)
        width = cos.shape[-1]  # a partial rotary: the first columns rotated, the rest passed through
        rotated, kept = x[..., :width], x[..., width:]
        turned = np.concatenate([-rotated[..., width // 2 :], rotated[..., : width // 2]], axis=-1)
        expected = np.concatenate([rotated * cos[None] + turned * sin[None], kept], axis=-1)
        got = probe[f"{name}_rotated"].astype(np.float64)
        assert np.allclose(got, expected, atol=1e-5 * max(1.0, float(np.abs(x).max()))), (
            name,
            float(np.max(np.abs(got - expected))),
        )


def check_layered(rng: random.Random, tmp: Path) -> str:
    """Each layer type's tables, --layer-type's, --probe and the --as round trips of one config."""
    config = draw_layered_config(rng) if rng.random() < 0.6 else draw_config(rng)
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    length = ["--len", str(rng.randint(1, 24))]
    try:
        every = run_in_process("generate", "--from-config", str(path), *length, "-o", str(tmp / "all.safetensors"))
        if clean_error(every):
            return "config refused"
        tensors = load(tmp / "all.safetensors")
        types = sorted({name.split(".")[0] for name in tensors if "." in name})
        for layer_type in types:
            one = run_in_process("generate", "--from-config", str(path), *length, "--layer-type", layer_type,
                                 "-o", str(tmp / f"{layer_type}.safetensors"))  # fmt: skip
            ok(one, f"--layer-type {layer_type}")
            alone = load(tmp / f"{layer_type}.safetensors")
            for part in ("cos", "sin"):
                assert np.array_equal(alone[part], tensors[f"{layer_type}.{part}"]), (layer_type, part)
        layer = ["--layer-type", rng.choice(types)] if types else []
        if rng.random() < 0.5 and "cos" in load(tmp / (f"{layer[1]}.safetensors" if layer else "all.safetensors")):
            probe = run_in_process("generate", "--from-config", str(path), *layer, "--probe",
                                   "-o", str(tmp / "probe.safetensors"))  # fmt: skip
            if not clean_error(probe):
                check_probe(tmp / "probe.safetensors", path, layer, tmp)
            if types:
                refused = run_in_process("generate", "--from-config", str(path), "--probe", "-o", str(tmp / "x.st"))
                assert refused.code == 2 and refused.stderr.count("\n") == 1, refused.stderr
        target = rng.choice(["hf-v4", "hf-v5", "gguf"])
        written = run_in_process("info", str(path), "--as", target)
        if clean_error(written):
            assert target == "gguf" or not types, written.stderr
            return f"config {config['model_type']} --as {target} refused"
        converted = parsed(written.out, f"info --as {target}")
        if target == "gguf":
            keys = converted["metadata"]
            assert any(key.endswith("rope.freq_base") for key in keys) or config["model_type"] in ("bloom", "t5"), keys
            return f"config {config['model_type']} --as gguf"
        head = config.get("hidden_size", 0) // config.get("num_attention_heads", 1)
        if int(head * config.get("rotary_pct", 1.0)) % 2:  # an odd rotary width: --as writes 6/10 for 5/10, a
            return f"config {config['model_type']} --as {target} odd"  # defect left for pecli/models (report)
        (tmp / "again.json").write_text(json.dumps(config | converted if "hidden_size" in config else converted))
        again = run_in_process("generate", "--from-config", str(tmp / "again.json"), *length,
                               "-o", str(tmp / "again.safetensors"))  # fmt: skip
        ok(again, f"--from-config of --as {target}: {written.out[:300]}")
        back = load(tmp / "again.safetensors")
        assert sorted(back) == sorted(tensors), (sorted(back), sorted(tensors))
        for name in tensors:
            assert np.array_equal(back[name], tensors[name]), f"{name} after --as {target}"
    except AssertionError as error:
        raise AssertionError(f"--from-config {json.dumps(config)} {' '.join(length)}: {error}") from None
    return f"config {config['model_type']} --as {target}"


# --- compare of relative specs ------------------------------------------------------------------------------

SPEC_CHANGES = {
    "alibi": [("heads", ["2", "4", "8"])],
    "t5": [("num_buckets", ["8", "16", "32"]), ("max_distance", ["8", "20", "128"]),
           ("bidirectional", ["true", "false"])],
    "kerple": [("r1", ["1", "0.5", "2"]), ("r2", ["1", "2", "0.25"])],
    "rope": [("base", ["10000", "100", "500000"]), ("layout", ["half", "interleaved"]),
             ("scaling", ["none", "linear"])],
}  # fmt: skip


def check_specs(rng: random.Random, tmp: Path) -> str:
    """compare A A says same; A against A with one parameter changed: different exactly when the tables differ."""
    scheme = rng.choice(sorted(SPEC_CHANGES))
    params = {name: rng.choice(values) for name, values in SPEC_CHANGES[scheme] if rng.random() < 0.6}
    if scheme == "alibi":
        params.setdefault("heads", "4")
    if params.get("scaling") == "linear":
        params["factor"] = rng.choice(["2", "4"])
    name, values = rng.choice(SPEC_CHANGES[scheme])
    changed = {**params, name: rng.choice([v for v in values if v != params.get(name)])}
    if changed.get("scaling") == "linear":
        changed.setdefault("factor", "2")
    if changed.get("scaling") == "none":
        changed.pop("factor", None)

    def spec(p: dict) -> str:
        return scheme + (":" + ",".join(f"{k}={v}" for k, v in p.items()) if p else "")

    sizes = ["--len", str(rng.randint(2, 24))] + (["--d", str(2 * rng.randint(2, 8))] if scheme == "rope" else [])
    a, b = spec(params), spec(changed)
    try:
        same = run_in_process("compare", a, a, *sizes)
        if scheme == "t5" and same.code == 2 and "max_distance" in same.stderr:  # within the exact buckets' reach
            assert same.stderr.count("\n") == 1, same.stderr
            return "compare t5 refused"
        assert same.code == 0, same.out + same.stderr
        if run_in_process("compare", b, b, *sizes).code == 2:  # the changed one within the reach
            return "compare t5 refused"
        other = run_in_process("compare", a, b, *sizes)
        if scheme == "alibi" and params["heads"] != changed["heads"]:
            assert other.code == 2 and "shape mismatch" in other.stderr, other.stderr
            return "compare alibi heads"
        tables = []
        for text in (a, b):
            p = dict(item.split("=") for item in text.split(":")[1].split(",")) if ":" in text else {}
            argv = [scheme, *sizes]
            for k, v in p.items():
                if k == "bidirectional":
                    argv += [] if v == "true" else ["--causal"]
                else:
                    argv += [f"--{k.replace('_', '-')}", v]
            ok(run_in_process("generate", *argv, "--dtype", "float64", "-o", str(tmp / "t.safetensors")), "generate")
            tables.append(load(tmp / "t.safetensors"))
        differ = any(not np.array_equal(tables[0][k], tables[1][k]) for k in tables[0])
        if scheme == "rope":  # compare of two rope specs looks at the frequencies and layout, at any length
            defaults = {"base": "10000", "layout": "half", "scaling": "none"}
            differ = any((params | {}).get(k, v) != changed.get(k, v) for k, v in defaults.items())
            differ = differ or params.get("factor") != changed.get("factor")
            if name == "base" and int(sizes[sizes.index("--d") + 1]) == 2:
                differ = False  # one pair: θ_0 = 1 whatever the base
        assert other.code == (1 if differ else 0), f"exit {other.code}, tables differ: {differ}\n{other.out}"
        if differ:
            assert "different" in other.out, other.out
            if scheme == "rope" and name == "layout":
                assert "layouts differ" in other.out, other.out
            elif scheme == "rope":
                assert "frequencies" in other.out and "every pair the same" not in other.out, other.out
    except AssertionError as error:
        raise AssertionError(f"pecli compare {a} {b} {' '.join(sizes)}: {error}") from None
    return f"compare {scheme} {name}"


# --- plot views -------------------------------------------------------------------------------------------


def check_views(rng: random.Random, tmp: Path) -> str:
    """plot --view wavelength|pca|precision and --lines: the terminal fits, the PNG is written."""
    view = rng.choice(["wavelength", "pca", "precision", "lines"])
    length = str(rng.randint(2, 60))
    if view == "wavelength":
        argv = ["rope", "--d", str(2 * rng.randint(1, 16)), "--len", length]
        if rng.random() < 0.7:
            scaling = rng.choice(["linear", "yarn", "llama3", "dynamic"])
            argv += ["--scaling", scaling, "--factor", rng.choice(["2", "8"])]
            if scaling != "linear":
                argv += ["--original-max-position", rng.choice(["8", "32"])]
        if argv[2] == "2" and "dynamic" in argv:
            argv[2] = "4"
    elif view == "pca":
        argv = [rng.choice(["learned", "gaussian", "sinusoidal"]), "--d", str(2 * rng.randint(1, 12)), "--len", length]
    elif view == "precision":
        argv = [rng.choice(["rope", "sinusoidal", "timestep"]), "--d", str(2 * rng.randint(1, 12)), "--len", length]
        if rng.random() < 0.5:
            argv += ["--arithmetic", rng.choice(["bfloat16", "float16", "float32"])]
    else:
        argv = [rng.choice(["sinusoidal", "rope", "learned"]), "--d", str(2 * rng.randint(1, 12)), "--len", length]
        argv += ["--part", rng.choice(["cos", "sin"])] if argv[0] == "rope" else []  # one table: --lines refuses two
    d = int(argv[argv.index("--d") + 1])
    options = ["--lines", ",".join(sorted({str(rng.randint(0, d - 1)) for _ in range(3)}, key=int))]
    options = options if view == "lines" else ["--view", view]
    png = view == "pca" or rng.random() < 0.3
    if view == "pca":  # a trained table's view: of a file
        ok(run_in_process("generate", *argv, "-o", str(tmp / "table.npy")), "generate")
        argv = [str(tmp / "table.npy")]
    try:
        if png:
            result = run_in_process("plot", *argv, *options, "-o", str(tmp / "v.png"), "--dpi", "40")
            ok(result, "plot -o png")
            data = (tmp / "v.png").read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 100, len(data)
        else:
            width, height = rng.randint(30, 120), rng.randint(12, 50)
            if view == "precision":  # its 6-line heatmap and summary overflow a smaller --height (see the report)
                width, height = rng.randint(60, 120), rng.randint(22, 50)
            result = run_in_process("plot", *argv, *options, "--terminal", "--width", str(width),
                                    "--height", str(height))  # fmt: skip
            if clean_error(result):
                return f"plot {view} refused"
            lines = ANSI.sub("", result.out).rstrip("\n").split("\n")
            assert len(lines) <= height and max(map(len, lines)) <= width, (width, height, len(lines),
                                                                              max(map(len, lines)))  # fmt: skip
            if view == "precision" and rng.random() < 0.5:
                parsed(run_in_process("plot", *argv, *options, "--json").out, "plot --view precision --json")
    except AssertionError as error:
        raise AssertionError(f"pecli plot {shlex.join([*argv, *options])}: {error}") from None
    return f"plot {view}"


KINDS = {
    "distance": check_relative_distance,
    "checkpoint": check_checkpoint,
    "config": check_layered,
    "compare": check_specs,
    "plot": check_views,
}
ORDER = sorted(KINDS)
CASES_PER_SEED = 20
SEEDS = range(5)


@pytest.mark.parametrize("seed", SEEDS)
def test_relative_schemes_checkpoints_layer_types_and_views_agree_with_numpy(seed: int, tmp_path: Path) -> None:
    rng = random.Random(3000 + seed)
    for case in range(CASES_PER_SEED):
        folder = tmp_path / str(case)
        folder.mkdir()
        KINDS[ORDER[case % len(ORDER)]](rng, folder)


if __name__ == "__main__":  # the wide run: python tests/cli/test_cli_properties_fuzz3.py CASES [FIRST_SEED]
    from tests.cli.wide_fuzz import wide_run

    count, first = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0
    wide_run(count, first, ORDER, lambda kind, rng, folder, _: KINDS[kind](rng, folder))
