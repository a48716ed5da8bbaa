"""A file of one RoPE table per layer type (Gemma 3's) through ``distance`` and the other readers (issue 30), and
bfloat16 specs in ``compare`` and ``generate``'s preview read as exact float32 values, without the 2–3 s import of
ml_dtypes 0.7, their output as the ml_dtypes route's (issue 32)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import assert_clean_error
from tests.paths import ROOT

#: a Gemma 3 text config whose six layers derive five sliding_attention layers (base 10000) and one
#: full_attention layer (base 1e6), as transformers' Gemma3TextConfig defaults them
GEMMA3 = {"model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
          "max_position_embeddings": 64, "num_hidden_layers": 6}  # fmt: skip
BASES = {"full_attention": 1e6, "sliding_attention": 1e4}
HEAD_DIM, LENGTH = 16, 64


@pytest.fixture(scope="module")
def gemma3_file(tmp_path_factory):
    from tests.conftest import run_in_process

    folder = tmp_path_factory.mktemp("gemma3")
    (folder / "config.json").write_text(json.dumps(GEMMA3))
    target = folder / "g3.safetensors"
    result = run_in_process("generate", "--from-config", str(folder), "--len", str(LENGTH), "-o", str(target))
    assert result.code == 0, result.stderr
    from pecli.io import read_tensors

    tensors, metadata = read_tensors(str(target))
    assert sorted(tensors) == [f"{kind}.{part}" for kind in sorted(BASES) for part in ("cos", "sin")]
    assert "layer_types" in metadata and "len" not in metadata  # the lengths are per layer type only
    return target


def _rope_cos(base: float) -> np.ndarray:
    """RoFormer's cos table in HF's rotate_half layout, from the formula: cos(p · base^(−2i/d)), halves repeated."""
    inv_freq = base ** (-np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    angles = np.arange(LENGTH)[:, None] * inv_freq[None, :]
    return np.cos(np.concatenate([angles, angles], axis=1))


@pytest.mark.parametrize("extra", [[], ["--rows", "4"], ["--rows", "0:8"], ["--profile"], ["--json"],
                                   ["--metric", "cosine"]])  # fmt: skip
def test_distance_of_a_per_layer_type_file_asks_for_key(cli, gemma3_file, extra):
    """Was 'internal error: TypeError' (exit 3): the file records no one length; it asks for a tensor, naming them."""
    result = cli("distance", str(gemma3_file), *extra)
    assert_clean_error(result, 2, "--key", "full_attention.cos", "sliding_attention.sin")


@pytest.mark.parametrize("layer_type", sorted(BASES))
def test_distance_of_the_picked_tensor(cli, gemma3_file, layer_type):
    """With --key: the dot products of the picked table's rows, that layer type's base (not the other's)."""
    result = cli("distance", str(gemma3_file), "--key", f"{layer_type}.cos", "--json")
    assert result.code == 0, result.stderr
    matrix = np.array(json.loads(result.out)["matrix"])
    table = _rope_cos(BASES[layer_type])
    np.testing.assert_allclose(matrix, table @ table.T, rtol=1e-5, atol=1e-5)
    other = _rope_cos(BASES[next(name for name in BASES if name != layer_type)])
    assert np.abs(matrix - other @ other.T).max() > 0.1


def test_distance_qk_on_a_per_layer_type_file_is_refused(cli, gemma3_file):
    result = cli("distance", str(gemma3_file), "--key", "full_attention.cos", "--qk", "random")
    assert_clean_error(result, 2, "--qk")


def test_other_readers_of_a_per_layer_type_file(cli, gemma3_file):
    """plot, info, compare and identify of the same file: values or a clean request for --key, never a crash."""
    path = str(gemma3_file)
    assert cli("plot", path).code == 0
    info = cli("info", path)
    assert info.code == 0 and "full_attention: scheme=rope len=64" in info.out
    assert_clean_error(cli("compare", path, path), 2, "--key", "full_attention.cos")
    assert_clean_error(cli("identify", path), 2, "--key", "full_attention.cos")
    same = cli("compare", path, path, "--key", "sliding_attention.sin", "--json")
    assert same.code == 0 and json.loads(same.out)["max_abs"] == 0.0
    identified = cli("identify", path, "--key", "full_attention.cos", "--json")
    assert identified.code == 0, identified.stderr
    assert json.loads(identified.out)["best"]["params"]["base"] == pytest.approx(1e6, rel=1e-6)


# -- bfloat16 without ml_dtypes (issue 32) -----------------------------------------------------------------------


def _in_child(*args: str, cwd: str) -> tuple[int, str]:
    """``pecli ARGS`` run in-process in a fresh interpreter: its exit code and stdout; asserts no ml_dtypes import."""
    code = (
        "import sys\nfrom pecli.cli.app import main\n"
        f"code = main({list(args)!r})\nsys.stdout.flush()\n"
        "sys.stderr.write(f\"\\n{code} {'ml_dtypes' in sys.modules}\\n\")\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PECLI_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, cwd=cwd)
    code, imported = done.stderr.rstrip("\n").split("\n")[-1].split()
    assert imported == "False", done.stderr  # ml_dtypes not imported
    return int(code), done.stdout


def _ml_dtypes_route(monkeypatch) -> list[str]:
    """The spec's values as before: the scheme's own bfloat16 rows (ml_dtypes arrays, as ``pecli.encode`` gives);
    the dtypes of the arrays handed out."""
    import pecli.sources

    handed: list[str] = []

    def handed_out(array):
        handed.append(array.dtype.name)
        return array

    monkeypatch.setattr(pecli.sources, "spec_values", lambda spec: handed_out(spec.single().array()))
    monkeypatch.setattr(pecli.sources, "spec_rows", lambda spec, rows: handed_out(spec.single().rows(rows)))
    return handed


@pytest.fixture(scope="module")
def bf16_files(tmp_path_factory):
    from tests.conftest import run_in_process

    folder = tmp_path_factory.mktemp("bf16")
    for name, args in {"f": ["rope", "--part", "cos", "--d", "64", "--len", "256"],
                       "pair": ["rope", "--d", "32", "--len", "100"],
                       "s": ["sinusoidal", "--d", "32", "--len", "64"]}.items():  # fmt: skip
        result = run_in_process("generate", *args, "--dtype", "bfloat16", "-o", str(folder / f"{name}.safetensors"))
        assert result.code == 0, result.stderr
    return folder


COMPARES = [
    ["f.safetensors", "rope:part=cos"],
    ["rope:part=cos", "f.safetensors", "--json"],
    ["f.safetensors", "rope:part=cos,base=500000", "--json"],  # a difference: its diagnosis too
    ["pair.safetensors", "rope"],  # the spec's parts side by side
    ["s.safetensors", "sinusoidal:base=500", "--json"],
    ["sinusoidal", "sinusoidal:base=500", "--d", "16", "--len", "8", "--dtype", "bfloat16", "--json"],
]


@pytest.mark.parametrize("args", COMPARES, ids=" ".join)
def test_compare_of_a_bfloat16_spec_skips_ml_dtypes(cli, bf16_files, monkeypatch, args):
    ours = _in_child("compare", *args, cwd=str(bf16_files))
    handed = _ml_dtypes_route(monkeypatch)
    monkeypatch.chdir(bf16_files)
    reference = cli("compare", *args)
    assert reference.code in (0, 1), reference.stderr  # 1: the tables differ (base=500000)
    assert handed and set(handed) == {"bfloat16"}  # the reference took the ml_dtypes route indeed
    assert ours == (reference.code, reference.out)


PREVIEWS = [
    ["--d", "8", "--len", "4"],
    ["--d", "100", "--len", "50", "--json"],
    ["rope", "--d", "8", "--len", "4"],
    ["alibi", "--heads", "2", "--len", "4"],
    ["timestep", "--d", "6", "--len", "3"],
]


def test_compare_of_exact_bfloat16_values_keeps_their_dtype(cli, tmp_path):
    """ALiBi's power-of-two slopes hold exactly in bfloat16: their values cannot show the rounding, so the spec side
    stays a bfloat16 array (ml_dtypes) and compare keeps its bfloat16 tolerance, as before."""
    target = str(tmp_path / "al.safetensors")
    assert cli("generate", "alibi", "--heads", "4", "--len", "32", "--dtype", "bfloat16", "-o", target).code == 0
    result = cli("compare", target, "alibi", "--json")
    assert result.code == 0, result.stderr
    found = json.loads(result.out)
    assert found["tolerance"].startswith("bfloat16 rounding") and found["atol"] == pytest.approx(0.060546875)


@pytest.mark.parametrize("args", PREVIEWS, ids=" ".join)
def test_generate_preview_of_bfloat16_skips_ml_dtypes(cli, tmp_path, monkeypatch, args):
    ours = _in_child("generate", *args, "--dtype", "bfloat16", cwd=str(tmp_path))
    handed = _ml_dtypes_route(monkeypatch)
    reference = cli("generate", *args, "--dtype", "bfloat16")
    assert reference.code == 0, reference.stderr
    assert handed and set(handed) == {"bfloat16"}
    assert ours == (0, reference.out)
    assert "[0]" in reference.out or "--json" in args  # a preview was printed


@pytest.mark.parametrize(("scheme", "options"), [
    ("sinusoidal", {"length": 50, "dim": 100}),
    ("rope", {"length": 300, "dim": 64, "part": "sin", "base": 500000.0}),
    ("alibi", {"length": 16, "heads": 4}),
    ("t5", {"length": 20}),
])  # fmt: skip
def test_spec_values_are_pecli_encode_bfloat16_exactly(scheme, options):
    """The widened values are those of ``pecli.encode``'s bfloat16 array (an ml_dtypes array) bit for bit."""
    import pecli
    from pecli.schemes.spec import TableSpec
    from pecli.sources import spec_values

    given = dict(options)
    length, dim = given.pop("length"), given.pop("dim", None)
    expected = pecli.encode(scheme, length, dim, dtype="bfloat16", **given)
    assert expected.dtype.name == "bfloat16" and expected.dtype.type.__module__ == "ml_dtypes"
    spec = TableSpec.resolve(scheme, None, given, length=length, dim=dim, dtype="bfloat16")
    ours = spec_values(spec)
    assert ours.dtype == np.float32 and ours.shape == expected.shape
    assert np.array_equal(ours.view(np.uint32) >> 16, expected.view(np.uint16).astype(np.uint32))
