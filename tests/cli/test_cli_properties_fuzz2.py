"""A seeded property fuzz of timestep, distance, resample, RoPE's scalings and --from-config (issue 30).

tests/cli/test_cli_properties_fuzz.py draws valid ``generate`` command lines of every scheme with its
plain options. This file draws what that one leaves out, and checks:

* rope with a scaling (linear, dynamic, yarn, llama3, longrope and their options), a partial rotary
  factor and an --arithmetic: every property the first file checks (info, compare F F and F SPEC,
  -o - bytes, --json, plot --terminal, identify's reproduce line);
* ``generate --from-config`` of a small random config (llama, qwen2, gemma3, phi3 longrope, gpt-neox
  rotary_pct, bloom, t5): info, compare F F, plot --terminal fit, --json;
* ``timestep T… -o F.safetensors``: the file's rows are ``pecli.timestep_embedding(T, …)`` to the bit,
  info agrees, -o - writes the .npy file's bytes, --json parses;
* ``distance SCHEME -o D.npy``: the metric computed with numpy from ``generate``'s table (float64),
  within float32 noise; ``--profile`` agrees with the matrix's offsets;
* ``resample``: to the table's own length or grid it returns the table (within rounding); A→B→A of a
  smooth table comes back close.

A wider run of the same drawing (1,500+ cases: ``python tests/cli/test_cli_properties_fuzz2.py N``)
is how this file was made; sizes stay small so that a case costs a few runs of pecli.
"""

from __future__ import annotations

import json
import random
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cli.test_cli_properties_fuzz import ANSI, SAFETENSORS_DTYPES, check, header, parsed
from tests.conftest import run_in_process

