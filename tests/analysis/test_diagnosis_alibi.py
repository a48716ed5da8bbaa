"""ALiBi's per-head diagnosis (issue 28): the power-of-two slope formula applied to a head count that is
not a power of two (ml-explore/mlx#3071), against HF BLOOM's build_alibi_tensor as the reference."""

import json
import subprocess
import sys

import numpy as np
import pytest

from pecli.analysis.compare import compare_tables
from tests.conftest import require_module

HEADS, LENGTH = 12, 64


def _bloom_and_bug() -> tuple[np.ndarray, np.ndarray]:
    """(heads, 1, L): BLOOM's reference, and the same bias with slopes 2^(-8(i+1)/n) for all n heads."""
    torch = require_module("torch")
    bloom = require_module("transformers.models.bloom.modeling_bloom")
    reference = bloom.build_alibi_tensor(torch.ones(1, LENGTH), HEADS, torch.float32).numpy()
    wrong = torch.tensor([2 ** (-8 * (i + 1) / HEADS) for i in range(HEADS)], dtype=torch.float32)
    bug = (wrong[:, None] * torch.arange(LENGTH, dtype=torch.float32))[:, None, :].numpy()
    return reference, bug


@pytest.mark.parametrize("form", ["heads_1_L", "heads_L_L"])
@pytest.mark.parametrize("flip", [False, True])
def test_power_of_two_slopes_named(form: str, flip: bool) -> None:
    reference, bug = _bloom_and_bug()
    if form == "heads_1_L":
        reference, bug = reference[:, 0, :], bug[:, 0, :]
    else:  # every query row the key bias (BLOOM's bias is the same for every query)
        reference, bug = (np.repeat(table, LENGTH, axis=1) for table in (reference, bug))
    a, b = (bug, reference) if flip else (reference, bug)
    result = compare_tables(a, b)
    assert not result.agree
    codes = [found.code for found in result.diagnosis]
    assert codes == ["alibi_slopes_power_of_two"]
    found = result.diagnosis[0]
    assert found.figures["heads"] == list(range(HEADS))  # no head of 12 keeps its slope
    press = [0.5, 0.25, 0.125, 0.0625, 2**-5, 2**-6, 2**-7, 2**-8, 2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5]
    wrong = [2 ** (-8 * (i + 1) / HEADS) for i in range(HEADS)]
    slopes = (
        (found.figures["b_slopes"], found.figures["a_slopes"])
        if flip
        else (found.figures["a_slopes"], found.figures["b_slopes"])
    )
    np.testing.assert_allclose(slopes[0], press, rtol=1e-6)
    np.testing.assert_allclose(slopes[1], wrong, rtol=1e-6)
    assert f"{'A' if flip else 'B'} has slopes from the power-of-two formula 2^(-8(i+1)/12)" in found.message
    assert "diagnosed on the first" not in found.message  # every head was diagnosed (was "first 12 rows")


def test_sign_reversal_and_head_factors() -> None:
    from pecli.schemes.alibi import alibi_table

    a = alibi_table(32, heads=12)
    assert "alibi_sign" in [f.code for f in compare_tables(a, -a).diagnosis]
    assert [f.code for f in compare_tables(a, a[::-1]).diagnosis] == ["alibi_heads_reversed"]
    scaled = a.copy()
    scaled[3] *= 2
    found = compare_tables(a, scaled).diagnosis
    assert [f.code for f in found] == ["alibi_head_factors"] and found[0].figures["heads"] == [3]
    assert found[0].figures["factors"][3] == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(5))
def test_random_perturbation_has_no_diagnosis(seed: int) -> None:
    from pecli.schemes.alibi import alibi_table

    a = alibi_table(32, heads=12)
    rng = np.random.default_rng(seed)
    b = a + rng.normal(scale=10.0 ** rng.uniform(-4, 0), size=a.shape).astype(np.float32)
    result = compare_tables(a, b)
    assert not result.agree and result.diagnosis == []


