"""Attack round three on the Python API (issue 30): every bad argument is a ParameterError naming it,
and a table too large for memory is refused before anything is allocated."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError

HUGE = 10**12  # rows: terabytes of float64 whatever the machine


@pytest.mark.parametrize(
    "call",
    [
        lambda: pecli.sinusoidal_table(HUGE, 4),
        lambda: pecli.learned_table(HUGE, 4),
        lambda: pecli.count_table(HUGE, 4),
        lambda: pecli.binary_table(HUGE, 4),
        lambda: pecli.memn2n_table(HUGE, 4),
        lambda: pecli.rope_table(HUGE, 4),
        lambda: pecli.gaussian_table(HUGE, 4),
        lambda: pecli.timestep_table(HUGE, 4),
        lambda: pecli.timestep_embedding([1.0, 2.0], 2**41),
        lambda: pecli.alibi_table(10**7, heads=64),
        lambda: pecli.sincos2d_table(None, 4, grid=(10**6, 10**6)),
        lambda: pecli.coordconv_table(None, grid=(10**7, 10**7)),
    ],
    ids=[
        "sinusoidal",
        "learned",
        "count",
        "binary",
        "memn2n",
        "rope",
        "gaussian",
        "timestep",
        "embedding",
        "alibi",
        "sincos2d",
        "coordconv",
    ],
)
def test_a_huge_table_from_a_scheme_function_is_refused_with_its_size(call):
    # was MemoryError from numpy ("Unable to allocate 14.6 TiB …"), or a process killed by the kernel
    with pytest.raises(ParameterError, match=r"would take [\d.]+ [KMGTPEZ]i?B, more than the .* available"):
        call()


def test_the_size_check_runs_before_any_allocation():
    # under a 1 GiB address-space limit, a refused 29 TiB request must not reach numpy
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "import pecli\n"
        "try:\n    pecli.sinusoidal_table(10**12, 4)\nexcept pecli.ParameterError as e:\n    print('refused', e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused the table, computed in float64, would take 29.1 TiB")


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        # np.float32 itself: "dtype is given by its name" (tests/python/test_api_attack_s10d.py)
        ({"dtype": None}, "unknown dtype None"),
        ({"dtype": ["float32"]}, "unknown dtype ['float32']"),
    ],
)
def test_a_dtype_that_is_not_a_name_is_a_parameter_error(kwargs, names):
    # was TypeError: 'type' object is not iterable / unhashable type: 'list'
    with pytest.raises(ParameterError, match="valid: float32, float64, float16, bfloat16") as error:
        pecli.encode("sinusoidal", 4, 4, **kwargs)
    assert str(error.value).startswith(names)


@pytest.mark.parametrize(("scheme", "preset"), [(5, None), (["sinusoidal"], None), (None, 5)])
def test_a_scheme_or_preset_that_is_not_a_name_is_a_parameter_error(scheme, preset):
    with pytest.raises(ParameterError, match=r"^unknown (scheme|preset) (5|\['sinusoidal'\]) \(valid: "):
        pecli.encode(scheme, 4, 4, preset=preset)


def test_rows_that_are_not_a_range_are_a_parameter_error():
    # was AttributeError: 'list' object has no attribute 'step'
    with pytest.raises(ParameterError, match=r"rows must be a contiguous range inside 0\.\.4, got \[0, 1\]"):
        pecli.encode("sinusoidal", 4, 4, rows=[0, 1])


@pytest.mark.parametrize("timesteps", [3.0, ["a"], [1j]])
def test_timesteps_that_are_not_real_numbers_are_a_parameter_error(timesteps):
    # was TypeError: 'float' object is not iterable / ValueError: could not convert string to float
    with pytest.raises(ParameterError, match=r"^timesteps must be a 1-d sequence of real numbers, got "):
        pecli.timestep_embedding(timesteps, 4)


def test_one_column_with_a_shift_in_float32_arithmetic_is_the_padding_column():
    # was ZeroDivisionError (identify of any n × 1 table crashed with exit 3 through this candidate)
    table = pecli.sinusoidal_table(4, 1, freq_shift=0, arithmetic="float32", dtype="float64")
    assert table.tolist() == pecli.sinusoidal_table(4, 1, freq_shift=0, dtype="float64").tolist() == [[0.0]] * 4


def test_identify_of_one_random_column_answers(tmp_path):
    values = np.random.default_rng(0).random((16, 1)).astype(np.float32)
    report = pecli.identify(values)
    assert report.found.shape == (16, 1)
