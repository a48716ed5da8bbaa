"""compare on files too large to load: row chunks read in place give the in-memory figures."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_row_chunks, compare_tables
from pecli.io import Tensor, write_tensors
from pecli.io.rows import open_rows
from tests.conftest import require_module


def chunked(a: np.ndarray, b: np.ndarray, step: int, **options):
    return compare_row_chunks(lambda: ((a[i : i + step], b[i : i + step]) for i in range(0, len(a), step)), **options)


@pytest.mark.parametrize("step", [1, 7, 64, 1000])
@pytest.mark.parametrize(
    "options", [{}, {"atol": 1e-3}, {"atol": 0.0, "rtol": 1e-2}, {"exact": True}], ids=["data", "atol", "rtol", "exact"]
)
def test_chunks_give_the_whole_table_figures(step, options):
    a = pecli.encode("sinusoidal", 300, 16, dtype="float64")
    rng = np.random.default_rng(step)
    cases = [
        (a, a.astype(np.float32)),  # rounding only
        (a, a + rng.normal(0, 1e-4, a.shape)),  # noise
        (a, pecli.encode("sinusoidal", 300, 16, layout="split", dtype="float64")),  # a permutation
        (pecli.encode("sinusoidal", 300, 16, offset=2, dtype="float64"), a),  # a shift
    ]
    for first, second in cases:
        whole = compare_tables(first, second, **options)
        parts = chunked(first, second, step, **options)
        for name in ("shape", "max_abs", "worst", "max_rel", "cosine_min", "atol", "agree", "tolerance_kind"):
            assert getattr(parts, name) == getattr(whole, name), name
        assert parts.tolerance_position == whole.tolerance_position
        assert parts.mean_abs == pytest.approx(whole.mean_abs, rel=1e-12, abs=1e-300)
        assert parts.cosine_mean == pytest.approx(whole.cosine_mean, rel=1e-12)
        assert [found.code for found in parts.diagnosis] == [found.code for found in whole.diagnosis]
        assert [found.figures.get("shift") for found in parts.diagnosis] == [
            found.figures.get("shift") for found in whole.diagnosis
        ]


def test_a_diagnosis_on_leading_rows_says_so():
    a = pecli.encode("sinusoidal", 400, 8, dtype="float64")
    b = pecli.encode("sinusoidal", 400, 8, layout="split", dtype="float64")
    result = chunked(a, b, 50, diagnose_rows=120)
    assert result.diagnosis[0].figures["permutation"] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert result.diagnosis[0].message.endswith("(diagnosed on the first 120 rows)")


@pytest.mark.parametrize("diagnose_rows", [None, 3, 120])
def test_float32_chunks_widened_into_reused_buffers_keep_the_diagnosed_rows(diagnose_rows):
    # float32 chunks are widened into float64 buffers kept from chunk to chunk: the rows kept for the
    # diagnosis must still be their own rows, not a later chunk's written over them
    a = pecli.encode("sinusoidal", 400, 8)
    cases = [
        (a, pecli.encode("sinusoidal", 400, 8, layout="split")),  # a permutation
        (pecli.encode("sinusoidal", 400, 8, offset=3), a),  # a shift
        (a, a),  # the same: no diagnosis
    ]
    for first, second in cases:
        whole = compare_tables(first[: diagnose_rows or 400], second[: diagnose_rows or 400])
        parts = chunked(first, second, 50, diagnose_rows=diagnose_rows)
        full = compare_tables(first, second)
        for name in ("shape", "max_abs", "worst", "max_rel", "cosine_min", "atol", "agree"):
            assert getattr(parts, name) == getattr(full, name), name
        assert [found.code for found in parts.diagnosis] == [found.code for found in whole.diagnosis]
        for found, expected in zip(parts.diagnosis, whole.diagnosis, strict=True):
            for figure in ("shift", "permutation"):
                assert found.figures.get(figure) == expected.figures.get(figure)


def test_precision_of_mixed_chunks_is_the_one_that_holds_both():
    bfloat16_like = np.full((4, 2), 1.0 + 2.0**-7, np.float32)
    float16_like = np.full((4, 2), 1.0 + 2.0**-10, np.float32)
    table = np.concatenate([bfloat16_like, float16_like])
    whole = compare_tables(table, table.astype(np.float64))
    assert chunked(table, table.astype(np.float64), 4).atol == whole.atol


@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_row_reader_reads_the_table_in_place(tmp_path, fmt, dtype):
    table = pecli.encode("sinusoidal", 37, 6, dtype=dtype)
    path = str(tmp_path / f"pe.{fmt}")
    write_tensors(
        path,
        {"pe": Tensor.from_array(table), "other": Tensor.from_array(table[:2])}
        if fmt == "safetensors"
        else {"pe": Tensor.from_array(table)},
        fmt=fmt,
        metadata={"tensor": "pe"},
    )
    rows = open_rows(path)
    assert (rows.shape, rows.dtype) == ((37, 6), dtype)
    chunks = list(rows.chunks(10))
    assert [len(chunk) for chunk in chunks] == [10, 10, 10, 7]
    np.testing.assert_array_equal(np.concatenate(chunks), table)


def test_row_reader_declines_what_it_cannot_read_in_place(tmp_path):
    torch = require_module("torch")
    torch.save({"pe": torch.zeros(3, 2)}, tmp_path / "pe.pt")
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.zeros((3, 2))))
    for name in ("pe.pt", "cube.npy", "fortran.npy"):
        assert open_rows(str(tmp_path / name)) is None
    assert open_rows("-") is None


def test_cli_streams_large_files_with_the_same_report(cli, tmp_path, monkeypatch):
    from pecli.cli import compare_stream

    a, b = str(tmp_path / "a.npy"), str(tmp_path / "b.safetensors")
    assert cli("generate", "--d", "16", "--len", "64", "-o", a).code == 0
    assert cli("generate", "--d", "16", "--len", "64", "--layout", "split", "-o", b).code == 0
    loaded = cli("compare", a, b, "--json")
    monkeypatch.setattr(compare_stream, "STREAM_BYTES", 0)
    streamed = cli("compare", a, b, "--json")
    assert streamed.code == loaded.code == 1
    import json

    loaded_report, streamed_report = json.loads(loaded.out), json.loads(streamed.out)
    for report in (loaded_report, streamed_report):
        report["a"].pop("source"), report["b"].pop("source")
    assert streamed_report == loaded_report


def _mlx_alibi(heads: int, length: int) -> np.ndarray:
    """MLX's ALiBi before ml-explore/mlx#3071: power-of-two slopes for any head count, the distance form."""
    slopes = (2.0**8) ** -(np.arange(1, heads + 1) / heads)
    distance = np.abs(np.arange(length)[:, None] - np.arange(length)[None, :])
    return (slopes[:, None, None] * -distance).astype(np.float32)


