"""``pecli compare``: statistics, exit codes, the permutation/offset diagnosis, specs, and --properties."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.analysis.compare import compare_tables, named_permutations
from pecli.analysis.properties import PROPERTIES, check_properties
from pecli.schemes.spec import TableSpec
from tests import references
from tests.conftest import assert_clean_error, run_pecli


def _save(tmp_path, name, array):
    path = tmp_path / name
    np.save(path, array)
    return str(path)


def test_statistics_by_hand():
    a = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    b = np.array([[1.0, 0.0], [0.0, -2.0], [3.0, 4.5]])
    result = compare_tables(a, b)
    assert not result.agree
    assert result.max_abs == 4.0 and result.worst == (1, 1)
    assert result.mean_abs == pytest.approx(4.5 / 6)
    assert result.max_rel == pytest.approx(2.0)  # |2 − (−2)| / |−2|
    cosines = [1.0, -1.0, (9 + 18) / (5 * np.hypot(3, 4.5))]
    assert result.cosine_min == -1.0 and result.cosine_mean == pytest.approx(np.mean(cosines))
    assert compare_tables(a, b, atol=4.0).agree
    assert not compare_tables(a, b, atol=0.5, rtol=0.5).agree  # row 1 is off by 2·|B|
    assert compare_tables(a, b, atol=0.5, rtol=2.0).agree


def test_cosine_of_huge_tiny_and_infinite_rows(tmp_path, cli):
    # squares of 1e300 overflow and of 1e-310 underflow float64: such rows are scaled first, so an
    # identical tiny row has cosine 1 (it was 0) and a huge one its true angle (it was NaN); a row
    # holding inf has no direction and is left out, counted (the mean was NaN, the min ignored it)
    a = np.array([[1e300, 1e300], [1e-310, 0.0], [np.inf, 1.0], [3.0, 4.0]])
    b = np.array([[1e300, -1e300], [1e-310, 0.0], [np.inf, 2.0], [4.0, 3.0]])
    result = compare_tables(a, b, atol=1.0)
    assert result.cosine_undefined == 1
    assert result.cosine_min == 0.0 and result.cosine_mean == pytest.approx((0.0 + 1.0 + 24 / 25) / 3)
    report = cli("compare", _save(tmp_path, "a.npy", a), _save(tmp_path, "b.npy", b))
    assert report.code == 1 and report.stderr == ""  # no overflow or invalid-value warnings
    assert "cosine per position min 0, mean 0.653333 (1 position with inf or NaN left out)" in report.out
    cosine = json.loads(cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--json").out)["cosine"]
    assert cosine == {"min": 0.0, "mean": pytest.approx(0.653333, abs=1e-6), "undefined": 1}
    everywhere = _save(tmp_path, "inf.npy", np.full((3, 2), np.inf))
    report = cli("compare", everywhere, everywhere)
    assert report.code == 0 and "cosine per position: none (every position holds inf or NaN)" in report.out
    assert json.loads(cli("compare", everywhere, everywhere, "--json").out)["cosine"]["mean"] is None


def test_named_permutations_are_the_conventions():
    for dim in (4, 8, 10):
        interleaved = pecli.encode("sinusoidal", 20, dim, dtype="float64")
        split = pecli.encode("sinusoidal", 20, dim, layout="split", dtype="float64")
        expected = [
            (interleaved, "A interleaved [sin, cos, …], B split [sin", split),
            (interleaved, "(interleaved layout)", pecli.encode("sinusoidal", 20, dim, cos_first=True, dtype="float64")),
            (
                interleaved,
                "A interleaved, B split with the other",
                pecli.encode("sinusoidal", 20, dim, layout="split", cos_first=True, dtype="float64"),
            ),
            (
                split,
                "(split layout)",
                pecli.encode("sinusoidal", 20, dim, layout="split", cos_first=True, dtype="float64"),
            ),
        ]
        if dim > 4:  # at d = 4 these reorderings are their own inverses, named by the first meaning
            expected.append((split, "A split [sin … | cos …], B interleaved", interleaved))
        names = named_permutations(dim)
        for a, phrase, b in expected:
            (perm,) = [p for p, meaning in names.items() if phrase in meaning]
            np.testing.assert_array_equal(a[:, list(perm)], b)


@pytest.mark.parametrize(
    ("spec_b", "phrase"),
    [
        ("sinusoidal:layout=split", "A interleaved [sin, cos, …], B split"),
        ("sinusoidal:cos_first=true", "sin/cos order (interleaved layout)"),
        ("sinusoidal:layout=split,cos_first=true", "B split with the other sin/cos order"),
    ],
)
def test_cli_diagnoses_a_column_permutation(cli, spec_b, phrase):
    result = cli("compare", "sinusoidal", spec_b, "--d", "16", "--len", "32", "--json")
    assert result.code == 1, result.stderr
    (diagnosis,) = json.loads(result.out)["diagnosis"]
    assert diagnosis["figures"]["shift"] == 0 and phrase in diagnosis["message"]
    assert diagnosis["figures"]["residual"] == 0.0


def test_split_sin_cos_order_and_fairseq_offset(cli, tmp_path):
    fairseq = _save(tmp_path, "fairseq.npy", references.fairseq(40, 16).astype(np.float32))
    result = cli("compare", fairseq, "tensor2tensor", "--json")
    document = json.loads(result.out)
    assert result.code == 1 and document["diagnosis"][0]["figures"]["shift"] == -2
    assert document["diagnosis"][0]["figures"]["permutation"] is None
    result = cli("compare", "tensor2tensor", fairseq)
    assert result.code == 1
    assert "B's row i is A's row i + 2: B starts 2 positions later (an offset)" in result.out
    guided = _save(tmp_path, "guided.npy", references.guided_diffusion(np.arange(40), 16).astype(np.float32))
    result = cli("compare", "sinusoidal:layout=split,freq_shift=0", guided, "--json")
    assert json.loads(result.out)["diagnosis"][0]["code"] == "flip_sin_to_cos"


def test_offset_and_permutation_together():
    a = pecli.encode("sinusoidal", 64, 8, dtype="float64")
    b = pecli.encode("sinusoidal", 64, 8, layout="split", offset=3, dtype="float64")
    (diagnosis,) = compare_tables(a, b).diagnosis
    assert diagnosis.figures["shift"] == 3 and diagnosis.figures["permutation"] == [0, 2, 4, 6, 1, 3, 5, 7]
    np.testing.assert_array_equal(a[3:][:, diagnosis.figures["permutation"]], b[:-3])


def test_unrelated_tables_get_no_diagnosis():
    a = pecli.encode("sinusoidal", 64, 8)
    assert compare_tables(a, pecli.encode("learned", 64, 8)).diagnosis == []
    assert compare_tables(a, pecli.encode("sinusoidal", 64, 8, base=500.0)).diagnosis == []


def test_exit_codes_and_shape_from_the_other_table(cli, tmp_path):
    table = _save(tmp_path, "pe.npy", pecli.encode(None, 50, 12, preset="marian"))
    assert cli("compare", table, "marian").code == 0
    assert cli("compare", table, "sinusoidal:layout=split").code == 0
    assert cli("compare", table, "sinusoidal").code == 1
    result = cli("compare", table, "sinusoidal", "--atol", "2")
    assert result.code == 0 and "same within atol 2" in result.out
    # a float16 file is compared with the spec in float16
    half = _save(tmp_path, "half.npy", pecli.encode("sinusoidal", 50, 12, dtype="float16"))
    assert cli("compare", half, "sinusoidal").code == 0
    # against float32 values the default tolerance allows float16's rounding; --exact does not
    rounded = cli("compare", half, "sinusoidal", "--dtype", "float32")
    assert rounded.code == 0
    assert "same within float16 rounding and float32 arithmetic (tolerance 0.0039 at position 47)" in rounded.out
    exact = cli("compare", half, "sinusoidal", "--dtype", "float32", "--exact")
    assert exact.code == 1 and "different: not equal bit for bit" in exact.out
    assert "diagnosis: they differ only by rounding" in exact.out
    assert_clean_error(cli("compare", half, "sinusoidal", "--exact", "--atol", "1"), 2, "--exact")


def test_given_tolerances_replace_the_data_driven_one_and_exact_is_bit_equality(cli, tmp_path):
    """--atol and --rtol (each alone, too) replace float32 arithmetic's tolerance; --exact is bit equality."""
    table = _save(tmp_path, "pe.npy", pecli.encode("sinusoidal", 128, 64))
    half = _save(tmp_path, "half.npy", pecli.encode("sinusoidal", 128, 64, dtype="float16"))
    assert cli("compare", table, half).code == 0  # within float16's rounding, the data-driven default
    for option, value in (("--atol", "1e-6"), ("--rtol", "1e-5")):
        result = cli("compare", table, half, option, value)
        assert result.code == 1 and "different beyond atol " in result.out, result.out
    loose = cli("compare", table, half, "--rtol", "1e-2")
    assert loose.code == 0 and "same within atol 0, rtol 0.01" in loose.out
    assert cli("compare", table, table, "--exact").out.splitlines()[-1] == "same, bit for bit"


