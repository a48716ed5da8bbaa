"""Every message names the problem and a fix that runs, in the user's spelling (issue 30, session 13).

Each defect test fails on the code before this session's fixes: an example mixing ``--d`` with ``--length``, a value of
one option (``llama3``, a ``--scaling``) given to another (``--preset``) answered with an unrelated hint. Each
suggested fix is run.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from safetensors.numpy import load_file

from pecli.schemes.catalog import option_taking, value_elsewhere
from tests.braces import one_error_line
from tests.conftest import run_in_process


def _example(line: str) -> list[str]:
    """The words of the ``e.g. …`` example in a message's hint."""
    found = re.search(r"e\.g\. ([^()]*)\)$", line)
    assert found, line
    return found.group(1).split()


@pytest.mark.parametrize(
    ("args", "missing", "example"),
    [
        (["--length", "4"], "missing --dim", "--dim 512 --length 2048"),
        (["--dim", "4"], "missing --length", "--dim 512 --length 2048"),
        (["--len", "4"], "missing --d", "--d 512 --len 2048"),
        (["--d", "4"], "missing --len", "--d 512 --len 2048"),
    ],
)
def test_the_example_spells_every_option_as_the_user_does(args, missing, example):
    """`generate sinusoidal --length 4` said "missing --d (e.g. --d 512 --length 2048)": two spellings at once."""
    line = one_error_line(run_in_process("generate", "sinusoidal", *args))
    assert line == f"pecli: error: {missing} (e.g. {example})"
    words, flag = _example(line), missing.removeprefix("missing ")
    added = words[words.index(flag) : words.index(flag) + 2]  # the missing option, with its example value
    run = run_in_process("generate", "sinusoidal", *args, *added, "-o", "-")
    assert run.code == 0, run.stderr
    assert np.load(io.BytesIO(run.stdout)).shape == ((4, 512) if flag.startswith("--d") else (2048, 4))


def test_mixed_spellings_keep_each_typed_one():
    """Typed --d and --length: each is named as typed; the example follows no single style, but never renames them."""
    line = one_error_line(run_in_process("generate", "sinusoidal", "--d", "4", "--length", "0"))
    assert line.startswith("pecli: error: --length must be a positive integer, got 0")


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (["rope", "--preset", "llama3"], "--scaling llama3 --factor 4 --original-max-position 4096"),
        (["--preset", "llama3"], "rope --scaling llama3 --factor 4 --original-max-position 4096"),
        (["rope", "--layout", "yarn"], "--scaling yarn --factor 4 --original-max-position 4096"),
        (["sinusoidal", "--preset", "split"], "--layout split"),
        (["sinusoidal", "--layout", "fairseq"], "--preset fairseq"),
        (["llama3"], "rope --scaling llama3 --factor 4 --original-max-position 4096"),
    ],
)
def test_a_value_of_another_option_names_that_option(args, fix, tmp_path):
    """`generate rope --preset llama3` said "drop --preset, or give its parameters as options": it is a --scaling."""
    line = one_error_line(run_in_process("generate", *args, "--d", "8", "--len", "4", "-q"))
    value = args[-1]
    assert f"'{value}' is a value of " in line and line.endswith(f"e.g. {fix})"), line
    # the fix, in place of the misplaced value, runs and writes rope's own llama3/yarn table
    kept = [word for word in args[:-2] if word not in ("--preset", "--layout")] if len(args) > 1 else []
    written = tmp_path / "fixed.safetensors"
    run = run_in_process("generate", *kept, *fix.split(), "--d", "8", "--len", "4", "-o", str(written))
    assert run.code == 0, run.stderr
    tensors = load_file(written)
    assert tensors and all(np.isfinite(tensor).all() and tensor.shape[-1] == 8 for tensor in tensors.values())


def test_schemes_names_the_scheme_whose_option_takes_the_value():
    """`pecli schemes llama3` listed every scheme name: it is rope's --scaling, which `pecli schemes rope` lists."""
    line = one_error_line(run_in_process("schemes", "llama3"))
    assert line.endswith("('llama3' is a value of rope's --scaling: pecli schemes rope lists it)"), line
    listing = run_in_process("schemes", "rope")
    assert listing.code == 0 and b"llama3" in listing.stdout


def test_a_value_of_an_option_of_the_same_kind_is_no_misplaced_value():
    """float64 is an --arithmetic, but to --freqs-dtype it is a bad dtype, not a misplaced arithmetic."""
    line = one_error_line(run_in_process("generate", "rope", "--freqs-dtype", "float64", "--d", "8", "--len", "4"))
    assert "is a value of" not in line and "valid: float32, bfloat16, float16" in line
    assert option_taking("float64", "rope", besides="freqs_dtype") is None
    assert option_taking("float64", "rope", besides="layout") == ("rope", "arithmetic")


def test_a_typo_keeps_its_nearest_names():
    """A value no option takes keeps the did-you-mean hint."""
    assert value_elsewhere("rop") is None
    line = one_error_line(run_in_process("generate", "rop", "--d", "8", "--len", "4"))
    assert "did you mean 'rope'" in line
