"""identify, session 13 (issue 30: identify must not lie): timestep tables whose t the values cannot pin down.

At d = 4–5 one frequency lies below ω = 1: t + 200π writes the same row (max period 10000, shift 0), and in
float16/bfloat16 a slowly turning one cannot tell t from t ± 2π at all; at d = 2–3 t is known modulo 2π only.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.analysis.identify import identify_table
from pecli.analysis.identify.timesteps import read_timesteps, timestep_aliases
from pecli.schemes.timestep import timestep_embedding


def _angles(times, dim: int, params: dict) -> np.ndarray:
    """scale · t · ω of every row, from the formula (h = d // 2, ω_i = max_period^(−i/(h − S)))."""
    half = dim // 2
    freqs = np.exp(-np.log(params["max_period"]) * np.arange(half) / (half - params["freq_shift"]))
    return np.outer(np.asarray(times, dtype=np.float64) * params.get("scale", 1.0), freqs)


def test_an_exact_alias_is_listed_beside_the_reading(cli, tmp_path):
    # d = 4, float16: ω = 1 and 0.01 turn together every 200π, so t = 999 is read as 370.68; that was the
    # only reading shown, as if the table said so
    path = tmp_path / "t.npy"
    assert cli("timestep", "--d", "4", "--dtype", "float16", "0", "250", "999", "-o", str(path), "-q").code == 0
    found = json.loads(cli("identify", str(path), "--json").out)
    read, other = np.array(found["best"]["timesteps"]), np.array(found["also"]["timesteps"])
    np.testing.assert_allclose(read, [0.0, 250.0, 999.0 - 200 * np.pi], atol=1e-3)
    np.testing.assert_allclose(other, read + 200 * np.pi, atol=1e-3)
    assert found["also"]["command"].startswith("pecli timestep ")
    text = cli("identify", str(path)).out
    assert "also within rounding: timestep" in text and "t + n·628.319 (n = 1, 2, …)" in text


def test_the_truth_is_the_reading_or_its_listed_alias_in_bfloat16():
    # d = 6, bfloat16: max period 100 at shift 1 has ω = 1, 0.1, 0.01 (1000 at shift 0 too); 693.5 was read
    # as 65.18 (693.5 − 200π) with no word of the other
    times = [36.1, 693.5, 514.9, 818.0]
    params = {"max_period": 100.0, "freq_shift": 1.0, "flip_sin_to_cos": True}
    found = identify_table(timestep_embedding(times, 6, dtype="bfloat16", **params))
    assert found.level == "exact" and found.also is not None and found.also.timesteps is not None
    truth = _angles(times, 6, params)
    for row in range(len(times)):
        readings = [_angles(c.timesteps[row : row + 1], 6, c.params)[0] for c in (found.best, found.also)]
        assert any(np.abs(angles - truth[row]).max() < 0.05 for angles in readings), row


@pytest.mark.parametrize(
    ("dim", "dtype", "params", "times"),
    [
        # was "exact … preset diffusers" at t = 917.78 and 5092.27
        (5, "float16", {"max_period": 20000.0, "freq_shift": 0.0, "flip_sin_to_cos": False}, [13.0, 72.0]),
        # was "exact … max_period=2000 freq_shift=1" at t = 1568.39 …
        (
            5,
            "bfloat16",
            {"max_period": 1e5, "freq_shift": 0.0, "flip_sin_to_cos": False, "scale": 2.0},
            [124.46, 733.59, 187.82, 392.49],
        ),
        # was "exact … freq_shift=1 arithmetic=float32" at t ≈ 15700
        (
            5,
            "float16",
            {"max_period": 20000.0, "freq_shift": 1.0, "flip_sin_to_cos": False},
            [12.0, 98.0, 184.0, 270.0, 356.0, 442.0],
        ),
    ],
)
def test_a_slow_lowest_frequency_in_half_precision_asserts_no_wrong_t(dim, dtype, params, times):
    found = identify_table(timestep_embedding(times, dim, dtype=dtype, **params))
    if found.level != "none":  # a match must be the truth (or list it)
        best = found.best
        assert best.scheme == "timestep" and best.params["flip_sin_to_cos"] == params["flip_sin_to_cos"]
        np.testing.assert_allclose(_angles(best.timesteps, dim, best.params), _angles(times, dim, params), atol=0.05)


def test_t_is_not_read_where_t_and_t_plus_2pi_write_the_same_row():
    # diffusers' convention at d = 4 has ω = 1, 1e-4: t ± 2π moves the slow phase 6e-4, under bfloat16's rounding
    table = timestep_embedding([0.0, 250.0, 999.0], 4, flip_sin_to_cos=False, freq_shift=1.0, dtype="bfloat16")
    settings = {"flip_sin_to_cos": False, "freq_shift": 1.0}
    assert read_timesteps(table, **settings, precision="bfloat16") is None
    # in float32 it is told apart (6e-4 is far above float32's rounding): t is read, and its one other reading
    # is the exact alias t + 2π·10⁴, where ω = 1 and 1e-4 turn together
    table = timestep_embedding([0.0, 250.0, 999.0], 4, flip_sin_to_cos=False, freq_shift=1.0)
    np.testing.assert_allclose(read_timesteps(table, **settings), [0.0, 250.0, 999.0], atol=1e-3)
    np.testing.assert_allclose(
        timestep_aliases(table, **settings), np.array([0.0, 250.0, 999.0]) + 2e4 * np.pi, atol=1e-2
    )


@pytest.mark.parametrize("dim", [2, 3])
def test_one_frequency_says_t_is_known_modulo_2pi(cli, tmp_path, dim):
    # was "no known convention matches … closest: sinusoidal", as if nothing could be said
    path = tmp_path / "t.npy"
    assert cli("timestep", "--d", str(dim), "0", "250", "999", "-o", str(path), "-q").code == 0
    result = cli("identify", str(path), "--json")
    found = json.loads(result.out)
    assert found["match"] == "none"
    assert f"d = {dim} holds one frequency" in found["reason"] and "modulo 2π" in found["reason"]
    if dim == 2:  # the text says it too (d = 3 reads alike)
        assert "cannot tell: " in cli("identify", str(path)).out
