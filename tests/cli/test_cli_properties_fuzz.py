"""A seeded property fuzz of generate's successful outputs, in process (issue 30).

tests/cli/test_cli_fuzz.py draws hostile command lines: most end at an argument check. This file
draws only valid ones (each scheme's sizes and the choices pecli.schemes.catalog declares), so that
the computations run, and checks what the other commands say of each table written:

* ``info --json`` reports the shape and dtype the file holds and the scheme that wrote it;
* ``compare F F`` and ``compare F SPEC`` (the same options as a spec) say the tables are the same;
* ``generate … -o -`` writes the bytes that ``-o F.npy`` writes;
* ``identify F`` exits 0 or 1, and the command its ``reproduce:`` line prints writes a table that
  ``compare`` calls the same;
* ``plot F --terminal`` fits in the --width and --height asked;
* every ``--json`` document parses and holds no NaN or Infinity literal.

A wider run of the same drawing (2,000+ cases, /tmp harness) found the ALiBi defects pinned in
tests/cli/test_compare_one_head.py. Sizes stay small so that a case costs a few runs of pecli.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import struct
from pathlib import Path

import pytest

from tests.conftest import run_in_process

ARITHMETIC = ["float64", "float32", "bfloat16", "float16"]
#: per scheme: its sizes ("seq", "even", "grid", "heads", "freqs", "len") and optional options' values
OPTIONS: dict[str, tuple[str, dict[str, list[str]]]] = {
    "sinusoidal": ("seq", {"--base": ["10000", "100", "2.5"], "--layout": ["interleaved", "split"],
                           "--freq-shift": ["0", "1"], "--offset": ["0", "2"], "--amplitude": ["1", "0.5"],
                           "--arithmetic": ARITHMETIC, "--cos-first": [], "--pad-dim": []}),
    "learned": ("seq", {"--std": ["0.02", "1"], "--seed": ["0", "7"]}),
    "count": ("seq", {}),
    "count-normalized": ("seq", {}),
    "binary": ("seq", {"--bit-order": ["lsb", "msb"]}),
    "binary-sine": ("seq", {}),
    "memn2n": ("seq", {}),
    "timestep": ("seq", {"--max-period": ["10000", "100"], "--no-flip-sin-to-cos": [], "--freq-shift": ["0", "1"],
                         "--scale": ["1", "1000"], "--arithmetic": ARITHMETIC}),
    "rope": ("even", {"--base": ["10000", "500000"], "--layout": ["half", "interleaved"],
                      "--part": ["cos", "sin", "angle"], "--offset": ["0", "3"], "--arithmetic": ARITHMETIC}),
    "rope2d": ("grid4", {"--layout": ["interleaved", "half"], "--part": ["cos", "sin", "angle"],
                         "--grid-indexing": ["xy", "ij"]}),
    "alibi": ("heads", {"--part": ["bias", "slopes"], "--form": ["distance", "key"], "--head-dim": ["4", "64"]}),
    "sincos2d": ("grid4", {"--layout": ["by-axis", "by-function", "by-axis-h-first", "interleaved"],
                           "--cls-token": [], "--interpolation-scale": ["1", "2"], "--freq-shift": ["0", "1"]}),
    "fourier": ("freqs", {"--no-include-input": [], "--linear-sampling": [], "--pi": [],
                          "--positions": ["normalized", "raw"]}),
    "gaussian": ("even", {"--sigma": ["10", "0.5"], "--seed": ["0", "3"], "--positions": ["normalized", "raw"]}),
    "coordconv": ("grid", {"--layout": ["mkocabas", "uber"]}),
    "t5": ("len", {"--num-buckets": ["32", "8"], "--max-distance": ["128", "8"], "--causal": []}),
    "kerple": ("len", {"--r1": ["1", "0.5"], "--r2": ["1", "2"]}),
}  # fmt: skip
#: a flag without a value, as a spec's parameter
SWITCHES = {
    "--cos-first": "cos_first=true", "--pad-dim": "pad_dim=true", "--no-flip-sin-to-cos": "flip_sin_to_cos=false",
    "--cls-token": "cls_token=true", "--no-include-input": "include_input=false",
    "--linear-sampling": "log_sampling=false", "--pi": "pi=true", "--causal": "bidirectional=false",
}  # fmt: skip
SHAPE_FLAGS = ("--d", "--len", "--dtype")
SAFETENSORS_DTYPES = {"F32": "float32", "F64": "float64", "F16": "float16", "BF16": "bfloat16"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CASES_PER_SEED = 25
SEEDS = range(6)


def draw(rng: random.Random) -> list[str]:
    """One valid generate command line (without -o): a scheme, its sizes, some of its options, maybe --dtype."""
    scheme = rng.choice(sorted(OPTIONS))
    sizes, options = OPTIONS[scheme]
    length = ["--len", str(rng.randint(1, 40))]
    drawn = {
        "seq": lambda: ["--d", str(rng.randint(1, 24)), *length],
        "even": lambda: ["--d", str(2 * rng.randint(1, 12)), *length],
        "grid4": lambda: ["--d", str(4 * rng.randint(1, 6)), "--grid", f"{rng.randint(1, 6)},{rng.randint(1, 6)}"],
        "grid": lambda: ["--grid", f"{rng.randint(1, 8)},{rng.randint(1, 8)}"],
        "heads": lambda: ["--heads", str(rng.randint(1, 12)), "--len", str(rng.randint(1, 24))],
        "freqs": lambda: ["--num-freqs", str(rng.randint(1, 8)), *length],
        "len": lambda: ["--len", str(rng.randint(1, 24))],
    }
    argv = [scheme, *drawn[sizes]()]
    for flag, values in options.items():
        if rng.random() < 0.4:
            argv += [flag, rng.choice(values)] if values else [flag]
    if rng.random() < 0.5:
        argv += ["--dtype", rng.choice(["float32", "float64", "float16", "bfloat16"])]
    return argv


def spec_of(argv: list[str]) -> str:
    """The command line's scheme and options as a compare spec (NAME:param=value,…), without its shape."""
    params, index = [], 1
    while index < len(argv):
        flag = argv[index]
        if flag in SWITCHES:
            params.append(SWITCHES[flag])
            index += 1
            continue
        if flag not in SHAPE_FLAGS:
            value = argv[index + 1].replace(",", "x") if flag == "--grid" else argv[index + 1]  # lists keep commas
            params.append(flag[2:].replace("-", "_") + "=" + value)
        index += 2
    return argv[0] + (":" + ",".join(params) if params else "")


