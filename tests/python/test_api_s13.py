"""encode(out=): a refusal's suggested fix must itself work (issue 30: messages name a fix that runs)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pecli


def test_non_contiguous_out_names_a_buffer_that_is_filled_in_place() -> None:
    strided = np.empty((8, 4)).T
    with pytest.raises(pecli.ParameterError) as refused:
        pecli.encode("sinusoidal", 4, 8, dtype="float64", out=strided)
    message = str(refused.value)
    assert "ascontiguousarray" not in message  # a copy would be filled, never the caller's array
    suggested = re.search(r"pass (np\.empty\(\(.*?\), dtype='\w+'\))", message)
    assert suggested is not None, message
    buffer = eval(suggested.group(1), {"np": np})  # the fix, as the message spells it
    result = pecli.encode("sinusoidal", 4, 8, dtype="float64", out=buffer)
    assert result is buffer
    position, pair = np.arange(4.0)[:, None], np.arange(4.0)[None, :]
    angle = position / 10000.0 ** (2 * pair / 8)
    np.testing.assert_allclose(buffer[:, 0::2], np.sin(angle), rtol=0, atol=1e-15)
    np.testing.assert_allclose(buffer[:, 1::2], np.cos(angle), rtol=0, atol=1e-15)


@pytest.mark.parametrize("wrong", ["int64", "complex64", "uint8"])
def test_out_of_a_non_table_dtype_is_not_offered_as_the_dtype(wrong: str) -> None:
    with pytest.raises(pecli.ParameterError) as refused:
        pecli.encode("sinusoidal", 4, 8, out=np.empty((4, 8), dtype=wrong))
    message = str(refused.value)
    assert f"dtype={wrong!r}" not in message  # not a dtype pecli writes: the fix would fail
    assert "pass a float32 array" in message


def test_out_of_another_table_dtype_is_offered_and_works() -> None:
    buffer = np.empty((4, 8), dtype="float64")
    with pytest.raises(pecli.ParameterError, match=r"dtype='float64'"):
        pecli.encode("sinusoidal", 4, 8, out=buffer)
    filled = pecli.encode("sinusoidal", 4, 8, dtype="float64", out=buffer)
    np.testing.assert_allclose(filled, pecli.encode("sinusoidal", 4, 8, dtype="float64"), rtol=0, atol=0)


@pytest.mark.parametrize("option", ["--json", "--len", "--rows"])
def test_an_option_given_before_the_command_says_where_it_goes(option: str) -> None:
    from tests.conftest import run_in_process

    result = run_in_process(option, "generate", "--d", "4", "--len", "2")
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "pecli pecli" not in lines[0]
    assert f"pecli takes {option} after the command's name" in lines[0]
    # the fix it names runs: the option after the command's name
    moved = run_in_process("generate", "--d", "4", "--len", "2", *([option] if option == "--json" else []))
    assert moved.code == 0