def _figures(report: dict) -> dict:
    """A compare --json report less its sources, its sums (compared apart: they add in another order) and
    its slopes (fitted by least squares: compared to 9 digits), the figures both paths must share exactly."""
    report["a"].pop("source"), report["b"].pop("source")
    report["sums"] = (report.pop("mean_abs"), report["cosine"].pop("mean"))
    report["slopes"] = [
        (found["figures"].pop("a_slopes", None), found["figures"].pop("b_slopes", None))
        for found in report["diagnosis"]
    ]
    return report


def _same_report(streamed: dict, loaded: dict) -> None:
    assert streamed["sums"] == pytest.approx(loaded.pop("sums"), rel=1e-12)
    for (a, b), (whole_a, whole_b) in zip(streamed.pop("slopes"), loaded.pop("slopes"), strict=True):
        assert a == pytest.approx(whole_a, rel=1e-9) and b == pytest.approx(whole_b, rel=1e-9)
    streamed.pop("sums")
    assert streamed == loaded


@pytest.mark.parametrize(
    "pair", [("alibi", "mlx.npy"), ("mlx.npy", "alibi"), ("ref.npy", "mlx.safetensors"), ("mlx.npy", "mlx.npy")]
)
def test_cli_streams_per_head_tables_head_by_head_with_the_same_report(cli, tmp_path, monkeypatch, pair):
    """(heads, L, L) ALiBi tables, file against spec and file against file: the streamed path (each head's rows
    in chunks that straddle heads) gives the loaded path's figures, worst head and diagnosis."""
    import json

    from pecli.analysis import compare_streamed
    from pecli.cli import compare_stream

    monkeypatch.chdir(tmp_path)
    mlx = _mlx_alibi(12, 40)
    np.save("mlx.npy", mlx)
    write_tensors("mlx.safetensors", {"bias": Tensor.from_array(mlx)}, fmt="safetensors")
    assert cli("generate", "alibi", "--heads", "12", "--len", "40", "-o", "ref.npy").code == 0
    loaded = cli("compare", *pair, "--json")
    monkeypatch.setattr(compare_stream, "STREAM_HEAD_BYTES", 0)
    monkeypatch.setattr(compare_streamed, "CHUNK_BYTES", 8 * 40 * 7)  # 7 rows: chunks across heads
    streamed = cli("compare", *pair, "--json")
    assert streamed.code == loaded.code == (0 if pair[0] == pair[1] else 1)
    loaded_report, streamed_report = _figures(json.loads(loaded.out)), _figures(json.loads(streamed.out))
    _same_report(streamed_report, loaded_report)
    if pair[0] != pair[1]:
        assert streamed_report["a"]["shape"] == [12, 40, 40]
        assert streamed_report["worst"] == {"position": 0, "dimension": 39, "head": 8}
        codes = [found["code"] for found in streamed_report["diagnosis"]]
        assert codes == ["alibi_slopes_power_of_two"]
        assert streamed_report["diagnosis"][0]["figures"]["heads"] == list(range(12))


