"""compare's float32 angle noise at each row's own position: a timestep table's rows are its t (issue 30).

The command reads the timesteps from the metadata of the file ``pecli timestep`` wrote.

diffusers' float32 get_timestep_embedding at t = 0, 37, …, 999 is 2.9e-5 off pecli's float32 arithmetic at
t = 999 (torch's float32 exp one unit of roundoff from numpy's at two of 128 frequencies); the allowance at
row 27 was 3.7e-6, at t = 999 it is eps32 · 999 = 1.2e-4. The same table at t + 1 is ~1 off: it differs."""

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.compare import compare_tables
from pecli.errors import ParameterError
from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
embeddings = pytest.importorskip("diffusers.models.embeddings")

GRIDS = {
    "0:1000:37": np.arange(0, 1000, 37, dtype=np.float64),
    "fractional": np.linspace(0.5, 998.39, 40),
}


def _diffusers(times: np.ndarray) -> np.ndarray:
    t = torch.tensor(times, dtype=torch.float32)
    return embeddings.get_timestep_embedding(t, 256, flip_sin_to_cos=True, downscale_freq_shift=0).numpy()


def _ours(times: np.ndarray) -> np.ndarray:
    return np.asarray(pecli.timestep_embedding(times, 256, dtype="float32", flip_sin_to_cos=True, freq_shift=0.0,
                                               arithmetic="float32"))  # fmt: skip


@pytest.mark.parametrize("grid", GRIDS)
def test_diffusers_float32_timesteps_agree_at_each_rows_own_t(grid):
    times = GRIDS[grid]
    theirs, ours = _diffusers(times), _ours(times)
    result = compare_tables(theirs, ours, positions=times)
    assert result.agree, result.tolerance_text()
    assert 2e-5 < result.max_abs < 4e-5  # float32 noise at t ~ 999, not a bit-for-bit match
    assert result.atol == pytest.approx(2.0**-23 * times.max(), rel=0.05)
    # rows taken as positions 0, 1, 2, … (the old allowance): refused
    assert not compare_tables(theirs, ours).agree


@pytest.mark.parametrize("grid", GRIDS)
def test_the_same_table_at_t_plus_1_differs(grid):
    times = GRIDS[grid]
    result = compare_tables(_diffusers(times), _ours(times + 1), positions=times + 1)
    assert not result.agree and result.max_abs > 0.5


def test_positions_never_widen_an_ordinary_table():
    # positions 0, 1, 2, … are the rows' indices: the same verdict and tolerance as without them
    a = np.asarray(pecli.encode("sinusoidal", 64, 16, dtype="float32"), np.float64)
    b = a + 5e-6
    plain, given = compare_tables(a, b), compare_tables(a, b, positions=np.arange(64))
    assert (plain.agree, plain.atol) == (given.agree, given.atol)
    assert not given.agree


def test_positions_one_per_row():
    a = np.zeros((3, 2))
    with pytest.raises(ParameterError, match="2 positions for 3 rows"):
        compare_tables(a, a, positions=[0, 1])
    with pytest.raises(ParameterError, match="finite"):
        compare_tables(a, a, positions=[0, 1, np.nan])


@pytest.mark.parametrize(("start", "agree"), [(0, True), (1, False)])
def test_command_reads_the_timesteps_a_file_records(tmp_path, start, agree):
    times = np.arange(0, 1000, 37, dtype=np.float64)
    np.save(tmp_path / "theirs.npy", _diffusers(times))
    ours = str(tmp_path / "ours.safetensors")
    made = run_in_process("timestep", "--range", f"{start}:{1000 + start}:37", "--d", "256", "--flip-sin-to-cos",
                          "--freq-shift", "0", "--arithmetic", "float32", "-o", ours)  # fmt: skip
    assert made.code == 0, made.stderr
    result = run_in_process("compare", ours, str(tmp_path / "theirs.npy"), "--json")
    assert result.code == (0 if agree else 1), result.out + result.stderr
    report = json.loads(result.out)
    assert report["agree"] is agree
    # the allowance is float32's at t = 999 + start (row 27), not at position 27
    assert f"position {999 + start}, row 27" in report["tolerance"]
    if agree:
        assert 2e-5 < report["max_abs"] < 4e-5


def test_rows_of_a_plain_file_are_positions(tmp_path):
    # without a record of timesteps (a .npy), rows are positions 0, 1, 2, …: the noise at t = 999 is refused
    times = np.arange(0, 1000, 37, dtype=np.float64)
    np.save(tmp_path / "theirs.npy", _diffusers(times))
    np.save(tmp_path / "ours.npy", _ours(times))
    result = run_in_process("compare", str(tmp_path / "ours.npy"), str(tmp_path / "theirs.npy"))
    assert result.code == 1
    # the verdict names the entry beyond its own tolerance (issue 30): a row's, at its row number, not at t
    verdict = next(line for line in result.out.splitlines() if line.startswith("different beyond"))
    assert verdict.startswith("different beyond float32 arithmetic at position ")
    assert float(verdict.split("> tolerance ")[1].split()[0]) < 27 * 2.0**-23 + 1e-5  # not t = 999's 1.2e-4


def test_pecli_compare_reads_the_recorded_timesteps(tmp_path):
    times = np.arange(0, 1000, 37, dtype=np.float64)
    ours = str(tmp_path / "ours.safetensors")
    run_in_process("timestep", "--range", "0:1000:37", "--d", "256", "--flip-sin-to-cos", "--freq-shift", "0",
                   "--arithmetic", "float32", "-o", ours)  # fmt: skip
    assert pecli.compare(ours, _diffusers(times)).agree


def test_recorded_positions_are_the_angles_multiplier():
    # a row's angles are scale·t·ω: float32's noise at t = 999 with scale 1000 is that of position 999,000
    from pecli.analysis.compare import recorded_positions

    meta = {"scheme": "timestep", "dtype": "float32", "d": "8", "timesteps": "[0, 999]", "scale": "1000.0"}
    assert recorded_positions([meta, None], 2).tolist() == [0.0, 999000.0]
    # a record of another length, or of a table whose rows are positions, is not used
    assert recorded_positions([meta], 3) is None
    assert recorded_positions([{"scheme": "sinusoidal", "dtype": "float32", "len": "2", "d": "8"}], 2) is None
    assert recorded_positions([{"scheme": "timestep", "dtype": "float32", "timesteps": "[0, x]"}], 2) is None


def _fairseq_float64(length: int, dim: int, first: int) -> np.ndarray:
    """fairseq's get_embedding in float64, written out independently: split [sin | cos], rows from ``first``."""
    half = dim // 2
    freqs = np.exp(np.arange(half) * -(np.log(10000.0) / (half - 1)))
    angles = (np.arange(length) + float(first))[:, None] * freqs[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


@pytest.mark.parametrize(("first", "code"), [(2, 0), (1, 1)])
def test_fairseq_rows_take_the_noise_of_their_own_positions(tmp_path, first, code):
    # fairseq's row 0 is position 2: a float64 engine's table 7e-15 off pecli's was "different" (row 0 was
    # given position 0's allowance, none); positions one off still differ
    np.save(tmp_path / "engine.npy", _fairseq_float64(100, 64, first))
    result = run_in_process("compare", "fairseq", str(tmp_path / "engine.npy"))
    assert result.code == code, result.out + result.stderr
    if code == 0:
        assert "at position 101, row 99" in result.out