def test_cli_json(tmp_path) -> None:
    reference, bug = _bloom_and_bug()
    full = tmp_path / "bloom.npy"
    np.save(full, np.repeat(reference, LENGTH, axis=1))
    np.save(tmp_path / "bug.npy", np.repeat(bug, LENGTH, axis=1))
    run = subprocess.run(
        [sys.executable, "-m", "pecli", "compare", str(full), str(tmp_path / "bug.npy"), "--json"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    assert report["a"]["shape"] == [HEADS, LENGTH, LENGTH]
    assert [f["code"] for f in report["diagnosis"]] == ["alibi_slopes_power_of_two"]
    assert report["diagnosis"][0]["figures"]["heads"] == list(range(HEADS))
    # the spec side takes its heads and length from the file: the file is BLOOM's key form, not the distance form
    spec = subprocess.run(
        [sys.executable, "-m", "pecli", "compare", str(full), "alibi:form=key", "--json"],
        capture_output=True,
        text=True,
    )
    assert spec.returncode == 0, spec.stdout + spec.stderr


def _compare_json(*args: str) -> tuple[int, dict, str]:
    run = subprocess.run([sys.executable, "-m", "pecli", "compare", *args, "--json"], capture_output=True, text=True)
    return run.returncode, (json.loads(run.stdout) if run.stdout else {}), run.stderr


@pytest.mark.parametrize("spec", ["alibi", "alibi:form=key"])
@pytest.mark.parametrize("spec_first", [False, True])
def test_cli_heads_1_L_file_against_a_spec(tmp_path, spec: str, spec_first: bool) -> None:
    """A (heads, 1, L) file (BLOOM's build_alibi_tensor) against an ALiBi spec: the spec's query row of each head,
    heads and length from the file, in the key form unless the spec sets one (was exit 2: "alibi has no --d")."""
    reference, bug = _bloom_and_bug()
    np.save(tmp_path / "bloom.npy", reference)
    np.save(tmp_path / "bug.npy", bug)
    order = (spec, str(tmp_path / "bloom.npy")) if spec_first else (str(tmp_path / "bloom.npy"), spec)
    code, report, stderr = _compare_json(*order)
    assert code == 0, stderr
    assert report["a"]["shape"] == report["b"]["shape"] == [HEADS, LENGTH]
    order = (spec, str(tmp_path / "bug.npy")) if spec_first else (str(tmp_path / "bug.npy"), spec)
    code, report, stderr = _compare_json(*order)
    assert code == 1, stderr
    [found] = report["diagnosis"]
    assert found["code"] == "alibi_slopes_power_of_two" and found["figures"]["heads"] == list(range(HEADS))
    bug_side = "b" if spec_first else "a"
    assert f"{bug_side.upper()} has slopes from the power-of-two formula 2^(-8(i+1)/12)" in found["message"]
    # the figures named for a side are that side's, whichever side the spec (the reference) is on
    assert found["figures"][f"{bug_side}_formula"] == "power_of_two"
    wrong = [2 ** (-8 * (i + 1) / HEADS) for i in range(HEADS)]
    np.testing.assert_allclose(found["figures"][f"{bug_side}_slopes"], wrong, rtol=1e-6)


def test_cli_heads_1_L_against_the_distance_form_is_its_negation(tmp_path) -> None:
    """Query row 0 of the distance form is −m·j: BLOOM's m·j is its negation, and compare says so."""
    reference, _ = _bloom_and_bug()
    np.save(tmp_path / "bloom.npy", reference)
    code, report, stderr = _compare_json(str(tmp_path / "bloom.npy"), "alibi:form=distance")
    assert code == 1, stderr
    assert "alibi_sign" in [found["code"] for found in report["diagnosis"]]


def test_per_head_reports_name_head_query_and_key(tmp_path) -> None:
    """A per-head table's report names its axes: (head, query, key) for (heads, L, L), (head, key) for (heads, 1, L)
    (was "position … dimension" and "cosine per position" for both); --json adds the names as ``axes``, ``worst``
    keeps its keys, and the first NaN of a (heads, L, L) comparison names its head (was the stacked row)."""
    reference, bug = _bloom_and_bug()  # (heads, 1, L): BLOOM's query row of each head
    np.save(tmp_path / "rows.npy", reference)
    np.save(tmp_path / "rows_bug.npy", bug)
    full = np.repeat(reference, LENGTH, axis=1)
    np.save(tmp_path / "full.npy", full)
    np.save(tmp_path / "full_bug.npy", np.repeat(bug, LENGTH, axis=1))
    holed = full.copy()
    holed[5, 3, 7] = np.nan
    np.save(tmp_path / "holed.npy", holed)

    def text(*names: str) -> str:
        run = subprocess.run(
            [sys.executable, "-m", "pecli", "compare", *(str(tmp_path / name) for name in names)],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 1, run.stderr
        return run.stdout

    rows = text("rows.npy", "rows_bug.npy")
    assert f"(head 8, key {LENGTH - 1})" in rows and "cosine per head min 1, mean 1" in rows
    assert "at head " in rows and "position" not in rows and "dimension" not in rows
    cube = text("full.npy", "full_bug.npy")
    assert f"(head 8, query 0, key {LENGTH - 1})" in cube and "cosine per query row min 1, mean 1" in cube
    assert "beyond float32 arithmetic at head 8, query 0, key " in cube  # the entry beyond its own tolerance
    assert "position" not in cube and "dimension" not in cube
    holes = text("full.npy", "holed.npy")
    assert "(first at head 5, query 3, key 7; left out of the figures above)" in holes
    assert "cosine per query row min 1, mean 1 (1 query row with inf or NaN left out)" in holes
    _, report, _ = _compare_json(str(tmp_path / "rows.npy"), str(tmp_path / "rows_bug.npy"))
    assert report["axes"] == ["head", "key"] and report["worst"] == {"position": 8, "dimension": LENGTH - 1}
    _, report, _ = _compare_json(str(tmp_path / "full.npy"), str(tmp_path / "full_bug.npy"))
    assert report["axes"] == ["head", "query", "key"]
    assert report["worst"] == {"position": 0, "dimension": LENGTH - 1, "head": 8}
    _, report, _ = _compare_json(str(tmp_path / "full.npy"), str(tmp_path / "holed.npy"))
    assert report["nan_in_one"]["first"] == {"position": 3, "dimension": 7, "head": 5}
