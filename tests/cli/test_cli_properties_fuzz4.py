"""A seeded property fuzz of what the other fuzz files leave out, against outside references (issue 30).

* RoPE engine caches: a random rope's frequencies (numpy, float64, from the formula; plain or linear
  scaling) written as vLLM's ``cos_sin_cache`` ([cos | sin], one .npy) or as a complex64 ``freqs_cis``
  compare as the same with ``pecli compare FILE SPEC`` (either layout in the spec), and with one
  parameter of the spec changed (base, factor) exit 1;
* ``generate -o x.safetensors``: ``info x.safetensors --json`` reports the shape, dtype and scheme that
  generate printed (its "wrote" line and its --json document);
* ``plot … --terminal --width W --height H`` at any W, H (tiny ones included) and any view: it refuses
  with one error line, or prints at most H lines none wider than W terminal cells;
* ``timestep``: the table against diffusers' ``get_timestep_embedding`` (torch, float32) at random
  timesteps, dimension, max period, flip, frequency shift and scale, within float32 noise;
* ``generate rope --freqs-dtype float16|bfloat16``: identify names the same freqs_dtype, and its reproduce
  command writes the table again;
* ``timestep`` at a convention identify searches: identify names a timestep table it writes again;
* ``info FILE --json``: shapes and dtypes are numpy's reading of a random .npy or .safetensors file.

A wider run: ``PYTHONPATH=. python tests/cli/test_cli_properties_fuzz4.py N [FIRST]``.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_in_process

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def cells(line: str) -> int:
    """Terminal cells ``line`` takes (wide East Asian characters two, combining marks none)."""
    width = 0
    for char in line:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def refused(result, argv: list[str]) -> bool:
    """Whether the run refused cleanly (exit 2, one error line); any other failure fails the case."""
    if result.code == 2:
        assert result.stderr.startswith("pecli: error: ") and result.stderr.count("\n") == 1, (argv, result.stderr)
        return True
    assert result.code == 0, (argv, result.code, result.stderr)
    return False


def check_rope_cache(rng: random.Random, tmp: Path) -> str:
    """vLLM's cos_sin_cache and a complex freqs_cis of a random rope compare as the rope spec, not as a changed one."""
    d = 2 * rng.randint(2, 16)
    length = rng.randint(2, 48)
    base = rng.choice([10000.0, 500000.0, 100.0, round(rng.uniform(2.0, 1e5), 3)])
    factor = rng.choice([None, 2.0, 4.0, 1.5])
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d) / (factor or 1.0)
    angles = np.arange(length, dtype=np.float64)[:, None] * inv_freq[None, :]
    form = rng.choice(["cos_sin_cache", "freqs_cis"])
    if form == "cos_sin_cache":
        dtype = rng.choice([np.float32, np.float64])
        table = np.hstack([np.cos(angles), np.sin(angles)]).astype(dtype)
    else:
        table = np.exp(1j * angles).astype(np.complex64)
    path = tmp / "cache.npy"
    np.save(path, table)
    params = {"base": repr(base), "layout": rng.choice(["half", "interleaved"])}
    if factor is not None:
        params |= {"scaling": "linear", "factor": repr(factor)}
    spec = "rope:" + ",".join(f"{name}={value}" for name, value in params.items())
    same = run_in_process("compare", str(path), spec)
    assert same.code == 0, (form, table.dtype, spec, same.code, same.out[-600:], same.stderr)
    assert "read as" in same.stderr, same.stderr  # the note saying how the cache was read
    changed = dict(params)
    if factor is not None and rng.random() < 0.5:
        changed["factor"] = repr(factor * 1.25)
    else:  # d ≥ 4, length ≥ 2: the second frequency moves at position 1 by far more than float32 noise
        changed["base"] = repr(base * 1.05)
    other = "rope:" + ",".join(f"{name}={value}" for name, value in changed.items())
    differs = run_in_process("compare", str(path), other)
    assert differs.code == 1, (form, table.dtype, spec, other, differs.code, differs.out[-600:], differs.stderr)
    return f"rope-cache {form}"