ARITHMETIC = ["float64", "float32", "bfloat16", "float16"]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def draw_rope(rng: random.Random) -> list[str]:
    """A rope command line with a scaling, maybe a partial rotary factor and an --arithmetic."""
    d = 2 * rng.randint(1, 12)
    argv = ["rope", "--d", str(d), "--len", str(rng.randint(1, 40))]
    scaling = rng.choice(["linear", "dynamic", "yarn", "llama3", "longrope", "none"])
    if scaling == "dynamic" and d == 2:  # one frequency: rope_metadata's effective_base reads inv_freq[1], exit 3
        d = 4  # (issue 30's fuzz3 report: the fix belongs in pecli/schemes/rope.py)
        argv[2] = "4"
    argv += ["--scaling", scaling]
    if scaling != "none":
        argv += ["--factor", rng.choice(["2", "4", "8", "1.5"])]
    if scaling in ("dynamic", "yarn", "llama3", "longrope"):
        argv += ["--original-max-position", rng.choice(["4", "8", "16", "32"])]
    if scaling == "llama3":
        if rng.random() < 0.5:
            argv += ["--low-freq-factor", rng.choice(["1", "2"])]
        if rng.random() < 0.5:
            argv += ["--high-freq-factor", rng.choice(["4", "8"])]
    if scaling == "yarn":
        if rng.random() < 0.5:
            argv += ["--beta-fast", rng.choice(["32", "16"])]
        if rng.random() < 0.5:
            argv += ["--beta-slow", rng.choice(["1", "2"])]
    if scaling in ("yarn", "longrope") and rng.random() < 0.4:
        argv += ["--attention-factor", rng.choice(["1", "1.2", "0.9"])]
    partial = rng.random() < 0.4
    if partial:
        argv += ["--partial-rotary-factor", rng.choice(["0.5", "0.25", "1"])]
    if scaling == "longrope":
        rotated = int(d * float(argv[argv.index("--partial-rotary-factor") + 1])) if partial else d
        half = max(rotated // 2, 1)
        for flag in ("--short-factor", "--long-factor"):
            argv += [flag, ",".join(str(round(1 + rng.random() * 3, 2)) for _ in range(half))]
    for flag, values in (
        ("--base", ["10000", "500000"]),
        ("--layout", ["half", "interleaved"]),
        ("--part", ["cos", "sin", "angle"]),
        ("--offset", ["0", "3"]),
        ("--arithmetic", ARITHMETIC),
    ):
        if rng.random() < 0.35:
            argv += [flag, rng.choice(values)]
    if rng.random() < 0.5:
        argv += ["--dtype", rng.choice(DTYPES)]
    return argv


def draw_config(rng: random.Random) -> dict:
    """A small random valid config.json of one of the model families --from-config reads."""
    family = rng.choice(["llama", "qwen2", "gemma3", "phi3", "gpt_neox", "bloom", "t5"])
    heads = rng.choice([2, 4])
    head_dim = 2 * rng.randint(2, 8)
    config: dict = {
        "model_type": family,
        "hidden_size": heads * head_dim,
        "num_attention_heads": heads,
        "num_hidden_layers": 1,
        "max_position_embeddings": rng.choice([16, 32, 64]),
    }
    theta = rng.choice([10000.0, 500000.0, 1000000.0])
    if family in ("llama", "qwen2"):
        kind = rng.choice(["default", "linear", "dynamic", "yarn", "llama3"])
        rope: dict = {"rope_type": kind, "rope_theta": theta}
        if kind != "default":
            rope["factor"] = rng.choice([2.0, 4.0])
        if kind in ("yarn", "llama3", "dynamic"):
            rope["original_max_position_embeddings"] = 8
        if kind == "llama3":
            rope |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
        config["rope_parameters"] = rope
    elif family == "gemma3":
        config |= {
            "head_dim": head_dim,
            "sliding_window": 8,
            "layer_types": ["sliding_attention", "full_attention"],
            "num_hidden_layers": 2,
            "rope_parameters": {
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": theta},
            },
        }
    elif family == "phi3":
        half = head_dim // 2
        config |= {
            "original_max_position_embeddings": 8,
            "rope_parameters": {
                "rope_type": "longrope",
                "rope_theta": theta,
                "original_max_position_embeddings": 8,
                "short_factor": [round(1 + 0.05 * i, 2) for i in range(half)],
                "long_factor": [round(1 + 0.5 * i, 2) for i in range(half)],
            },
        }
    elif family == "gpt_neox":
        config |= {"rotary_pct": rng.choice([0.25, 0.5, 1.0]), "rotary_emb_base": theta}
    elif family == "bloom":
        config = {"model_type": "bloom", "hidden_size": heads * head_dim, "n_head": rng.randint(1, 12), "n_layer": 1}
    else:
        config = {
            "model_type": "t5",
            "d_model": heads * head_dim,
            "num_heads": heads,
            "num_layers": 1,
            "relative_attention_num_buckets": rng.choice([8, 32]),
            "relative_attention_max_distance": rng.choice([16, 128]),
        }
    return config


def check_config(config: dict, rng: random.Random, tmp: Path) -> None:
    """generate --from-config: exit 0 or one clean error line; the file's info, compare F F, plot fit."""
    (tmp / "config.json").write_text(json.dumps(config))
    path = tmp / "f.safetensors"
    length = ["--len", str(rng.randint(1, 40))] if rng.random() < 0.8 or config["model_type"] in ("bloom", "t5") else []
    result = run_in_process("generate", "--from-config", str(tmp / "config.json"), *length, "-o", str(path))
    if result.code != 0:
        assert result.code == 2 and result.stderr.startswith("pecli: error: "), result.stderr
        assert result.stderr.count("\n") == 1 and not path.exists(), result.stderr
        return
    tensors = header(path)
    info = run_in_process("info", str(path), "--json")
    assert info.code == 0, info.stderr
    for tensor in parsed(info.out, "info")["tensors"]:
        assert tensor["shape"] == tensors[tensor["name"]]["shape"], tensor
        assert tensor["dtype"] == SAFETENSORS_DTYPES[tensors[tensor["name"]]["dtype"]], tensor
    same = run_in_process("compare", str(path), str(path))
    if same.code == 2 and len(tensors) > 1:  # T5's encoder and decoder, Gemma 3's layer types: it asks for --key
        assert same.code == 2 and same.stderr.count("\n") == 1 and "--key" in same.stderr, same.stderr
        name = sorted(tensors)[0]
        same = run_in_process("compare", str(path), str(path), "--key-a", name, "--key-b", name)
    assert same.code == 0, same.out + same.stderr
    parsed(run_in_process("generate", "--from-config", str(tmp / "config.json"), *length, "--json").out, "generate")
    if len(tensors) <= 2 or "--len" in length:
        width, height = rng.randint(20, 120), rng.randint(10, 50)
        plot = run_in_process("plot", str(path), "--terminal", "--width", str(width), "--height", str(height))
        if plot.code == 2:  # a multi-layer-type file: plot asks for --key
            assert plot.stderr.startswith("pecli: error: ") and plot.stderr.count("\n") == 1, plot.stderr
            return
        assert plot.code == 0, plot.stderr
        lines = ANSI.sub("", plot.out).rstrip("\n").split("\n")
        assert len(lines) <= height and max(len(line) for line in lines) <= width, (width, height, len(lines))


def draw_timestep(rng: random.Random) -> tuple[list[float], int, dict, list[str]]:
    """Timesteps, a dimension, timestep_embedding's keywords and the matching CLI options."""
    times = [
        rng.choice([0, 1, 999, 250, round(rng.uniform(0, 1000), 2), round(rng.uniform(0, 1), 3)])
        for _ in range(rng.randint(1, 8))
    ]
    dim = rng.randint(1, 24)
    kwargs: dict = {}
    argv: list[str] = []
    if rng.random() < 0.4:
        kwargs["max_period"] = float(value := rng.choice(["10000", "100", "1000"]))
        argv += ["--max-period", value]
    if rng.random() < 0.4:
        kwargs["flip_sin_to_cos"] = rng.random() < 0.5
        argv += ["--flip-sin-to-cos" if kwargs["flip_sin_to_cos"] else "--no-flip-sin-to-cos"]
    if rng.random() < 0.4 and dim // 2 > 1:
        kwargs["freq_shift"] = float(value := rng.choice(["0", "1"]))
        argv += ["--freq-shift", value]
    if rng.random() < 0.4:
        kwargs["scale"] = float(value := rng.choice(["1", "1000", "0.5"]))
        argv += ["--scale", value]
    if rng.random() < 0.1:
        kwargs["repeat_only"] = True
        argv += ["--repeat-only"]
    if rng.random() < 0.4:
        kwargs["arithmetic"] = value = rng.choice(ARITHMETIC)
        argv += ["--arithmetic", value]
    if rng.random() < 0.5:
        kwargs["dtype"] = value = rng.choice(DTYPES)
        argv += ["--dtype", value]
    if kwargs.get("repeat_only"):  # --repeat-only refuses the sinusoid's options (it would ignore them)
        sinusoid = {"max_period", "flip_sin_to_cos", "freq_shift", "scale", "arithmetic"}
        kwargs = {name: value for name, value in kwargs.items() if name not in sinusoid}
        argv = ["--repeat-only", *(["--dtype", kwargs["dtype"]] if "dtype" in kwargs else [])]
    return times, dim, kwargs, argv


def check_timestep(rng: random.Random, tmp: Path) -> None:
    """The file's rows equal pecli.timestep_embedding to the bit; info, -o -, --json agree."""
    times, dim, kwargs, options = draw_timestep(rng)
    given: list[str] = [*map(str, times)]
    stdin = b""
    if (form := rng.random()) < 0.2:  # --range START:STOP:STEP, integers (STOP excluded)
        start, step = rng.randint(0, 50), rng.randint(1, 300)
        stop = start + step * rng.randint(1, 6) - rng.randint(0, step - 1)
        times, given = [float(t) for t in range(start, stop, step)], ["--range", f"{start}:{stop}:{step}"]
    elif form < 0.35:  # from stdin
        given, stdin = ["-"], (rng.choice([" ", ",", "\n"]).join(given) + "\n").encode()
    argv = ["timestep", *given, "--d", str(dim), *options]
    try:
        timestep_properties(argv, times, dim, kwargs, tmp, stdin)
    except AssertionError as error:
        raise AssertionError(f"pecli {shlex.join(argv)}: {error}") from None


def timestep_properties(argv: list[str], times: list[float], dim: int, kwargs: dict, tmp: Path, stdin: bytes) -> None:
    """The file against pecli.timestep_embedding (see check_timestep)."""
    import pecli
    from pecli.io import read_table

    path = tmp / "t.safetensors"
    result = run_in_process(*argv, "-o", str(path), stdin=stdin)
    if result.code == 2:
        assert result.stderr.startswith("pecli: error: ") and result.stderr.count("\n") == 1, result.stderr
        return
    assert result.code == 0, result.stderr
    expected = pecli.timestep_embedding(times, dim, **kwargs)
    got = read_table(str(path)).array
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype or kwargs.get("dtype") == "bfloat16", (got.dtype, expected.dtype)
    assert np.array_equal(np.asarray(got, np.float64), np.asarray(expected, np.float64)), float(
        np.max(np.abs(np.asarray(got, np.float64) - np.asarray(expected, np.float64)))
    )
    info = run_in_process("info", str(path), "--json")
    assert info.code == 0, info.stderr
    assert parsed(info.out, "info")["tensors"][0]["shape"] == list(expected.shape)
    same = run_in_process("compare", str(path), str(path))
    assert same.code == 0, same.out
    if kwargs.get("dtype") != "bfloat16":
        npy = tmp / "t.npy"
        assert run_in_process(*argv, "-o", str(npy), stdin=stdin).code == 0
        piped = run_in_process(*argv, "-o", "-", stdin=stdin)
        assert piped.code == 0 and piped.stdout == npy.read_bytes()
        assert np.array_equal(np.load(npy), expected)
    parsed(run_in_process(*argv, "--json", stdin=stdin).out, "timestep")


DISTANCE_SCHEMES = {
    "sinusoidal": lambda rng: ["--d", str(rng.randint(1, 24))],
    "learned": lambda rng: ["--d", str(rng.randint(1, 24)), "--seed", str(rng.randint(0, 9))],
    "binary": lambda rng: ["--d", str(rng.randint(1, 12))],
    "gaussian": lambda rng: ["--d", str(2 * rng.randint(1, 12))],
    "count-normalized": lambda rng: ["--d", str(rng.randint(1, 8))],
    "memn2n": lambda rng: ["--d", str(rng.randint(1, 12))],
}


def metric(table: np.ndarray, name: str) -> np.ndarray:
    """The len × len matrix of a metric, in float64 with numpy (the documented formulas)."""
    x = table.astype(np.float64)
    if name == "dot":
        return x @ x.T
    if name == "cosine":
        norms = np.linalg.norm(x, axis=1)
        products = np.outer(norms, norms)  # a zero row's cosine is 0 (pecli's convention, sklearn's too)
        return np.divide(x @ x.T, products, out=np.zeros_like(products), where=products > 0)
    return np.sqrt(np.maximum(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1), 0))