def header(path: Path) -> dict:
    """A .safetensors file's header: each tensor's shape and dtype."""
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    return {name: entry for name, entry in json.loads(raw[8 : 8 + size]).items() if name != "__metadata__"}


def parsed(text: str, what: str) -> dict:
    assert not re.search(r"\bNaN\b|\bInfinity\b", text), f"{what}: a NaN or Infinity literal in --json"
    return json.loads(text)


def check(argv: list[str], rng: random.Random, tmp: Path, *, identify: bool) -> None:
    """Every property of the table ``generate ARGV`` writes (an AssertionError names the first that fails)."""
    path = tmp / "f.safetensors"
    result = run_in_process("generate", *argv, "-o", str(path))
    if result.code == 2:  # a refused combination (t5's --max-distance within its exact buckets): one clean line
        assert result.stderr.startswith("pecli: error: ") and result.stderr.count("\n") == 1, result.stderr
        assert not path.exists()
        return
    assert result.code == 0, result.stderr
    tensors = header(path)
    dtype = argv[argv.index("--dtype") + 1] if "--dtype" in argv else "float32"
    info = run_in_process("info", str(path), "--json")
    assert info.code == 0, info.stderr
    document = parsed(info.out, "info")
    assert document["pecli"]["scheme"] == argv[0]
    for tensor in document["tensors"]:
        assert tensor["shape"] == tensors[tensor["name"]]["shape"], tensor
        assert tensor["dtype"] == SAFETENSORS_DTYPES[tensors[tensor["name"]]["dtype"]] == dtype, tensor

    same = run_in_process("compare", str(path), str(path))
    assert same.code == 0 and re.search(r"bit for bit|same", same.out), same.out + same.stderr
    assert run_in_process("compare", str(path), str(path), "--json").code == 0
    shape = [item for flag in SHAPE_FLAGS if flag in argv for item in (flag, argv[argv.index(flag) + 1])]
    spec = run_in_process("compare", str(path), spec_of(argv), *shape, "--json")
    assert spec.code == 0, spec_of(argv) + " " + spec.stderr
    parsed(spec.out, "compare")

    if dtype != "bfloat16" and len(tensors) == 1:  # npy holds one tensor, and numpy has no bfloat16
        npy = tmp / "f.npy"
        assert run_in_process("generate", *argv, "-o", str(npy)).code == 0
        piped = run_in_process("generate", *argv, "-o", "-")
        assert piped.code == 0 and piped.stdout == npy.read_bytes()
    parsed(run_in_process("generate", *argv, "--json").out, "generate")

    width, height = rng.randint(20, 120), rng.randint(10, 50)  # 8 and 9: see the report of issue 30's fuzz
    plot = run_in_process("plot", str(path), "--terminal", "--width", str(width), "--height", str(height))
    assert plot.code == 0, plot.stderr
    lines = ANSI.sub("", plot.out).rstrip("\n").split("\n")
    assert len(lines) <= height and max(len(line) for line in lines) <= width, (width, height, len(lines))

    if not identify:
        return
    named = run_in_process("identify", str(path))
    assert named.code in (0, 1) and (named.out.strip() or named.stderr.strip()), named.stderr
    reproduce = re.search(r"reproduce: (pecli .*)$", named.out, re.M)
    if named.code == 1 or reproduce is None:
        assert named.code == 1, named.out
        return
    again = shlex.split(reproduce.group(1))[1:]
    again[again.index("-o") + 1] = str(tmp / "g.safetensors")
    assert run_in_process(*again).code == 0, again
    compared = run_in_process("compare", str(path), str(tmp / "g.safetensors"))
    assert compared.code == 0, (again, compared.out)


@pytest.mark.parametrize("seed", SEEDS)
def test_valid_command_lines_write_tables_the_other_commands_agree_on(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    for case in range(CASES_PER_SEED):
        argv = draw(rng)
        folder = tmp_path / str(case)
        folder.mkdir()
        try:
            check(argv, rng, folder, identify=case % 4 == 0)
        except AssertionError as error:
            raise AssertionError(f"pecli generate {shlex.join(argv)}: {error}") from None