@pytest.mark.parametrize("spec", ["sincos2d:preset=mae,grid=14x14", "sincos2d:preset=mae,grid=14,14", "mae:grid=14,14"])
def test_a_spec_with_a_preset_and_a_comma_value(spec, cli, tmp_path):
    table = _save(tmp_path, "pe.npy", pecli.encode("sincos2d", None, 64, preset="mae", grid="14,14"))
    result = cli("compare", table, spec)
    assert result.code == 0 and "same within float32 arithmetic" in result.out, result.out
    timm = cli("compare", table, "sincos2d:preset=timm,grid=14,14")
    assert timm.code == 1
    assert_clean_error(cli("compare", table, "sincos2d:preset=maee,grid=14,14"), 2, "has no preset 'maee'")


def test_a_bare_preset_name_several_schemes_share_is_refused_in_a_spec(cli, tmp_path):
    """``diffusers`` as a spec quietly meant the sinusoidal preset; the scheme:preset=NAME spelling says which."""
    table = _save(tmp_path, "pe.npy", pecli.encode("sinusoidal", 16, 8, preset="diffusers"))
    assert_clean_error(
        cli("compare", table, "diffusers"),
        2,
        "preset 'diffusers' in spec 'diffusers' belongs to sinusoidal, timestep and sincos2d: name the scheme",
        "e.g. sinusoidal:preset=diffusers",
    )
    assert_clean_error(cli("compare", table, "guided-diffusion:offset=1"), 2, "sinusoidal and timestep")
    assert cli("compare", table, "sinusoidal:preset=diffusers").code == 0
    assert cli("compare", table, "fairseq").code == 1  # a name one scheme owns stays a spec


