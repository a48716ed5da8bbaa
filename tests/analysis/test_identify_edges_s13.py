"""identify at the edges, session 13 (issue 30): a view far larger than memory, a plain base read closely.

``pecli.identify`` of a 10⁶ × 10⁵ ``np.broadcast_to`` view read every value (hours, or a MemoryError from numpy's
float64 copy of a float16 or integer one): it is refused before any work, naming the size. A bfloat16 RoPE cos table
of base 123456 (d = 16) was read as "dynamic factor=40 original_max_position=6" of base 1000 (64 rows: no match at
all; 1024 rows: "dynamic factor=64" off by 0.07): its base, read from the first rows to a percent only, is now read
against the table itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table
from pecli.errors import ParameterError


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_a_broadcast_view_larger_than_memory_is_refused_naming_its_size(dtype, monkeypatch):
    monkeypatch.setattr("pecli.memory.available_memory", lambda: 8 << 30)
    view = np.broadcast_to(np.linspace(0, 1, 10**5).astype(dtype), (10**6, 10**5))
    with pytest.raises(ParameterError) as raised:
        pecli.identify(view)
    # float32's values as they are (4 bytes each); float16 and integers as identify's float64 copy
    size = "372.5 GiB" if dtype == "float32" else "745.1 GiB"
    assert f"(1000000, 100000) ({dtype}) would take {size}, more than the 8.0 GiB" in raised.value.message
    assert "table[:4096]" in raised.value.hint


def test_a_torch_expand_of_bfloat16_is_refused_before_its_float32_copy(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr("pecli.memory.available_memory", lambda: 8 << 30)
    tensor = torch.linspace(0, 1, 10**5, dtype=torch.bfloat16).expand(10**6, 10**5)
    with pytest.raises(ParameterError, match=r"\(bfloat16\) would take 372.5 GiB"):
        pecli.identify(tensor)


def test_arrays_whose_values_are_held_are_not_counted_again(monkeypatch):
    """A table already in memory is not checked again; a view is checked at its float values' size."""
    import pecli.memory

    checked: list[int] = []
    check = pecli.memory.check_fits_in_memory

    def spy(nbytes: int, **named: str) -> None:
        if "of shape" in named.get("what", ""):  # the API's check of the values given (not identify's own)
            checked.append(nbytes)
        check(nbytes, **named)

    monkeypatch.setattr(pecli.memory, "check_fits_in_memory", spy)
    table = pecli.encode("rope", 4096, 64, part="cos")
    assert pecli.identify(table).found.level == "exact"
    assert checked == []
    row = pecli.encode("sinusoidal", 1, 16)
    assert pecli.identify(np.broadcast_to(row, (64, 16))).found.level == "none"
    assert checked == [64 * 16 * 4]


@pytest.mark.parametrize("length", [16, 256, 1024])
def test_a_bfloat16_rope_of_an_unround_base_reads_as_a_plain_base(length):
    table = pecli.encode("rope", length, 16, base=123456.0, part="cos", dtype="bfloat16")
    truth = np.cos(np.outer(np.arange(length), 123456.0 ** (-np.arange(0, 16, 2) / 16)))
    np.testing.assert_allclose(table.astype(np.float64)[:, :8], truth, atol=2.0**-9)
    found = identify_table(table, dtype="bfloat16")
    assert found.level == "exact", found.best.describe()
    assert found.best.params.get("scaling") in (None, "none"), found.best.describe()
    # a base within the table's rounding: 123456 itself once the table is long enough to tell
    assert abs(found.best.params["base"] / 123456.0 - 1) < 2e-3
    if length >= 256:
        assert found.best.params["base"] == 123456.0
