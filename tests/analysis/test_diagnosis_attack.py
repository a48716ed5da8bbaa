"""compare's diagnosis under attack: tables with known bugs, and with none it knows (issue 30, class 1).

A diagnosis that names a wrong cause is worse than none: a cause is named only when it reproduces B
from A within the noise, and a difference it cannot tell from noise has no cause.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.diagnosis import diagnose_difference
from pecli.dtypes import round_to

D, L = 64, 512
#: the default tolerance of a float32 table of L rows at its last row (rounding + float32 angle noise)
LAST_ROW_TOLERANCE = 4 * 2.0**-23 + 2.0**-23 * (L - 1)


def _rope(**params):
    return pecli.encode("rope", L, D, dtype="float64", **{"part": "cos", **params})


def _save(tmp_path, name, array, dtype=np.float32):
    path = tmp_path / name
    np.save(path, np.asarray(array, dtype=dtype))
    return str(path)


def _noisy(scale: float) -> tuple[np.ndarray, np.ndarray]:
    right = _rope().astype(np.float32).astype(np.float64)
    noise = np.random.default_rng(0).uniform(-1.0, 1.0, right.shape) * scale * LAST_ROW_TOLERANCE
    return right, (right + noise).astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("scale", [0.5, 0.9])
def test_noise_inside_the_last_rows_tolerance_is_not_called_rounding(cli, tmp_path, scale):
    """Noise everywhere, above the first rows' noise bound but under the last row's: compare says
    "different" (exit 1) and names no cause; it used to say "they differ only by rounding"."""
    right, noisy = _noisy(scale)
    a, b = _save(tmp_path, "right.npy", right), _save(tmp_path, "noisy.npy", noisy)
    for first, second in ((a, b), (b, a), ("rope:part=cos", b), (b, "rope:part=cos")):
        result = cli("compare", first, second, "--json")
        report = json.loads(result.out)
        assert result.code == 1 and report["agree"] is False
        assert report["diagnosis"] == []
        assert report["max_abs"] == pytest.approx(np.abs(right - noisy).max(), rel=1e-6)
    text = cli("compare", a, b)
    assert text.code == 1 and "no known cause explains the difference" in text.out
    assert "rounding" not in text.out.split("diagnosis:")[1]


def test_a_difference_within_the_tolerance_everywhere_names_no_cause():
    right, noisy = _noisy(0.5)
    assert diagnose_difference(right, noisy, tolerance=LAST_ROW_TOLERANCE) == []
    # a float16 rounding of the same table is rounding, and says so
    half = right.astype(np.float16).astype(np.float64)
    found = diagnose_difference(right, half, tolerance=4 * 2.0**-11)
    assert [f.code for f in found] == ["rounding_only"]
    assert found[0].figures["residual"] == pytest.approx(np.abs(right - half).max())


@pytest.mark.parametrize(
    ("name", "bug"),
    [
        # (the other pairing with another base is named as the two mistakes it is: test_diagnosis2_s11.py)
        ("pairing and a factor", lambda: 1.5 * _rope(layout="interleaved")),
        ("an offset and a factor", lambda: 1.5 * pecli.encode("rope", L + 1, D, dtype="float64", part="cos")[1:]),
        ("partial rotary", lambda: _rope(partial_rotary_factor=0.5)),
        ("dynamic NTK past 256 rows", lambda: np.vstack([_rope()[:256], _rope(
            scaling="dynamic", factor=2.0, original_max_position=256)[256:]])),
        ("one column negated", lambda: _rope() * np.where(np.arange(D) == 5, -1.0, 1.0)),
        ("a learned table", lambda: np.random.default_rng(1).normal(0.0, 0.02, (L, D))),
        ("angles in bfloat16", lambda: np.cos(np.asarray(round_to(_rope(part="angle"), "bfloat16"), np.float64))),
    ],
)
def test_no_single_cause_is_named_for_what_it_does_not_explain(cli, tmp_path, name, bug):
    """Two bugs at once, or a bug the diagnosis does not know: exit 1 and no diagnosis, both ways."""
    right = _save(tmp_path, "right.npy", _rope())
    wrong = _save(tmp_path, "wrong.npy", bug())
    for first, second in ((right, wrong), (wrong, right), ("rope:part=cos", wrong), (wrong, "rope:part=cos")):
        result = cli("compare", first, second, "--json")
        report = json.loads(result.out)
        assert result.code == 1 and report["agree"] is False, name
        assert report["diagnosis"] == [], (name, report["diagnosis"])


@pytest.mark.parametrize(
    ("spec", "bug", "code"),
    [
        ("rope:part=cos", lambda: _rope(layout="interleaved"), "pairing"),
        ("rope:part=cos", lambda: _rope(base=500000.0), "base_differs"),
        ("rope:part=cos", lambda: pecli.encode("rope", L + 2, D, dtype="float64", part="cos")[2:], "positions_shifted"),
        ("rope:part=cos,scaling=linear,factor=4", lambda: _rope(), "unscaled"),
        ("rope:part=cos", lambda: 1.5 * _rope(), "constant_factor"),
    ],
)
def test_one_known_bug_is_named_as_itself(cli, tmp_path, spec, bug, code):
    wrong = _save(tmp_path, "wrong.npy", bug())
    for first, second in ((spec, wrong), (wrong, spec)):
        report = json.loads(cli("compare", first, second, "--json").out)
        assert [found["code"] for found in report["diagnosis"]] == [code]
