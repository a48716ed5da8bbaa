"""A seeded random fuzz of every command, in process (issue 30).

Each seed draws a fixed list of command lines (a command, its positional arguments, up to three of
its options with ordinary or hostile values, an output) and runs them through the real entry point.
A run fails the test when it ends in an internal error (exit 3) or an exception, prints a traceback
or a Python warning, prints more than one error line, names an option in a refusal that the command
does not have, or refuses (exit 2) and leaves its output file behind. Every failure names the argv.

No memory cap is set (an address-space limit set inside an xdist worker would outlive the test):
the sizes drawn are capped instead, so that a run that forgets its size check stays small.
The same drawing with larger sizes and many more seeds is how the defects pinned below were found.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import assert_clean_error, run_in_process

SCHEMES = [
    "sinusoidal", "learned", "count", "count-normalized", "binary", "binary-sine", "memn2n", "timestep",
    "rope", "rope2d", "alibi", "sincos2d", "fourier", "gaussian", "coordconv", "t5", "kerple",
    "t.npy", "t3.npy", "t1.npy", "c.json", "g.json", "b.json", "-", "vaswani", "nope",
]  # fmt: skip

#: values per option; the first three are drawn most often. Sizes stay small (see the module's note).
VALUES: dict[str, list[str | None]] = {
    "--d": ["1", "2", "3", "8", "16", "0", "-4", "1e3", "2.5"],
    "--len": ["1", "2", "5", "64", "0", "-1", "300"],
    "--base": ["10000", "1", "0.5", "nan", "1e300", "-3"],
    "--heads": ["1", "3", "8", "0", "20"],
    "--grid": ["4,4", "1,1", "3,5", "0,4", "4", "a,b", "1,-2"],
    "--dtype": ["float16", "bfloat16", "float64", "int8", "float32"],
    "--layout": ["interleaved", "split", "half", "zz"],
    "--scaling": ["linear", "yarn", "llama3", "dynamic", "longrope", "ntk", "none"],
    "--factor": ["2", "0.5", "1", "0", "nan"],
    "--original-max-position": ["16", "0", "1", "100"],
    "--part": ["cos", "sin", "angle", "slopes", "bias", "buckets", "x"],
    "--metric": ["dot", "cosine", "euclidean"],
    "--rows": ["0:4", "5:2", "-3:", "::2", "a"],
    "--max-offset": ["0", "3", "-1", "100"],
    "--width": ["1", "10", "80", "0", "200"],
    "--height": ["1", "5", "40", "0"],
    "--view": ["heatmap", "wavelength", "pca", "precision", "lines", "x"],
    "--key": ["cos", "x", "0"],
    "--layer-type": ["full_attention", "sliding_attention", "x"],
    "--offset": ["0", "2", "-1", "1e20"],
    "--freq-shift": ["0", "1", "2", "0.5"],
    "--amplitude": ["1", "0", "-2", "inf"],
    "--std": ["0.02", "0", "-1"],
    "--seed": ["0", "-1", "99999999999999999999"],
    "--num-buckets": ["32", "1", "2", "0"],
    "--max-distance": ["128", "1", "0"],
    "--max-period": ["10000", "1", "0"],
    "--scale": ["1", "0", "-1000", "per-panel", "shared"],
    "--range": ["0:10:1", "0:1:0.1", "5:0:-1", "0:0:1"],
    "--sections": ["2,1,1", "1,1", "0,0,4", "x"],
    "--cls-token": [None],
    "--extra-tokens": ["1", "0", "-1"],
    "--rtol": ["0", "1e-3", "-1", "nan"],
    "--atol": ["0", "1", "-1"],
    "--format": ["npy", "csv", "tsv", "safetensors", "pt", "x"],
    "--preset": ["vaswani", "fairseq", "mae", "eva02", "ldm", "nope"],
    "--from-config": ["c.json", "g.json", "b.json", "t.npy"],
    "--qk": ["ones", "random", "x"],
    "--num-freqs": ["1", "4", "0"],
    "--cmap": ["viridis", "nope"],
    "--slice": ["0", "1", "99"],
    "--interpolation-scale": ["1", "0", "2"],
    "--base-size": ["16", "0"],
    "--method": ["linear", "nearest", "bicubic", "area", "x"],
    "--prefix-tokens": ["1", "0", "-1"],
    "--key-a": ["cos", "encoder"],
    "--key-b": ["sin", "x"],
    "--to-len": ["32", "1", "0"],
    "--from-grid": ["8,8", "4,4"],
}

COMMANDS: dict[str, list[str]] = {
    "generate": ["--d", "--len", "--base", "--heads", "--grid", "--dtype", "--layout", "--scaling", "--factor",
                 "--original-max-position", "--part", "--offset", "--freq-shift", "--amplitude", "--std", "--seed",
                 "--num-buckets", "--max-distance", "--sections", "--cls-token", "--extra-tokens", "--format",
                 "--preset", "--from-config", "--layer-type", "--probe", "--json", "-q", "--num-freqs",
                 "--interpolation-scale", "--base-size"],
    "plot": ["--d", "--len", "--heads", "--grid", "--part", "--view", "--width", "--height", "--key", "--layer-type",
             "--terminal", "--scale", "--cmap", "--slice", "--json", "--rows", "--base", "--scaling", "--factor",
             "--original-max-position", "--preset"],
    "distance": ["--d", "--len", "--metric", "--rows", "--profile", "--max-offset", "--width", "--height", "--key",
                 "--qk", "--json", "--heads", "--layer-type", "--base", "--preset"],
    "compare": ["--d", "--len", "--key", "--key-a", "--key-b", "--rtol", "--atol", "--exact", "--json",
                "--layer-type", "--properties"],
    "identify": ["--key", "--json"],
    "info": ["--stats", "--json", "--key"],
    "timestep": ["--d", "--range", "--dtype", "--preset", "--max-period", "--freq-shift", "--scale", "--json",
                 "--format"],
    "resample": ["--len", "--grid", "--from-grid", "--method", "--key", "--json", "--prefix-tokens"],
}  # fmt: skip

OUTPUTS = [None, "o.npy", "o.png", "o.safetensors", "-", "o.csv"]
WRITERS = ("generate", "plot", "distance", "timestep", "resample")

SEEDS = range(6)
PER_SEED = 50


def make_inputs(folder: Path) -> None:
    """The files the drawn command lines name, in ``folder``."""
    rng = np.random.default_rng(0)
    np.save(folder / "t.npy", rng.normal(size=(64, 16)).astype(np.float32))
    np.save(folder / "t3.npy", rng.normal(size=(4, 16, 16)).astype(np.float32))
    np.save(folder / "t1.npy", np.arange(10.0))
    configs = {
        "c.json": {"model_type": "llama", "head_dim": 16, "max_position_embeddings": 64, "rope_theta": 1e4,
                   "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}},
        "g.json": {"model_type": "gemma3_text", "head_dim": 16, "max_position_embeddings": 64,
                   "num_hidden_layers": 6, "sliding_window_pattern": 6},
        "b.json": {"model_type": "bloom", "n_head": 6, "seq_length": 32},
    }  # fmt: skip
    for name, config in configs.items():
        (folder / name).write_text(json.dumps(config))


def draw(seed: int, count: int) -> list[tuple[list[str], bytes]]:
    """``count`` command lines (argv and stdin) drawn from ``seed``."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        command = rng.choice(list(COMMANDS))
        argv = [command]
        if command in ("generate", "plot", "distance", "identify", "info", "resample"):
            argv.append(rng.choice(SCHEMES))
        if command == "compare":
            argv += [rng.choice(SCHEMES), rng.choice(SCHEMES)]
        if command == "timestep":
            argv += rng.choice([["0", "10", "999.5"], [], ["-"]])
        options = COMMANDS[command]
        for option in rng.sample(options, k=min(len(options), rng.randint(0, 3))):
            values = VALUES.get(option, [None])
            value = rng.choice(values[:3]) if rng.random() < 0.8 else rng.choice(values)
            argv += [option] if value is None else [option, value]
        output = rng.choice(OUTPUTS)
        if output and command in WRITERS:
            argv += ["-o", output]
        if command == "plot" and "--terminal" not in argv and not output:
            argv += ["--terminal", "--width", "60", "--height", "20"]
        stdin = b"0 1 2\n" if rng.random() < 0.5 else b""
        cases.append((argv, stdin))
    return cases