def check_distance(rng: random.Random, tmp: Path) -> None:
    """distance SCHEME -o D.npy is the metric of generate's table (float64), within float32 noise."""
    scheme = rng.choice(sorted(DISTANCE_SCHEMES))
    length = rng.randint(1, 40)
    argv = [scheme, *DISTANCE_SCHEMES[scheme](rng), "--len", str(length)]
    name = rng.choice(["dot", "cosine", "euclidean"])
    rows = []
    if rng.random() < 0.3:
        start = rng.randint(0, length - 1)
        rows = ["--rows", f"{start}:{rng.randint(start + 1, length)}"]
    try:
        distance_properties(argv, name, rows, rng, tmp)
    except AssertionError as error:
        raise AssertionError(f"pecli distance {shlex.join([*argv, '--metric', name, *rows])}: {error}") from None


def distance_properties(argv: list[str], name: str, rows: list[str], rng: random.Random, tmp: Path) -> None:
    """The matrix and the profile against numpy's (see check_distance)."""
    result = run_in_process("distance", *argv, "--metric", name, *rows, "-o", str(tmp / "d.npy"))
    assert result.code == 0, result.stderr
    got = np.load(tmp / "d.npy")
    assert run_in_process("generate", *argv, "--dtype", "float64", "-o", str(tmp / "g.npy")).code == 0
    table = np.load(tmp / "g.npy")
    if rows:
        start, stop = map(int, rows[1].split(":"))
        table = table[start:stop]
    expected = metric(table, name)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    scale = max(float(np.nanmax(np.abs(expected))), 1.0) if expected.size else 1.0
    finite = np.isfinite(expected)
    assert np.array_equal(finite, np.isfinite(got)), "non-finite cells differ"
    both = finite & np.isfinite(got)
    assert np.allclose(got[both], expected[both], rtol=1e-5, atol=1e-6 * scale), float(
        np.max(np.abs(got[both] - expected[both]))
    )
    if rng.random() < 0.5 and not rows:
        profile = run_in_process("distance", *argv, "--metric", name, "--profile", "--json")
        assert profile.code == 0, profile.stderr
        parsed(profile.out, "distance --profile")
        assert run_in_process("distance", *argv, "--metric", name, "--profile", "-o", str(tmp / "p.npy")).code == 0
        columns = np.load(tmp / "p.npy")
        for row in columns:
            offset = int(row[0])
            diagonal = np.diagonal(expected, offset)
            diagonal = diagonal[np.isfinite(diagonal)]
            if diagonal.size:
                assert np.allclose(
                    row[1:4], [diagonal.mean(), diagonal.min(), diagonal.max()], rtol=1e-4, atol=1e-5 * scale
                ), (offset, row, diagonal)