GENERATE = {
    "sinusoidal": lambda rng: ["--d", str(rng.randint(1, 24)), "--len", str(rng.randint(1, 30))],
    "rope": lambda rng: (
        [
            "--d",
            str(2 * rng.randint(1, 12)),
            "--len",
            str(rng.randint(1, 30)),
            *rng.choice([[], ["--part", "cos"], ["--part", "angle"], ["--scaling", "linear", "--factor", "2"]]),
        ]
    ),
    "alibi": lambda rng: (
        ["--heads", str(rng.randint(1, 8)), "--len", str(rng.randint(1, 12)), *rng.choice([[], ["--part", "slopes"]])]
    ),
    "sincos2d": lambda rng: ["--d", str(4 * rng.randint(1, 6)), "--grid", f"{rng.randint(1, 5)},{rng.randint(1, 5)}"],
    "learned": lambda rng: ["--d", str(rng.randint(1, 16)), "--len", str(rng.randint(1, 20))],
    "t5": lambda rng: ["--len", str(rng.randint(1, 12))],
    "binary": lambda rng: ["--d", str(rng.randint(1, 10)), "--len", str(rng.randint(1, 30))],
}
DTYPES = ["float32", "float64", "float16", "bfloat16"]
WROTE = re.compile(r"wrote (?P<file>\S+): (?P<body>.*) \(safetensors\)")


def check_generate_info(rng: random.Random, tmp: Path) -> str:
    """info --json of generate's .safetensors file reports the shape, dtype and scheme generate printed."""
    scheme = rng.choice(list(GENERATE))
    argv = ["generate", scheme, *GENERATE[scheme](rng)]
    if rng.random() < 0.6:
        argv += ["--dtype", rng.choice(DTYPES)]
    path = tmp / "x.safetensors"
    json_out = rng.random() < 0.5
    result = run_in_process(*argv, "-o", str(path), *(["--json"] if json_out else []))
    if refused(result, argv):
        return "generate-info refused"
    info = run_in_process("info", str(path), "--json")
    assert info.code == 0, (argv, info.stderr)
    report = json.loads(info.out)
    tensors = {tensor["name"]: tensor for tensor in report["tensors"]}
    assert report["pecli"]["scheme"] == scheme, (argv, report["pecli"])
    wrote = WROTE.search(result.stderr)
    assert wrote, (argv, result.stderr)
    # "cos 5 × 8, sin 5 × 8 float32" or "5 × 8 bfloat16": the shapes in order, then the dtype
    body, dtype = wrote["body"].rsplit(" ", 1)
    printed = [part.strip().split(" ", 1)[-1] if " " in part.strip().split(" × ")[0] else part.strip()
               for part in body.split(",")]  # fmt: skip
    shapes = [[int(size) for size in shape.split(" × ")] for shape in printed]
    assert shapes == [tensor["shape"] for tensor in report["tensors"]], (argv, wrote[0], report["tensors"])
    assert {tensor["dtype"] for tensor in tensors.values()} == {dtype}, (argv, wrote[0], report["tensors"])
    if json_out:
        document = json.loads(result.out)
        assert document["scheme"] == scheme and document["dtype"] == dtype, (argv, document)
        if len(tensors) == 1:
            assert document["shape"] == report["tensors"][0]["shape"], (argv, document, report["tensors"])
        assert document["params"] == report["pecli"]["params"], (argv, document["params"], report["pecli"])
    return f"generate-info {len(tensors)} tensor(s)"


PLOTTED = {
    "sinusoidal": lambda rng: ["--d", str(rng.randint(1, 64)), "--len", str(rng.randint(1, 200))],
    "rope": lambda rng: ["--d", str(2 * rng.randint(1, 32)), "--len", str(rng.randint(1, 200))],
    "alibi": lambda rng: ["--heads", str(rng.randint(1, 12)), "--len", str(rng.randint(1, 40))],
    "sincos2d": lambda rng: ["--d", str(4 * rng.randint(1, 8)), "--grid", f"{rng.randint(1, 9)},{rng.randint(1, 9)}"],
    "t5": lambda rng: ["--len", str(rng.randint(1, 40))],
    "binary": lambda rng: ["--d", str(rng.randint(1, 12)), "--len", str(rng.randint(1, 100))],
}