@cache
def options_of(command: str) -> frozenset[str]:
    """Every option spelling the command accepts, read from its click command."""
    import typer

    from pecli.cli.app import build_app

    click_command = typer.main.get_command(build_app([command])).commands[command]  # type: ignore[attr-defined]
    names: set[str] = set()
    for param in click_command.params:
        names.update(getattr(param, "opts", ()))
        names.update(getattr(param, "secondary_opts", ()))
    return frozenset(names)


_EXAMPLE = re.compile(r"pecli \w+[^()]*?(?=[(),;]|$)")  # an example command inside a hint
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def problems_of(argv: list[str], code: int, stderr: str, folder: Path) -> list[str]:
    """What is wrong with one run's outcome (empty when nothing is)."""
    found = []
    errors = [line for line in stderr.splitlines() if line.startswith("pecli: error")]
    if code == 3 or "internal error" in stderr:
        found.append("internal error (exit 3)")
    if "Traceback" in stderr:
        found.append("traceback")
    if "Warning:" in stderr:
        found.append("Python warning")
    if len(errors) > 1:
        found.append("more than one error line")
    for line in errors:
        if "No such option" in line:
            continue
        alien = [name for name in _OPTION.findall(_EXAMPLE.sub("", line)) if name not in options_of(argv[0])]
        if alien:
            found.append(f"names options {alien} that {argv[0]} does not have")
    if code == 2 and "-o" in argv:
        output = argv[argv.index("-o") + 1]
        if output != "-" and (folder / output).exists():
            found.append(f"refused but left {output} behind")
    return found


