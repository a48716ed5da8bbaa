"""Engine mistakes the session-12 sweep left "unexplained" (issue 30): Llama 3's low and high frequency factors
swapped, its smoothing left out, and the base held in float16 (overflowed to inf, or rounded). Each engine table is
built from transformers' own rope init (``ROPE_INIT_FUNCTIONS``) with the mistake injected; the right tables of
Llama 3.1, Qwen2 and Gemma 3 raise no alarm. And a Qwen2-VL config as transformers' ``save_pretrained`` writes it
({"rope_type": "default", "type": "mrope"}) is read, not refused as a contradiction."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.analysis.test_diagnosis_s11 import GEMMA3
from tests.analysis.test_diagnosis_s11 import _inv_freq as gemma3_inv_freq
from tests.analysis.test_diagnosis_sweep_s12 import LLAMA31, _default_inv_freq, _halves, _transformers_config
from tests.analysis.test_diagnosis_sweep_s12 import compare_engine_pair as _compare
from tests.conftest import run_in_process

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

QWEN2 = {"model_type": "qwen2", "hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
         "max_position_embeddings": 32768, "rope_theta": 1000000.0}  # fmt: skip
#: Llama 3.1's medium band: the frequencies i of 128 columns whose wavelength 2π·500000^(2i/128) is 2048 to 8192
MEDIUM_BAND = [29, 30, 31, 32, 33, 34]


def _in_float16(value: float) -> float:
    """``value`` as an engine holding it in a float16 tensor reads it."""
    return float(torch.tensor(value, dtype=torch.float16))


def _init(config: dict, family: str) -> np.ndarray:
    """transformers' own inverse frequencies of ``config``: its ``family``'s rotary module, whose init is
    ``ROPE_INIT_FUNCTIONS[rope_type]`` (the default rope its own ``compute_default_rope_parameters``)."""
    import importlib

    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    name = {"llama": "Llama", "qwen2": "Qwen2"}[family]
    rotary = getattr(module, f"{name}RotaryEmbedding")(_transformers_config(config, f"{name}Config"))
    return rotary.inv_freq.double().numpy()


def _llama31_band() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """transformers' default and Llama 3.1 inverse frequencies (128 columns), and the medium band's mask."""
    default, llama3 = _init({**LLAMA31, "rope_scaling": None}, "llama"), _init(LLAMA31, "llama")
    wavelength = 2 * math.pi / default
    return default, llama3, (wavelength >= 8192 / 4) & (wavelength <= 8192 / 1)


def test_llama3_low_and_high_frequency_factors_swapped_are_named(tmp_path: Path) -> None:
    swapped = copy.deepcopy(LLAMA31)
    swapped["rope_scaling"].update(low_freq_factor=4.0, high_freq_factor=1.0)
    inv_freq = _init(swapped, "llama")  # transformers warns, and computes it
    code, found = _compare(tmp_path, LLAMA31, *_halves(inv_freq, 256), "float32")
    assert code == 1 and [item["code"] for item in found] == ["llama3_band_scaled"]
    figures = found[0]["figures"]
    assert figures["band_wavelengths"] == [2048.0, 8192.0] and figures["frequency_indices"] == MEDIUM_BAND
    assert (figures["low_freq_factor"], figures["high_freq_factor"], figures["factor"]) == (1.0, 4.0, 8.0)
    assert "A uses Llama 3's scaling without its smoothing" in found[0]["message"]
    assert "low_freq_factor and high_freq_factor swapped (4 and 1)" in found[0]["message"]


@pytest.mark.parametrize(("band", "code", "dtype"), [("scaled", "llama3_band_scaled", "bfloat16"),
                                                     ("unscaled", "llama3_band_unscaled", "float32")])  # fmt: skip
def test_llama3_smoothing_left_out_is_named(tmp_path: Path, band: str, code: str, dtype: str) -> None:
    # the medium band taken as the long wavelengths (÷ factor) or as the short ones, transformers' elsewhere
    default, llama3, medium = _llama31_band()
    assert np.flatnonzero(medium).tolist() == MEDIUM_BAND
    engine = np.where(medium, default / 8.0 if band == "scaled" else default, llama3)
    found_code, found = _compare(tmp_path, LLAMA31, *_halves(engine, 256), dtype)
    assert found_code == 1 and [item["code"] for item in found] == [code]
    indices = found[0]["figures"]["frequency_indices"]
    assert indices and set(indices) <= set(MEDIUM_BAND)  # bfloat16 may round a band column to the right value
    assert ("divided by the factor 8" if band == "scaled" else "left unscaled") in found[0]["message"]


@pytest.mark.parametrize(("config", "family"), [(QWEN2, "qwen2"), (LLAMA31, "llama")],
                         ids=["qwen2-1e6", "llama31-500000"])  # fmt: skip
def test_a_base_that_overflows_float16_is_named(tmp_path: Path, config: dict, family: str) -> None:
    base = config["rope_theta"]
    assert _in_float16(base) == math.inf
    inv_freq = _init({**config, "rope_theta": _in_float16(base)}, family)
    assert inv_freq[0] == 1.0 and not inv_freq[1:].any()  # base^0 = 1, then inf^(−x) = 0
    code, found = _compare(tmp_path, config, *_halves(inv_freq, 256), "float32")
    assert code == 1 and [item["code"] for item in found] == ["base_overflowed"]
    figures = found[0]["figures"]
    assert (figures["dtype"], figures["b_base"], figures["largest"]) == ("float16", base, 65504.0)
    assert figures["turning_columns"] == [0, 64, 128, 192]  # cos | sin, each two halves of 64 frequencies
    assert found[0]["message"].startswith("the base overflowed float16 (inf)")


def test_a_base_rounded_to_float16_is_named(tmp_path: Path) -> None:
    config = {**QWEN2, "rope_theta": 50000.0}
    assert _in_float16(50000.0) == 49984.0
    inv_freq = _init({**config, "rope_theta": _in_float16(50000.0)}, "qwen2")
    code, found = _compare(tmp_path, config, *_halves(inv_freq, 256), "float32")
    assert code == 1 and [item["code"] for item in found] == ["base_rounded"]
    figures = found[0]["figures"]
    assert (figures["dtype"], figures["a_base"], figures["b_base"]) == ("float16", 49984.0, 50000.0)
    assert found[0]["message"].startswith("the base rounded to float16")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("family", ["llama31", "qwen2", "gemma3"])
def test_right_tables_raise_no_alarm(tmp_path: Path, family: str, dtype: str) -> None:
    if family == "gemma3":  # the full layers: base 1e6, linear factor 8 (a float16 base would overflow)
        config, layer_type, inv_freq = GEMMA3, "full_attention", gemma3_inv_freq("full_attention")
    else:
        config, layer_type = (LLAMA31, None) if family == "llama31" else (QWEN2, None)
        inv_freq = _init(config, "llama" if family == "llama31" else "qwen2")
    assert _compare(tmp_path, config, *_halves(inv_freq, 256), dtype, layer_type) == (0, [])


def test_base_10000_is_exact_in_float16_so_no_rounding_is_named(tmp_path: Path) -> None:
    # 10000 held in float16 is 10000: a base of 10000 cannot be "rounded"; bfloat16's 9984 is another table
    assert _in_float16(10000.0) == 10000.0
    config = {**QWEN2, "rope_theta": 10000.0}
    assert _compare(tmp_path, config, *_halves(_default_inv_freq(10000.0, 128), 256), "float32") == (0, [])


@pytest.mark.parametrize(("class_name", "family"), [("Qwen2VLConfig", "qwen2_vl"), ("Qwen2_5_VLConfig", "qwen2_5_vl")])
def test_a_qwen2_vl_config_saved_by_transformers_is_read(tmp_path: Path, class_name: str, family: str) -> None:
    # save_pretrained writes {"rope_type": "default", "type": "mrope"}: pecli exited 2 ("rope_type = 'default'
    # contradicts type = 'mrope'"); transformers reads mrope as default rope, and so does pecli now
    import importlib

    text = {"hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 1,
            "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}  # fmt: skip
    built = getattr(transformers, class_name)(text_config=text)
    built.save_pretrained(str(tmp_path / "model"))
    saved = json.loads((tmp_path / "model" / "config.json").read_text())["text_config"]["rope_parameters"]
    assert (saved["rope_type"], saved["type"]) == ("default", "mrope")
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    rotary = getattr(module, f"{class_name.removesuffix('Config')}RotaryEmbedding")(built.get_text_config())
    positions = torch.arange(64)[None, None, :].expand(3, 1, -1)  # text positions: t = h = w
    cos, sin = (part[0].double().numpy() for part in rotary(torch.zeros(1, dtype=torch.float32), positions))
    from safetensors.numpy import save_file

    save_file({"cos": cos.astype(np.float32), "sin": sin.astype(np.float32)}, str(tmp_path / "engine.safetensors"))
    result = run_in_process("compare", str(tmp_path / "engine.safetensors"), str(tmp_path / "model"), "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.out)["diagnosis"] == []
