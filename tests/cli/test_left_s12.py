"""Session 12 (issue 30): an output never replaces an input; notes say what was drawn and why; preset and stdin
messages say the truth once."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.conftest import run_in_process


def _refused(result, *parts: str) -> None:
    assert result.code == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for part in parts:
        assert part in lines[0], lines[0]


@pytest.fixture
def table(tmp_path):
    """A 16 × 8 table file, a second copy, and symbolic links to the first; the working directory is tmp_path."""
    values = np.linspace(-1.0, 1.0, 16 * 8, dtype=np.float32).reshape(16, 8)
    np.save(tmp_path / "s.npy", values)
    np.save(tmp_path / "t.npy", values[::-1].copy())
    os.symlink("s.npy", tmp_path / "link.npy")
    os.symlink("s.npy", tmp_path / "fig.png")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "output"),
    [
        (("distance", "s.npy"), "s.npy"),  # the same name
        (("distance", "link.npy"), "s.npy"),  # the input a link to the output
        (("distance", "s.npy"), "link.npy"),  # the output a link to the input
        (("distance", "s.npy"), "fig.png"),  # an image through a link
        (("distance", "s.npy", "--profile"), "./sub/../s.npy"),
        (("plot", "s.npy"), "fig.png"),
        (("plot", "s.npy", "--lines", "0"), "./fig.png"),
        (("plot", "s.npy", "--view", "pca"), "fig.png"),
        (("resample", "s.npy", "--len", "32"), "link.npy"),
    ],
)
def test_an_output_never_replaces_an_input(table, args, output):
    (table / "sub").mkdir()
    before = (table / "s.npy").read_bytes()
    result = run_in_process(*args, "-o", output, cwd=str(table))
    _refused(result, f"-o {output!r} would overwrite the input", "give a new path")
    assert (table / "s.npy").read_bytes() == before


def test_generate_never_writes_over_the_config_it_reads(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    config = '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32}'
    (model / "config.json").write_text(config)
    for extra in ((), ("--probe",)):
        result = run_in_process("generate", "--from-config", str(model), *extra, "-o", str(model / "config.json"),
                                "--format", "safetensors")  # fmt: skip
        _refused(result, "would overwrite the input")
        assert (model / "config.json").read_text() == config


def test_a_new_output_beside_the_input_is_written(table):
    result = run_in_process("distance", "s.npy", "-o", "d.npy", cwd=str(table))
    assert result.code == 0, result.stderr
    values = np.load(table / "s.npy").astype(np.float64)
    np.testing.assert_allclose(np.load(table / "d.npy"), values @ values.T, rtol=1e-6, atol=1e-6)
