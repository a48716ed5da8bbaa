"""compare FILE SPEC where the spec names its table's size or dtype, or a size an option sets too: one line,
exit 2, naming both (issue 30, class 3: 'rope' takes no parameter 'dim', naming neither --d nor the clash)."""

from __future__ import annotations

import pytest

from tests.conftest import run_in_process


@pytest.fixture
def cos_file(tmp_path):
    path = str(tmp_path / "r.npy")
    assert run_in_process("generate", "rope:part=cos", "--d", "32", "--len", "8", "-o", path).code == 0
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["rope:part=cos,dim=64", "--d", "32"],
            "dim=64 in spec 'rope:part=cos,dim=64' and --d 32 both set the table's size",
        ),
        (
            ["rope:part=cos,len=4", "--len", "8"],
            "len=4 in spec 'rope:part=cos,len=4' and --len 8 both set the table's size",
        ),
        (["rope:part=cos,dtype=float64", "--dtype", "float32"], "and --dtype float32 both set the table's dtype"),
        (["rope:part=cos,dim=64"], "dim=64 in spec 'rope:part=cos,dim=64': a spec's table takes its size from --d"),
        # a size a scheme's own parameter sets, beside the option: already both named (kept)
        (["rope:part=cos,rotary_dim=64", "--d", "32"], "rotary_dim=64 turns 64 columns"),
        (["sincos2d:grid=4x4", "--len", "10"], "--len 10 does not match grid=4,4"),
    ],
)
def test_a_size_given_in_the_spec_is_one_line_naming_both(cos_file, argv, message):
    for order in ([cos_file, *argv], [argv[0], cos_file, *argv[1:]]):
        result = run_in_process("compare", *order)
        assert result.code == 2, result.stderr
        assert message in result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert result.out == ""


def test_a_spec_without_a_size_still_compares(cos_file):
    assert run_in_process("compare", cos_file, "rope:part=cos", "--d", "32").code == 0
    assert run_in_process("compare", cos_file, "rope:part=cos,base=500").code == 1
