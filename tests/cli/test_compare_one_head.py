"""compare of a one-head ALiBi file, or of a slopes vector, against its spec (issue 30, property fuzz)."""

from __future__ import annotations

from tests.conftest import run_in_process


def test_a_one_head_alibi_file_is_the_same_as_its_spec(tmp_path):
    path = str(tmp_path / "a.safetensors")
    assert run_in_process("generate", "alibi", "--heads", "1", "--len", "5", "-o", path).code == 0
    # the file's (1, 5, 5) is squeezed to 5 × 5: the spec's (1, 5, 5) was not (shape mismatch, exit 2)
    result = run_in_process("compare", path, "alibi:heads=1")
    assert result.code == 0, result.stderr
    assert "max |A − B|        0" in result.out
    # heads from the file's one head, as from a file of several ('missing heads' before)
    assert run_in_process("compare", "alibi", path).code == 0
    # another spec still differs
    assert run_in_process("compare", path, "alibi:heads=1,form=key").code == 1
    assert "shape mismatch" in run_in_process("compare", path, "alibi:heads=2").stderr


def test_an_alibi_slopes_file_is_the_same_as_its_spec(tmp_path):
    path = str(tmp_path / "s.safetensors")
    assert run_in_process("generate", "alibi", "--heads", "6", "--len", "4", "--part", "slopes", "-o", path).code == 0
    # the file's vector (6,) reads as 1 × 6, the spec's stayed (6,): 'A is 1 × 6, B is 6'
    for argv in ([path, "alibi:heads=6,part=slopes"], ["alibi:heads=6,part=slopes", path]):
        result = run_in_process("compare", *argv)
        assert result.code == 0, result.stderr
    assert run_in_process("compare", path, "alibi:heads=6,part=slopes", "--json").code == 0
    assert run_in_process("compare", path, "alibi:heads=8,part=slopes").code == 2