def test_default_tolerance_follows_the_positions():
    """Row p may differ by eps32·p: the tutorial's float32 table is the preset, a shifted one is not."""
    length, dim = 2048, 64
    position = np.arange(length, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, dim, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / dim))
    tutorial = np.zeros((length, dim), dtype=np.float32)
    tutorial[:, 0::2], tutorial[:, 1::2] = np.sin(position * div_term), np.cos(position * div_term)
    preset = pecli.encode(None, length, dim, preset="pytorch-tutorial")
    result = compare_tables(tutorial, preset)
    assert result.agree and 1e-5 < result.max_abs < result.atol
    assert result.tolerance_text() == "float32 arithmetic (tolerance 0.00024 at position 2047)"
    # rounding at each entry's own magnitude (at most 1) plus the angle noise of row 2047
    assert 2.0**-23 * 2047 < result.atol <= 4 * 2.0**-23 + 2.0**-23 * 2047
    # the same error at row 0, where float32 arithmetic is exact to a few ulps, is a difference
    moved = preset.copy()
    moved[0, 0] += 1e-4
    assert not compare_tables(moved, preset).agree
    assert compare_tables(moved, preset, atol=1e-3).agree and not compare_tables(preset + 0, moved, exact=True).agree


def test_scripts_and_pipes():
    python = f"{sys.executable} -m pecli"
    same = subprocess.run(
        f"{python} generate --d 32 --len 64 -o - | {python} compare - sinusoidal --d 32 --len 64 && echo same",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert same.returncode == 0 and same.stdout.strip().endswith("same"), same.stderr
    generated = run_pecli("generate", "--preset", "fairseq", "--d", "32", "--len", "64", "-o", "-")
    different = run_pecli("compare", "-", "sinusoidal", stdin=generated.stdout)
    assert different.code == 1
    assert (  # the entry furthest beyond its own tolerance (issue 30), not the loosest row's tolerance
        "different beyond float32 arithmetic at position 2, dimension 0: |A − B| 1.7 > tolerance 6.7e-07 there"
        in different.stdout.decode()
    )


def test_text_report(cli, tmp_path):
    a = _save(tmp_path, "a.npy", np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32))
    b = _save(tmp_path, "b.npy", np.array([[1.0, 0.0], [0.0, 2.5]], dtype=np.float32))
    result = cli("compare", a, b)
    assert result.code == 1
    assert "A: a.npy — 2 × 2 float32" in result.out and "B: b.npy — 2 × 2 float32" in result.out
    assert "max |A − B|        0.5 (position 1, dimension 1)" in result.out
    assert "mean |A − B|       0.125" in result.out and "max relative       0.2" in result.out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["sinusoidal", "count", "--d", "4", "--len", "8", "--atol", "-1"], ["--atol", ">= 0"]),
        (["sinusoidal", "count", "--d", "4", "--len", "8", "--rtol", "-0.1"], ["--rtol", ">= 0"]),
        (["sinusoidal", "count"], ["missing --d and --len"]),
        (["sinusoidal"], ["two tables, got 1"]),
        (["-", "-"], ["both be -"]),
        (
            ["sinusiodal:layout=split", "count", "--d", "4", "--len", "8"],
            ["unknown scheme 'sinusiodal'", "did you mean"],
        ),
        ([":layout=split", "count", "--d", "4", "--len", "8"], ["no name before ':'"]),
        (["sinusoidal:", "count", "--d", "4", "--len", "8"], ["ends with ':'"]),
        (["sinusoidal:layout", "count", "--d", "4", "--len", "8"], ["'layout'", "not param=value"]),
        (["sinusoidal:bsae=2", "count", "--d", "4", "--len", "8"], ["no parameter 'bsae'", "did you mean 'base'"]),
        (["sinusoidal:base=ten", "count", "--d", "4", "--len", "8"], ["base=ten", "not a number"]),
        (["sinusoidal:offset=1.5", "count", "--d", "4", "--len", "8"], ["offset=1.5", "not an integer"]),
        (["sinusoidal:cos_first=maybe", "count", "--d", "4", "--len", "8"], ["cos_first=maybe", "true or false"]),
        (["sinusoidal:base=2,base=3", "count", "--d", "4", "--len", "8"], ["'base' is given twice"]),
        (["count:base=2", "count", "--d", "4", "--len", "8"], ["'count' takes no parameter 'base'"]),
        (["sinusoidal:layout=diagonal", "count", "--d", "4", "--len", "8"], ["layout", "diagonal"]),
        (["sinusoidal", "count", "--d", "4", "--len", "8", "-o", "diff.npy"], ["not .png, .svg or .pdf"]),
        (["sinusoidal", "count", "--d", "4", "--len", "8", "--key", "a", "--key-a", "b"], ["--key-a"]),
        (["sinusoidal", "count", "--d", "4", "--len", "8", "--key-a", "pe"], ["--key-a applies to files"]),
    ],
)
def test_bad_input(cli, args, words):
    assert_clean_error(cli("compare", *args), 2, *words)