def check_plot_fit(rng: random.Random, tmp: Path) -> str:
    """plot --terminal at a random size: a clean refusal, or ≤ H lines of ≤ W cells."""
    scheme = rng.choice(list(PLOTTED))
    width = rng.choice([rng.randint(1, 12), rng.randint(13, 60), rng.randint(61, 240)])
    height = rng.choice([rng.randint(1, 8), rng.randint(9, 30), rng.randint(31, 100)])
    argv = ["plot", scheme, *PLOTTED[scheme](rng), "--terminal", "--width", str(width), "--height", str(height)]
    if rng.random() < 0.5:
        argv += ["--view", rng.choice(["heatmap", "wavelength", "pca", "precision"])]
    if rng.random() < 0.3:
        argv += ["--no-color"]
    result = run_in_process(*argv)
    if refused(result, argv):
        return "plot refused"
    assert not result.stderr.strip() or "pecli: error" not in result.stderr, (argv, result.stderr)
    lines = ANSI.sub("", result.out).rstrip("\n").split("\n")
    widest = max(cells(line) for line in lines)
    assert len(lines) <= height and widest <= width, (shlex.join(argv), len(lines), widest, result.out[-2000:])
    return "plot fits"


def check_timestep_diffusers(rng: random.Random, tmp: Path) -> str:
    """timestep's table against diffusers' get_timestep_embedding at random parameters."""
    import torch
    from diffusers.models.embeddings import get_timestep_embedding

    times = [rng.choice([0.0, 1.0, 999.0, round(rng.uniform(0, 1000), 3), round(rng.uniform(0, 1), 4)])
             for _ in range(rng.randint(1, 8))]  # fmt: skip
    dim = rng.randint(2, 40)
    max_period = rng.choice([10000, 100, 1000, 10])
    flip = rng.random() < 0.5
    shift = rng.choice([0, 1])
    scale = rng.choice([1.0, 1000.0, 0.5])
    argv = ["timestep", *map(repr, times), "--d", str(dim), "--max-period", str(max_period),
            "--flip-sin-to-cos" if flip else "--no-flip-sin-to-cos", "--freq-shift", str(shift),
            "--scale", repr(scale), "--dtype", "float64"]  # fmt: skip
    path = tmp / "t.npy"
    result = run_in_process(*argv, "-o", str(path))
    if dim // 2 - shift <= 0:  # diffusers divides by half − shift: pecli refuses
        assert refused(result, argv), (argv, result.out)
        return "timestep refused"
    assert not refused(result, argv), argv
    got = np.load(path)
    expected = get_timestep_embedding(
        torch.tensor(times, dtype=torch.float64), dim, flip_sin_to_cos=flip, downscale_freq_shift=shift,
        scale=scale, max_period=max_period,
    ).double().numpy()  # fmt: skip
    assert got.shape == expected.shape, (argv, got.shape, expected.shape)
    # diffusers rounds the frequencies to float32 (torch.exp of a float32 exponent), then the angles:
    # an angle a may move by about 2^-22·|a|
    tolerance = 4 * 2.0**-24 * max(times) * scale + 1e-6
    error = float(np.max(np.abs(got - expected)))
    assert error <= tolerance, (shlex.join(argv), error, tolerance)
    return "timestep vs diffusers"


def _reproduced(doc: dict, path: Path, tmp: Path, argv: list[str]) -> float:
    """Run identify's reproduce command into ``tmp``; the largest difference from the table in ``path``."""
    command = shlex.split(doc["command"])
    assert command[0] == "pecli" and command[-2] == "-o", (argv, doc["command"])
    again = tmp / ("again" + Path(command[-1]).suffix)
    rerun = run_in_process(*command[1:-1], str(again))
    assert rerun.code == 0, (shlex.join(argv), doc["command"], rerun.stderr)
    return float(np.max(np.abs(np.load(again).astype(np.float64) - np.load(path).astype(np.float64))))


