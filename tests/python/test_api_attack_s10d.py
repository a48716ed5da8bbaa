"""Issue 30, attack on the Python API: odd arguments get one ParameterError naming the parameter (never a numpy
or torch error from deep inside, a silent pass, or a silently wrong table)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError
from pecli.schemes.rope import rope_table
from pecli.testing import assert_rotary_matches, assert_table_matches

torch = pytest.importorskip("torch")


def _rope_pair(length: int = 64, dim: int = 16) -> tuple[np.ndarray, np.ndarray]:
    return rope_table(length, dim, part="cos", dtype="float32"), rope_table(length, dim, part="sin", dtype="float32")


# --- pecli.api ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [pecli.identify, pecli.figure, lambda table: pecli.compare(table, table)])
def test_a_ragged_list_is_refused_by_name(call):
    with pytest.raises(ParameterError, match="rows of different lengths"):
        call([[0.0, 1.0], [1.0]])


def test_a_bfloat16_tensor_is_read_and_keeps_its_dtype():
    table = torch.from_numpy(pecli.encode(None, 64, 32, preset="fairseq")).bfloat16()
    assert pecli.identify(table).found.best.presets == ("fairseq",)
    report = pecli.compare("fairseq", table)
    assert report.agree and report.b.dtype == "bfloat16"


def test_a_pathlib_path_is_read_as_its_path(tmp_path):
    path = tmp_path / "t.npy"
    table = pecli.encode("sinusoidal", 8, 4)
    np.save(path, table)
    assert pecli.compare(path, str(path)).agree
    with pytest.raises(pecli.PecliError, match="no such file"):
        pecli.identify(pathlib.Path(tmp_path / "missing.npy"))
    with pytest.raises(pecli.PecliError, match="no such config"):
        pecli.from_config(tmp_path / "missing" / "config.json")


@pytest.mark.parametrize("source", [None, 3])
def test_from_config_of_no_path_names_source(source):
    with pytest.raises(ParameterError, match="source must be a path"):
        pecli.from_config(source)


@pytest.mark.parametrize("name", ["atol", "rtol"])
@pytest.mark.parametrize("value", ["1e-3", True, [1.0]])
def test_compare_tolerance_of_the_wrong_type_is_named(name, value):
    table = pecli.encode("sinusoidal", 8, 4)
    with pytest.raises(ParameterError, match=f"{name} must be a finite number"):
        pecli.compare(table, table, **{name: value})


def test_compare_of_vectors_reads_them_as_one_row_as_the_cli_does():
    report = pecli.compare(np.arange(5.0), np.arange(5.0))
    assert report.agree and report.a.shape == (1, 5)
    assert not pecli.compare(np.arange(5.0), np.arange(5.0) + 0.5).agree


@pytest.mark.parametrize("other", [np.float64(1.0), np.zeros((0,))])
def test_compare_of_a_scalar_or_empty_vector_is_refused(other):
    with pytest.raises(ParameterError, match="no values to compare"):
        pecli.compare("fairseq", other)


def test_figure_checks_its_title_figsize_and_emptiness():
    table = pecli.encode("sinusoidal", 8, 4)
    with pytest.raises(ParameterError, match="title must be a str"):
        pecli.figure(table, title=3)
    with pytest.raises(ParameterError, match="figsize must be"):
        pecli.figure(table, figsize="x")
    with pytest.raises(ParameterError, match="non-empty table"):
        pecli.figure(np.zeros((0, 4)))


@pytest.mark.parametrize("dtype", [np.float64, np.dtype("float64"), "torch"])
def test_a_dtype_object_is_answered_with_its_name(dtype):
    dtype = torch.float64 if dtype == "torch" else dtype
    with pytest.raises(ParameterError, match="given by its name") as raised:
        pecli.encode("sinusoidal", 4, 4, dtype=dtype)
    assert raised.value.hint == "pass dtype='float64'"


# --- pecli.testing -----------------------------------------------------------------------------------------------


def test_an_unknown_part_is_refused_not_passed():
    cos, sin = _rope_pair()
    with pytest.raises(ParameterError, match="part must be 'cos', 'sin'"):  # it passed, checking nothing
        assert_table_matches((cos, sin * 2), "rope", part="tan")


@pytest.mark.parametrize("reference", [None, 5])
def test_a_reference_that_is_no_source_is_named(reference):
    with pytest.raises(ParameterError, match="reference must be"):
        assert_table_matches(_rope_pair(), reference)


def test_a_pathlib_reference_is_read(tmp_path):
    import json

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "head_dim": 16, "max_position_embeddings": 64,
                                  "rope_theta": 10000.0}))  # fmt: skip
    assert_table_matches(_rope_pair(), config)


@pytest.mark.parametrize("value", ["x", -1.0, float("nan")])
def test_assert_rotary_matches_checks_atol(value):
    with pytest.raises(ParameterError, match="atol must be a finite number"):
        assert_rotary_matches(lambda q, k, p: (q, k), "rope", dim=16, length=64, atol=value)
    with pytest.raises(ParameterError, match="atol must be a finite number"):
        assert_table_matches(_rope_pair(), "rope", atol=value)


def test_a_device_torch_cannot_use_is_a_parameter_error_not_an_assertion():
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(ParameterError, match="no CUDA GPU"):  # was torch's AssertionError: a test failure
        assert_rotary_matches(lambda q, k, p: (q, k), "rope", dim=16, length=64, device="cuda")
    with pytest.raises(ParameterError, match="not a torch device"):
        assert_rotary_matches(lambda q, k, p: (q, k), "rope", dim=16, length=64, device="nope")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_table_names_the_cause(bad):
    cos, sin = _rope_pair()
    cos = cos.copy()
    cos[3, 5] = bad
    with pytest.raises(AssertionError, match=r"position 3, dimension 5\)\nnamed cause: non_finite"):
        assert_table_matches((cos, sin), "rope")


def test_a_preset_that_is_not_rotary_is_named_as_such():
    with pytest.raises(ParameterError, match="'fairseq' is no 1-D rotary encoding"):  # was "unknown scheme"
        assert_rotary_matches(lambda q, k, p: (q, k), "fairseq", dim=16, length=64)


# --- pecli.torch -------------------------------------------------------------------------------------------------


def test_sinusoidal_module_checks_its_input():
    from pecli.torch import SinusoidalPositionalEncoding

    module = SinusoidalPositionalEncoding(8, max_len=16)
    with pytest.raises(ParameterError, match="must be \\(batch, len, dim\\), got shape \\(3, 8\\)"):
        module(torch.zeros(3, 8))  # was "sequence of 8 positions"
    with pytest.raises(ParameterError, match="last axis is 7, but the module's dim is 8"):
        module(torch.zeros(1, 3, 7))
    with pytest.raises(ParameterError, match="floating-point"):  # the table was truncated to integers
        module(torch.zeros(1, 3, 8, dtype=torch.int64))


def test_rotary_module_checks_offset_and_input():
    from pecli.torch import RotaryEmbedding

    rope = RotaryEmbedding(8, max_len=16)
    q = torch.randn(1, 2, 4, 8)
    for offset in (-2, 1.5, True):
        with pytest.raises(ParameterError, match="offset must be an integer >= 0"):
            rope(q, q, offset=offset)
    with pytest.raises(ParameterError, match="floating-point"):
        rope(q.long(), q.long())
    with pytest.raises(ParameterError, match="q has 4 positions but k has 5"):
        rope(q, torch.randn(1, 2, 5, 8))
    with pytest.raises(ParameterError, match="length must be a positive integer"):
        rope.tables(-1)  # was the table less its last row


def test_rotary_module_far_offset_computes_only_the_rows_it_rotates():
    from pecli.torch import RotaryEmbedding

    q = torch.randn(1, 1, 2, 8, dtype=torch.float64)
    far = RotaryEmbedding(8, max_len=16, dtype="float64")(q, q, offset=10**9)[0]  # was 10**9 rows: refused
    rows = range(10**9, 10**9 + 2)
    cos, sin = (torch.from_numpy(pecli.encode("rope", 10**9 + 2, 8, part=part, dtype="float64", rows=rows))
                for part in ("cos", "sin"))  # fmt: skip
    assert torch.equal(far, pecli.apply_rotary(q, cos, sin, "half"))
    near = RotaryEmbedding(8, max_len=16)(q.float(), q.float(), offset=20)[0]
    assert torch.equal(near, RotaryEmbedding(8, max_len=64)(q.float(), q.float(), offset=20)[0])


def test_timestep_module_names_a_non_tensor():
    from pecli.torch import TimestepEmbedding

    with pytest.raises(ParameterError, match="timesteps must be a torch tensor, got list"):
        TimestepEmbedding(4)([1.0])


# --- pecli.probe / pecli.probe_check -----------------------------------------------------------------------------


@pytest.mark.parametrize("positions", [[0.5, 1.5], [0, -1], [0.0, float("nan")], []])
def test_rotate_refuses_positions_that_are_no_integers_at_or_above_zero(positions):
    from pecli.probe import rotary_spec, rotate

    spec = rotary_spec("rope", dim=4, length=8)
    x = np.ones((max(1, len(positions)), 4))
    with pytest.raises(ParameterError, match="positions must be a non-empty list of integer positions"):
        rotate(spec, x, positions)  # 0.5 was truncated to 0 silently; -1 and NaN named an internal row range


def test_rotate_and_make_probe_name_a_head_narrower_than_the_table():
    from pecli.probe import make_probe, rotary_spec, rotate

    spec = rotary_spec("rope", dim=16, length=64)
    with pytest.raises(ParameterError, match=r"last axis \(head_dim\) of at least 16"):  # was numpy's pad error
        rotate(spec, np.ones((2, 8)), [0, 1])
    with pytest.raises(ParameterError, match=r"last axis \(head_dim\) of at least 16"):
        make_probe(spec, head_dim=8)
    with pytest.raises(ParameterError, match="head_dim must be a positive integer"):
        make_probe(spec, head_dim="16")


def test_compare_rotated_and_diagnose_check_their_arguments():
    from pecli.probe import diagnose_rotated, make_probe, rotary_spec
    from pecli.probe_check import compare_rotated

    probe = make_probe(rotary_spec("rope", dim=8, length=16))
    rotated = {"q_rotated": probe.q_rotated, "k_rotated": probe.k_rotated}
    for atol in ("x", -1.0):  # "x": numpy's ValueError; -1: a right rotation reported as differing
        with pytest.raises(ParameterError, match="atol must be a finite number"):
            compare_rotated(probe, rotated, atol=atol)
    with pytest.raises(ParameterError, match="which must be 'q' or 'k'"):
        diagnose_rotated(probe, probe.q, which="z")


# --- pecli.encode and friends --------------------------------------------------------------------------------------


def test_encode_rows_of_another_type_is_named_as_the_range_it_must_be():
    with pytest.raises(ParameterError, match=r"rows must be a contiguous range inside 0\.\.4, got slice"):
        pecli.encode("sinusoidal", 4, 4, rows=slice(0, 2))  # was len()'s TypeError


def test_a_size_refusal_names_the_sizes_the_call_gave():
    with pytest.raises(ParameterError) as raised:
        pecli.encode("alibi", 10**6, None, heads=64)
    assert raised.value.hint == "use a smaller length or heads"  # was "length or dim": alibi has no dim
    with pytest.raises(ParameterError) as raised:
        pecli.encode("sincos2d", None, 8, grid=(10**6, 10**6))
    assert raised.value.hint == "use a smaller dim or grid"


def test_timesteps_as_a_string_are_refused_not_read_digit_by_digit():
    with pytest.raises(ParameterError, match="got the string '12'"):  # was the timesteps [1, 2]
        pecli.timestep_embedding("12", 2)


def test_apply_rotary_names_an_odd_width_and_a_list():
    ones = np.ones((3, 5))
    with pytest.raises(ParameterError, match="needs an even d"):  # was numpy's broadcast error
        pecli.apply_rotary(ones, ones, ones)
    with pytest.raises(ParameterError, match="x must be a numpy array or a torch tensor, got list"):
        pecli.apply_rotary([[1.0, 0.0]], np.ones((1, 2)), np.zeros((1, 2)))


def test_without_torch_a_device_and_pecli_torch_say_how_to_get_it():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import pecli\n"
        "from pecli.testing import assert_rotary_matches\n"
        "try:\n    assert_rotary_matches(lambda q, k, p: (q, k), 'rope', dim=4, length=8, device='cpu')\n"
        "except pecli.ParameterError as error:\n    print(error)\n"
        "try:\n    import pecli.torch\nexcept ImportError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "device 'cpu' needs torch, which is not installed"
        " (pip install 'pecli[torch]', or drop device to get numpy arrays)",
        "pecli.torch needs torch: pip install 'pecli[torch]'",
    ]
