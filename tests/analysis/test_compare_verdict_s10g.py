"""compare's verdict names the failing entry's own tolerance (issue 30): two float64 tables 1e-9 apart
were "different beyond float32 arithmetic (tolerance 1.5e-05 at position 127)" beside max |A − B| 1e-09,
which read as a contradiction: the verdict is row 0's (tolerance ~1e-16 there), the tolerance named row
127's. Two float64 tables' tolerance is float64's rounding plus float32's angle noise: it is named so."""

from __future__ import annotations

import json

import numpy as np

import pecli


def _verdict(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(("same", "different")))


def test_float64_tables_one_nano_apart_name_row_zero(cli, tmp_path):
    a = pecli.encode("sinusoidal", 128, 64, dtype="float64")
    np.save(tmp_path / "a64.npy", a)
    np.save(tmp_path / "b64.npy", a + 1e-9)
    result = cli("compare", str(tmp_path / "a64.npy"), str(tmp_path / "b64.npy"))
    assert result.code == 1
    verdict = _verdict(result.out)
    assert verdict.startswith("different beyond float64 rounding and float32 arithmetic at position 0, dimension ")
    assert "|A − B| 1e-09 > tolerance " in verdict and "1.5e-05" not in verdict
    tolerance = float(verdict.split("> tolerance ")[1].split()[0])
    assert tolerance < 1e-15  # row 0's own: no angle noise at angle 0
    report = json.loads(cli("compare", str(tmp_path / "a64.npy"), str(tmp_path / "b64.npy"), "--json").out)
    assert report["beyond"]["position"] == 0 and report["beyond"]["abs"] == np.float64(1e-9) + a[0, 0] - a[0, 0]
    assert report["beyond"]["tolerance"] < 1e-15 < 1e-5 < report["atol"]


def test_float64_tables_that_agree_name_float64_rounding(cli, tmp_path):
    a = pecli.encode("sinusoidal", 128, 64, dtype="float64")
    np.save(tmp_path / "a64.npy", a)
    np.save(tmp_path / "c64.npy", a + 1e-12 * np.arange(128)[:, None])  # within float32's angle noise
    result = cli("compare", str(tmp_path / "a64.npy"), str(tmp_path / "c64.npy"))
    assert result.code == 0
    assert _verdict(result.out).startswith("same within float64 rounding and float32 arithmetic (tolerance 1.5e-05 at")


def test_float32_tables_keep_float32_arithmetic(cli, tmp_path):
    a = pecli.encode("sinusoidal", 64, 32, dtype="float32")
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a + np.float32(0.25))
    result = cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    verdict = _verdict(result.out)
    assert result.code == 1 and verdict.startswith("different beyond float32 arithmetic at position 0, dimension ")
    assert "|A − B| 0.25 > tolerance " in verdict


def test_per_head_bias_names_the_head(cli, tmp_path):
    slopes = 2.0 ** (-8.0 * np.arange(1, 5) / 3)  # not powers of two: computed values, not exact ones
    distance = np.arange(16)[None, :] - np.arange(16)[:, None]
    table = (slopes[:, None, None] * np.minimum(distance, 0)).astype(np.float32)
    other = table.copy()
    other[2, 5, 1] += 0.5
    np.save(tmp_path / "p.npy", table)
    np.save(tmp_path / "q.npy", other)
    result = cli("compare", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"))
    assert result.code == 1
    assert "at head 2, query 5, key 1: |A − B| 0.5 > tolerance " in _verdict(result.out)
