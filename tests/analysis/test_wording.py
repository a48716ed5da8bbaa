"""Words and figures that tell the truth (issue 30, classes 1 and 3): each verdict, runner-up and
diagnosis names what was actually used or found."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli


def _save(tmp_path, name: str, table: np.ndarray) -> str:
    path = tmp_path / name
    np.save(path, table)
    return str(path)


def _verdict(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(("same", "different")))


@pytest.fixture
def half(tmp_path):
    table = np.random.default_rng(0).standard_normal((64, 8)).astype(np.float16)
    shifted = (table.astype(np.float32) + 0.5).astype(np.float16)
    return _save(tmp_path, "a.npy", table), _save(tmp_path, "b.npy", shifted)


def test_float16_verdict_names_float16_rounding(cli, half):
    """Two float16 tables were 'different beyond float32 arithmetic (tolerance 0.015 …)': the 0.015 is
    float16's rounding, and the verdict says so, in the text and the JSON."""
    a, b = half
    different = cli("compare", a, b)
    assert different.code == 1
    # the verdict names the entry beyond its own tolerance (issue 30), the JSON the tolerance's largest
    assert _verdict(different.out).startswith("different beyond float16 rounding and float32 arithmetic at position ")
    same = cli("compare", a, a)
    assert same.code == 0
    assert _verdict(same.out) == "same within float16 rounding and float32 arithmetic (tolerance 0.015 at position 59)"
    report = json.loads(cli("compare", a, b, "--json").out)
    assert report["tolerance"] == "float16 rounding and float32 arithmetic (tolerance 0.015 at position 59)"


def test_bfloat16_values_in_float32_name_bfloat16(cli, tmp_path):
    """bfloat16 values widened to float32 (as safetensors and torch do) carry bfloat16's rounding."""
    table = pecli.encode("sinusoidal", 32, 8, dtype="float32")
    rounded = (table.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)  # bfloat16 bits, truncated
    result = cli("compare", _save(tmp_path, "r.npy", rounded), _save(tmp_path, "r2.npy", rounded))
    assert result.code == 0
    assert _verdict(result.out).startswith("same within bfloat16 rounding and float32 arithmetic (tolerance ")


def test_integer_verdict_names_exact_values(cli, tmp_path):
    """Integer tables were 'different beyond float32 arithmetic (tolerance 0: …)': no float32 arithmetic
    is involved, and their tolerance is 0."""
    ints = np.arange(64 * 8, dtype=np.int32).reshape(64, 8)
    a, b = _save(tmp_path, "i.npy", ints), _save(tmp_path, "j.npy", ints + 1)
    different = cli("compare", a, b)
    assert different.code == 1
    assert _verdict(different.out) == (  # the failing entry named (every entry differs by 1: the first)
        "different beyond tolerance 0 (both tables hold exact values) at position 0, dimension 0: "
        "|A − B| 1 > tolerance 0 there"
    )
    assert _verdict(cli("compare", a, a).out) == "same within tolerance 0 (both tables hold exact values)"
    assert json.loads(cli("compare", a, b, "--json").out)["tolerance"] == "tolerance 0 (both tables hold exact values)"


def test_integers_against_float16_name_float16_rounding_only(cli, tmp_path):
    """One table of exact integers: the tolerance is one rounding of the other (one unit in its last place),
    with no angle noise."""
    ints = np.arange(64 * 8, dtype=np.int32).reshape(64, 8)
    result = cli("compare", _save(tmp_path, "i.npy", ints), _save(tmp_path, "h.npy", ints.astype(np.float16) + 0.5))
    assert result.code == 1
    assert _verdict(result.out) == (
        "different beyond float16 rounding at position 0, dimension 0: |A − B| 0.5 > tolerance 0.00049 there"
    )


def test_float32_verdict_unchanged(cli, tmp_path):
    table = pecli.encode("sinusoidal", 128, 8)
    result = cli("compare", _save(tmp_path, "s.npy", table), "sinusoidal")
    assert result.code == 0
    assert _verdict(result.out).startswith("same within float32 arithmetic (tolerance ")