def check_freqs_dtype_identify(rng: random.Random, tmp: Path) -> str:
    """``generate rope --freqs-dtype`` (float16, bfloat16): identify names the rope with that freqs_dtype, or
    (d = 4: one free frequency, which a nearby base explains) a command that writes the same table."""
    held = rng.choice(["float16", "bfloat16"])
    d = 2 * rng.randint(2, 16)
    argv = ["generate", "rope", "--d", str(d), "--len", str(rng.randint(8, 64)),
            "--base", rng.choice(["10000", "500000", "100"]), "--part", rng.choice(["cos", "sin", "angle"]),
            "--freqs-dtype", held, "--dtype", rng.choice(["float32", "float64"])]  # fmt: skip
    path = tmp / "r.npy"
    result = run_in_process(*argv, "-o", str(path))
    assert result.code == 0, (argv, result.stderr)
    named = run_in_process("identify", str(path), "--json")
    assert named.code == 0, (shlex.join(argv), named.code, named.stderr)
    doc = json.loads(named.out)
    best = doc["best"]
    assert best["scheme"] == "rope", (shlex.join(argv), doc["match"], best)
    assert doc["match"] == "exact" or d == 4, (shlex.join(argv), doc["match"], best)
    error = _reproduced(doc, path, tmp, argv)
    allowed = 2 * max(doc["tolerance"], best["max_error"])
    assert error <= allowed, (shlex.join(argv), doc["command"], error, best["max_error"])
    if best["params"]["freqs_dtype"] == held:
        return f"freqs-dtype {held} named"
    assert d == 4, (shlex.join(argv), best["params"])
    return "freqs-dtype d = 4: reproduced"


def check_timestep_identify(rng: random.Random, tmp: Path) -> str:
    """``timestep`` at any convention identify searches (max period 10000, 2000 or 1000, either flip and shift,
    scale 1): identify names a timestep table whose reproduce command writes the file again, within the
    error it reports (a table cannot tell t from t + 2π·k/ω_min when every ω·2π·k/ω_min is a whole turn)."""
    times = sorted({round(rng.uniform(0, 1000), rng.choice([0, 2])) for _ in range(rng.randint(3, 10))})
    argv = ["timestep", *map(repr, times), "--d", str(rng.randint(4, 64))]
    if rng.random() < 0.4:
        argv += ["--preset", rng.choice(["ldm", "diffusers", "ddpm"])]
    else:
        argv += ["--max-period", rng.choice(["10000", "2000", "1000"]), "--freq-shift", rng.choice(["0", "1"]),
                 rng.choice(["--flip-sin-to-cos", "--no-flip-sin-to-cos"])]  # fmt: skip
    argv += ["--dtype", rng.choice(["float32", "float64"])]
    path = tmp / "t.npy"
    result = run_in_process(*argv, "-o", str(path))
    if refused(result, argv):
        return "timestep-identify refused"
    named = run_in_process("identify", str(path), "--json")
    assert named.code == 0, (shlex.join(argv), named.code, named.stderr)
    doc = json.loads(named.out)
    best = doc["best"]
    assert best["scheme"] == "timestep" and doc["match"] in ("exact", "approximate"), (
        shlex.join(argv),
        doc["match"],
        best,
    )
    error = _reproduced(doc, path, tmp, argv)
    assert error <= 2 * max(doc["tolerance"], best["max_error"]), (
        shlex.join(argv),
        doc["command"],
        error,
        best["max_error"],
    )
    return f"timestep-identify {doc['match']}"


INFO_DTYPES = ["float16", "float32", "float64", ">f4", ">f8", "int8", "uint8", "int16", "int32", ">i4", "int64",
               "uint32", "bool", "complex64", "complex128"]  # fmt: skip


def check_info_numpy(rng: random.Random, tmp: Path) -> str:
    """``info FILE --json``: each tensor's shape and dtype are numpy's reading of the file (a .npy of any
    numeric dtype, byte order, memory order and rank, 0-d and empty ones included; a .safetensors of several)."""

    def draw() -> np.ndarray:
        shape = tuple(rng.choice([0, 1, 2, 3, 7]) for _ in range(rng.randint(0, 4)))
        array = np.zeros(shape, dtype=rng.choice(INFO_DTYPES))
        return np.asfortranarray(array) if rng.random() < 0.3 else array

    if rng.random() < 0.6:
        path = tmp / "x.npy"
        np.save(path, draw())
        loaded = {"": np.load(path, mmap_mode="r")}
    else:
        from safetensors.numpy import load_file, save_file

        path = tmp / "x.safetensors"
        save_file({f"t{index}": np.zeros(np.shape(draw()), dtype=rng.choice(["<f2", "<f4", "<i8", "|b1"]))
                   for index in range(rng.randint(1, 4))}, str(path))  # fmt: skip
        loaded = load_file(str(path))
    result = run_in_process("info", str(path), "--json")
    assert result.code == 0, (path.name, result.stderr)
    reported = {tensor["name"]: (tensor["shape"], tensor["dtype"]) for tensor in json.loads(result.out)["tensors"]}
    expected = {name: (list(array.shape), array.dtype.name) for name, array in loaded.items()}
    assert reported == expected, (path.name, reported, expected)
    return f"info {path.suffix}"