def check_resample(rng: random.Random, tmp: Path) -> None:
    """resample to the table's own length/grid returns it; A→B→A of a smooth table comes back close."""
    if rng.random() < 0.5:  # a 1-D table
        length, d = rng.randint(2, 40), rng.randint(1, 16)
        argv = ["generate", "timestep", "--d", str(d), "--len", str(length), "--scale", "0.1", "--dtype", "float64"]
        assert run_in_process(*argv, "-o", str(tmp / "a.npy")).code == 0
        table = np.load(tmp / "a.npy")
        method = rng.choice(["linear", "nearest", "tile"])
        keep = rng.randint(0, min(2, length - 1))
        same = run_in_process(
            "resample",
            str(tmp / "a.npy"),
            "--len",
            str(length),
            "--method",
            method,
            "--keep-rows",
            str(keep),
            "-o",
            str(tmp / "b.npy"),
        )
        assert same.code == 0, same.stderr
        assert np.allclose(np.load(tmp / "b.npy"), table, atol=1e-12), method
        if method == "linear":
            longer = rng.randint(length, 3 * length)
            assert (
                run_in_process(
                    "resample", str(tmp / "a.npy"), "--len", str(longer), "--method", "linear", "-o", str(tmp / "c.npy")
                ).code
                == 0
            )
            back = run_in_process(
                "resample", str(tmp / "c.npy"), "--len", str(length), "--method", "linear", "-o", str(tmp / "e.npy")
            )
            assert back.code == 0, back.stderr
            error = float(np.max(np.abs(np.load(tmp / "e.npy") - table)))
            assert error < 0.03, (length, longer, error)  # 0.1 rad a row: linear's error ~ 0.0125
        return
    h, w = rng.randint(2, 8), rng.randint(2, 8)
    d = 4 * rng.randint(1, 4)
    prefix = rng.choice([0, 0, 1])
    argv = [
        "generate",
        "sincos2d",
        "--d",
        str(d),
        "--grid",
        f"{h},{w}",
        "--dtype",
        "float64",
        "--interpolation-scale",
        "4",
    ]
    argv += ["--cls-token"] if prefix else []
    assert run_in_process(*argv, "-o", str(tmp / "a.npy")).code == 0
    table = np.load(tmp / "a.npy")
    method = rng.choice(["bicubic", "bilinear", "nearest", "area"])
    antialias = rng.choice([[], ["--no-antialias"]]) if method in ("bicubic", "bilinear") else []
    common = ["--method", method, *antialias, "--prefix-tokens", str(prefix)]
    same = run_in_process(
        "resample",
        str(tmp / "a.npy"),
        "--grid",
        f"{h}x{w}",
        "--from-grid",
        f"{h}x{w}",
        *common,
        "-o",
        str(tmp / "b.npy"),
    )
    assert same.code == 0, same.stderr
    assert np.allclose(np.load(tmp / "b.npy"), table, atol=1e-12), method
    if method in ("bicubic", "bilinear"):
        big = f"{2 * h}x{2 * w}"
        assert (
            run_in_process(
                "resample",
                str(tmp / "a.npy"),
                "--grid",
                big,
                "--from-grid",
                f"{h}x{w}",
                *common,
                "-o",
                str(tmp / "c.npy"),
            ).code
            == 0
        )
        back = run_in_process(
            "resample", str(tmp / "c.npy"), "--grid", f"{h}x{w}", "--from-grid", big, *common, "-o", str(tmp / "e.npy")
        )
        assert back.code == 0, back.stderr
        error = float(np.max(np.abs(np.load(tmp / "e.npy") - table)))
        assert error < 0.1, (h, w, method, antialias, error)  # antialias blurs a 2 × 3 grid by ~0.05