def test_shape_mismatch_is_a_usage_error(cli, tmp_path):
    a = _save(tmp_path, "a.npy", np.zeros((10, 8), dtype=np.float32))
    b = _save(tmp_path, "b.npy", np.zeros((12, 8), dtype=np.float32))
    assert_clean_error(cli("compare", a, b), 2, "shape mismatch", "A is 10 × 8", "B is 12 × 8")
    assert_clean_error(cli("compare", a, "sinusoidal", "--len", "12"), 2, "shape mismatch")
    assert_clean_error(cli("compare", a, b, "--d", "8"), 2, "--d", "files")
    assert_clean_error(cli("compare", a, str(tmp_path / "missing.npy")), 2, "missing.npy")


def test_properties_expected_outcomes():
    """The outcomes the definitions predict (Kazemnejad 2019; Dufter et al. 2022, §3)."""

    def holds(scheme):
        return {c.name: c.holds for c in check_properties(TableSpec.resolve(scheme, None, {}, length=512, dim=64))}

    assert all(holds("sinusoidal").values())
    assert holds("count")["bounded"] is False
    assert holds("count-normalized")["length-independent"] is False
    assert holds("binary")["translation-invariant"] is False
    learned = holds("learned")
    assert learned["deterministic"] and not learned["translation-invariant"] and not learned["linear-relative"]


