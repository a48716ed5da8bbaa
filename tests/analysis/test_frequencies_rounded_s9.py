"""An engine that holds RoPE's inverse frequencies in float16 or bfloat16 (``inv_freq.half()``): every frequency
rounded to 11 (8) significant bits, so the angles p·θ drift with the position. The sweep of session 9 found compare
naming no cause for it; it is ``frequencies_rounded`` now, against a spec and against a model's config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from pecli.schemes.rope import rope_table
from tests.conftest import run_in_process

torch = pytest.importorskip("torch")

LENGTH, DIM, BASE = 1024, 64, 10000.0
CONFIG = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 8,
          "max_position_embeddings": 4096, "rope_theta": BASE}  # fmt: skip


def _engine(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (LENGTH, DIM) as an engine builds them: float32 inv_freq held in ``dtype``, float32 products."""
    inv_freq = 1.0 / (BASE ** (torch.arange(0, DIM, 2, dtype=torch.int64).float() / DIM))
    inv_freq = inv_freq.to(getattr(torch, dtype)).float()
    freqs = torch.outer(torch.arange(LENGTH, dtype=torch.float32), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().numpy(), emb.sin().numpy()


def _compare(*args: str) -> tuple[int, dict[str, object]]:
    result = run_in_process("compare", *args, "--json")
    assert result.code in (0, 1), result.stderr
    return result.code, json.loads(result.out)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rounded_frequencies_are_named_against_a_spec(tmp_path: Path, dtype: str) -> None:
    path = tmp_path / "cos.npy"
    np.save(path, _engine(dtype)[0])
    code, report = _compare(str(path), "rope:part=cos")
    assert code == 1
    found = report["diagnosis"]
    assert [item["code"] for item in found] == ["frequencies_rounded"]  # type: ignore[union-attr,index]
    figures = found[0]["figures"]  # type: ignore[index]
    assert {figures["a_dtype"], figures["b_dtype"]} == {dtype, None}
    assert 0 < figures["first_position"] < 64


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rounded_frequencies_are_named_against_a_config(tmp_path: Path, dtype: str) -> None:
    cos, sin = _engine(dtype)
    engine = tmp_path / "engine.safetensors"
    save_file({"cos": cos, "sin": sin}, str(engine))
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    code, report = _compare(str(engine), str(config))
    assert code == 1
    found = report["diagnosis"]
    assert [item["code"] for item in found] == ["frequencies_rounded"]  # type: ignore[union-attr,index]
    assert dtype in str(found[0]["message"])  # type: ignore[index]


def test_float32_frequencies_still_agree(tmp_path: Path) -> None:
    cos, sin = _engine("float32")
    path = tmp_path / "cos.npy"
    np.save(path, cos)
    assert _compare(str(path), "rope:part=cos")[0] == 0
    engine = tmp_path / "engine.safetensors"
    save_file({"cos": cos, "sin": sin}, str(engine))
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    assert _compare(str(engine), str(config))[0] == 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_freqs_dtype_rounds_as_torch_does(dtype: str) -> None:
    # the angle table's frequencies are exactly torch's: float32 inv_freq, then .to(dtype) (round to nearest even)
    inv_freq = 1.0 / (BASE ** (torch.arange(0, DIM, 2, dtype=torch.int64).float() / DIM))
    expected = inv_freq.to(getattr(torch, dtype)).double().numpy()
    angles = rope_table(2, DIM, part="angle", freqs_dtype=dtype, dtype="float64")
    assert angles[1, : DIM // 2].tolist() == expected.tolist()
    assert (expected != inv_freq.double().numpy()).any() or dtype == "float32"


def test_a_spec_with_the_engines_dtype_agrees(tmp_path: Path) -> None:
    path = tmp_path / "cos.npy"
    np.save(path, _engine("float16")[0])
    assert _compare(str(path), "rope:part=cos,freqs_dtype=float16")[0] == 0
