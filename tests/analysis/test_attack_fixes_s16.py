"""Attack fixes on compare's diagnosis (issue 30, session 16): each test failed on the code before its fix.

The diagnosis tried A's base squared with ``ours**2``, which raises OverflowError past 1.34e154: comparing a
table with ``rope:base=1e300`` (or with a config whose rope_theta is 1e308) was an internal error (exit 3).
"""

from __future__ import annotations

import json

import pytest

import pecli
from pecli.analysis.diagnosis import diagnose_difference
from pecli.analysis.diagnosis.finding import Reference

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 128}


def _figures(result):
    (finding,) = json.loads(result.out)["diagnosis"]
    return finding["code"], finding["figures"]


@pytest.mark.parametrize("huge", ["1e154", "1e200", "1e300", "1.7e308"])
def test_compare_with_a_huge_base_names_the_base_both_ways(cli, tmp_path, huge):
    table = tmp_path / "a.npy"
    assert cli("generate", "rope", "--part", "cos", "--d", "32", "--len", "128", "-o", str(table)).code == 0
    for first, second, ours, theirs in (
        (str(table), f"rope:base={huge},part=cos", "a_base", "b_base"),
        (f"rope:base={huge},part=cos", str(table), "b_base", "a_base"),
    ):
        result = cli("compare", first, second, "--d", "32", "--len", "128", "--json")
        assert result.code == 1, result.stderr  # they differ, and the diagnosis says why
        code, figures = _figures(result)
        assert code == "base_differs"
        assert figures[ours] == 10000.0 and figures[theirs] == float(huge)


def test_compare_with_a_config_of_rope_theta_1e308(cli, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "rope_theta": 1e308}))
    table = tmp_path / "a.npy"
    assert cli("generate", "rope", "--part", "cos", "--d", "32", "--len", "128", "-o", str(table)).code == 0
    result = cli("compare", str(table), str(tmp_path / "config.json"), "--key-b", "cos", "--json")
    assert result.code == 1, result.stderr
    code, figures = _figures(result)
    assert (code, figures["a_base"], figures["b_base"]) == ("base_differs", 10000.0, 1e308)


# rope's float32 frequencies cast the base to float32 (pecli/schemes/arithmetic.py): numpy warns of the overflow
# before the scheme refuses the base, a warning of the scheme's own
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_the_library_diagnosis_of_a_huge_reference_base_names_the_shipped_one():
    """diagnose_difference itself (no CLI): the reference at 1e300 has no square to try, and B's 10000 is found."""
    a = pecli.encode("rope", 64, 16, part="cos", base=1e300, dtype="float64")
    b = pecli.encode("rope", 64, 16, part="cos", base=10000.0, dtype="float64")
    reference = Reference("rope", {"part": "cos", "base": 1e300})
    findings = diagnose_difference(a, b, tolerance=1e-9, reference=reference)
    assert [(found.code, found.figures["a_base"], found.figures["b_base"]) for found in findings] == [
        ("base_differs", 1e300, 10000.0)
    ]
