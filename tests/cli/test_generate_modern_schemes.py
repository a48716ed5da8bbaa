"""``pecli generate`` for the modern schemes: several tensors per file, grids, heads, --device."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import pecli
from pecli.io import read_table, read_tensors
from tests.conftest import assert_clean_error, require_module, run_pecli


def test_rope_writes_cos_and_sin_with_metadata(cli, tmp_path):
    target = tmp_path / "rope.safetensors"
    args = ["--d", "16", "--len", "64", "--scaling", "yarn", "--factor", "4", "--original-max-position", "32"]
    result = cli("generate", "rope", *args, "-o", str(target))
    assert result.code == 0, result.stderr
    assert "cos 64 × 16, sin 64 × 16 float32" in result.stderr
    tensors, metadata = read_tensors(str(target))
    assert tensors == {"cos": ((64, 16), "float32"), "sin": ((64, 16), "float32")}
    assert metadata["tensors"] == "cos,sin" and metadata["scaling"] == "yarn" and metadata["factor"] == "4.0"
    assert float(metadata["attention_factor"]) == pytest.approx(1.1386294361, abs=1e-10)
    expected = pecli.encode("rope", 64, 16, scaling="yarn", factor=4.0, original_max_position=32)
    for part in ("cos", "sin"):
        np.testing.assert_array_equal(read_table(str(target), key=part).array, expected[part])


def test_rope_one_part_to_npy_and_the_multi_part_refusal(cli, tmp_path):
    target = tmp_path / "angle.npy"
    result = cli("generate", "rope", "--d", "8", "--len", "5", "--part", "angle", "-o", str(target))
    assert result.code == 0, result.stderr
    np.testing.assert_array_equal(np.load(target), pecli.encode("rope", 5, 8, part="angle"))
    refused = tmp_path / "both.npy"
    result = cli("generate", "rope", "--d", "8", "--len", "5", "-o", str(refused))
    assert_clean_error(result, 2, "npy holds one tensor", "--part cos|sin|angle")
    assert not refused.exists()


def test_rope_summary_lists_parts(cli):
    result = cli("generate", "rope", "--d", "8", "--len", "5", "--json")
    document = json.loads(result.out)
    assert document["parts"] == {"cos": [5, 8], "sin": [5, 8]} and document["nbytes"] == 2 * 5 * 8 * 4


def test_alibi_bias_and_slopes(cli, tmp_path):
    bias = tmp_path / "bias.safetensors"
    assert cli("generate", "alibi", "--heads", "12", "--len", "7", "-o", str(bias)).code == 0
    table = read_table(str(bias))
    assert table.array.shape == (12, 7, 7) and table.metadata["heads"] == "12"
    np.testing.assert_array_equal(table.array, pecli.encode("alibi", 7, None, heads=12))
    slopes = tmp_path / "slopes.npy"
    result = cli("generate", "alibi", "--heads", "12", "--part", "slopes", "-o", str(slopes))
    assert result.code == 0, result.stderr
    np.testing.assert_allclose(np.load(slopes)[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]), rtol=1e-7)
    text = cli("generate", "alibi", "--heads", "2", "--len", "3", "--head", "1", "-o", "-", "--format", "csv")
    assert text.out.splitlines()[0] == "0,-0.00390625,-0.0078125"


def test_grid_schemes_take_their_length_from_the_grid(cli, tmp_path):
    target = tmp_path / "mae.npy"
    args = ["--preset", "mae", "--grid", "14,14", "--d", "64", "--cls-token"]
    result = cli("generate", "sincos2d", *args, "-o", str(target))
    assert result.code == 0, result.stderr
    table = np.load(target)
    assert table.shape == (197, 64) and not table[0].any()
    np.testing.assert_array_equal(table, pecli.encode("sincos2d", None, 64, preset="mae", grid="14,14", cls_token=True))
    coords = cli("generate", "coordconv", "--grid", "2,2", "-o", "-", "--format", "csv")
    assert coords.out.splitlines() == ["-1,-1", "-1,1", "1,-1", "1,1"]


def test_sincos2d_diffusers_preset_is_the_2d_one(cli):
    result = cli("generate", "sincos2d", "--preset", "diffusers", "--grid", "2,2", "--d", "8", "--json")
    assert json.loads(result.out)["params"]["base_size"] == 16.0
    sinusoidal = cli("generate", "sinusoidal", "--preset", "diffusers", "--d", "8", "--len", "2", "--json")
    assert json.loads(sinusoidal.out)["scheme"] == "sinusoidal"
    # by name alone, diffusers is three presets: refused, naming them (it used to mean sinusoidal quietly)
    assert_clean_error(
        cli("generate", "--preset", "diffusers", "--d", "8", "--len", "2"),
        2,
        "preset 'diffusers' belongs to sinusoidal, timestep and sincos2d: name the scheme",
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["rope", "--d", "7", "--len", "4"], ["even --d", "--d 8"]),
        (["rope", "--d", "8", "--len", "4", "--scaling", "ntk"], ["scaling", "yarn"]),
        (["rope", "--d", "8", "--len", "4", "--scaling", "linear", "--factor", "2", "--beta-fast", "8"], ["beta"]),
        (["rope", "--d", "8", "--len", "4", "--scaling", "llama3", "--factor", "8"], ["--original-max-position"]),
        (["rope", "--d", "8", "--len", "4", "--grid", "2,2"], ["does not take", "--grid"]),
        (["sincos2d", "--d", "10", "--grid", "2,2"], ["divisible by 4"]),
        (["sincos2d", "--d", "8", "--grid", "0,2"], ["grid"]),
        (["sincos2d", "--d", "8", "--grid", "2;2"], ["grid", "H,W"]),
        (["sincos2d", "--d", "8"], ["missing --grid"]),
        (["alibi", "--heads", "0", "--len", "4"], ["heads", "positive"]),
        (["alibi", "--heads", "-1", "--len", "4"], ["heads"]),
        (["alibi", "--heads", "4", "--len", "4", "--d", "8"], ["--d"]),
        (["alibi", "--heads", "4", "--len", "4", "--head", "9"], ["--head"]),
        (["fourier", "--len", "4", "--num-freqs", "3", "--d", "8"], ["--num-freqs"]),
        (["gaussian", "--len", "4", "--d", "5"], ["even --d"]),
    ],
)
def test_bad_inputs_are_one_line_errors_and_write_nothing(cli, tmp_path, args, words):
    target = tmp_path / "out.safetensors"
    result = cli("generate", *args, "-o", str(target))
    assert_clean_error(result, 2, *words)
    assert not target.exists()


def test_device_cuda_without_a_gpu_is_a_clean_error(cli, tmp_path, monkeypatch):
    torch = require_module("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    target = tmp_path / "pe.npy"
    result = cli("generate", "rope", "--d", "8", "--len", "4", "--part", "cos", "--device", "cuda", "-o", str(target))
    assert_clean_error(result, 2, "--device cuda", "no CUDA GPU", "drop --device")
    assert not target.exists()
    assert_clean_error(cli("generate", "--d", "8", "--len", "4", "--device", "tpu"), 2, "unknown device")


def test_device_without_torch_is_a_clean_error(cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "pecli.torch_backend", None)  # importing it now fails, as without torch
    assert_clean_error(cli("generate", "--d", "8", "--len", "4", "--device", "cuda"), 2, "needs torch")


@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="needs a CUDA GPU")
@pytest.mark.parametrize("scheme_args", [["--d", "64", "--len", "4096"], ["rope", "--d", "64", "--len", "4096"]])
def test_device_cuda_writes_the_cpu_table(tmp_path, scheme_args):
    cpu, gpu = tmp_path / "cpu.safetensors", tmp_path / "gpu.safetensors"
    assert run_pecli("generate", *scheme_args, "--dtype", "float64", "-o", str(cpu)).code == 0
    result = run_pecli("generate", *scheme_args, "--dtype", "float64", "--device", "cuda", "-o", str(gpu))
    assert result.code == 0, result.stderr
    for key in read_tensors(str(cpu))[0]:
        np.testing.assert_allclose(
            read_table(str(gpu), key=key).array, read_table(str(cpu), key=key).array, rtol=0, atol=1e-12
        )


def test_pecli_works_without_torch(tmp_path):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import pecli\n"
        "assert pecli.encode('rope', 4, 8)['cos'].shape == (4, 8)\n"
        "from pecli.cli.app import main\n"
        f"sys.exit(main(['generate', 'sincos2d', '--grid', '2,2', '--d', '8', '-o', {str(tmp_path / 'x.npy')!r}]))\n"
    )
    import subprocess

    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "x.npy").exists()


def test_device_path_end_to_end_with_torch_on_the_cpu(cli, tmp_path):
    """The whole --device path, with the GPU check pointed at torch's CPU: same table, one rounding."""
    require_module("torch")
    from unittest import mock

    import pecli.torch_backend

    rope = ["rope", "--d", "64", "--len", "3000", "--scaling", "linear", "--factor", "2"]
    # mock, not monkeypatch: the cli fixture undoes monkeypatch after each call
    with mock.patch.object(pecli.torch_backend, "check_device", lambda device: "cpu"):
        for args in (["--d", "64", "--len", "3000"], rope):
            numpy_file, torch_file = tmp_path / "numpy.safetensors", tmp_path / "torch.safetensors"
            assert cli("generate", *args, "--dtype", "float64", "-o", str(numpy_file)).code == 0
            result = cli("generate", *args, "--dtype", "float64", "--device", "cuda", "-o", str(torch_file))
            assert result.code == 0 and "warning" not in result.stderr, result.stderr
            for key in read_tensors(str(numpy_file))[0]:
                np.testing.assert_allclose(
                    read_table(str(torch_file), key=key).array, read_table(str(numpy_file), key=key).array, atol=1e-12
                )
        alibi = tmp_path / "a.npy"
        result = cli("generate", "alibi", "--heads", "2", "--len", "3", "--device", "cuda", "-o", str(alibi))
    assert result.code == 0 and "computes no sin/cos" in result.stderr
