"""``pecli generate --dtype bfloat16`` writes .safetensors and .pt without importing ml_dtypes (its 0.7 release
takes 2–3 s to import), byte for byte as the ml_dtypes route (the scheme's own bfloat16 rows) writes them."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import run_in_process
from tests.paths import DATA, ROOT

CASES = [
    ["--d", "512", "--len", "2048"],
    ["sinusoidal", "--d", "63", "--len", "300", "--layout", "split"],
    ["rope", "--part", "cos", "--d", "128", "--len", "1000"],
    ["rope", "--part", "sin", "--d", "64", "--len", "500", "--scaling", "yarn", "--factor", "4",
     "--original-max-position", "256"],
    ["alibi", "--heads", "12", "--len", "64"],
    ["alibi", "--heads", "8", "--len", "32", "--part", "slopes"],
    ["t5", "--len", "64"],
    ["timestep", "--d", "64", "--len", "100"],
    ["learned", "--d", "64", "--len", "100", "--std", "0.02", "--seed", "3"],
    ["sincos2d", "--preset", "mae", "--grid", "14,14", "--d", "768", "--cls-token"],
    ["--from-config", str(DATA / "models" / "llama-default" / "config.json"), "--len", "300"],
    ["--from-config", str(DATA / "models" / "bloom" / "config.json"), "--len", "40"],
]  # fmt: skip
SUFFIXES = ("safetensors", "pt")


def _generate_all(folder: str) -> str:
    """Run every case (both formats) in one child process; what it prints: whether ml_dtypes was imported."""
    runs = [["generate", *case, "--dtype", "bfloat16", "-o", os.path.join(folder, f"{number}.{suffix}")]
            for number, case in enumerate(CASES) for suffix in SUFFIXES]  # fmt: skip
    code = (
        "import sys\nfrom pecli.cli.app import main\n"
        f"codes = [main(args) for args in {runs!r}]\n"
        "print(codes, 'ml_dtypes' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PECLI_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> str:
    folder = str(tmp_path_factory.mktemp("bits"))
    assert _generate_all(folder) == f"{[0] * len(CASES) * len(SUFFIXES)} False"  # every run wrote; no ml_dtypes
    return folder


@pytest.mark.parametrize("number", range(len(CASES)))
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_file_bytes_equal_the_ml_dtypes_route(written, tmp_path, monkeypatch, number, suffix):
    pytest.importorskip("torch") if suffix == "pt" else None
    import pecli.schemes.spec

    # every table counts as large: written from the scheme's own bfloat16 rows, rounded by ml_dtypes' cast
    monkeypatch.setattr(pecli.schemes.spec, "_COMPILED_BFLOAT16_FROM", -1)
    reference = tmp_path / f"ref.{suffix}"
    result = run_in_process("generate", *CASES[number], "--dtype", "bfloat16", "-o", str(reference))
    assert result.code == 0, result.stderr
    assert "ml_dtypes" in sys.modules  # the reference is the compiled route indeed
    with open(os.path.join(written, f"{number}.{suffix}"), "rb") as ours:
        assert ours.read() == reference.read_bytes()


def test_bits_are_the_public_api_s_bfloat16(written):
    """The file's data is the bits of ``pecli.encode``'s bfloat16 array (an ml_dtypes array, as users expect)."""
    import pecli
    from pecli.io import read_table

    table = pecli.encode("rope", 1000, 128, part="cos", dtype="bfloat16")
    assert table.dtype.name == "bfloat16" and table.dtype.type.__module__ == "ml_dtypes"
    stored = read_table(os.path.join(written, "2.safetensors"))
    assert stored.dtype == "bfloat16"
    assert np.array_equal(stored.array, table.astype(np.float32))  # widened from the bits, exactly
    assert stored.array[5, 3] == np.float32(table[5, 3])


def test_round_to_stored_is_one_rounding_from_float64():
    """Ties of float32 halfway between two bfloat16 values, values just off them, subnormals, ±0: the bits
    are ml_dtypes' route's (round_to), which tests/schemes/test_dtypes_rounding.py checks against exact rules."""
    from pecli.dtypes import round_to, round_to_stored

    rng = np.random.default_rng(5)
    halfway = (rng.integers(0, 0x7F7F, 4000).astype(np.uint32) << 16 | 0x8000).view(np.float32).astype(np.float64)
    values = np.concatenate([
        halfway, np.nextafter(halfway, np.inf), np.nextafter(halfway, -np.inf),
        rng.standard_normal(4000) * 10.0 ** rng.integers(-40, 38, 4000), [0.0, -0.0, 2.0**-133, -(2.0**-140)],
    ])  # fmt: skip
    values = values[np.abs(values) < 3.3e38]
    bits = round_to_stored(values, "bfloat16")
    assert bits.dtype == np.uint16
    assert np.array_equal(bits, round_to(values, "bfloat16").view(np.uint16))
    assert round_to_stored(values[:10] % 1.0, "float16").dtype == np.float16


@pytest.mark.parametrize("compiled", [False, True])
def test_overflow_is_refused_alike_on_both_routes(tmp_path, monkeypatch, compiled):
    import pecli.schemes.spec

    if compiled:
        monkeypatch.setattr(pecli.schemes.spec, "_COMPILED_BFLOAT16_FROM", -1)
    target = tmp_path / "x.safetensors"
    # finite in float64 (1e39), past bfloat16's largest value (3.4e38)
    result = run_in_process("generate", "learned", "--d", "8", "--len", "4", "--std", "1e39", "--dtype", "bfloat16",
                            "-o", str(target))  # fmt: skip
    assert result.code == 2
    assert "bfloat16 cannot hold the table's values" in result.stderr
    assert not target.exists()
