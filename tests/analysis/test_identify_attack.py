"""identify, attack round two: the file's real precision, too few rows, a transposed table (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table


@pytest.mark.parametrize("scheme", ["binary", "count"])
def test_a_bfloat16_file_of_exact_values_is_reported_in_bfloat16(tmp_path, cli, scheme):
    """0/1 (or small integers) are exact in float32, but the file holds bfloat16: say so."""
    path = tmp_path / "b.safetensors"
    assert cli("generate", scheme, "--d", "16", "--len", "64", "--dtype", "bfloat16", "-o", str(path)).code == 0
    result = cli("identify", str(path))
    assert result.code == 0, result.stderr
    assert "value precision bfloat16" in result.out
    assert "within bfloat16 rounding" in result.out
    assert "float32" not in result.out
    assert "--dtype bfloat16" in result.out  # the reproduce command writes what the file holds
    found = json.loads(cli("identify", str(path), "--json").out)
    assert (found["dtype"], found["precision"]) == ("bfloat16", "bfloat16")


def test_identify_table_takes_the_stored_dtype_of_a_widened_copy():
    widened = pecli.encode("binary", 64, 16, dtype="float32")
    assert identify_table(widened).precision == "float32"
    found = identify_table(widened, dtype="bfloat16")
    assert (found.dtype, found.precision, found.level) == ("bfloat16", "bfloat16", "exact")
    assert found.tolerance == pytest.approx(4 * 2.0**-7)  # bfloat16's rounding at scale 1
    # an integer file's dtype says nothing of float rounding
    assert identify_table(np.arange(12.0).reshape(3, 4), dtype="int64").precision != "int64"