KINDS = ["rope", "config", "timestep", "distance", "resample"]


def run_case(kind: str, rng: random.Random, tmp: Path, case: int) -> str:
    """One case of a kind; returns its description (the AssertionError, if any, propagates)."""
    if kind == "rope":
        argv = draw_rope(rng)
        try:
            check(argv, rng, tmp, identify=case % 3 == 0)
        except AssertionError as error:
            raise AssertionError(f"pecli generate {shlex.join(argv)}: {error}") from None
        return " ".join(argv[:1] + argv[argv.index("--scaling") : argv.index("--scaling") + 2])
    if kind == "config":
        config = draw_config(rng)
        try:
            check_config(config, rng, tmp)
        except AssertionError as error:
            raise AssertionError(f"--from-config {json.dumps(config)}: {error}") from None
        return "config " + config["model_type"]
    state = rng.getstate()
    try:
        {"timestep": check_timestep, "distance": check_distance, "resample": check_resample}[kind](rng, tmp)
    except AssertionError as error:
        rng.setstate(state)
        raise AssertionError(f"{kind}: {error}") from None
    return kind


CASES_PER_SEED = 24
SEEDS = range(5)


@pytest.mark.parametrize("seed", SEEDS)
def test_more_command_lines_write_tables_the_other_commands_agree_on(seed: int, tmp_path: Path) -> None:
    rng = random.Random(1000 + seed)
    for case in range(CASES_PER_SEED):
        folder = tmp_path / str(case)
        folder.mkdir()
        run_case(KINDS[case % len(KINDS)], rng, folder, case)


if __name__ == "__main__":  # the wide run: python tests/cli/test_cli_properties_fuzz2.py CASES [FIRST_SEED]
    from tests.cli.wide_fuzz import wide_run

    count, first = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0
    wide_run(count, first, KINDS, run_case)