#: the first four kinds (the seeded test's draws); the last three were added by issue 30's wide run
FIRST_KINDS = ["rope-cache", "generate-info", "plot", "timestep"]
KINDS = {
    "rope-cache": check_rope_cache,
    "generate-info": check_generate_info,
    "plot": check_plot_fit,
    "timestep": check_timestep_diffusers,
    "freqs-dtype-identify": check_freqs_dtype_identify,
    "timestep-identify": check_timestep_identify,
    "info-numpy": check_info_numpy,
}


def run_case(kind: str, rng: random.Random, tmp: Path, case: int) -> str:
    return KINDS[kind](rng, tmp)


CASES_PER_SEED = 20
SEEDS = range(5)


@pytest.mark.parametrize("seed", SEEDS)
def test_engine_caches_generate_info_plot_fit_and_timestep_against_references(seed: int, tmp_path: Path) -> None:
    rng = random.Random(4000 + seed)
    names = FIRST_KINDS
    for case in range(CASES_PER_SEED):
        folder = tmp_path / str(case)
        folder.mkdir()
        run_case(names[case % len(names)], rng, folder, case)


@pytest.mark.parametrize("seed", range(3))
def test_timestep_identified_back_and_info_is_numpys_reading(seed: int, tmp_path: Path) -> None:
    rng = random.Random(4100 + seed)
    # freqs-dtype-identify joined once identify named bfloat16 angle tables and 3-pair float16 ones (issue 30)
    names = ["timestep-identify", "info-numpy", "freqs-dtype-identify"]
    for case in range(6):
        folder = tmp_path / str(case)
        folder.mkdir()
        run_case(names[case % len(names)], rng, folder, case)


@pytest.mark.parametrize(
    ("argv", "part"),
    [
        (["t5", "--len", "3"], "buckets"),
        (["rope", "--d", "8", "--len", "4"], None),
        (["alibi", "--heads", "2", "--len", "3"], "bias"),
    ],
)
def test_generate_json_params_are_the_files(argv: list[str], part: str | None, tmp_path: Path) -> None:
    """Found by this fuzz: generate --json said "part": null for a default part the file records (t5's
    buckets), and a part for a pair whose file records none (rope's cos and sin)."""
    path = tmp_path / "x.safetensors"
    result = run_in_process("generate", *argv, "-o", str(path), "--json")
    assert result.code == 0, result.stderr
    params = json.loads(result.out)["params"]
    assert params == json.loads(run_in_process("info", str(path), "--json").out)["pecli"]["params"]
    assert params.get("part", "absent") == (part or "absent")


@pytest.mark.parametrize(("width", "height"), [(30, 13), (20, 20), (24, 30)])
def test_wavelength_chart_fits_a_narrow_width(width: int, height: int) -> None:
    """Found by fuzz3's wide run: the band legend kept a 20-character floor under an 11-column indent
    (31 cells at --width 30), the context's label and "pair i" were added past the width."""
    argv = ["plot", "rope", "--d", "6", "--len", "50", "--scaling", "llama3", "--factor", "2",
            "--original-max-position", "32", "--view", "wavelength", "--terminal", "--no-color",
            "--width", str(width), "--height", str(height)]  # fmt: skip
    result = run_in_process(*argv)
    assert result.code == 0, result.stderr
    lines = result.out.rstrip("\n").split("\n")
    assert max(map(cells, lines)) <= width, lines
    assert len(lines) <= height, lines
    assert any(line.lstrip().startswith("l low frequency") for line in lines), lines  # the legend still says it


if __name__ == "__main__":  # the wide run: python tests/cli/test_cli_properties_fuzz4.py CASES [FIRST_SEED]
    from tests.cli.wide_fuzz import wide_run

    count, first = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0
    wide_run(count, first, list(KINDS), run_case)
