"""A terminal stack of panels never takes more lines than --height (found by the CLI property fuzz; issue 30).

At --height 8 a stack printed 9 lines: one panel's least (title, caption, two tick lines, two lines of
cells, legend, values) and the line under the stack saying how many panels fit."""

from __future__ import annotations

import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize("height", range(8, 15))
@pytest.mark.parametrize("args", [("alibi", "--heads", "8", "--len", "32"), ("rope2d", "--d", "20", "--grid", "4,5")])
def test_stack_fits_its_height_or_is_refused(tmp_path, args, height):
    table = str(tmp_path / "t.safetensors")
    assert run_in_process("generate", *args, "-o", table).code == 0
    result = run_in_process("plot", table, "--terminal", "--width", "85", "--height", str(height), "--no-color")
    if height < 9:
        assert result.code == 2 and result.out == ""
        assert result.stderr.count("\n") == 1 and "--height 8 cannot hold a stack" in result.stderr
    else:
        assert result.code == 0, result.stderr
        assert 0 < len(result.out.splitlines()) <= height