def test_a_streamed_per_head_diagnosis_on_leading_rows_says_so(cli, tmp_path, monkeypatch):
    """Each head's slope is fitted from its first rows: the same heads, slopes and formula as on whole heads."""
    import json

    from pecli.analysis import compare_streamed
    from pecli.cli import compare_stream

    monkeypatch.chdir(tmp_path)
    np.save("mlx.npy", _mlx_alibi(12, 40))
    whole = json.loads(cli("compare", "alibi", "mlx.npy", "--json").out)["diagnosis"]
    monkeypatch.setattr(compare_stream, "STREAM_HEAD_BYTES", 0)
    monkeypatch.setattr(compare_streamed, "DIAGNOSE_HEAD_VALUES", 12 * 40 * 3)  # 3 rows of each head
    done = cli("compare", "alibi", "mlx.npy")
    assert done.code == 1
    assert "(diagnosed on the first 3 rows of each head)" in done.out
    streamed = json.loads(cli("compare", "alibi", "mlx.npy", "--json").out)["diagnosis"]
    assert [found["code"] for found in streamed] == [found["code"] for found in whole]
    for name in ("heads", "a_formula", "b_formula"):
        assert streamed[0]["figures"][name] == whole[0]["figures"][name], name
    for name in ("a_slopes", "b_slopes"):  # fitted on fewer float32 values: the same to float32 precision
        assert streamed[0]["figures"][name] == pytest.approx(whole[0]["figures"][name], rel=1e-6), name


def test_row_reader_reads_a_per_head_table_as_its_heads_rows(tmp_path):
    bias = pecli.encode("alibi", 5, None, heads=3, dtype="float64")
    np.save(tmp_path / "bias.npy", bias)
    rows = open_rows(str(tmp_path / "bias.npy"), heads=True)
    assert (rows.shape, rows.tensor_shape, rows.heads) == ((15, 5), (3, 5, 5), 3)
    np.testing.assert_array_equal(np.concatenate(list(rows.chunks(4))), bias.reshape(15, 5))
    assert open_rows(str(tmp_path / "bias.npy")) is None  # 2-D readers only, unless asked


def counted(a: np.ndarray, b: np.ndarray, step: int, calls: list[int]):
    """Chunk pairs of ``a`` and ``b``; ``calls`` gets a 0 for each call, counting up the rows that call yields."""

    def pairs():
        calls.append(0)
        for i in range(0, len(a), step):
            calls[-1] += len(a[i : i + step])
            yield a[i : i + step], b[i : i + step]

    return pairs


def test_one_pass_when_the_first_chunks_show_the_precision():
    # issue 32: the rows (a spec's, computed) were read twice, once for the precision and scale, once to compare
    a = pecli.encode("sinusoidal", 300, 16)
    b = a.astype(np.float64) + np.linspace(0, 1e-3, 300)[:, None]
    calls: list[int] = []
    result = compare_row_chunks(counted(a, b, 64, calls), diagnose_rows=100)
    whole = compare_tables(a, b)
    assert calls == [300, 128]  # one pass; the rows to diagnose read again (they disagree)
    for name in ("agree", "atol", "max_abs", "worst"):
        assert getattr(result, name) == getattr(whole, name), name
    assert result.tolerance_position == whole.tolerance_position == 299


