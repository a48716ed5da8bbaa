"""compare's diagnosis names no cause the evidence cannot carry (issue 30): no row shift of a table whose rows are
alike, no regeneration that misses B beyond its own rounding; and two mistakes at once (the other pairing with
rounded frequencies) are named together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.analysis.diagnosis import diagnose_difference
from pecli.analysis.diagnosis.finding import reproduced
from pecli.dtypes import round_to

QWEN2 = Path(__file__).parents[1] / "data" / "models" / "qwen2" / "config.json"


def _codes(a: object, b: object, **options: object) -> list[str]:
    return [found.code for found in pecli.compare(a, b, **options).result.diagnosis]


@pytest.mark.parametrize("changed", ["one row", "leading rows", "one column"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_table_of_identical_rows_is_never_said_shifted(changed: str, dtype: type) -> None:
    # was "positions shifted by -4": every shift of identical rows fits, so leaving out the rows where the tables
    # part "explained" them
    row = np.random.default_rng(3).uniform(-1.0, 1.0, 16)
    a = np.tile(row, (16, 1)).astype(dtype)
    b = a.copy()
    if changed == "one row":
        b[2] += dtype(0.025)
    elif changed == "leading rows":
        b[:5] += dtype(4e-6)
    else:
        b[:, 3] += dtype(0.5)
    for first, second in ((a, b), (b, a)):
        report = pecli.compare(first, second)
        assert not report.agree
        assert "positions_shifted" not in [found.code for found in report.result.diagnosis]


def test_a_real_shift_is_still_named() -> None:
    # rows that differ tell the shifts apart: fairseq's table is tensor2tensor's from position 2
    a = pecli.encode(None, 64, 16, preset="tensor2tensor", dtype="float64")
    found = diagnose_difference(a, a[np.r_[2:64, 0:2]], tolerance=1e-9)
    assert [(f.code, f.figures["shift"]) for f in found] == [("positions_shifted", 2)]
    # a constant table against itself shifted: no evidence of any shift
    same = np.ones((64, 16))
    other = same.copy()
    other[:3] = 2.0
    assert "positions_shifted" not in [f.code for f in diagnose_difference(same, other, tolerance=1e-9)]


def _bfloat16(table: np.ndarray) -> np.ndarray:
    return np.asarray(round_to(table, "bfloat16"), dtype=np.float64)


def test_another_base_in_bfloat16_is_not_also_frequencies_rounded() -> None:
    # Qwen2's rope_theta 1e6 → 1.01e6, the table in bfloat16: was "frequencies rounded to bfloat16" (0.030 off where
    # B's own rounding is under 0.002), and not the base; the base regenerates B within half a bfloat16 unit
    cos = _bfloat16(pecli.encode("rope", 160, 16, part="cos", base=1.01e6, dtype="float64"))
    found = pecli.compare(str(QWEN2), cos, key="cos").result.diagnosis
    assert [f.code for f in found] == ["base_differs"]
    assert found[0].figures["b_base"] == pytest.approx(1.01e6)
    assert found[0].figures["residual"] <= 2.0**-9 + 1e-12
    # the wrong regeneration is within the row's bound (four bfloat16 roundings at scale 1) but not B's rounding
    rounded = pecli.encode("rope", 160, 16, part="cos", base=1e6, freqs_dtype="bfloat16", dtype="float64")
    bound = np.full(160, 2.0**-5)
    assert np.abs(rounded - cos).max() < 2.0**-5
    assert not reproduced(rounded, cos, bound)
    exact = pecli.encode("rope", 160, 16, part="cos", base=1.01e6, dtype="float64")
    assert reproduced(exact, cos, bound)


@pytest.mark.parametrize("length", [2048, 16384])
def test_adjacent_pairs_with_float16_frequencies_are_both_named(length: int) -> None:
    # was "no known cause explains the difference": two mistakes at once
    width = 64 if length == 2048 else 16
    b = pecli.encode("rope", length, width, part="cos", layout="interleaved", freqs_dtype="float16", dtype="float32")
    found = pecli.compare("rope:part=cos", b).result.diagnosis
    assert len(found) == 1
    assert found[0].code == "pairing"
    figures = found[0].figures
    assert (figures["b_pairing"], figures["also"], figures["b_dtype"]) == ("adjacent pairs", "frequencies_rounded",
                                                                          "float16")  # fmt: skip
    assert figures["residual"] < 1e-6  # B's float32 rounding, not a partial fit
    assert "two mistakes" in found[0].message and "float16" in found[0].message
    # either mistake alone stays one finding of its own
    alone = pecli.encode("rope", 256, 32, part="cos", layout="interleaved", dtype="float32")
    assert [(f.code, f.figures.get("also")) for f in pecli.compare("rope:part=cos", alone).result.diagnosis] == [
        ("pairing", None)
    ]
    alone = pecli.encode("rope", 256, 32, part="cos", freqs_dtype="float16", dtype="float32")
    assert _codes("rope:part=cos", alone) == ["frequencies_rounded"]


def test_the_other_pairing_with_another_base_is_not_claimed_when_it_does_not_reproduce() -> None:
    # adjacent pairs with a random perturbation: neither mistake nor both explain it
    b = pecli.encode("rope", 512, 32, part="cos", layout="interleaved", dtype="float64")
    b = b + np.random.default_rng(0).normal(scale=1e-3, size=b.shape)
    assert _codes("rope:part=cos", b) == []


def test_the_other_pairing_with_another_shipped_base_is_named_as_two_mistakes() -> None:
    # was "no known cause" (test_diagnosis_attack.py held it so: no single cause may be named for two bugs); the
    # combination names both, and reproduces B to its float64 rounding, either side the reference
    b = pecli.encode("rope", 512, 64, part="cos", layout="interleaved", base=500000.0, dtype="float64")
    for first, second, letter in (("rope:part=cos", b, "B"), (b, "rope:part=cos", "A")):
        found = pecli.compare(first, second).result.diagnosis
        assert [(f.code, f.figures["also"], f.figures[f"{letter.lower()}_base"]) for f in found] == [
            ("pairing", "base_differs", 500000.0)
        ]
        assert found[0].figures["residual"] < 1e-12
        assert f"{letter} adjacent pairs" in found[0].message
