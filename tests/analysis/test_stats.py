"""info --stats of a tensor read a block at a time (issues 30 and 32): the same figures as the
whole-array path, in memory bounded by one block."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pecli.analysis import stats
from pecli.io import StoredTensor
from tests.analysis.test_costs import _BASELINE_MB, run_measured


def _stored(values: np.ndarray, *, blockwise: bool) -> StoredTensor:
    flat = values.reshape(-1)
    reader = (lambda start, count: flat[start : start + count].copy()) if blockwise else None
    return StoredTensor(values.shape, values.dtype.name, lambda: values, reader)


_SPECIALS = ("plain", "nan", "huge", "inf", "all-nan")


def _specials(rng: np.random.Generator, size: int, special: str, dtype: str) -> np.ndarray:
    values = rng.normal(loc=3.0, scale=2.0, size=size)
    places = rng.choice(size, size=max(1, size // 50), replace=False)
    if special == "nan":
        values[places] = np.nan
    elif special == "huge":  # the overflow guard's scaled path
        values *= float(np.finfo(dtype).max) / 20
    elif special == "inf":
        values[places[:1]] = np.inf
    elif special == "all-nan":
        values[:] = np.nan
    return values


_CASES = [(dtype, special) for dtype in ("float64", "float32", "float16") for special in _SPECIALS]


@pytest.mark.parametrize(("dtype", "special"), [*_CASES, ("int16", "plain")])
@pytest.mark.parametrize("size", [1, 999, 1000, 1001, 12_345])
def test_blockwise_stats_equal_the_whole_array_figures(monkeypatch, special, dtype, size):
    monkeypatch.setattr(stats, "_BLOCK_VALUES", 1000)  # many blocks and a short last one
    rng = np.random.default_rng(size)
    values = _specials(rng, size, special, "float64" if dtype == "int16" else dtype)
    if dtype == "int16":
        values = np.round(values * 1000)
    values = values.astype(dtype)
    nbytes = values.nbytes
    whole = stats.tensor_stats(_stored(values, blockwise=False), "t", nbytes)
    if size > 1000:
        blocked = stats.tensor_stats(_stored(values, blockwise=True), "t", nbytes)
    else:  # one block: the blockwise path taken directly
        blocked = stats._blockwise_stats(lambda start, n: values.reshape(-1)[start : start + n], size)
    assert whole is not None and blocked is not None
    assert blocked.keys() == whole.keys()
    assert blocked.get("nan") == whole.get("nan")
    for name in ("min", "max"):
        assert blocked[name] == whole[name]
    for name in ("mean", "std"):
        mine, theirs = blocked[name], whole[name]
        if theirs is None or math.isnan(theirs) or math.isinf(theirs):
            assert mine == theirs or (math.isnan(mine) and math.isnan(theirs)), (name, mine, theirs)
        else:  # merged block by block: equal to a few units in the last place
            assert mine == pytest.approx(theirs, rel=1e-13, abs=1e-13 * abs(whole["max"])), name


@pytest.mark.parametrize("suffix", [".npy", ".safetensors"])
def test_info_stats_of_a_large_table_takes_one_block_of_memory(tmp_path, suffix):
    """64 MiB float32 table: was ≈ 6.5× the tensor (a float64 copy, its NaN mask, its deviations)."""
    table = np.random.default_rng(0).normal(size=(16384, 1024)).astype(np.float32)
    table[5, 7] = np.nan
    if suffix == ".npy":
        np.save(tmp_path / "t.npy", table)
    else:
        from safetensors.numpy import save_file

        save_file({"pe": table}, str(tmp_path / "t.safetensors"))
    done, peak = run_measured("info", f"t{suffix}", "--stats", "--json", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    import json

    found = json.loads(done.stdout)["tensors"][0]["stats"]
    present = table[~np.isnan(table)].astype(np.float64)
    assert found["nan"] == 1
    assert found["min"] == present.min() and found["max"] == present.max()
    assert found["mean"] == pytest.approx(present.mean(), rel=1e-12, abs=1e-15)
    assert found["std"] == pytest.approx(present.std(), rel=1e-12)
    table_mb = table.nbytes / 2**20
    assert peak < _BASELINE_MB + 0.5 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB tensor"


def test_a_tensor_read_whole_is_refused_with_its_size_when_it_cannot_fit(monkeypatch):
    """A reader with no block access (a .pt, a text table) still loads whole: refused before loading."""
    from pecli import memory
    from pecli.errors import ParameterError

    monkeypatch.setattr(memory, "available_memory", lambda: 1 << 30)

    def never() -> np.ndarray:
        raise AssertionError("loaded although it cannot fit")

    huge = StoredTensor((1 << 20, 1 << 18), "float32", never)
    with pytest.raises(ParameterError, match=r"would take 3\.0 TiB, more than the 1\.0 GiB"):
        stats.tensor_stats(huge, "w", 4 << 38)
    streamed = StoredTensor((4, 1 << 20), "float32", never, lambda start, n: np.ones(n, np.float32))
    assert stats.tensor_stats(streamed, "w", 16 << 20) == {"min": 1.0, "max": 1.0, "mean": 1.0, "std": 0.0}
