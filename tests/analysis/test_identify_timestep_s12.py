"""identify, session 12 (issue 30): timestep tables at a max period identify had no list entry for, and the
lowest frequency's turn at small d (t = 999 read as 370.68 at d = 7), are named with their own command."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from pecli.analysis.identify import identify_table
from pecli.analysis.identify.timesteps import read_timesteps
from pecli.schemes.timestep import timestep_embedding


def _identified(cli, tmp_path, *arguments: str) -> tuple[dict, list[str]]:
    path = tmp_path / "t.npy"
    assert cli("timestep", *arguments, "-o", str(path), "-q").code == 0
    result = cli("identify", str(path), "--json")
    assert result.code == 0, result.out + result.stderr
    found = json.loads(result.out)
    return found, shlex.split(found.get("command") or "pecli")[1:]


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("dim", [6, 7, 8, 9, 16])
@pytest.mark.parametrize("timesteps", [("0", "250", "999"), ("--range", "0:1000:10")])
def test_an_unlisted_max_period_is_read_off_the_table(cli, tmp_path, dim, timesteps):
    # was "no known convention matches": only the periods 10000, 2000 and 1000 were tried
    found, argv = _identified(cli, tmp_path, "--d", str(dim), "--max-period", "5000", *timesteps)
    assert found["match"] == "exact", found
    assert float(_option(argv, "--max-period")) == 5000.0  # the round number, not 4999.9997
    if timesteps[0] == "--range":
        assert _option(argv, "--range") == "0:1000:10"
    else:
        assert [float(t) for t in argv[1:4]] == [0.0, 250.0, 999.0]


@pytest.mark.parametrize("period", ["1000", "2000"])
def test_t_past_the_lowest_frequencys_turn_is_unwrapped_at_small_d(cli, tmp_path, period):
    # d = 7, shift 0: the lowest frequency turns every 2π·2000^(2/3) ≈ 997, so t = 999 read as ≈ 2 (no match at
    # 2000) or, at 1000 (every 200π: 628.3), as 370.6815 ("approximate … arithmetic=float32", a wrong command)
    found, argv = _identified(cli, tmp_path, "--d", "7", "--max-period", period, "0", "250", "999")
    assert found["match"] == "exact", found
    assert [float(t) for t in argv[1:4]] == [0.0, 250.0, 999.0]
    assert _option(argv, "--arithmetic") is None


def test_a_max_period_on_no_list_is_read_to_its_own_digits():
    # 12345 is no round number any list holds: read off the phases of the lowest frequencies, then verified
    from pecli.analysis.identify.timesteps import read_max_periods

    table = timestep_embedding(np.arange(0.0, 1000.0, 10.0), 32, max_period=12345.0)
    assert 12345.0 in read_max_periods(table, flip_sin_to_cos=True, freq_shift=0.0)
    found = identify_table(table)
    assert found.level == "exact" and found.best.params["max_period"] == 12345.0
    np.testing.assert_allclose(found.best.timesteps, np.arange(0.0, 1000.0, 10.0), atol=1e-9)


def test_exact_aliases_are_told_apart_by_roundness():
    # d = 7 at max period 1000: ω = 1, 0.1, 0.01 turn together every 200π, so 370.68146928 writes t = 999's
    # row to 1e-8; the integer is the reading (and the smallest t where roundness says nothing: float16)
    table = timestep_embedding([999.0, 200.11], 7, max_period=1000.0)
    read = read_timesteps(table, flip_sin_to_cos=True, freq_shift=0.0, max_period=1000.0)
    np.testing.assert_allclose(read, [999.0, 200.11], atol=1e-6)


def _angles(times, dim: int, params: dict) -> np.ndarray:
    half = dim // 2
    freqs = np.exp(-np.log(params["max_period"]) * np.arange(half) / (half - params["freq_shift"]))
    return np.outer(np.asarray(times, dtype=np.float64) * params.get("scale", 1.0), freqs)


def test_fuzz_sample_names_each_table_with_angles_of_its_own_command():
    # a sample of last session's fuzz (d 6…40, the periods diffusion code passes, either shift and order,
    # scale, integer and fractional t): each float32 table is named exactly, its angles t·scale·ω its own
    rng = np.random.default_rng(12)
    periods = [100.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 1e5]
    for _ in range(8):
        dim = int(rng.integers(6, 41))
        params = {
            "max_period": periods[int(rng.integers(len(periods)))],
            "freq_shift": float(rng.integers(2)),
            "flip_sin_to_cos": bool(rng.integers(2)),
            "scale": [1.0, 2.0, 0.5][int(rng.integers(3))],
        }
        times = np.sort(np.round(rng.uniform(0, 1000, 6), int(rng.integers(3))))
        table = timestep_embedding(times, dim, **params)
        found = identify_table(table)
        assert found.level == "exact" and found.best.scheme == "timestep", (dim, params, times)
        assert found.best.params["flip_sin_to_cos"] == params["flip_sin_to_cos"]
        got = _angles(found.best.timesteps, dim, found.best.params)
        np.testing.assert_allclose(got, _angles(times, dim, params), atol=1e-3, err_msg=str((dim, params, times)))