def run_case(argv: list[str], stdin: bytes, folder: Path) -> list[str]:
    for name in OUTPUTS:
        if name and name != "-":
            (folder / name).unlink(missing_ok=True)
    try:
        result = run_in_process(*argv, stdin=stdin, cwd=str(folder))
    except (Exception, SystemExit) as exc:  # the fuzz reports any escape as a defect
        return [f"raised {type(exc).__name__}: {exc}"]
    found = problems_of(argv, result.code, result.stderr, folder)
    return [f"{problem}; exit {result.code}; stderr: {result.stderr.strip()[-400:]}" for problem in found]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_command_lines_fail_cleanly(seed: int, tmp_path: Path) -> None:
    make_inputs(tmp_path)
    failures = []
    for argv, stdin in draw(seed, PER_SEED):
        for problem in run_case(argv, stdin, tmp_path):
            failures.append(f"pecli {' '.join(argv)} (stdin {stdin!r}): {problem}")
    assert not failures, "\n".join(failures)


# Message defects the fuzz's command lines showed (their checks are about wording, so each has its own test).


@pytest.mark.parametrize(
    ("argv", "words", "not_words"),
    [
        # the file is a table (or no file at all): what conflicts is --as with --stats, not "a model's config"
        (["info", "t.npy", "--as", "hf-v4", "--stats"], ["--as", "--stats"], ["model's config", "--key"]),
        (["info", "sinusoidal", "--as", "hf-v4", "--key", "x"], ["--as", "--key"], ["model's config", "--stats"]),
        # only the option given is named
        (["info", "c.json", "--key", "x"], ["--key describes", "model's config"], ["--stats"]),
        (["info", "c.json", "--stats"], ["--stats describes", "model's config"], ["--key"]),
    ],
)
def test_info_refusal_names_what_was_given(argv: list[str], words: list[str], not_words: list[str], tmp_path: Path):
    make_inputs(tmp_path)
    result = run_in_process(*argv, cwd=str(tmp_path))
    assert_clean_error(result, 2, *words)
    for word in not_words:
        assert word not in result.stderr, (argv, result.stderr)


@pytest.mark.parametrize("name", ["timestep", "vaswani", "rope"])
def test_info_of_a_scheme_name_says_it_names_a_scheme(name: str, tmp_path: Path) -> None:
    """``pecli info timestep`` said "no such file: 'timestep'"; identify and resample say what it is."""
    result = run_in_process("info", name, cwd=str(tmp_path))
    assert_clean_error(result, 2, f"info reads a table, but '{name}' names a scheme", "pecli generate")


def test_sincos2d_freq_shift_refusal_names_the_d_given():
    # found by the property fuzz: "--freq-shift 1 needs d // 2 > 1, but --d 2 gives …" for --d 4 (one axis's half)
    result = run_in_process("generate", "sincos2d", "--d", "4", "--grid", "1,5", "--freq-shift", "1")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "but --d 4 gives 1" in result.stderr and "--d 2" not in result.stderr


if __name__ == "__main__":  # the wide run: python tests/cli/test_cli_fuzz.py SEEDS [FIRST_SEED] (PER_SEED lines a seed)
    import sys
    import tempfile

    count, first = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0
    failed = 0
    for seed in range(first, first + count):
        with tempfile.TemporaryDirectory() as name:
            make_inputs(Path(name))
            for argv, stdin in draw(seed, PER_SEED):
                for problem in run_case(argv, stdin, Path(name)):
                    failed += 1
                    print(f"FAIL seed {seed}: pecli {' '.join(argv)} (stdin {stdin!r}): {problem}", flush=True)
    print(f"{count * PER_SEED} command lines, {failed} failures")