def test_properties_cli(cli):
    result = cli("compare", "--properties", "sinusoidal", "count", "sinusoidal:layout=split,freq_shift=1", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    assert (document["d"], document["len"]) == (64, 512)
    by_spec = {s["spec"]: {c["name"]: c for c in s["checks"]} for s in document["schemes"]}
    assert [c["name"] for c in document["schemes"][0]["checks"]] == list(PROPERTIES)
    assert all(c["holds"] for c in by_spec["sinusoidal:layout=split,freq_shift=1"].values())
    count = by_spec["count"]
    assert count["bounded"]["holds"] is False and count["bounded"]["figure"] == 8191  # max |PE| at 16 × 512
    assert count["unique"]["figure"] == 8  # nearest positions: |1 − 0| · sqrt(64)
    assert by_spec["sinusoidal"]["linear-relative"]["figure"] < 1e-9
    text = cli("compare", "--properties", "binary", "--d", "16", "--len", "64")
    assert "properties at d = 16, len = 64" in text.out
    assert "✗ translation-invariant" in text.out and "✓ deterministic" in text.out


def test_properties_bad_input(cli, tmp_path):
    table = _save(tmp_path, "pe.npy", np.zeros((4, 4), dtype=np.float32))
    assert_clean_error(cli("compare", "--properties", table), 2, "measures schemes", "file")
    assert_clean_error(cli("compare", "--properties", "sinusoidal", "-o", "x.png"), 2, "-o", "--properties")
    assert_clean_error(cli("compare", "--properties", "sinusoidal", "--len", "0"), 2, "--len")


def test_difference_figure(cli, tmp_path):
    target = tmp_path / "diff.png"
    result = cli("compare", "sinusoidal", "fairseq", "--d", "16", "--len", "30", "-o", str(target))
    assert result.code == 1 and target.read_bytes().startswith(b"\x89PNG")
    assert f"wrote {target}" in result.stderr


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(8, 40),
    dim=st.integers(1, 12),
    shift_fraction=st.floats(-0.5, 0.5),
    seed=st.integers(0, 2**32 - 1),
)
def test_diagnosis_recovers_any_shift_and_permutation(length, dim, shift_fraction, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(length, dim))
    shift = int(shift_fraction * length)
    permutation = rng.permutation(dim)
    b = rng.normal(size=(length, dim))  # rows outside the shared ones are unrelated
    shared = length - abs(shift)
    if shift >= 0:
        b[:shared] = a[shift:][:, permutation]
    else:
        b[-shift:] = a[:shared][:, permutation]
    result = compare_tables(a, b)
    if shift == 0 and (permutation == np.arange(dim)).all():
        assert result.agree
        return
    assert not result.agree and result.diagnosis
    shifted = next(found for found in result.diagnosis if "shift" in found.figures)
    assert shifted.figures["shift"] == shift
    expected = None if (permutation == np.arange(dim)).all() else permutation.tolist()
    assert shifted.figures["permutation"] == expected


def test_keys_pick_tensors(cli, tmp_path):
    from pecli.io import Tensor, write_tensors

    path = str(tmp_path / "two.safetensors")
    table = pecli.encode("sinusoidal", 12, 4)
    write_tensors(path, {"enc": Tensor.from_array(table), "dec": Tensor.from_array(table + 1)}, fmt="safetensors")
    assert cli("compare", path, path, "--key-a", "enc", "--key-b", "enc").code == 0
    assert cli("compare", path, path, "--key-a", "enc", "--key-b", "dec").code == 1
    assert cli("compare", path, "sinusoidal", "--key", "enc").code == 0
    assert_clean_error(cli("compare", path, "sinusoidal"), 2, "enc", "dec")


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("distance", "pecli distance pe.npy --metric cosine -o dist.png"),
        ("compare", "pecli compare model_pe.npy sinusoidal && echo same"),
        ("identify", "pecli identify model_pe.npy"),
    ],
)
def test_help_keeps_one_example_per_line(cli, command, example):
    result = cli(command, "--help")
    assert result.code == 0
    assert f"\n    {example}\n" in result.out