def test_identify_lists_no_runner_up_that_is_the_best_written_differently(cli, tmp_path):
    """Vaswani's table (d 16) named 'next best: sinusoidal: freq_shift=0.0', which at an even d is the
    best's own table (ω = base^(−2k/d) = base^(−k/(d/2))): a runner-up must be another table."""
    path = _save(tmp_path, "s.npy", pecli.encode("sinusoidal", 64, 16))
    text = cli("identify", path).out
    assert "next best: sinusoidal: freq_shift=0.0," not in text
    runners = json.loads(cli("identify", path, "--json").out)["runners_up"]
    tables = [
        pecli.encode(runner["scheme"], 64, 16, dtype="float64", **{k: v for k, v in runner["params"].items()})
        for runner in runners
    ]
    best = pecli.encode("sinusoidal", 64, 16, dtype="float64")
    assert runners and not any(np.array_equal(table, best) for table in tables)
    # nor twice the same table among the runners-up (base b with freq_shift None and 0.0)
    assert not any(np.array_equal(tables[i], tables[j]) for i in range(len(tables)) for j in range(i))


def test_runners_up_equal_after_filling_defaults_are_dropped():
    """A runner-up whose parameters equal the best's once the scheme's defaults fill them in."""
    from pecli.analysis.identify.result import Candidate
    from pecli.analysis.identify.search import _distinct_runners_up
    from pecli.schemes.catalog import SCHEMES

    table = pecli.encode("sinusoidal", 8, 6, dtype="float64")
    best = Candidate("sinusoidal", dict(SCHEMES["sinusoidal"].defaults), max_error=0.0)
    partial = Candidate("sinusoidal", {"base": 10000.0}, max_error=0.0)
    other = Candidate("sinusoidal", {**SCHEMES["sinusoidal"].defaults, "base": 500.0}, max_error=0.5)
    odd_shift = Candidate("sinusoidal", {**SCHEMES["sinusoidal"].defaults, "freq_shift": 0.0}, max_error=0.0)
    found = _distinct_runners_up(table, best, [partial, odd_shift, other], [range(0, 8)], 3)
    # d = 6: freq_shift 0 gives base^(−i/3), i < 3, the same as Vaswani's base^(−2k/6): dropped too
    assert found == [other]
    odd = pecli.encode("sinusoidal", 8, 7, dtype="float64")  # at d = 7 the two differ: a real runner-up
    assert _distinct_runners_up(odd, best, [odd_shift], [range(0, 8)], 3) == [odd_shift]


def test_probe_nan_cause_is_in_the_json_as_in_the_text():
    """An engine's NaN: the text said "cause: the engine's rotation produced NaN" while the JSON's
    diagnosis was []: both now carry the one finding."""
    from pecli.probe import make_probe, rotary_spec
    from pecli.probe_check import compare_rotated

    probe = make_probe(rotary_spec("rope", dim=16, length=64), heads=1)
    broken = probe.q_rotated.copy()
    broken[0, 3, 5] = np.nan
    report = compare_rotated(probe, {"q_rotated": broken, "k_rotated": probe.k_rotated})
    check = report.checks[0]
    message = "the engine's rotation produced NaN (no mistake of the convention does)"
    assert f"  cause: {message}" in report.text_lines()
    first = {"head": 0, "position": int(probe.positions[3]), "dim": 5}
    assert check.to_json()["diagnosis"] == [
        {"code": "non_finite", "message": message, "figures": {"nan": 1, "inf": 0, "first": first}}
    ]
    assert report.to_json()["tensors"]["k_rotated"]["diagnosis"] == []
    infinite = probe.q_rotated.copy()
    infinite[0, 0, 0], infinite[0, 1, 1] = np.inf, np.nan
    both = compare_rotated(probe, {"q_rotated": infinite}).checks[0].to_json()["diagnosis"][0]
    assert both["message"].startswith("the engine's rotation produced NaN or infinite values")
    assert (both["figures"]["nan"], both["figures"]["inf"]) == (1, 1)


def test_encode_given_a_spec_spells_out_the_call_it_means():
    """pecli.encode("rope:base=0", 16, 8) said "unknown scheme 'rope:base=0'" of a scheme that exists."""
    with pytest.raises(pecli.errors.ParameterError) as refused:
        pecli.encode("rope:base=0", 16, 8)
    assert refused.value.args[0] == (
        "encode takes a scheme name and keyword parameters, not a spec: encode('rope', 16, 8, base=0)"
    )
    with pytest.raises(pecli.errors.ParameterError, match=r"encode\('rope', 4, 8, part='cos', base=5e5\)"):
        pecli.encode("rope:part=cos,base=5e5", 4, 8)
    with pytest.raises(pecli.errors.ParameterError, match="unknown scheme 'nosuch:x=1'"):
        pecli.encode("nosuch:x=1", 4, 8)  # not a scheme's spec: an unknown name