@pytest.mark.parametrize("later", ["float32", "float64", "not integral"])
def test_a_precision_shown_only_by_later_rows_sets_the_tolerance(later):
    # the first chunk looks coarser (bfloat16 values, or small integers) than the whole table: compared again
    a = np.tile(np.array([0.5, 1.0 + 2.0**-7, -2.0, 3.0], np.float32), (200, 4))
    if later == "not integral":
        a = np.tile(np.array([1.0, 2.0, -3.0, 0.0], np.float32), (200, 4))
    a[150:] += {"float32": np.float32(2.0**-20), "float64": np.float32(0.1), "not integral": np.float32(0.1)}[later]
    first = a.astype(np.float64)
    if later == "float64":
        first[150:] += 1e-12
    second = a + np.float32(3e-7)
    calls: list[int] = []
    result = compare_row_chunks(counted(first, second, 50, calls), diagnose_rows=50)
    whole = compare_tables(first, second)
    assert calls[:2] == [200, 200] and calls[2:] in ([], [50])  # the first chunk's precision; the whole tables'
    for name in ("agree", "atol", "max_abs", "worst", "max_rel", "cosine_min", "tolerance_position"):
        assert getattr(result, name) == getattr(whole, name), name


@pytest.mark.parametrize(
    ("name", "dtype"),
    [(name, dtype) for name in ("pe.npy", "pe.safetensors") for dtype in ("float64", "float32")]
    + [("pe.safetensors", "bfloat16")],  # .npy holds no bfloat16
)
def test_rows_read_into_one_reused_buffer(tmp_path, name, dtype):
    # issue 32: a fresh array per chunk cost a page fault per 4 KiB; the rows themselves stay the same
    table = pecli.encode("sinusoidal", 100, 8, dtype=dtype)
    path = str(tmp_path / name)
    write_tensors(path, {"pe": Tensor.from_array(table)}, fmt=name.split(".")[1])
    rows = open_rows(path)
    assert rows.dtype == dtype
    fresh = [chunk.copy() for chunk in rows.chunks(30)]
    reused = list(rows.chunks(30, reuse=True))
    assert [len(chunk) for chunk in fresh] == [30, 30, 30, 10]
    if dtype != "bfloat16":  # bfloat16 is widened into a new float32 array
        assert np.shares_memory(reused[0], reused[1])
    again = [chunk.copy() for chunk in rows.chunks(30, reuse=True)]
    for expected, got in zip(fresh, again, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_float64_rows_kept_for_the_diagnosis_outlive_a_reused_read_buffer(tmp_path):
    # float64 chunks are compared as read (not widened): the rows kept for the diagnosis must be copies
    a = pecli.encode("sinusoidal", 400, 8, dtype="float64")
    b = pecli.encode("sinusoidal", 400, 8, layout="split", dtype="float64")
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    first, second = open_rows(str(tmp_path / "a.npy")), open_rows(str(tmp_path / "b.npy"))
    result = compare_row_chunks(
        lambda: zip(first.chunks(50, reuse=True), second.chunks(50, reuse=True), strict=True), diagnose_rows=120
    )
    assert result.diagnosis[0].figures["permutation"] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert result.max_abs == compare_tables(a, b).max_abs


def test_tables_that_agree_hold_no_rows_for_a_diagnosis():
    # issue 32: the first diagnose_rows rows were copied and held through the pass (64 MiB of the streamed
    # compare's 156); they are read again only when the tables disagree
    import tracemalloc

    a = pecli.encode("sinusoidal", 4096, 64)  # 1 MiB of float32: 2 MiB a side in float64
    b = a.astype(np.float64)
    step = 256
    tracemalloc.start()
    try:
        result = compare_row_chunks(
            lambda: ((a[i : i + step], b[i : i + step]) for i in range(0, len(a), step)), diagnose_rows=4096
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.agree and result.shape == (4096, 64)
    assert peak < 1.5 * 2**20  # a few 128 KiB chunk buffers
