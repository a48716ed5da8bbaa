"""``plot --rows A:B`` of a long table computes (or reads) only those rows (issue 30): the size check is on
what is shown, not on the whole table."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.cli.inputs import load_row_window, table_view
from pecli.cli.output import Output
from tests.conftest import CAPPED_BYTES, assert_clean_error, run_capped, run_peak

LONG = str(100_000_000)  # sinusoidal --d 64: 23.8 GiB as a whole float32 table


@pytest.mark.parametrize(
    ("source", "scheme", "params", "length"),
    [("sinusoidal", "sinusoidal", {}, 40), ("rope:base=500000", "rope", {"base": 500000.0}, 40),
     ("sincos2d:grid=6x5", "sincos2d", {"grid": "6x5"}, None)],
)  # fmt: skip
def test_a_row_window_of_a_scheme_is_its_rows_of_the_whole_table(source, scheme, params, length):
    whole = pecli.encode(scheme, dim=8, length=length, **params)
    wholes = list(whole.values()) if isinstance(whole, dict) else [whole]
    tables = load_row_window(Output(), source, dim=8, length=length)
    assert [table.array.shape for table in tables] == [expected.shape for expected in wholes]
    for table, expected in zip(tables, wholes, strict=True):
        view = table_view(table, rows="7:11", cols="2:")
        assert view.row_start == 7 and view.col_start == 2
        np.testing.assert_array_equal(view.values, expected[7:11, 2:])


def test_a_row_window_of_a_long_table_is_computed_alone():
    tables = load_row_window(Output(), "sinusoidal", dim=64, length=10**12)
    (table,) = tables
    values = table_view(table, rows="-3:").values
    positions = np.arange(10**12 - 3, 10**12, dtype=np.float64)[:, None]
    inv_freq = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    # the interleaved layout: sin on even columns, cos on odd (float32, rounded once from float64)
    np.testing.assert_allclose(values[:, 0::2], np.sin(positions * inv_freq), atol=2e-3)
    np.testing.assert_allclose(values[:, 1::2], np.cos(positions * inv_freq), atol=2e-3)


def test_the_whole_of_a_row_window_is_refused_by_its_size():
    (table,) = load_row_window(Output(), "sinusoidal", dim=64, length=10**12)
    with pytest.raises(pecli.PecliError, match=r"1000000000000 × 64 table would take"):
        np.asarray(table.array)


def test_a_file_window_reads_those_rows(tmp_path):
    values = np.arange(30 * 4, dtype=np.float64).reshape(30, 4)
    np.save(tmp_path / "t.npy", values)
    from safetensors.numpy import save_file

    save_file({"a": values[:5].astype(np.float32), "pe": values.astype(np.float16)}, str(tmp_path / "t.safetensors"))
    (table,) = load_row_window(Output(), str(tmp_path / "t.npy"))
    np.testing.assert_array_equal(table_view(table, rows="25:", cols=":2").values, values[25:, :2])
    (table,) = load_row_window(Output(), str(tmp_path / "t.safetensors"), key="pe")
    assert table.label == "t.safetensors [pe]" and table.dtype == "float16"
    np.testing.assert_array_equal(table_view(table, rows="3:6").values, values[3:6].astype(np.float16))


@pytest.mark.parametrize("output", [[], ["-o", "rows.png"]])
def test_plot_rows_of_a_table_larger_than_memory_draws_under_the_cap(tmp_path, output):
    # was: "the table would take 23.8 GiB, more than … available (use a smaller --len or --d)", exit 2
    target = [str(tmp_path / part) if part.endswith(".png") else part for part in output]
    done = run_capped("plot", "sinusoidal", "--d", "64", "--len", LONG, "--rows", "0:10", "--terminal",
                      "--width", "60", "--height", "14", *target)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "10 × 64" in done.stdout
    if target:
        assert (tmp_path / "rows.png").stat().st_size > 0


def test_plot_rows_of_a_file_larger_than_the_cap_reads_only_those_rows(tmp_path):
    path = tmp_path / "big.npy"
    rows = 2 * CAPPED_BYTES // (64 * 4)  # twice the cap, sparse on disk
    table = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, 64))
    table[rows - 10 :] = np.linspace(-1, 1, 640, dtype=np.float32).reshape(10, 64)
    table.flush()
    del table
    code, stdout, stderr, peak_mb = run_peak("plot", str(path), "--rows", "-10:", "--terminal", "--width", "60",
                                             "--height", "14", "--no-color")  # fmt: skip
    assert code == 0, stderr
    assert "values -1 … 1" in stdout
    assert peak_mb < 400


def test_plot_rows_of_a_long_relative_table_names_what_would_be_computed(cli):
    # a head of ALiBi is computed whole (its rows are not computed apart): the refusal names that size
    result = cli("plot", "alibi", "--heads", "8", "--len", LONG, "--rows", "0:10", "--terminal")
    assert_clean_error(result, 2, "100000000 × 100000000 slice", "--len")


def test_plot_rows_beyond_the_table_are_refused(cli):
    result = cli("plot", "sinusoidal", "--d", "64", "--len", LONG, "--rows", f"{LONG}:", "--terminal")
    assert_clean_error(result, 2, "--rows", "selects no rows")
